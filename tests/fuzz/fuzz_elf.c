// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the report's ELF path. The input is an ELF file (seeds:
 * small real ones built from tests/workloads, and damaged copies). It becomes
 * the file of one mapping, found through --symfs; a synthetic DWARF-mode
 * trace samples that mapping (registers, and a stack copy whose words point
 * back into it) and a whole report session runs over it: the DSO finder
 * chain and loading (PT_LOAD segments, build-id), symbol tables and
 * demangling, the CFI fast-path unwinder checked against libdwfl on every
 * sample (XPU_UNWIND_CHECK: a difference stops the run), and annotate
 * (capstone, DWARF lines) on each frame found. Property: no crash, no
 * sanitizer report, no difference between the two unwinders.
 *
 * The normal suite replays tests/fuzz/corpus/elf/; `make fuzz` builds the
 * libFuzzer binary (tests/Makefile.tests says how to run it).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gelf.h>
#include "common/log.h"
#include "format/writer.h"
#include "report/annotate/annotate.h"
#include "report/symbols/dso.h"
#include "report/finders/find_chain.h"
#include "report/session/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_PID	4242
#define FUZZ_PATH	"/fuzz/libfuzz.so"	/* recorded path: SYMFS/fuzz/libfuzz.so */
#define FUZZ_SP		0x7ffc12340000ULL	/* stack pointer of every sample */
#define FUZZ_STACK	1024			/* bytes of stack copy */
#define FUZZ_SAMPLES	8
#define FUZZ_MAX_FRAMES	16			/* frames annotated per input */

static char dir[64], symfs[96], elf_path[160], trace_path[96];

static void fuzz__cleanup(void)
{
	unlink(elf_path);
	unlink(trace_path);
	snprintf(elf_path, sizeof(elf_path), "%s/fuzz", symfs);
	rmdir(elf_path);
	rmdir(symfs);
	rmdir(dir);
}

/* A private directory on tmpfs when there is one: the writer fsyncs. */
static void fuzz__setup(void)
{
	snprintf(dir, sizeof(dir), "%s/xpu-fuzz-elf-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!mkdtemp(dir))
		abort();
	snprintf(symfs, sizeof(symfs), "%s/symfs", dir);
	snprintf(elf_path, sizeof(elf_path), "%s/fuzz", symfs);
	if (mkdir(symfs, 0700) || mkdir(elf_path, 0700))
		abort();
	snprintf(elf_path, sizeof(elf_path), "%s%s", symfs, FUZZ_PATH);
	snprintf(trace_path, sizeof(trace_path), "%s/xpu.data", dir);
	atexit(fuzz__cleanup);
	/* every sample unwound by both the fast path and libdwfl, compared */
	setenv("XPU_UNWIND_CHECK", "1", 1);
	elf_version(EV_CURRENT);
}

static int fuzz__write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok = fd >= 0 && write(fd, data, size) == (ssize_t)size;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* Where the mapping goes: the first executable PT_LOAD (else the whole
 * file) mapped as the loader would, the input's build-id, and addresses
 * inside its functions (where the CFI has rules: the fast path runs). */
#define FUZZ_MAX_PCS 64
struct fuzz_map {
	uint64_t start, len, pgoff;
	uint8_t build_id[XPU_MMAP_BUILD_ID_MAX];
	uint8_t build_id_size;
	uint64_t pcs[FUZZ_MAX_PCS];	/* function start, size */
	uint64_t sizes[FUZZ_MAX_PCS];
	int nr_pcs;
};

/* Function symbols of the file, as runtime addresses inside the mapping. */
static void fuzz__functions(Elf *elf, struct fuzz_map *m, uint64_t bias)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (m->nr_pcs < FUZZ_MAX_PCS && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB &&
						sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && m->nr_pcs < FUZZ_MAX_PCS; i++) {
			GElf_Sym sym;
			uint64_t pc;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || sym.st_shndx == SHN_UNDEF)
				continue;
			pc = sym.st_value + bias;
			if (pc < m->start || pc - m->start >= m->len)
				continue;
			m->pcs[m->nr_pcs] = pc;
			m->sizes[m->nr_pcs++] = sym.st_size;
		}
	}
}

static void fuzz__map(const char *path, size_t size, struct fuzz_map *m)
{
	uint64_t vaddr = 0, off = 0, filesz = size;
	bool exec_type = false;
	size_t nphdr = 0;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	memset(m, 0, sizeof(*m));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (elf && gelf_getehdr(elf, &eh)) {
		exec_type = eh.e_type == ET_EXEC;
		if (elf_getphdrnum(elf, &nphdr))
			nphdr = 0;
		for (size_t i = 0; i < nphdr && i < 64; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X)) {
				vaddr = ph.p_vaddr;
				off = ph.p_offset;
				filesz = ph.p_filesz;
				break;
			}
		}
		m->build_id_size = (uint8_t)elf__build_id(elf, m->build_id, sizeof(m->build_id));
	}
	m->pgoff = off & ~4095ULL;
	m->len = ((off - m->pgoff + filesz + 4095) & ~4095ULL);
	if (!m->len || m->len > (1ULL << 32))
		m->len = 1ULL << 16;
	/* ET_EXEC is not relocated: the segment's own address */
	m->start = exec_type ? (vaddr - (off - m->pgoff)) & ~4095ULL : 0x7f1200000000ULL;
	if (m->start == 0 || m->start + m->len < m->start)
		m->start = 0x7f1200000000ULL;
	if (elf)	/* runtime = vaddr + start - (the vaddr at file offset pgoff) */
		fuzz__functions(elf, m, m->start - (vaddr - (off - m->pgoff)));
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* A code address of the mapping: inside a function when it has some. */
static uint64_t fuzz__pc(const struct fuzz_map *m, uint64_t x)
{
	if (m->nr_pcs) {
		int i = (int)(x % m->nr_pcs);

		return m->pcs[i] + 1 + (x >> 8) % m->sizes[i];
	}
	return m->start + x % m->len;
}

static uint64_t fuzz__hash(const uint8_t *data, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < size && i < 4096; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	return h ^ size;
}

static uint64_t fuzz__mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* A trace of one process with the mapping: DWARF-mode samples whose pc and
 * stack words fall inside it, and one frame-pointer-mode sample. */
static int fuzz__write_trace(const struct fuzz_map *m, uint64_t h)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS };
	struct xpu_comm c = { .time = 1, .pid = FUZZ_PID, .tid = FUZZ_PID, .flags = XPU_COMM_EXEC };
	struct xpu_mmap mm = { .time = 1, .pid = FUZZ_PID, .tid = FUZZ_PID, .start = m->start,
			       .len = m->len, .pgoff = m->pgoff, .prot = 5,
			       .build_id_size = m->build_id_size };
	struct xpu_finish fin = { .time = 100, .nr_samples = FUZZ_SAMPLES + 1 };
	struct iovec iov[3];
	struct xpu_writer *w;
	uint64_t regs[XPU_X86_NR_REGS], stack[FUZZ_STACK / 8], ips[8];

	w = xpu_writer__open(trace_path, &wo);
	if (!w)
		return -1;
	xpu_writer__meta(w, "sample_freq", "99");
	strcpy(c.comm, "fuzz");
	xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c));
	memcpy(mm.build_id, m->build_id, sizeof(mm.build_id));
	iov[0] = (struct iovec){ &mm, sizeof(mm) };
	iov[1] = (struct iovec){ (void *)FUZZ_PATH, sizeof(FUZZ_PATH) };
	xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);

	for (int i = 0; i < FUZZ_SAMPLES; i++) {
		/* Samples 0, 1: return addresses into the mapping with frame
		 * pointers between them (a pc in no module: libdwfl's turn).
		 * 2, 3: return addresses only, on a short stack so that the
		 * chain ends by running off the copy, all on the fast path. */
		uint32_t stack_size = i % 4 < 2 ? FUZZ_STACK : 32 + 32 * (i % 4);
		struct xpu_sample s = { .time = 10 + i, .pid = FUZZ_PID, .tid = FUZZ_PID,
					.weight = 1,
					.stack = { .nr_regs = XPU_X86_NR_REGS,
						   .arch = XPU_ARCH_X86_64,
						   .stack_size = stack_size } };

		for (size_t k = 0; k < FUZZ_STACK / 8; k++)
			stack[k] = i % 4 < 2 && k % 3 == 2 ?
				   FUZZ_SP + 8 * (k + 1 + fuzz__mix(h + k) % 8) :
				   fuzz__pc(m, fuzz__mix(h + 97 * k + i));
		for (int r = 0; r < XPU_X86_NR_REGS; r++)
			regs[r] = fuzz__mix(h + 1000 * i + r);
		regs[XPU_X86_RSP] = FUZZ_SP;
		regs[XPU_X86_RBP] = FUZZ_SP + 64;
		regs[XPU_X86_RIP] = i % 2 ? fuzz__pc(m, fuzz__mix(h + i)) :
				    m->start + (i * m->len / FUZZ_SAMPLES + fuzz__mix(h + i) % 64) % m->len;
		iov[0] = (struct iovec){ &s, sizeof(s) };
		iov[1] = (struct iovec){ regs, sizeof(regs) };
		iov[2] = (struct iovec){ stack, stack_size };
		xpu_writer__addv(w, XPU_REC_SAMPLE, 0, iov, 3);
	}
	{
		struct xpu_sample s = { .time = 50, .pid = FUZZ_PID, .tid = FUZZ_PID, .weight = 1,
					.stack = { .nr_user_ips = 8 } };

		for (int k = 0; k < 8; k++)
			ips[k] = fuzz__pc(m, fuzz__mix(h ^ (k + 7)));
		iov[0] = (struct iovec){ &s, sizeof(s) };
		iov[1] = (struct iovec){ ips, sizeof(ips) };
		xpu_writer__addv(w, XPU_REC_SAMPLE, 0, iov, 2);
	}
	xpu_writer__add(w, XPU_REC_FINISH, &fin, sizeof(fin));
	return xpu_writer__close(w);
}

/* Annotates the frames the samples produced, formatting every line. */
static void fuzz__annotate(struct session *s)
{
	char err[256], line[1024];

	for (uint32_t id = 0; id < s->profile.nr_frames && id < FUZZ_MAX_FRAMES; id++) {
		struct annotation a;

		if (annotate__frame(&a, s, id, err, sizeof(err)))
			continue;
		for (size_t i = 0; i < a.nr; i++)
			annotation__format(&a, i, line, sizeof(line));
		annotation__exit(&a);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_map m;
	struct session s;

	if (!dir[0])
		fuzz__setup();
	xpu_quiet = 1;
	if (fuzz__write_file(elf_path, data, size))
		abort();
	fuzz__map(elf_path, size, &m);
	if (fuzz__write_trace(&m, fuzz__hash(data, size)))
		abort();
	if (session__open(&s, trace_path))
		abort();
	find_symfs__install(&s.machine.dsos, symfs);
	if (session__pass1(&s) || session__pass2(&s))
		abort();
	if (s.nr_samples != FUZZ_SAMPLES + 1)
		__builtin_trap();	/* a sample went missing */
	fuzz__annotate(&s);
	session__close(&s);
	return 0;
}

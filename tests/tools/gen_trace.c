// SPDX-License-Identifier: MIT
/*
 * gen_trace: writes a deterministic xpu.data trace with format/writer.h, for
 * the TUI and report golden tests and bench/{tui,report}_speed.sh.
 *
 * The "profiled program" is this binary itself: its tui_demo_* functions
 * below are real code with symbols and DWARF lines, so xpu-report names the
 * frames, and annotate disassembles them and shows this file's lines. Stacks
 * are frame-pointer style (user pcs), leaf pcs fall on real instruction
 * boundaries (found with capstone), kernel frames come from KSYM records.
 *
 *   pid 100 "tui-demo":   main -> tui_demo_main -> tui_demo_load -> tui_demo_parse      10%
 *                         main -> tui_demo_main -> tui_demo_step -> tui_demo_forward
 *                                                   -> tui_demo_matmul                  30%
 *                         ... -> tui_demo_step -> tui_demo_backward -> tui_demo_matmul  20%
 *                         ... -> tui_demo_step -> tui_demo_launch -> [k] syscall path   10%
 *   tid 101 "tui-worker": tui_demo_worker -> tui_demo_io                                20%
 *   pid 200 "tui-child":  main -> tui_demo_main -> tui_demo_child                       10%
 *   --gpu: per launch-path sample one cudaLaunchKernel (API + correlation record
 *   with the launch stack + kernel), memcpys every 10th; kernel names mangled.
 *
 * Usage: gen_trace -o FILE [-n EVENTS] [--gpu [--sync]] [--freq HZ] [--names] [--lost S:N[:PID]]...
 * Built by `make tests-build` (tests/Makefile.tests) as $(O)/tests/tools/gen_trace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include <gelf.h>
#include "format/writer.h"

#define DEMO __attribute__((noipa, used))

volatile unsigned long tui_sink;

DEMO void tui_demo_parse(int n)
{
	for (int i = 0; i < n; i++)
		tui_sink += (unsigned long)i * 3;
}

DEMO void tui_demo_matmul(int n)
{
	unsigned long acc = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			acc += (unsigned long)(i * j) ^ tui_sink;
	tui_sink = acc;
}

DEMO void tui_demo_io(int n) { tui_sink += (unsigned long)n; }
DEMO void tui_demo_load(int n) { tui_demo_parse(n); tui_sink++; }
DEMO void tui_demo_forward(int n) { tui_demo_matmul(n); tui_sink++; }
DEMO void tui_demo_backward(int n) { tui_demo_matmul(n * 2); tui_sink++; }
DEMO void tui_demo_launch(int n) { tui_sink += (unsigned long)n; tui_sink++; }
DEMO void tui_demo_step(int n) { tui_demo_forward(n); tui_demo_backward(n); tui_demo_launch(n); }
DEMO void tui_demo_child(int n) { tui_sink -= (unsigned long)n; }
DEMO void tui_demo_worker(int n) { tui_demo_io(n); tui_sink++; }
DEMO void tui_demo_main(int n) { tui_demo_load(n); tui_demo_step(n); tui_demo_child(n); }

enum { F_MAIN, F_DMAIN, F_LOAD, F_PARSE, F_STEP, F_FWD, F_BWD, F_MATMUL, F_LAUNCH,
       F_WORKER, F_IO, F_CHILD, F_NR };
static const char *const fn_names[F_NR] = {
	"main", "tui_demo_main", "tui_demo_load", "tui_demo_parse", "tui_demo_step",
	"tui_demo_forward", "tui_demo_backward", "tui_demo_matmul", "tui_demo_launch",
	"tui_demo_worker", "tui_demo_io", "tui_demo_child",
};

struct fn {
	uint64_t addr, size;
	uint64_t insn[256];		/* instruction addresses (leaves) */
	int nr_insn;
};

#define BASE 0x555555554000ULL
#define KBASE 0xffffffff81000000ULL

static struct fn fns[F_NR];

static void gen__die(const char *what)
{
	fprintf(stderr, "gen_trace: %s\n", what);
	exit(1);
}

/* Symbols, instruction boundaries and exec segments of this binary. */
static void gen__self(struct xpu_writer *w, const char *exe, uint64_t time)
{
	int fd = open(exe, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t nph;
	uint8_t bid[XPU_MMAP_BUILD_ID_MAX] = { 0 };
	size_t bid_size = 0;
	csh cs;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		gen__die("cannot read my own ELF");
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_NOTE && (d = elf_getdata(scn, NULL))) {
			GElf_Nhdr nh;
			size_t off = 0, noff, doff;

			while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0)
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= sizeof(bid)) {
					memcpy(bid, (char *)d->d_buf + doff, nh.n_descsz);
					bid_size = nh.n_descsz;
				}
		}
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			gelf_getsym(d, (int)i, &sym);
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			for (int f = 0; name && f < F_NR; f++)
				if (!strcmp(name, fn_names[f]) && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
					fns[f].addr = sym.st_value;
					fns[f].size = sym.st_size;
				}
		}
	}
	for (int f = 0; f < F_NR; f++)
		if (!fns[f].addr || !fns[f].size)
			gen__die("a tui_demo function has no symbol: build me with symbols");

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		gen__die("capstone cs_open failed");
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		gelf_getphdr(elf, (int)i, &ph);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (int f = 0; f < F_NR; f++) {
			uint8_t code[4096];
			cs_insn *insn;
			size_t n, len = fns[f].size < sizeof(code) ? fns[f].size : sizeof(code);

			if (fns[f].addr < ph.p_vaddr || fns[f].addr >= ph.p_vaddr + ph.p_filesz)
				continue;
			if (pread(fd, code, len, (off_t)(ph.p_offset + fns[f].addr - ph.p_vaddr)) !=
			    (ssize_t)len)
				gen__die("short read of my own code");
			n = cs_disasm(cs, code, len, fns[f].addr, 0, &insn);
			for (size_t k = 0; k < n && k < 256; k++)
				fns[f].insn[fns[f].nr_insn++] = insn[k].address;
			cs_free(insn, n);
		}
		{
			struct xpu_mmap m = { .time = time, .pid = 100, .tid = 100,
					      .start = BASE + (ph.p_vaddr & ~0xfffULL),
					      .pgoff = ph.p_offset & ~0xfffULL, .prot = 5, .flags = 2,
					      .build_id_size = (uint8_t)bid_size };
			struct iovec iov[2] = { { &m, sizeof(m) }, { (void *)exe, strlen(exe) + 1 } };

			m.len = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffULL) - (ph.p_vaddr & ~0xfffULL);
			memcpy(m.build_id, bid, sizeof(bid));
			xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);
		}
	}
	cs_close(&cs);
	elf_end(elf);
	close(fd);
	for (int f = 0; f < F_NR; f++)
		if (!fns[f].nr_insn)
			gen__die("cannot disassemble a tui_demo function");
}

/* the kernel's symbols, and the names of gen_trace --names */
#include "tests/tools/gen_trace_names.h"

static void gen__str(struct xpu_writer *w, uint16_t type, const void *fixed, size_t len,
		     const char *s)
{
	struct iovec iov[2] = { { (void *)fixed, len }, { (void *)s, strlen(s) + 1 } };

	xpu_writer__addv(w, type, 0, iov, 2);
}

static void gen__comm(struct xpu_writer *w, uint32_t pid, uint32_t tid, const char *name)
{
	struct xpu_comm c = { .pid = pid, .tid = tid };

	strncpy(c.comm, name, sizeof(c.comm) - 1);
	xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c));
}

/* A return address inside f (pc - 1 must stay inside f). */
static uint64_t ret_addr(int f)
{
	return BASE + fns[f].insn[fns[f].nr_insn > 2 ? 2 : fns[f].nr_insn - 1];
}

/* A leaf pc: a third of the samples on one hot instruction, the rest spread. */
static uint64_t leaf_pc(int f, uint64_t i)
{
	int n = fns[f].nr_insn;

	return BASE + fns[f].insn[i % 3 == 0 ? n / 2 : (int)((i * 7) % (uint64_t)n)];
}

struct stk {
	struct xpu_stack h;
	uint64_t ips[16];
};

/* Builds the stack of path p (root first in chain[]), leaf first on disk. */
static size_t gen__stack(struct stk *s, const int *chain, int n, uint64_t i, bool kernel)
{
	int k = 0;

	memset(s, 0, sizeof(*s));
	if (kernel) {
		for (int j = 3; j >= 0; j--)
			s->ips[k++] = KBASE + 0x1000 * (uint64_t)j + 0x10;
		s->h.nr_kernel_ips = 4;
		s->h.flags = XPU_STACK_KERNEL_MODE;
	}
	for (int j = n - 1; j >= 0; j--)
		s->ips[k++] = j == n - 1 && !kernel ? leaf_pc(chain[j], i) : ret_addr(chain[j]);
	s->h.nr_user_ips = (uint16_t)n;
	return sizeof(s->h) + (size_t)k * 8;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", no_argument, NULL, 'g' }, { "freq", required_argument, NULL, 'F' },
		{ "sync", no_argument, NULL, 'S' }, { "names", no_argument, NULL, 'N' },
		{ "lost", required_argument, NULL, 'L' }, { NULL, 0, NULL, 0 }
	};
	static const int p_parse[] = { F_MAIN, F_DMAIN, F_LOAD, F_PARSE };
	static const int p_fwd[] = { F_MAIN, F_DMAIN, F_STEP, F_FWD, F_MATMUL };
	static const int p_bwd[] = { F_MAIN, F_DMAIN, F_STEP, F_BWD, F_MATMUL };
	static const int p_launch[] = { F_MAIN, F_DMAIN, F_STEP, F_LAUNCH };
	static const int p_worker[] = { F_WORKER, F_IO };
	static const int p_child[] = { F_MAIN, F_DMAIN, F_CHILD };
	static const char *kernels[] = { "_Z10matmul_f32PKfS0_Pfi", "_Z7softmaxPfi",
					 "_Z9layernormPfS_i" };
	const char *out = NULL;
	uint64_t nr_samples = 0, corr_written = 0, gpu_written = 0;
	uint64_t nr_events = 5000, events = 0, t = 1000000000ULL, corr = 1, freq = 999;
	bool gpu = false, sync = false, names = false;
	char exe[4096], buf[64];
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS |
					       XPU_FEAT_KERNEL_STACKS };
	struct xpu_writer *w;
	ssize_t len;
	int c;
	static const char *comms[] = { "tui-demo", "tui-worker", "tui-child" };
	/* --lost SOURCE:COUNT[:PID], up to 16: LOST records before FINISH (its
	 * nr_lost counts them), for the reports' lost lines */
	struct xpu_lost lost[16];
	int nr_lost = 0;

	while ((c = getopt_long(argc, argv, "o:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n': nr_events = strtoull(optarg, NULL, 0); break;
		case 'g': gpu = true; break;
		case 'F': freq = strtoull(optarg, NULL, 0); break;
		case 'S': sync = true; break;
		case 'N': names = true; break;
		case 'L': {
			unsigned src, pid = 0;
			unsigned long long n;

			if (nr_lost == 16 || sscanf(optarg, "%u:%llu:%u", &src, &n, &pid) < 2)
				goto usage;
			lost[nr_lost++] = (struct xpu_lost){ .source = src, .pid = pid, .count = n };
			break;
		}
		default:
			goto usage;
		}
	}
	if (!out || !freq || (sync && !gpu)) {
usage:
		fprintf(stderr, "usage: gen_trace -o FILE [-n EVENTS] [--gpu [--sync]] [--freq HZ] "
			"[--names] [--lost SOURCE:COUNT[:PID]]...\n");
		return 2;
	}
	if (names) {
		for (int k = 0; k < 3; k++) {
			ksyms[k] = names_ksyms[k];
			comms[k] = names_comms[k];
		}
		ksyms[3] = gen__long("nvidia_ioctl_", "\xf0\x9f\x98\x80", GEN_LONG_4);
		kernels[0] = names_kernels[0];
		kernels[1] = names_kernels[1];
		kernels[2] = gen__long("layernorm_\xed\xa0\x80_", "\xe2\x88\x91", GEN_LONG_3);
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		gen__die("cannot find my own executable");
	exe[len] = '\0';
	if (gpu)
		wo.features |= XPU_FEAT_GPU;
	w = xpu_writer__open(out, &wo);
	if (!w) {
		fprintf(stderr, "gen_trace: cannot create %s: %s\n", out, strerror(errno));
		return 1;
	}
	xpu_writer__meta(w, "cmdline", names ? "tui-demo \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xff "
			 "--steps 1000" : "tui-demo --steps 1000");
	xpu_writer__meta(w, "hostname", "tui-test");
	xpu_writer__meta(w, "kernel", "6.18.0");
	xpu_writer__meta(w, "arch", "x86_64");
	xpu_writer__meta(w, "nr_cpus", "2");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)freq);
	xpu_writer__meta(w, "sample_freq", buf);
	xpu_writer__meta(w, "call_graph", "fp");
	xpu_writer__meta(w, "clock", "monotonic");
	xpu_writer__meta(w, "gpu", gpu ? "on" : "off");
	for (int k = 0; k < 4; k++) {
		struct xpu_ksym ks = { .addr = KBASE + 0x1000 * (uint64_t)k, .size = 0x1000 };

		gen__str(w, XPU_REC_KSYM, &ks, sizeof(ks), ksyms[k]);
	}
	gen__comm(w, 100, 100, comms[0]);
	gen__self(w, exe, t);
	{
		struct xpu_fork th = { .time = t, .pid = 100, .tid = 101, .ppid = 100, .ptid = 100 };
		struct xpu_fork ch = { .time = t, .pid = 200, .tid = 200, .ppid = 100, .ptid = 100 };

		xpu_writer__add(w, XPU_REC_FORK, &th, sizeof(th));
		xpu_writer__add(w, XPU_REC_FORK, &ch, sizeof(ch));
	}
	gen__comm(w, 100, 101, comms[1]);
	gen__comm(w, 200, 200, comms[2]);
	if (gpu)
		for (uint32_t k = 0; k < 3; k++) {
			struct xpu_string s = { .pid = 100, .id = k + 1 };

			gen__str(w, XPU_REC_STRING, &s, sizeof(s), kernels[k]);
		}
	{
		struct xpu_writer_stats ws;

		xpu_writer__stats(w, &ws);
		events = ws.records;
	}
	for (uint64_t i = 0; events < nr_events; i++) {
		struct {
			struct xpu_sample s;
			uint64_t ips[16];
		} smp;
		struct stk st;
		const int *chain;
		int n, r = (int)(i % 100);
		uint32_t pid = 100, tid = 100;
		bool kernel = false;
		size_t sz;

		if (r < 10)      { chain = p_parse; n = 4; }
		else if (r < 40) { chain = p_fwd; n = 5; }
		else if (r < 60) { chain = p_bwd; n = 5; }
		else if (r < 70) { chain = p_launch; n = 4; kernel = true; }
		else if (r < 90) { chain = p_worker; n = 2; tid = 101; }
		else             { chain = p_child; n = 3; pid = tid = 200; }
		t += 1000000000ULL / freq / 2;
		sz = gen__stack(&st, chain, n, i, kernel);
		memset(&smp, 0, sizeof(smp));
		smp.s = (struct xpu_sample){ .time = t, .pid = pid, .tid = tid, .cpu = tid & 1,
					     .weight = 1 };
		memcpy(&smp.s.stack, &st, sz);
		xpu_writer__add(w, XPU_REC_SAMPLE, &smp, offsetof(struct xpu_sample, stack) + sz);
		events++;
		nr_samples++;
		if (gpu && kernel && events + 3 <= nr_events) {
			struct { struct xpu_gpu_corr c; uint64_t ips[16]; } cr;
			struct xpu_gpu_api api = { .start = t, .end = t + 4000, .correlation_id = corr,
						   .pid = 100, .tid = 100, .domain = XPU_API_RUNTIME,
						   .cbid = 211 };
			uint32_t kid = (uint32_t)(i / 100 % 10 < 6 ? 1 : i / 100 % 10 < 9 ? 2 : 3);
			uint64_t dur = kid == 1 ? 200000 + (i / 100 % 7) * 10000 : kid == 2 ? 50000 : 120000;
			struct xpu_gpu_kernel k = { .start = t + 10000, .end = t + 10000 + dur,
						    .correlation_id = corr, .pid = 100,
						    .name_id = kid, .grid = { 64, 1, 1 },
						    .block = { 256, 1, 1 } };

			sz = gen__stack(&st, p_launch, 4, i, false);
			memset(&cr, 0, sizeof(cr));
			cr.c = (struct xpu_gpu_corr){ .time = t, .pid = 100, .tid = 100,
						      .domain = XPU_API_RUNTIME, .correlation_id = corr,
						      .cbid = 211 };
			memcpy(&cr.c.stack, &st, sz);
			xpu_writer__add(w, XPU_REC_GPU_CORR, &cr, offsetof(struct xpu_gpu_corr, stack) + sz);
			xpu_writer__add(w, XPU_REC_GPU_API, &api, sizeof(api));
			xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
			events += 3;
			corr++;
			corr_written++;
			gpu_written += 2;
			if (i / 100 % 10 == 0 && events < nr_events) {
				struct xpu_gpu_memcpy m = { .start = t + 300000, .end = t + 340000,
							    .correlation_id = corr++, .bytes = 1 << 20,
							    .pid = 100, .copy_kind = (i / 1000) % 2 ?
							    XPU_MEMCPY_DTOH : XPU_MEMCPY_HTOD };

				xpu_writer__add(w, XPU_REC_GPU_MEMCPY, &m, sizeof(m));
				events++;
				gpu_written++;
			}
			/* --sync: after the last launch of each 10, a 300 us
			 * cudaStreamSynchronize (API, correlation and GPU_SYNC
			 * records) that waits on that kernel, then on nothing
			 * (the usage comment above keeps its length: the TUI
			 * tests name this file's line numbers) */
			if (sync && r == 69 && events + 3 <= nr_events) {
				struct xpu_gpu_api sa = { .start = t + 5000, .end = t + 305000,
							  .correlation_id = corr, .pid = 100,
							  .tid = 100, .domain = XPU_API_RUNTIME,
							  .cbid = 131 };	/* cudaStreamSynchronize */
				struct xpu_gpu_sync y = { .start = t + 6000, .end = t + 304000,
							  .correlation_id = corr, .pid = 100,
							  .type = 3, .event = UINT32_MAX };

				cr.c.time = t + 5000;
				cr.c.correlation_id = corr++;
				cr.c.cbid = 131;
				xpu_writer__add(w, XPU_REC_GPU_CORR, &cr,
						offsetof(struct xpu_gpu_corr, stack) + sz);
				xpu_writer__add(w, XPU_REC_GPU_API, &sa, sizeof(sa));
				xpu_writer__add(w, XPU_REC_GPU_SYNC, &y, sizeof(y));
				events += 3;
				corr_written++;
				gpu_written++;
			}
		}
	}
	{
		struct xpu_finish fin = { .time = t, .nr_samples = nr_samples,
					  .nr_corr = corr_written, .nr_gpu = gpu_written };

		for (int i = 0; i < nr_lost; i++) {
			lost[i].time = t;
			xpu_writer__add(w, XPU_REC_LOST, &lost[i], sizeof(lost[i]));
			fin.nr_lost += lost[i].count;
			events++;
		}
		xpu_writer__add(w, XPU_REC_FINISH, &fin, sizeof(fin));
	}
	if (xpu_writer__close(w)) {
		fprintf(stderr, "gen_trace: writing %s failed\n", out);
		return 1;
	}
	printf("gen_trace: %s: %llu events\n", out, (unsigned long long)events + 1);
	return 0;
}

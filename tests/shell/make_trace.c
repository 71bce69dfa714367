// SPDX-License-Identifier: MIT
/*
 * Test helper for tests/shell/report_paths.sh: writes a small trace whose
 * MMAP records name whatever paths the test chooses (a FIFO, /proc/self/mem,
 * a "../" path, a truncated file), with CPU samples (frame-pointer style, one
 * user pc) falling into each, so xpu-report and xpu-archive must look at them.
 *
 *   make_trace -o FILE MAPPING...
 *
 * MAPPING is RECORDED, RECORDED=ELF or RECORDED=ELF,nobid:
 *   RECORDED           one 64 KiB mapping of the path, no build-id, samples
 *                      at offset 0x1000; the path is never opened here
 *   RECORDED=ELF       the executable segments of the real file ELF mapped as
 *                      RECORDED, with ELF's build-id, samples inside "main"
 *   RECORDED=ELF,nobid the same without the build-id
 * Each mapping gets 10 samples of pid 100 ("hostile").
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include "common/elf_buildid.h"
#include "format/writer.h"

#define BASE	0x400000000000ULL	/* mapping i at BASE + i * STRIDE */
#define STRIDE	0x10000000ULL

static void die_(const char *what, const char *arg)
{
	fprintf(stderr, "make_trace: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	exit(1);
}

static void add_mmap(struct xpu_writer *w, const char *path, uint64_t start, uint64_t len,
		     uint64_t pgoff, const uint8_t *bid, size_t bid_size)
{
	struct xpu_mmap m = { .time = 1000, .pid = 100, .tid = 100, .start = start, .len = len,
			      .pgoff = pgoff, .prot = 5, .flags = 2,
			      .build_id_size = (uint8_t)bid_size };
	struct iovec iov[2] = { { &m, sizeof(m) }, { (void *)path, strlen(path) + 1 } };

	memcpy(m.build_id, bid, bid_size);
	if (xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2))
		die_("cannot write an MMAP record", path);
}

/* Maps ELF's executable segments as recorded; returns the runtime pc of main. */
static uint64_t map_elf(struct xpu_writer *w, const char *recorded, const char *file,
			bool with_bid, uint64_t base)
{
	uint8_t bid[XPU_MMAP_BUILD_ID_MAX] = { 0 };
	size_t bid_size = 0, nph;
	uint64_t main_vaddr = 0;
	Elf_Scn *scn = NULL;
	int fd = open(file, O_RDONLY);
	Elf *elf;

	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		die_("cannot read the ELF file", file);
	bid_size = elf__build_id(elf, bid, sizeof(bid));	/* the reader record and report use */
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !d)
			continue;
		for (size_t i = 0; sh.sh_type == SHT_SYMTAB && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
			    !strcmp(name, "main") && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				main_vaddr = sym.st_value;
		}
	}
	if (!main_vaddr)
		die_("the ELF file has no symbol main", file);
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		add_mmap(w, recorded, base + (ph.p_vaddr & ~0xfffULL),
			 ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffULL) - (ph.p_vaddr & ~0xfffULL),
			 ph.p_offset & ~0xfffULL, bid, with_bid ? bid_size : 0);
	}
	elf_end(elf);
	close(fd);
	return base + main_vaddr + 1;
}

int main(int argc, char **argv)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS };
	struct xpu_comm comm = { .pid = 100, .tid = 100 };
	struct xpu_finish fin = { .time = 1000000 };
	struct xpu_writer *w;
	uint64_t t = 2000;
	int first = 3;

	if (argc < 4 || strcmp(argv[1], "-o")) {
		fprintf(stderr, "usage: make_trace -o FILE RECORDED[=ELF[,nobid]]...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	w = xpu_writer__open(argv[2], &wo);
	if (!w)
		die_("cannot create the trace", argv[2]);
	xpu_writer__meta(w, "cmdline", "hostile");
	xpu_writer__meta(w, "arch", "x86_64");
	xpu_writer__meta(w, "sample_freq", "99");
	xpu_writer__meta(w, "call_graph", "fp");
	xpu_writer__meta(w, "clock", "monotonic");
	strcpy(comm.comm, "hostile");
	xpu_writer__add(w, XPU_REC_COMM, &comm, sizeof(comm));
	for (int i = first; i < argc; i++) {
		uint64_t base = BASE + (uint64_t)(i - first) * STRIDE, pc;
		char *spec = strdup(argv[i]), *elf = strchr(spec, '=');

		if (elf) {
			char *opt = strrchr(elf + 1, ',');
			bool nobid = opt && !strcmp(opt, ",nobid");

			*elf++ = '\0';
			if (nobid)
				*opt = '\0';
			pc = map_elf(w, spec, elf, !nobid, base);
		} else {
			add_mmap(w, spec, base, 0x10000, 0, NULL, 0);
			pc = base + 0x1000;
		}
		for (int k = 0; k < 10; k++) {
			struct { struct xpu_sample s; uint64_t ip; } smp = {
				.s = { .time = t += 1000, .pid = 100, .tid = 100, .weight = 1,
				       .stack = { .nr_user_ips = 1 } },
				.ip = pc,
			};

			fin.nr_samples++;
			if (xpu_writer__add(w, XPU_REC_SAMPLE, &smp, sizeof(smp)))
				die_("cannot write a sample", NULL);
		}
		free(spec);
	}
	fin.time = t + 1000;
	xpu_writer__add(w, XPU_REC_FINISH, &fin, sizeof(fin));
	if (xpu_writer__close(w))
		die_("cannot write the trace", argv[2]);
	return 0;
}

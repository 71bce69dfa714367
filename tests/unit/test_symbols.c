// SPDX-License-Identifier: MIT
/*
 * Symbol lookup against a real ELF (this test program itself: its .symtab
 * names the functions below; libc has only .dynsym), zero-size symbol fix-up,
 * alias choice, load-bias arithmetic, and the build-id check: a file whose
 * build-id differs from the recorded one is never used. The radix sort the
 * tables use, against a stable reference sort. The pages of the file that a
 * table and the CFI read go back (elf_pages.h): counted in /proc/self/pagemap.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/elf_pages.h"
#include "common/sort.h"
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "report/symbols/dso.h"
#include "report/machine/machine.h"
#include "report/output/output.h"
#include "report/profile/profile.h"
#include "report/session/session.h"

__attribute__((noinline)) int sym_target_one(int x)
{
	return x * 7 + 1;
}

__attribute__((noinline)) int sym_target_two(int x)
{
	return sym_target_one(x) - 3;
}

static char sym_exe[4096];

/* Mapping of our executable covering addr: start, pgoff. */
static int sym_find_map(uint64_t addr, uint64_t *start, uint64_t *pgoff)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &s, &e, &off) == 3 && addr >= s && addr < e) {
			*start = s;
			*pgoff = off;
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

static void test_symbols_own_elf(void)
{
	struct dsos d;
	struct dso *dso;
	uint64_t start, pgoff, bias, a1 = (uint64_t)&sym_target_one, a2 = (uint64_t)&sym_target_two;
	struct symbol *sym;
	uint8_t id[XPU_MMAP_BUILD_ID_MAX];
	size_t id_size;

	TEST_ASSERT(readlink("/proc/self/exe", sym_exe, sizeof(sym_exe) - 1) > 0);
	id_size = rt_file_build_id(sym_exe, id);
	TEST_ASSERT(id_size == 20);
	dsos__init(&d);
	dso = dsos__findnew(&d, sym_exe, id, id_size);
	TEST_ASSERT(dso == dsos__findnew(&d, "/other/path/same/build-id", id, id_size));
	TEST_ASSERT_EQ(dso__load(dso, &d), 0);
	TEST_ASSERT_EQ(dso->status, DSO_OK);
	TEST_ASSERT(sym_find_map(a1, &start, &pgoff) == 0);
	bias = dso__bias(dso, start, pgoff);
	sym = dso__find_symbol(dso, a1 - bias);
	TEST_ASSERT(sym && !strcmp(symtab__name(&dso->symtab, sym), "sym_target_one"));
	TEST_ASSERT_EQ(sym->addr, a1 - bias);
	sym = dso__find_symbol(dso, a2 - bias + 3);	/* inside, not at the start */
	TEST_ASSERT(sym && !strcmp(symtab__display(&dso->symtab, sym), "sym_target_two"));
	TEST_ASSERT(dso->symtab.nr > 10);
	dsos__exit(&d);
}

/* Pages of [p, p + n) present in this process's page table. */
static size_t sym_resident(const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p & ~(page - 1);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t present = 0;

	for (; fd >= 0 && a < (uintptr_t)p + n; a += page) {
		uint64_t ent = 0;

		if (pread(fd, &ent, sizeof(ent), (off_t)(a / page * 8)) == sizeof(ent))
			present += ent >> 63;
	}
	if (fd >= 0)
		close(fd);
	return present;
}

/* A section's place in elf's mapping of the file. */
static const char *sym_section(Elf *elf, const char *want, size_t *size)
{
	size_t shstrndx, raw_size;
	const char *base = elf_rawfile(elf, &raw_size);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!base || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), want)) {
			*size = sh.sh_size;
			return base + sh.sh_offset;
		}
	return NULL;
}

/* Touches every page of [p, p + n). */
static unsigned sym_touch(const char *p, size_t n)
{
	unsigned sum = 0;

	for (size_t i = 0; i < n; i += 512)
		sum += *(volatile const char *)(p + i);
	return sum;
}

static void test_symbols_pages_back(void)
{
	struct dsos d;
	struct dso *dso;
	struct symtab st;
	const char *eh, *str;
	size_t eh_size = 0, str_size = 0, pages;
	static const char *const names[] = { ".eh_frame", NULL };

	TEST_ASSERT(readlink("/proc/self/exe", sym_exe, sizeof(sym_exe) - 1) > 0);
	dsos__init(&d);
	dso = dsos__findnew(&d, sym_exe, NULL, 0);
	TEST_ASSERT_EQ(dso__load(dso, &d), 0);
	/* a section read through the file's mapping goes back whole but for
	 * the pages it shares at its ends */
	eh = sym_section(dso->elf, ".eh_frame", &eh_size);
	TEST_ASSERT(eh && eh_size > 5 * 4096);
	sym_touch(eh, eh_size);
	pages = sym_resident(eh, eh_size);
	TEST_ASSERT(pages >= eh_size / 4096);
	elf_pages__release_sections(dso->elf, names);
	TEST_ASSERT(sym_resident(eh, eh_size) <= 2);
	/* a table's string table: back after loading; the names read later
	 * go back every ELF_PAGES_EVERY lookups (from any size on: this one is
	 * smaller than the 4 MiB a report waits for) */
	symtab__init(&st, false);
	TEST_ASSERT(elf_pages__min_region > 5 * 4096);
	elf_pages__min_region = 0;
	TEST_ASSERT_EQ(symtab__load_elf(&st, dso->elf, true), 0);
	str = st.names_buf;
	str_size = st.names_size;
	TEST_ASSERT(str && str_size > 5 * 4096 && st.names_elf == dso->elf);
	TEST_ASSERT(sym_resident(str, str_size) <= 2);
	for (size_t i = 0; i < st.nr; i++)
		sym_touch(symtab__name(&st, &st.syms[i]), 1);
	pages = sym_resident(str, str_size);
	TEST_ASSERT(pages >= str_size / 4096);
	for (int i = 0; i < ELF_PAGES_EVERY - 1; i++)	/* address 0: no name read */
		TEST_ASSERT(symtab__lookup(&st, 0) == NULL);
	TEST_ASSERT_EQ(sym_resident(str, str_size), pages);
	TEST_ASSERT(symtab__lookup(&st, 0) == NULL);
	TEST_ASSERT(sym_resident(str, str_size) <= 2);
	symtab__exit(&st);
	/* below the threshold, a table's names stay */
	elf_pages__min_region = str_size + 1;
	symtab__init(&st, false);
	TEST_ASSERT_EQ(symtab__load_elf(&st, dso->elf, true), 0);
	TEST_ASSERT(st.names_elf == NULL);
	symtab__exit(&st);
	elf_pages__min_region = 4u << 20;
	dsos__exit(&d);
}

static void test_symbols_table_rules(void)
{
	struct symtab st;
	struct symbol *s;

	symtab__init(&st, true);
	symtab__add(&st, 0x3000, 0, "after_zero", STB_GLOBAL);	/* zero size: up to next */
	symtab__add(&st, 0x1000, 0x100, "_local_alias", STB_LOCAL);
	symtab__add(&st, 0x1000, 0x100, "global_name", STB_GLOBAL);
	symtab__add(&st, 0x2000, 0, "zero_size", STB_GLOBAL);
	symtab__add(&st, 0x2800, 0x10, "inner", STB_GLOBAL);
	symtab__add(&st, 0x5000, 0x10, "start_main@@GLIBC_2.34", STB_GLOBAL);
	symtab__add(&st, 0x5000, 0x10, "start_main_impl", STB_LOCAL);
	symtab__add(&st, 0x5000, 0x10, "start_main_alias_2", STB_GLOBAL);
	symtab__add(&st, 0x6000, 0x10, "memcpy@GLIBC_2.2.5", STB_GLOBAL);
	symtab__add(&st, 0x7000, 0x10, "f", STB_GLOBAL);	/* "foo" extends "f" but is */
	symtab__add(&st, 0x7000, 0x10, "foo", STB_GLOBAL);	/* no alias of it: longer wins */
	symtab__finish(&st);
	TEST_ASSERT_EQ(st.nr, 7);			/* aliases merged */
	s = symtab__find(&st, 0x1000);
	TEST_ASSERT(s && !strcmp(symtab__name(&st, s), "global_name"));
	TEST_ASSERT(symtab__find(&st, 0x1100) == NULL);	/* past the sized symbol */
	TEST_ASSERT(symtab__find(&st, 0xfff) == NULL);
	s = symtab__find(&st, 0x27ff);
	TEST_ASSERT(s && !strcmp(symtab__name(&st, s), "zero_size"));
	TEST_ASSERT_EQ(s->size, 0x800);
	s = symtab__find(&st, 0x2808);
	TEST_ASSERT(s && !strcmp(symtab__name(&st, s), "inner"));
	s = symtab__find(&st, 0x3fff);			/* zero size: up to the next */
	TEST_ASSERT(s && !strcmp(symtab__name(&st, s), "after_zero"));
	s = symtab__find(&st, 0x5004);	/* the public name beats its _impl alias */
	TEST_ASSERT(s && !strcmp(symtab__display(&st, s), "start_main"));
	s = symtab__find(&st, 0x6004);			/* version stripped for display */
	TEST_ASSERT(s && !strcmp(symtab__display(&st, s), "memcpy"));
	s = symtab__find(&st, 0x7004);
	TEST_ASSERT(s && !strcmp(symtab__display(&st, s), "foo"));
	symtab__exit(&st);
}

/* A display name asked for before the table's own names grow stays valid:
 * they move when their store grows. */
static void test_symbols_display_stable(void)
{
	struct symtab st;
	const char *d;
	char name[32];

	symtab__init(&st, true);
	symtab__add(&st, 0x1000, 0x10, "first_symbol", STB_GLOBAL);
	d = symtab__display(&st, &st.syms[0]);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "grown_%d", i);
		symtab__add(&st, 0x2000 + 0x10 * (uint64_t)i, 0x10, name, STB_GLOBAL);
	}
	TEST_ASSERT(!strcmp(d, "first_symbol"));
	symtab__finish(&st);
	TEST_ASSERT(!strcmp(symtab__display(&st, symtab__find(&st, 0x1004)), "first_symbol"));
	TEST_ASSERT(!strcmp(symtab__display(&st, symtab__find(&st, 0x2000 + 0x10 * 4999)),
			    "grown_4999"));
	symtab__exit(&st);
}

static void test_symbols_bias(void)
{
	struct dso dso = { .nr_segs = 2 };
	struct elf_seg segs[2] = {
		{ .vaddr = 0, .offset = 0, .filesz = 0x628, .memsz = 0x628 },
		{ .vaddr = 0x1000, .offset = 0x1000, .filesz = 0x1b5, .memsz = 0x1b5, .exec = true },
	};

	dso.segs = segs;
	/* PIE, separate text page: r-x mapping of file offset 0x1000 */
	TEST_ASSERT_EQ(dso__bias(&dso, 0x7f0000001000, 0x1000), 0x7f0000000000);
	/* text sharing its first page with headers: vaddr 0x1d10 at offset 0xd10,
	 * mapped from file offset 0 at S: vaddr 0x1d10 runs at S + 0xd10 */
	segs[1] = (struct elf_seg){ .vaddr = 0x1d10, .offset = 0xd10, .filesz = 0x500,
				    .memsz = 0x500, .exec = true };
	TEST_ASSERT_EQ(dso__bias(&dso, 0x7f0000001000, 0), 0x7f0000001000 - 0x1000);
	dso.exec_type = true;				/* ET_EXEC: fixed addresses */
	TEST_ASSERT_EQ(dso__bias(&dso, 0x401000, 0x1000), 0);
}

/* A trace whose MMAP names our executable with a wrong build-id: the report
 * must not use the file (frames stay module+offset) and must say so. */
static void test_symbols_build_id_mismatch(void)
{
	char path[] = "/tmp/xpu-test-symbols-XXXXXX";
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS };
	struct xpu_writer *w;
	struct session s;
	uint64_t start, pgoff, a1 = (uint64_t)&sym_target_one + 4;
	struct {
		struct xpu_mmap m;
		char path[4096];
	} mm = { 0 };
	struct {
		struct xpu_sample s;
		uint64_t ip;
	} smp = { 0 };
	int fd;

	TEST_ASSERT((fd = mkstemp(path)) >= 0);
	close(fd);
	TEST_ASSERT(readlink("/proc/self/exe", sym_exe, sizeof(sym_exe) - 1) > 0);
	TEST_ASSERT(sym_find_map(a1, &start, &pgoff) == 0);
	for (int round = 0; round < 2; round++) {
		const struct frame *f;
		size_t n;
		const uint32_t *fr;

		w = xpu_writer__open(path, &wo);
		TEST_ASSERT(w);
		mm.m = (struct xpu_mmap){ .time = 1, .pid = 10, .tid = 10, .start = start,
					  .len = 0x100000, .pgoff = pgoff, .build_id_size = 20 };
		rt_file_build_id(sym_exe, mm.m.build_id);
		if (round == 1)
			mm.m.build_id[0] ^= 0xff;	/* a different build of the file */
		strcpy(mm.path, sym_exe);
		TEST_ASSERT_EQ(xpu_writer__add(w, XPU_REC_MMAP, &mm,
					       sizeof(mm.m) + strlen(sym_exe) + 1), 0);
		smp.s = (struct xpu_sample){ .time = 2, .pid = 10, .tid = 10, .weight = 1,
					     .stack = { .nr_user_ips = 1 } };
		smp.ip = a1;
		TEST_ASSERT_EQ(xpu_writer__add(w, XPU_REC_SAMPLE, &smp, sizeof(smp)), 0);
		TEST_ASSERT_EQ(xpu_writer__close(w), 0);

		TEST_ASSERT_EQ(session__open(&s, path), 0);
		TEST_ASSERT_EQ(session__pass1(&s), 0);
		TEST_ASSERT_EQ(session__pass2(&s), 0);
		TEST_ASSERT_EQ(s.profile.nr_entries, 1);
		fr = profile__stack(&s.profile, s.profile.entries[0].stack, &n);
		TEST_ASSERT_EQ(n, 1);
		f = profile__frame(&s.profile, fr[0]);
		if (round == 0) {
			TEST_ASSERT(!strcmp(f->name, "sym_target_one"));
			TEST_ASSERT(!f->unknown);
		} else {
			/* "[test_symbols]" (one frame per module unless
			 * unknown_addrs) and the DSO marked as mismatched */
			TEST_ASSERT(f->unknown);
			TEST_ASSERT(!strcmp(f->name, "[test_symbols]"));
			TEST_ASSERT_EQ(f->addr, 0);
			TEST_ASSERT_EQ(s.machine.dsos.list[0]->status, DSO_MISMATCH);
			TEST_ASSERT_EQ(s.machine.dsos.list[0]->frames_unsymbolized, 1);
		}
		session__close(&s);
	}
	unlink(path);
}

static int pair__cmp_stable(const void *a, const void *b)
{
	const struct xpu_sort_pair *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->val < y->val ? -1 : x->val > y->val;
}

/* Keys like a symbol table's (one file's addresses: top bytes alike), full
 * 64-bit keys, many duplicates, and sizes 0-2: the same order as a stable
 * sort, duplicates in their first order. */
static void test_radix_sort(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 100, 5000 };
	uint64_t seed = 42;

	for (int kind = 0; kind < 3; kind++) {
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t n = sizes[si];
			struct xpu_sort_pair *a = calloc(n + 1, sizeof(*a)), *ref = calloc(n + 1, sizeof(*a));

			for (size_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				a[i].key = kind == 0 ? 0x7f0000000000ULL + (seed >> 40) :
					   kind == 1 ? seed : (seed >> 60);
				a[i].val = i;
			}
			memcpy(ref, a, n * sizeof(*a));
			if (n)	/* val is the first position: the reference is stable */
				qsort(ref, n, sizeof(*ref), pair__cmp_stable);
			xpu_radix_sort(a, n);
			TEST_ASSERT(!memcmp(a, ref, n * sizeof(*a)));
			free(a);
			free(ref);
		}
	}
}

int main(void)
{
	TEST_RUN(test_radix_sort);
	TEST_RUN(test_symbols_own_elf);
	TEST_RUN(test_symbols_pages_back);
	TEST_RUN(test_symbols_table_rules);
	TEST_RUN(test_symbols_display_stable);
	TEST_RUN(test_symbols_bias);
	TEST_RUN(test_symbols_build_id_mismatch);
	TEST_EXIT();
}

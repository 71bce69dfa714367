// SPDX-License-Identifier: MIT
/*
 * The eval loop of a stripped interpreter (report/symbols/pyeval.h), against
 * tests/data/python/fake_eval.S built as Debian's 3.14/3.15 have it: the
 * exported _PyEval_EvalFrameDefault a head that jumps into its cold part,
 * where the dispatch table points. Stripped, an executable and a shared
 * object (its table relocated): the cold part is named
 * "_PyEval_EvalFrameDefault.cold", which callchain__resolve() replaces by
 * the activation's Python frames; what the head tail-calls and a function
 * with a switch table of its own stay nameless. Unstripped: the file's own
 * names stay. The addresses come from the unstripped build's .symtab.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "report/symbols/dso.h"
#include "report/symbols/pyeval.h"
#include "report/unwind/pyframes.h"

static char pe_dir[PATH_MAX - 64];

static void pe_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/../data/%s", pe_dir, name);
}

/* The address and size of a symbol of the unstripped file's .symtab. */
static int pe_sym(const char *file, const char *name, uint64_t *addr, uint64_t *size)
{
	char path[PATH_MAX];
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int fd, ret = -1;

	pe_path(path, sizeof(path), file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(e, sh.sh_link, s.st_name)) &&
			    !strcmp(n, name)) {
				*addr = s.st_value;
				*size = s.st_size;
				ret = 0;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

static const char *pe_name(struct dso *dso, uint64_t vaddr)
{
	struct symbol *s = dso__find_symbol(dso, vaddr);

	return s ? symtab__name(&dso->symtab, s) : "(none)";
}

static void pe_check(const char *stripped, const char *full)
{
	char path[PATH_MAX];
	uint64_t cold, cold_size, helper, helper_size, sw, sw_size, head, head_size;
	struct dsos d;
	struct dso *dso;

	TEST_ASSERT_EQ(pe_sym(full, "fake_eval_cold", &cold, &cold_size), 0);
	TEST_ASSERT_EQ(pe_sym(full, "fake_helper", &helper, &helper_size), 0);
	TEST_ASSERT_EQ(pe_sym(full, "fake_switch", &sw, &sw_size), 0);
	TEST_ASSERT_EQ(pe_sym(full, "_PyEval_EvalFrameDefault", &head, &head_size), 0);
	TEST_ASSERT(cold_size > 256);

	pe_path(path, sizeof(path), stripped);
	dsos__init(&d);
	dso = dsos__findnew(&d, path, NULL, 0);
	TEST_ASSERT_EQ(dso__load(dso, &d), 0);
	/* every pc of the cold part, its first and last byte too */
	TEST_ASSERT(!strcmp(pe_name(dso, cold), "_PyEval_EvalFrameDefault.cold"));
	TEST_ASSERT(!strcmp(pe_name(dso, cold + cold_size / 2), "_PyEval_EvalFrameDefault.cold"));
	TEST_ASSERT(!strcmp(pe_name(dso, cold + cold_size - 1), "_PyEval_EvalFrameDefault.cold"));
	TEST_ASSERT(pyframes__is_eval(pe_name(dso, cold + 7)));
	TEST_ASSERT(strcmp(pe_name(dso, cold + cold_size), "_PyEval_EvalFrameDefault.cold"));
	/* the exported head keeps its name; the decoys have none */
	TEST_ASSERT(!strcmp(pe_name(dso, head + 1), "_PyEval_EvalFrameDefault"));
	TEST_ASSERT(!strcmp(pe_name(dso, helper), "(none)"));
	TEST_ASSERT(!strcmp(pe_name(dso, sw + 8), "(none)"));
	dsos__exit(&d);
}

/* Executable: the table holds the pointers as they are. */
static void test_pyeval_exec(void)
{
	pe_check("python3.99-fake", "python3.99-fake.full");
}

/* Shared object: the table is zeros and R_X86_64_RELATIVE relocations. */
static void test_pyeval_shared(void)
{
	pe_check("libpython3.99-fake.so", "libpython3.99-fake.so.full");
}

/* A file whose symbols name its cold part: nothing added. Not an
 * interpreter (this test program): nothing either. */
static void test_pyeval_named(void)
{
	char path[PATH_MAX];
	struct symtab st;
	uint64_t cold, cold_size;
	int fd;
	Elf *e;

	pe_path(path, sizeof(path), "python3.99-fake.full");
	TEST_ASSERT_EQ(pe_sym("python3.99-fake.full", "fake_eval_cold", &cold, &cold_size), 0);
	fd = open(path, O_RDONLY);
	TEST_ASSERT(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	symtab__init(&st, false);
	TEST_ASSERT_EQ(symtab__load_elf(&st, e, false), 0);
	TEST_ASSERT_EQ(pyeval__add_symbols(&st, e, NULL, NULL), -ENOENT);
	TEST_ASSERT(!strcmp(symtab__name(&st, symtab__find(&st, cold + 1)), "fake_eval_cold"));
	symtab__exit(&st);
	elf_end(e);
	close(fd);

	fd = open("/proc/self/exe", O_RDONLY);
	e = elf_begin(fd, ELF_C_READ, NULL);
	symtab__init(&st, false);
	TEST_ASSERT_EQ(pyeval__add_symbols(&st, e, NULL, NULL), -ENOENT);
	symtab__exit(&st);
	elf_end(e);
	close(fd);
}

int main(void)
{
	char exe[PATH_MAX] = "";

	elf_version(EV_CURRENT);
	if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) <= 0)
		return 1;
	snprintf(pe_dir, sizeof(pe_dir), "%s", dirname(exe));
	TEST_RUN(test_pyeval_exec);
	TEST_RUN(test_pyeval_shared);
	TEST_RUN(test_pyeval_named);
	TEST_EXIT();
}

// SPDX-License-Identifier: MIT
/*
 * The environment knobs' table and parser (common/knobs.c): the rows agree
 * with the enum, every default is the value when unset or empty, good
 * values of each type are read, and a bad or out-of-range one keeps the
 * default with exactly one warning line naming the knob and what it expects.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "common/knobs.h"
#include "common/log.h"
#include "report/files/archive.h"
#include "test.h"

/* Parses the knobs of progs with stderr caught in out: the number of lines. */
static int parse_caught(unsigned int progs, char *out, size_t size)
{
	FILE *f = tmpfile();
	int saved = dup(2), lines = 0;
	size_t n;

	fflush(stderr);
	dup2(fileno(f), 2);
	knobs__parse(progs);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(out, 1, size - 1, f);
	out[n] = 0;
	fclose(f);
	for (size_t i = 0; i < n; i++)
		lines += out[i] == '\n';
	return lines;
}

static void unset_all(void)
{
	for (int i = 0; i < KNOB__NR; i++)
		unsetenv(knob_rows[i].name);
}

static void test_rows(void)
{
	char buf[128];

	for (int i = 0; i < KNOB__NR; i++) {
		const struct knob_row *r = &knob_rows[i];

		TEST_ASSERT_EQ(r->id, i);
		TEST_ASSERT(r->name && !strncmp(r->name, "XPU_", 4));
		TEST_ASSERT(r->help && *r->help && !strchr(r->help, '\n'));
		TEST_ASSERT(r->progs && !(r->progs & ~KNOB_P_ALL));
		for (int j = 0; j < i; j++)
			TEST_ASSERT(strcmp(r->name, knob_rows[j].name));
		if (r->type == KNOB_T_INT || r->type == KNOB_T_SIZE) {
			TEST_ASSERT(r->min <= r->max);
			/* a default outside the range needs words (auto, none) */
			TEST_ASSERT((r->def >= r->min && r->def <= r->max) || r->def_doc);
		}
		if (r->type == KNOB_T_BOOL)
			TEST_ASSERT(r->def == 0 || r->def == 1);
		TEST_ASSERT(*knob_row__default(r, buf, sizeof(buf)));
		TEST_ASSERT(*knob_row__range(r, buf, sizeof(buf)));
	}
}

static void test_defaults(void)
{
	char out[4096];

	unset_all();
	TEST_ASSERT_EQ(parse_caught(KNOB_P_ALL, out, sizeof(out)), 0);
	TEST_ASSERT(!knob__bool(KNOB_NO_PROGRESS));
	TEST_ASSERT_EQ(knob__int(KNOB_PROGRESS_DELAY_MS), 1000);
	TEST_ASSERT_EQ(knob__int(KNOB_READER_THREADS), -1);
	TEST_ASSERT_EQ(knob__size(KNOB_READER_RESYNC_MAX), 1ull << 30);
	TEST_ASSERT_EQ(knob__choice(KNOB_STACK_PRUNE), -1);
	TEST_ASSERT(knob__bool(KNOB_STACK_DELTA));
	TEST_ASSERT(knob__bool(KNOB_GPU_PLAIN));
	TEST_ASSERT_EQ(knob__int(KNOB_INJECT_DIE_AT), -1);
	TEST_ASSERT_EQ(knob__int(KNOB_ARCHIVE_MAX_RATIO), 1000);
	TEST_ASSERT_EQ(knob__size(KNOB_ARCHIVE_MAX_SIZE), 16ull << 30);
	/* the defaults archive.h states (and fuzz_archive.c relies on) */
	TEST_ASSERT_EQ(knob_rows[KNOB_ARCHIVE_MAX_RATIO].def, ARCHIVE_MAX_RATIO);
	TEST_ASSERT_EQ(knob_rows[KNOB_ARCHIVE_MAX_SIZE].def, ARCHIVE_MAX_SIZE);
	TEST_ASSERT(knob__str(KNOB_TUI_KEYLOG) == NULL);
	TEST_ASSERT(knob__str(KNOB_CUPTI_APIS) == NULL);
	for (int i = 0; i < KNOB__NR; i++)
		TEST_ASSERT(!knob__is_set(i));
	/* set but empty is unset, but for text, where "" is a value */
	for (int i = 0; i < KNOB__NR; i++)
		setenv(knob_rows[i].name, "", 1);
	TEST_ASSERT_EQ(parse_caught(KNOB_P_ALL, out, sizeof(out)), 0);
	TEST_ASSERT_EQ(knob__int(KNOB_PROGRESS_DELAY_MS), 1000);
	TEST_ASSERT_EQ(knob__choice(KNOB_STACK_PRUNE), -1);
	TEST_ASSERT(knob__bool(KNOB_STACK_DELTA));
	TEST_ASSERT(!knob__is_set(KNOB_STACK_DELTA));
	TEST_ASSERT(knob__str(KNOB_CUPTI_APIS) && !*knob__str(KNOB_CUPTI_APIS));
	TEST_ASSERT(knob__is_set(KNOB_CUPTI_APIS));
	unset_all();
}

static void test_good_values(void)
{
	char out[4096];

	unset_all();
	setenv("XPU_NO_PROGRESS", "1", 1);
	setenv("XPU_STACK_DELTA", "0", 1);
	setenv("XPU_PROGRESS_DELAY_MS", "0", 1);
	setenv("XPU_READER_THREADS", "4", 1);
	setenv("XPU_READER_RESYNC_MAX", "1M", 1);
	setenv("XPU_ARCHIVE_MAX_SIZE", "3t", 1);
	setenv("XPU_ARCHIVE_MAX_RATIO", "0", 1);
	setenv("XPU_STACK_PRUNE", "cfi", 1);
	setenv("XPU_TUI_KEYLOG", "/tmp/keys", 1);
	setenv("XPU_CUPTI_MARKER", "unw+:/lib/libunwind.so.8", 1);
	TEST_ASSERT_EQ(parse_caught(KNOB_P_ALL, out, sizeof(out)), 0);
	TEST_ASSERT(knob__bool(KNOB_NO_PROGRESS) && knob__is_set(KNOB_NO_PROGRESS));
	TEST_ASSERT(!knob__bool(KNOB_STACK_DELTA) && knob__is_set(KNOB_STACK_DELTA));
	TEST_ASSERT_EQ(knob__int(KNOB_PROGRESS_DELAY_MS), 0);
	TEST_ASSERT_EQ(knob__int(KNOB_READER_THREADS), 4);
	TEST_ASSERT_EQ(knob__size(KNOB_READER_RESYNC_MAX), 1u << 20);
	TEST_ASSERT_EQ(knob__size(KNOB_ARCHIVE_MAX_SIZE), 3ull << 40);
	TEST_ASSERT_EQ(knob__int(KNOB_ARCHIVE_MAX_RATIO), 0);
	TEST_ASSERT_EQ(knob__choice(KNOB_STACK_PRUNE), 2);
	TEST_ASSERT(!strcmp(knob__str(KNOB_STACK_PRUNE), "cfi"));
	TEST_ASSERT(!strcmp(knob__str(KNOB_TUI_KEYLOG), "/tmp/keys"));
	TEST_ASSERT(!strcmp(knob__str(KNOB_CUPTI_MARKER), "unw+:/lib/libunwind.so.8"));
	setenv("XPU_STACK_PRUNE", "0", 1);
	setenv("XPU_READER_THREADS", "0", 1);
	knobs__parse(KNOB_P_RECORD);
	TEST_ASSERT_EQ(knob__choice(KNOB_STACK_PRUNE), 0);
	TEST_ASSERT_EQ(knob__int(KNOB_READER_THREADS), 0);
	unset_all();
}

/* KNOB=value is warned about in exactly this line, and the default kept */
static int bad(const char *name, const char *value, const char *line)
{
	char out[4096], want[1024];
	int n;

	unset_all();
	setenv(name, value, 1);
	n = parse_caught(KNOB_P_ALL, out, sizeof(out));
	snprintf(want, sizeof(want), "xpu-perf: warning: %s\n", line);
	if (n == 1 && !strcmp(out, want))
		return 1;
	fprintf(stderr, "  %s=%s: %d lines \"%s\"\n  want \"%s\"\n", name, value, n, out, want);
	return 0;
}

static void test_bad_values(void)
{
	TEST_ASSERT(bad("XPU_NO_PROGRESS", "yes", "XPU_NO_PROGRESS=yes: expected 0 or 1; using "
			"the default (0): fix or unset XPU_NO_PROGRESS"));
	TEST_ASSERT(!knob__bool(KNOB_NO_PROGRESS) && !knob__is_set(KNOB_NO_PROGRESS));
	TEST_ASSERT(bad("XPU_STACK_DELTA", "2", "XPU_STACK_DELTA=2: expected 0 or 1; using "
			"the default (1): fix or unset XPU_STACK_DELTA"));
	TEST_ASSERT(knob__bool(KNOB_STACK_DELTA));
	TEST_ASSERT(bad("XPU_READER_THREADS", "5", "XPU_READER_THREADS=5: expected a number, "
			"0 to 4; using the default (one per CPU (at most 4) for traces over "
			"1 MiB): fix or unset XPU_READER_THREADS"));
	TEST_ASSERT_EQ(knob__int(KNOB_READER_THREADS), -1);
	TEST_ASSERT(bad("XPU_UNWIND_THREADS", "0", "XPU_UNWIND_THREADS=0: expected a number, "
			"1 to 4; using the default (2 with 4 CPUs or more, else 1): fix or unset "
			"XPU_UNWIND_THREADS"));
	TEST_ASSERT_EQ(knob__int(KNOB_UNWIND_THREADS), -1);
	TEST_ASSERT(bad("XPU_PROGRESS_DELAY_MS", "10ms", "XPU_PROGRESS_DELAY_MS=10ms: expected "
			"a number, 0 to 3600000; using the default (1000): fix or unset "
			"XPU_PROGRESS_DELAY_MS"));
	TEST_ASSERT_EQ(knob__int(KNOB_PROGRESS_DELAY_MS), 1000);
	TEST_ASSERT(bad("XPU_READER_RESYNC_MAX", "0", "XPU_READER_RESYNC_MAX=0: expected bytes "
			"with an optional K, M, G or T, 1 or more; using the default (1G): fix or "
			"unset XPU_READER_RESYNC_MAX"));
	TEST_ASSERT_EQ(knob__size(KNOB_READER_RESYNC_MAX), 1ull << 30);
	TEST_ASSERT(bad("XPU_ARCHIVE_MAX_SIZE", "1X", "XPU_ARCHIVE_MAX_SIZE=1X: expected bytes "
			"with an optional K, M, G or T, 0 or more; using the default (16G): fix or "
			"unset XPU_ARCHIVE_MAX_SIZE"));
	TEST_ASSERT(bad("XPU_ARCHIVE_MAX_SIZE", "99999999T", "XPU_ARCHIVE_MAX_SIZE=99999999T: "
			"expected bytes with an optional K, M, G or T, 0 or more; using the "
			"default (16G): fix or unset XPU_ARCHIVE_MAX_SIZE"));
	TEST_ASSERT(bad("XPU_ARCHIVE_MAX_SIZE", "-1", "XPU_ARCHIVE_MAX_SIZE=-1: expected bytes "
			"with an optional K, M, G or T, 0 or more; using the default (16G): fix or "
			"unset XPU_ARCHIVE_MAX_SIZE"));
	TEST_ASSERT_EQ(knob__size(KNOB_ARCHIVE_MAX_SIZE), 16ull << 30);
	TEST_ASSERT(bad("XPU_STACK_PRUNE", "cfl", "XPU_STACK_PRUNE=cfl: expected one of: "
			"0, address, cfi; using the default (frames where the recorder knows "
			"them, else pruned copies): fix or unset XPU_STACK_PRUNE"));
	TEST_ASSERT_EQ(knob__choice(KNOB_STACK_PRUNE), -1);
	TEST_ASSERT(knob__str(KNOB_STACK_PRUNE) == NULL);
	unset_all();
}

/* knobs__parse reads only the programs' knobs; an accessor reads the others */
static void test_programs(void)
{
	char out[4096];

	unset_all();
	knobs__parse(KNOB_P_ALL);
	setenv("XPU_UNWIND_CHECK", "1", 1);		/* the report's */
	setenv("XPU_STACK_DELTA", "bad", 1);		/* the recorder's */
	TEST_ASSERT_EQ(parse_caught(KNOB_P_REPORT, out, sizeof(out)), 0);
	TEST_ASSERT(knob__bool(KNOB_UNWIND_CHECK));
	TEST_ASSERT(knob__bool(KNOB_STACK_DELTA));	/* read before, not again */
	TEST_ASSERT_EQ(parse_caught(KNOB_P_RECORD, out, sizeof(out)), 1);
	TEST_ASSERT(strstr(out, "XPU_STACK_DELTA=bad"));
	unset_all();
}

int main(void)
{
	TEST_RUN(test_rows);
	TEST_RUN(test_defaults);
	TEST_RUN(test_good_values);
	TEST_RUN(test_bad_values);
	TEST_RUN(test_programs);
	TEST_EXIT();
}

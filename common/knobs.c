// SPDX-License-Identifier: MIT
/* The environment knobs' table and their parser (knobs.h). A row's help is
 * its line of Documentation/environment.md; the command pages say more. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/knobs.h"
#include "common/log.h"

#define P_RRA	(KNOB_P_RECORD | KNOB_P_REPORT | KNOB_P_ARCHIVE)
#define P_RA	(KNOB_P_REPORT | KNOB_P_ARCHIVE)	/* the report's unwinding and files */

const struct knob_row knob_rows[KNOB__NR] = {
	KNOB_BOOL(KNOB_NO_PROGRESS, "XPU_NO_PROGRESS", 0, P_RRA,
		  "1: no progress line on stderr, even on a terminal"),
	KNOB_INT(KNOB_PROGRESS_DELAY_MS, "XPU_PROGRESS_DELAY_MS", 1000, 0, 3600000, NULL, P_RRA,
		 "ms of work before the progress line shows (tests use 0)"),
	KNOB_INT(KNOB_READER_THREADS, "XPU_READER_THREADS", -1, 0, 4,
		 "one per CPU (at most 4) for traces over 1 MiB", P_RRA,
		 "threads that decompress and check chunks ahead of the reader (0: none)"),
	KNOB_SIZE(KNOB_READER_RESYNC_MAX, "XPU_READER_RESYNC_MAX", 1ll << 30, 1, INT64_MAX, NULL,
		  P_RRA, "how far past a damaged chunk header the reader looks for the next (tests)"),
	KNOB_STRING(KNOB_STACK_PRUNE, "XPU_STACK_PRUNE", "0|address|cfi",
		    "frames where the recorder knows them, else pruned copies", KNOB_P_RECORD,
		    "0: whole stack copies; address or cfi: format 1.4's or 1.5's pruning"),
	KNOB_BOOL(KNOB_STACK_DELTA, "XPU_STACK_DELTA", 1, KNOB_P_RECORD,
		  "0: every stack in full, not coded against the thread's previous one"),
	KNOB_BOOL(KNOB_GPU_PLAIN, "XPU_GPU_PLAIN", 1, KNOB_P_RECORD,
		  "0: stacks stay coded (zstd 9) once a CUDA process connects"),
	KNOB_BOOL(KNOB_UNWIND_SIMPLE_CHECK, "XPU_UNWIND_SIMPLE_CHECK", 0, KNOB_P_RECORD,
		  "1: walk known stacks again with rsp/rbp rules only and compare (-v)"),
	KNOB_BOOL(KNOB_INJECT_MEMFD, "XPU_INJECT_MEMFD", 0, KNOB_P_RECORD,
		  "1: an attach loads the CUDA library through a memfd (tests)"),
	KNOB_INT(KNOB_INJECT_DIE_AT, "XPU_INJECT_DIE_AT", -1, 1, 8, "none", KNOB_P_RECORD,
		 "xpu-record kills itself at attach step N (tests)"),
	KNOB_INT(KNOB_INJECT_HOLD_MS, "XPU_INJECT_HOLD_MS", 0, 0, 60000, NULL, KNOB_P_RECORD,
		 "ms an attach waits at each step (tests)"),
	KNOB_INT(KNOB_ARCHIVE_MAX_RATIO, "XPU_ARCHIVE_MAX_RATIO", 1000, 0, INT64_MAX, NULL,
		 KNOB_P_REPORT, "an archive entry may state N times the archive's size (0: no limit)"),
	KNOB_SIZE(KNOB_ARCHIVE_MAX_SIZE, "XPU_ARCHIVE_MAX_SIZE", 16ll << 30, 0, INT64_MAX, NULL,
		  KNOB_P_REPORT, "the most an archive entry may state"),
	KNOB_BOOL(KNOB_NO_DEBUG_CACHE, "XPU_NO_DEBUG_CACHE", 0, P_RA,
		  "1: no plain copy of compressed debug files in the build-id cache"),
	KNOB_INT(KNOB_UNWIND_THREADS, "XPU_UNWIND_THREADS", -1, 1, 4,
		 "2 with 4 CPUs or more, else 1", P_RA,
		 "threads that unwind a chunk's stacks ahead of the report (1: none)"),
	KNOB_BOOL(KNOB_UNWIND_CHECK, "XPU_UNWIND_CHECK", 0, P_RA,
		  "1: unwind each DWARF stack with libdwfl too and stop where they differ"),
	KNOB_PATH(KNOB_TUI_KEYLOG, "XPU_TUI_KEYLOG", "none", KNOB_P_REPORT,
		  "the TUI appends each key and redraw time to FILE (tests)"),
	KNOB_PATH(KNOB_CUPTI_SOCKET, "XPU_CUPTI_SOCKET", "set by xpu-record", KNOB_P_CUPTI,
		  "xpu-record's socket the library sends GPU records to"),
	KNOB_STRING(KNOB_CUPTI_APIS, "XPU_CUPTI_APIS", NULL, "launch, copy, graph, sync calls",
		    KNOB_P_CUPTI, "NAME[,NAME...]: the API calls to mark (empty: none)"),
	KNOB_STRING(KNOB_CUPTI_API_ACTIVITY, "XPU_CUPTI_API_ACTIVITY", "all|none",
		    "the marked calls", KNOB_P_CUPTI, "which API calls get interval records"),
	KNOB_STRING(KNOB_CUPTI_MARKER, "XPU_CUPTI_MARKER", NULL,
		    "walk (set by xpu-record), else the marker", KNOB_P_CUPTI,
		    "off, walk, walk+, unw:LIB, unw+:LIB: how launch stacks are taken"),
	KNOB_STRING(KNOB_CUPTI_NVTX, "XPU_CUPTI_NVTX", "off", "on", KNOB_P_CUPTI,
		    "off: no NVTX callbacks (set by --no-nvtx)"),
	KNOB_BOOL(KNOB_CUPTI_VERBOSE, "XPU_CUPTI_VERBOSE", 0, KNOB_P_CUPTI,
		  "1: the library prints its counts at exit (set by -v)"),
	KNOB_STRING(KNOB_CUPTI_PC_SAMPLING, "XPU_CUPTI_PC_SAMPLING", NULL, "off", KNOB_P_CUPTI,
		    "on or PERIOD (5-31): GPU PC sampling (set by --gpu-pc-sampling)"),
	KNOB_STRING(KNOB_CUPTI_PC_DUTY, "XPU_CUPTI_PC_DUTY", NULL, "after:500", KNOB_P_CUPTI,
		    "after:MS, ON_MS:OFF_MS or off (set by --gpu-pc-duty)"),
	KNOB_INT(KNOB_CUPTI_CUBIN_MAX, "XPU_CUPTI_CUBIN_MAX", 3 << 20, 0, 3 << 20, "3145728 (3 MiB)",
		 KNOB_P_CUPTI, "bytes of the largest cubin kept whole (larger: reduced to line maps)"),
	KNOB_BOOL(KNOB_CUPTI_WALK_NO_CODE, "XPU_CUPTI_WALK_NO_CODE", 0, KNOB_P_CUPTI,
		  "1: the launch walk skips its code check (benchmarks)"),
	KNOB_BOOL(KNOB_CUPTI_WALK_MEMO, "XPU_CUPTI_WALK_MEMO", 1, KNOB_P_CUPTI,
		  "0: the launch walk keeps no memo of a thread's last walks (benchmarks)"),
	KNOB_PATH(KNOB_CUPTI_UNW_DUMP, "XPU_CUPTI_UNW_DUMP", "none", KNOB_P_CUPTI,
		  "the walk writes every 997th walk's pcs to FILE (benchmarks)"),
};

struct knob_value {
	bool read;		/* parsed from the environment */
	bool set;		/* to a good value */
	long long n;		/* bool, int, size; a choice's index */
	const char *s;		/* string, path */
};

static struct knob_value knob_values[KNOB__NR];

const char *knob_type__name(enum knob_type t)
{
	static const char *const names[] = { "bool", "int", "size", "string", "path" };

	return (unsigned int)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* "a|b|c": the index of v among them, or -1 */
static int knob__choice_of(const char *choices, const char *v)
{
	size_t len = strlen(v);
	int i = 0;

	for (const char *p = choices; *p; i++) {
		size_t n = strcspn(p, "|");

		if (n == len && !strncmp(p, v, n))
			return i;
		p += n + (p[n] == '|');
	}
	return -1;
}

/* v as bytes: a number with an optional K, M, G or T; false past UINT64_MAX */
static bool knob__parse_size(const char *v, unsigned long long *out)
{
	unsigned long long n;
	char *end;
	int shift = 0;

	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'T': case 't': shift = 40; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'K': case 'k': shift = 10; end++; break;
	}
	if (*end || (shift && n > (~0ull >> shift)))
		return false;
	*out = n << shift;
	return true;
}

/* n as the page writes it: 1G, 3M, 64K where it is round */
static void knob__bytes(long long n, char *buf, size_t size)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (n && u < 3 && !(n & 1023)) {
		n >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%lld", n);
	else
		snprintf(buf, size, "%lld%c", n, units[u]);
}

/* "a|b|c" as "a, b, c" */
static void knob__choices(const char *choices, char *buf, size_t size)
{
	size_t n = 0;

	for (const char *p = choices; *p && n + 3 < size; p++) {
		if (*p == '|') {
			buf[n++] = ',';
			buf[n++] = ' ';
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = 0;
}

const char *knob_row__range(const struct knob_row *row, char *buf, size_t size)
{
	char lo[32], hi[32];

	switch (row->type) {
	case KNOB_T_BOOL:
		snprintf(buf, size, "0 or 1");
		break;
	case KNOB_T_INT:
	case KNOB_T_SIZE:
		if (row->type == KNOB_T_SIZE) {
			knob__bytes(row->min, lo, sizeof(lo));
			knob__bytes(row->max, hi, sizeof(hi));
		} else {
			snprintf(lo, sizeof(lo), "%lld", row->min);
			snprintf(hi, sizeof(hi), "%lld", row->max);
		}
		if (row->max == INT64_MAX)
			snprintf(buf, size, "%s or more", lo);
		else
			snprintf(buf, size, "%s to %s", lo, hi);
		break;
	case KNOB_T_STRING:
		if (!row->choices) {
			snprintf(buf, size, "any text");
			break;
		}
		knob__choices(row->choices, buf, size);
		break;
	case KNOB_T_PATH:
		snprintf(buf, size, "a file");
		break;
	}
	return buf;
}

const char *knob_row__default(const struct knob_row *row, char *buf, size_t size)
{
	if (row->def_doc)
		snprintf(buf, size, "%s", row->def_doc);
	else if (row->type == KNOB_T_STRING || row->type == KNOB_T_PATH)
		snprintf(buf, size, "unset");
	else if (row->type == KNOB_T_SIZE)
		knob__bytes(row->def, buf, size);
	else
		snprintf(buf, size, "%lld", row->def);
	return buf;
}

/* v as the row's type; false when it is not one or out of range */
static bool knob__parse_value(const struct knob_row *row, const char *v, long long *out)
{
	unsigned long long u = 0;
	char *end;

	switch (row->type) {
	case KNOB_T_BOOL:
		*out = *v == '1';
		return !strcmp(v, "0") || !strcmp(v, "1");
	case KNOB_T_SIZE:
		if (!knob__parse_size(v, &u) || u > (unsigned long long)row->max)
			return false;
		*out = (long long)u;
		return *out >= row->min;
	case KNOB_T_INT:
		errno = 0;
		*out = strtoll(v, &end, 10);
		return !errno && end != v && !*end && *out >= row->min && *out <= row->max;
	case KNOB_T_STRING:
		*out = knob__choice_of(row->choices, v);
		return *out >= 0;
	case KNOB_T_PATH:
		break;
	}
	return false;
}

/* Reads one knob: its value, or a warning and the default. */
static void knob__read(const struct knob_row *row, struct knob_value *kv)
{
	const char *v = getenv(row->name);
	bool text = row->type == KNOB_T_PATH || (row->type == KNOB_T_STRING && !row->choices);
	char range[128], def[96];

	*kv = (struct knob_value){ .read = true, .n = row->def };
	if (!v || (!*v && !text))
		return;
	if (text || knob__parse_value(row, v, &kv->n)) {
		kv->s = v;
		kv->set = true;
		return;
	}
	kv->n = row->def;
	knob_row__range(row, range, sizeof(range));
	warn("%s=%s: expected %s%s; using the default (%s): fix or unset %s", row->name, v,
	     row->type == KNOB_T_STRING ? "one of: " : row->type == KNOB_T_INT ? "a number, " :
	     row->type == KNOB_T_SIZE ? "bytes with an optional K, M, G or T, " : "",
	     range, knob_row__default(row, def, sizeof(def)), row->name);
}

void knobs__parse(unsigned int progs)
{
	for (int i = 0; i < KNOB__NR; i++)
		if (knob_rows[i].progs & progs)
			knob__read(&knob_rows[i], &knob_values[i]);
}

/* the knob's value, read now if no knobs__parse read it; type: what the
 * accessor reads (-1: any) */
static const struct knob_value *knob__value(enum knob_id id, int type)
{
	BUG_ON((unsigned int)id >= KNOB__NR);
	BUG_ON(type >= 0 && knob_rows[id].type != (enum knob_type)type &&
	       !(type == KNOB_T_STRING && knob_rows[id].type == KNOB_T_PATH));
	if (!knob_values[id].read)
		knob__read(&knob_rows[id], &knob_values[id]);
	return &knob_values[id];
}

bool knob__bool(enum knob_id id)
{
	return knob__value(id, KNOB_T_BOOL)->n;
}

long long knob__int(enum knob_id id)
{
	return knob__value(id, KNOB_T_INT)->n;
}

uint64_t knob__size(enum knob_id id)
{
	return (uint64_t)knob__value(id, KNOB_T_SIZE)->n;
}

const char *knob__str(enum knob_id id)
{
	return knob__value(id, KNOB_T_STRING)->s;
}

int knob__choice(enum knob_id id)
{
	const struct knob_value *kv = knob__value(id, KNOB_T_STRING);

	BUG_ON(!knob_rows[id].choices);
	return kv->set ? (int)kv->n : -1;
}

bool knob__is_set(enum knob_id id)
{
	return knob__value(id, -1)->set;
}

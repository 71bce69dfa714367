/* SPDX-License-Identifier: MIT */
/*
 * The environment knobs: every XPU_* variable xpu-record, xpu-report,
 * xpu-archive and the CUDA library read, one row each in knobs.c, as
 * opt_table.h holds the options. A row is the knob's name, type, default,
 * range, one line of help and the programs that read it; the enum below
 * names the rows. Documentation/environment.md is generated from the rows
 * (tests/tools/knobs_doc.c) and tests/shell/knobs_documented.sh holds the
 * sources, the table and the page to each other.
 *
 *	knobs__parse(KNOB_P_REPORT);		once, at the start of main()
 *	if (knob__bool(KNOB_UNWIND_CHECK)) ...
 *
 * knobs__parse reads each knob of the programs given from the environment
 * into its typed value. Unset: the default; empty too, but for a free
 * string or a path, where "" is a value (XPU_CUPTI_APIS= marks nothing). A value that does not
 * parse or is out of range is one warning line naming the knob and what it
 * expects, and the default stays. An accessor of a knob no knobs__parse
 * read yet reads that one then (library code used by tests and tools):
 * parse in main() before any thread starts.
 *
 * libxpu-cupti.so links no common/ object but the launch walk's, so the
 * library reads its own (KNOB_P_CUPTI rows, in cupti/); they are here for
 * the page, and xpu-record passes several of them on to an attach.
 */
#ifndef XPU_COMMON_KNOBS_H
#define XPU_COMMON_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum knob_type {
	KNOB_T_BOOL,	/* 0 or 1 */
	KNOB_T_INT,	/* a whole number from min to max */
	KNOB_T_SIZE,	/* bytes from min to max, with a K, M, G or T suffix (powers of 1024) */
	KNOB_T_STRING,	/* any text, or one of choices ("0|address|cfi") */
	KNOB_T_PATH,	/* a file name */
};

/* The programs that read a knob (a row's progs, knobs__parse's argument). */
#define KNOB_P_RECORD	0x1u	/* xpu-record */
#define KNOB_P_REPORT	0x2u	/* xpu-report */
#define KNOB_P_ARCHIVE	0x4u	/* xpu-archive */
#define KNOB_P_CUPTI	0x8u	/* libxpu-cupti.so, in the CUDA process */
#define KNOB_P_ALL	0xfu

/* The rows, in knobs.c's order (test_knobs.c checks the two agree). */
enum knob_id {
	KNOB_NO_PROGRESS,
	KNOB_PROGRESS_DELAY_MS,
	KNOB_READER_THREADS,
	KNOB_READER_RESYNC_MAX,
	KNOB_STACK_PRUNE,
	KNOB_STACK_DELTA,
	KNOB_GPU_PLAIN,
	KNOB_UNWIND_SIMPLE_CHECK,
	KNOB_INJECT_MEMFD,
	KNOB_INJECT_DIE_AT,
	KNOB_INJECT_HOLD_MS,
	KNOB_ARCHIVE_MAX_RATIO,
	KNOB_ARCHIVE_MAX_SIZE,
	KNOB_NO_DEBUG_CACHE,
	KNOB_UNWIND_THREADS,
	KNOB_UNWIND_CHECK,
	KNOB_TUI_KEYLOG,
	KNOB_CUPTI_SOCKET,
	KNOB_CUPTI_APIS,
	KNOB_CUPTI_API_ACTIVITY,
	KNOB_CUPTI_MARKER,
	KNOB_CUPTI_NVTX,
	KNOB_CUPTI_VERBOSE,
	KNOB_CUPTI_PC_SAMPLING,
	KNOB_CUPTI_PC_DUTY,
	KNOB_CUPTI_CUBIN_MAX,
	KNOB_CUPTI_WALK_NO_CODE,
	KNOB_CUPTI_WALK_MEMO,
	KNOB_CUPTI_UNW_DUMP,
	KNOB__NR
};

struct knob_row {
	enum knob_id id;
	const char *name;	/* XPU_... */
	enum knob_type type;
	long long def;		/* bool, int, size: the default */
	long long min, max;	/* int, size: the range */
	const char *choices;	/* string: "a|b|c", or NULL for any text */
	const char *def_doc;	/* the default in words where def is not it ("auto: ...") */
	unsigned int progs;	/* KNOB_P_* */
	const char *help;	/* one line */
};

#define KNOB_BOOL(ID, NM, DEF, PR, HL) \
	[ID] = { .id = (ID), .name = (NM), .type = KNOB_T_BOOL, .def = (DEF), .min = 0, \
		 .max = 1, .progs = (PR), .help = (HL) }
#define KNOB_INT(ID, NM, DEF, MIN, MAX, DD, PR, HL) \
	[ID] = { .id = (ID), .name = (NM), .type = KNOB_T_INT, .def = (DEF), .min = (MIN), \
		 .max = (MAX), .def_doc = (DD), .progs = (PR), .help = (HL) }
#define KNOB_SIZE(ID, NM, DEF, MIN, MAX, DD, PR, HL) \
	[ID] = { .id = (ID), .name = (NM), .type = KNOB_T_SIZE, .def = (DEF), .min = (MIN), \
		 .max = (MAX), .def_doc = (DD), .progs = (PR), .help = (HL) }
#define KNOB_STRING(ID, NM, CH, DD, PR, HL) \
	[ID] = { .id = (ID), .name = (NM), .type = KNOB_T_STRING, .choices = (CH), \
		 .def_doc = (DD), .progs = (PR), .help = (HL) }
#define KNOB_PATH(ID, NM, DD, PR, HL) \
	[ID] = { .id = (ID), .name = (NM), .type = KNOB_T_PATH, .def_doc = (DD), \
		 .progs = (PR), .help = (HL) }

extern const struct knob_row knob_rows[KNOB__NR];

/* Reads every knob a program of progs reads (again, where read before),
 * warning once for each bad value. */
void knobs__parse(unsigned int progs);

/* The knob's value: its default unless set to a good one. */
bool knob__bool(enum knob_id id);
long long knob__int(enum knob_id id);
uint64_t knob__size(enum knob_id id);
/* string, path: the text as set (set empty: ""), NULL when unset or bad */
const char *knob__str(enum knob_id id);
/* a string of choices: the index of its value among them, -1 when unset */
int knob__choice(enum knob_id id);
/* set to a good value (not the default because unset, empty or bad) */
bool knob__is_set(enum knob_id id);

/* "bool", "int", ... for the page and messages. */
const char *knob_type__name(enum knob_type t);
/* The knob's default and range as the page and the warnings show them, in buf. */
const char *knob_row__default(const struct knob_row *row, char *buf, size_t size);
const char *knob_row__range(const struct knob_row *row, char *buf, size_t size);

#endif

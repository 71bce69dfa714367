/* SPDX-License-Identifier: MIT */
/*
 * One option table per command, the way perf's parse-options rows and tig's
 * option table work: each row is an option's long and short name, its
 * argument, its help text and what it sets. getopt_long's table and string,
 * --help and the check that the command's page documents every option
 * (tests/shell/options_documented.sh) all come from the rows, so they
 * cannot drift apart.
 *
 *	static const struct opt_row rows[] = {
 *		OPT_HEADING("views:"),
 *		OPT_TRUE("no-kernel", 0, struct report_opts, no_kernel,
 *			 "leave kernel frames out"),
 *		OPT_FN_ARG("sort", 0, "KEYS", report__opt_sort, "rows by ..."),
 *	};
 *	optind = opt_table__parse(rows, ARRAY_SIZE(rows), &o, argc, argv, &cmd);
 *
 * A row's help may hold '\n': each line after the first is indented under
 * it. Every usage mistake ends in one die(XPU_EXIT_USAGE) line.
 */
#ifndef XPU_COMMON_OPT_TABLE_H
#define XPU_COMMON_OPT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_type {
	OPT_T_HEADING,	/* no option: a line of --help of its own (help) */
	OPT_T_TRUE,	/* the bool at off becomes true */
	OPT_T_FALSE,	/* the bool at off becomes false */
	OPT_T_INT,	/* the int at off becomes val (a choice among several options) */
	OPT_T_FN,	/* fn(o, row, arg, ctx) */
};

enum opt_arg {
	OPT_ARG_NONE,
	OPT_ARG_REQUIRED,	/* --name ARG or --name=ARG */
	OPT_ARG_OPTIONAL,	/* --name or --name=ARG only */
};

struct opt_ctx;
struct opt_row;

typedef void opt_fn(void *o, const struct opt_row *row, const char *arg, struct opt_ctx *ctx);

struct opt_row {
	enum opt_type type;
	const char *name;	/* --NAME, without the dashes */
	char short_name;	/* -C, or 0 */
	enum opt_arg has_arg;
	const char *arg;	/* the argument's name in --help: FILE, MODE */
	const char *help;
	size_t off;		/* OPT_T_TRUE, _FALSE, _INT: the field in the options */
	int val;		/* OPT_T_INT */
	opt_fn *fn;		/* OPT_T_FN */
	const void *data;	/* for fn: what the row stands for (an output) */
	const char *missing;	/* an error of its own for a missing argument */
};

/* What a handler may look at: the words being parsed, the command. */
struct opt_ctx {
	int argc;
	char **argv;
	const char *cmd;	/* "xpu-report": named in errors */
};

/* The word after the option, taken when it is not an option and accept()
 * says yes (perf's "-g caller"); NULL when none was. */
const char *opt_ctx__take_next(struct opt_ctx *ctx, bool (*accept)(const char *word));

#define OPT_HEADING(text) { .type = OPT_T_HEADING, .help = (text) }
#define OPT_TRUE(nm, sh, T, F, hl) \
	{ .type = OPT_T_TRUE, .name = (nm), .short_name = (sh), .help = (hl), \
	  .off = offsetof(T, F) }
#define OPT_FALSE(nm, sh, T, F, hl) \
	{ .type = OPT_T_FALSE, .name = (nm), .short_name = (sh), .help = (hl), \
	  .off = offsetof(T, F) }
#define OPT_INT(nm, sh, T, F, v, hl) \
	{ .type = OPT_T_INT, .name = (nm), .short_name = (sh), .help = (hl), \
	  .off = offsetof(T, F), .val = (v) }
/* a handler: with no argument, a required ARG, an optional =ARG */
#define OPT_FN(nm, sh, f, hl) \
	{ .type = OPT_T_FN, .name = (nm), .short_name = (sh), .help = (hl), .fn = (f) }
#define OPT_FN_ARG(nm, sh, ag, f, hl) \
	{ .type = OPT_T_FN, .name = (nm), .short_name = (sh), .has_arg = OPT_ARG_REQUIRED, \
	  .arg = (ag), .help = (hl), .fn = (f) }
#define OPT_FN_OPT(nm, sh, ag, f, hl) \
	{ .type = OPT_T_FN, .name = (nm), .short_name = (sh), .has_arg = OPT_ARG_OPTIONAL, \
	  .arg = (ag), .help = (hl), .fn = (f) }

/*
 * Parses argv[1..] by rows[0..nr). stop_at_command: stop at the first word
 * that is no option (xpu-record's command), else every option anywhere.
 * Returns the index of the first word not parsed (getopt's optind).
 */
int opt_table__parse(const struct opt_row *rows, size_t nr, void *o, int argc, char **argv,
		     const char *cmd, bool stop_at_command);

/* The rows as --help text: "  -o, --output FILE" then its help from
 * column col (on the next line when the option is longer). */
void opt_table__help(FILE *fp, const struct opt_row *rows, size_t nr, int col);

/* "--name ARG" or "--name[=ARG]" for messages and help. */
void opt_row__spell(const struct opt_row *row, char *buf, size_t size);

#endif

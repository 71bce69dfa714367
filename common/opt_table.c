// SPDX-License-Identifier: MIT
/* One option table per command: getopt_long's table and --help from the
 * rows (opt_table.h). */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/exitcodes.h"
#include "common/log.h"
#include "common/opt_table.h"
#include "common/xalloc.h"

#define OPT_LONG_VAL 1000	/* + row index: what getopt returns for a long-only row */

#define usage_die(...) die(XPU_EXIT_USAGE, __VA_ARGS__)

const char *opt_ctx__take_next(struct opt_ctx *ctx, bool (*accept)(const char *word))
{
	const char *w;

	if (optind >= ctx->argc)
		return NULL;
	w = ctx->argv[optind];
	if (w[0] == '-' || !accept(w))
		return NULL;
	optind++;
	return w;
}

void opt_row__spell(const struct opt_row *row, char *buf, size_t size)
{
	const char *a = row->arg ? row->arg : "";

	switch (row->has_arg) {
	case OPT_ARG_NONE:
		snprintf(buf, size, "--%s", row->name);
		break;
	case OPT_ARG_REQUIRED:
		snprintf(buf, size, "--%s %s", row->name, a);
		break;
	case OPT_ARG_OPTIONAL:
		snprintf(buf, size, "--%s[=%s]", row->name, a);
		break;
	}
}

/* getopt's string: "+:" then each short name with its ':'s. */
static char *opt_table__short(const struct opt_row *rows, size_t nr, bool stop_at_command)
{
	char *s = xmalloc(3 + 3 * nr + 1), *p = s;

	if (stop_at_command)
		*p++ = '+';
	*p++ = ':';
	for (size_t i = 0; i < nr; i++) {
		if (rows[i].type == OPT_T_HEADING || !rows[i].short_name)
			continue;
		*p++ = rows[i].short_name;
		if (rows[i].has_arg != OPT_ARG_NONE)
			*p++ = ':';
		if (rows[i].has_arg == OPT_ARG_OPTIONAL)
			*p++ = ':';
	}
	*p = '\0';
	return s;
}

static struct option *opt_table__long(const struct opt_row *rows, size_t nr)
{
	struct option *l = xcalloc(nr + 1, sizeof(*l));
	size_t n = 0;

	for (size_t i = 0; i < nr; i++) {
		if (rows[i].type == OPT_T_HEADING)
			continue;
		l[n++] = (struct option){
			rows[i].name,
			rows[i].has_arg == OPT_ARG_NONE ? no_argument :
			rows[i].has_arg == OPT_ARG_REQUIRED ? required_argument : optional_argument,
			NULL,
			rows[i].short_name ? rows[i].short_name : OPT_LONG_VAL + (int)i,
		};
	}
	return l;
}

static const struct opt_row *opt_table__row_of(const struct opt_row *rows, size_t nr, int c)
{
	if (c >= OPT_LONG_VAL)
		return (size_t)(c - OPT_LONG_VAL) < nr ? &rows[c - OPT_LONG_VAL] : NULL;
	for (size_t i = 0; i < nr; i++)
		if (rows[i].type != OPT_T_HEADING && rows[i].short_name == c)
			return &rows[i];
	return NULL;
}

/* getopt_long() returned '?': an unknown short option (optopt is it), an
 * unknown long option (optopt 0), or a long option that takes no value given
 * one, "--quiet=1" (optopt is its val, which may be a short option's). */
static void opt_table__bad(const struct opt_row *rows, size_t nr, char **argv)
{
	const char *arg = argv[optind - 1];

	if (!optopt)
		usage_die("unknown option %s (see --help)", arg);
	if (optopt < OPT_LONG_VAL && !opt_table__row_of(rows, nr, optopt))
		usage_die("unknown option -%c (see --help)", optopt);
	if (strncmp(arg, "--", 2))	/* "-qZ": getopt names no long option */
		usage_die("unknown option -%c (see --help)", optopt);
	usage_die("option %.*s takes no value (see --help)", (int)strcspn(arg, "="), arg);
}

static void opt_table__missing(const struct opt_row *rows, size_t nr, char **argv)
{
	const struct opt_row *row = opt_table__row_of(rows, nr, optopt);

	if (row && row->missing)
		usage_die("%s", row->missing);
	usage_die("option %s needs a value (see --help)", argv[optind - 1]);
}

static void opt_table__apply(const struct opt_row *row, void *o, const char *arg,
			     struct opt_ctx *ctx)
{
	char *field = (char *)o + row->off;

	switch (row->type) {
	case OPT_T_TRUE:
		*(bool *)field = true;
		break;
	case OPT_T_FALSE:
		*(bool *)field = false;
		break;
	case OPT_T_INT:
		*(int *)field = row->val;
		break;
	case OPT_T_FN:
		row->fn(o, row, arg, ctx);
		break;
	case OPT_T_HEADING:
		BUG_ON(1);
	}
}

int opt_table__parse(const struct opt_row *rows, size_t nr, void *o, int argc, char **argv,
		     const char *cmd, bool stop_at_command)
{
	char *shorts = opt_table__short(rows, nr, stop_at_command);
	struct option *longs = opt_table__long(rows, nr);
	struct opt_ctx ctx = { argc, argv, cmd };
	int c;

	opterr = 0;	/* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt_row *row;

		if (c == '?')
			opt_table__bad(rows, nr, argv);
		if (c == ':')
			opt_table__missing(rows, nr, argv);
		row = opt_table__row_of(rows, nr, c);
		BUG_ON(!row);
		opt_table__apply(row, o, optarg, &ctx);
	}
	free(longs);
	free(shorts);
	return optind;
}

/* Help lines after the first, indented to col. */
static void opt_table__help_text(FILE *fp, const char *h, int col)
{
	const char *nl;

	while ((nl = strchr(h, '\n'))) {
		fprintf(fp, "%.*s\n%*s", (int)(nl - h), h, col, "");
		h = nl + 1;
	}
	fprintf(fp, "%s\n", h);
}

void opt_table__help(FILE *fp, const struct opt_row *rows, size_t nr, int col)
{
	for (size_t i = 0; i < nr; i++) {
		const struct opt_row *row = &rows[i];
		char spell[128], head[160];
		int len;

		if (row->type == OPT_T_HEADING) {
			fprintf(fp, "%s\n", row->help);
			continue;
		}
		opt_row__spell(row, spell, sizeof(spell));
		if (row->short_name)
			len = snprintf(head, sizeof(head), "  -%c, %s", row->short_name, spell);
		else
			len = snprintf(head, sizeof(head), "      %s", spell);
		if (len + 1 > col)	/* the help on a line of its own */
			fprintf(fp, "%s\n%*s", head, col, "");
		else
			fprintf(fp, "%-*s", col, head);
		opt_table__help_text(fp, row->help, col);
	}
}

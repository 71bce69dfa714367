// SPDX-License-Identifier: MIT
/*
 * Documentation/environment.md's table of the XPU_* knobs, from the rows of
 * common/knobs.c:
 *
 *	knobs_doc			the table, in markdown
 *	knobs_doc --names		each knob's name, one a line
 *	knobs_doc --update FILE		FILE's table (between the two
 *					KNOBS_TABLE marker lines) replaced
 *
 * tests/shell/knobs_documented.sh compares the page with the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/knobs.h"

#define MARK_BEGIN	"<!-- KNOBS_TABLE begin: tests/tools/knobs_doc --update -->"
#define MARK_END	"<!-- KNOBS_TABLE end -->"

/* s with '|' escaped for a table cell */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++)
		fputs(*s == '|' ? "\\|" : (char[2]){ *s, 0 }, f);
}

static void progs(FILE *f, unsigned int p)
{
	static const char *const names[] = { "xpu-record", "xpu-report", "xpu-archive",
					     "libxpu-cupti.so" };
	const char *sep = "";

	for (int i = 0; i < 4; i++)
		if (p & (1u << i)) {
			fprintf(f, "%s%s", sep, names[i]);
			sep = ", ";
		}
}

static void table(FILE *f)
{
	char def[128], range[128];

	fputs("| Variable | Type | Default | Range | Read by | What it does |\n"
	      "|---|---|---|---|---|---|\n", f);
	for (int i = 0; i < KNOB__NR; i++) {
		const struct knob_row *r = &knob_rows[i];

		fprintf(f, "| `%s` | %s | ", r->name, knob_type__name(r->type));
		cell(f, knob_row__default(r, def, sizeof(def)));
		fputs(" | ", f);
		cell(f, knob_row__range(r, range, sizeof(range)));
		fputs(" | ", f);
		progs(f, r->progs);
		fputs(" | ", f);
		cell(f, r->help);
		fputs(" |\n", f);
	}
}

/* FILE with the lines between the markers replaced by the table */
static int update(const char *path)
{
	FILE *in = fopen(path, "r"), *out;
	char line[4096], tmp[4096];
	int state = 0;		/* 0 before, 1 inside, 2 after */

	if (!in) {
		perror(path);
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(out = fopen(tmp, "w"))) {
		perror(tmp);
		fclose(in);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		if (state == 1 && !strncmp(line, MARK_END, strlen(MARK_END))) {
			table(out);
			state = 2;
		}
		if (state != 1)
			fputs(line, out);
		if (state == 0 && !strncmp(line, MARK_BEGIN, strlen(MARK_BEGIN)))
			state = 1;
	}
	fclose(in);
	if (fclose(out) || state != 2 || rename(tmp, path)) {
		fprintf(stderr, "%s: no table between \"%s\" and \"%s\" lines\n", path, MARK_BEGIN,
			MARK_END);
		remove(tmp);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--names")) {
		for (int i = 0; i < KNOB__NR; i++)
			puts(knob_rows[i].name);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--update"))
		return update(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: knobs_doc [--names | --update FILE]\n");
		return 2;
	}
	table(stdout);
	return 0;
}

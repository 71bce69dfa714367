/* SPDX-License-Identifier: MIT */
/*
 * Text outputs of xpu-report. folded and stdio read only the profile (after
 * session__pass2); header reads the session's pass-1 statistics; dump makes
 * its own pass over the records.
 */
#ifndef XPU_REPORT_OUTPUT_H
#define XPU_REPORT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "report/profile.h"
#include "report/session.h"

struct folded_opts {
	enum profile_view view;
	bool comm;		/* first frame is the command name */
};

/* flamegraph.pl input: "comm;root;...;leaf COUNT" lines, sorted. Counts are
 * weights rounded to the nearest integer; lines rounding to 0 are left out. */
int output__folded(const struct profile *p, FILE *fp, const struct folded_opts *o);

/* One folded frame as text: ';' -> ':', newlines -> ' ', "_[k]" suffix on
 * kernel frames. Returns the length written (truncated to size-1). */
size_t folded__frame(const struct frame *f, char *buf, size_t size);

/* perf report --stdio --children style table. */
int output__stdio(const struct session *s, FILE *fp, enum profile_view view);

/* Every record, one line each. */
int output__dump(struct session *s, FILE *fp);

/* Metadata, features, counts, damage and lost statistics. */
int output__header(const struct session *s, FILE *fp);

#endif

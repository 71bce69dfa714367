/* SPDX-License-Identifier: MIT */
/*
 * --header as a list of sections (perf's feat_ops[].print): each prints one
 * part of what the trace holds or lost. The --header output and the TUI's
 * header screen print the same list. A section that needs data from the
 * passes registers a session tool in its prepare().
 */
#ifndef XPU_REPORT_HEADER_H
#define XPU_REPORT_HEADER_H

#include <stdio.h>
#include "report/session/session.h"

struct header_section {
	const char *name;
	/* Before pass 1, may be NULL. 0 or -errno. */
	int (*prepare)(struct session *s);
	/* Prints the section ("# " lines); may print nothing. 0 or -EIO. */
	int (*print)(const struct session *s, FILE *fp);
};

/* Sections of header_job.c: the merged inputs, the processes' ranks. */
int header_job__inputs(const struct session *s, FILE *fp);
int header_job__ranks_prepare(struct session *s);
int header_job__ranks(const struct session *s, FILE *fp);

/* Runs every section's prepare(). */
int header__prepare(struct session *s);
/* Prints every section in order. 0 or -EIO. */
int header__fprint(const struct session *s, FILE *fp);

#endif

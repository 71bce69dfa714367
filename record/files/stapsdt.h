/* SPDX-License-Identifier: MIT */
/* SystemTap SDT (USDT) probe notes of an ELF file (stapsdt.c). */
#ifndef XPU_RECORD_FILES_STAPSDT_H
#define XPU_RECORD_FILES_STAPSDT_H

#include <stddef.h>
#include <stdint.h>

#define STAPSDT_NAME_MAX	64
struct stapsdt_probe {
	uint64_t pc;		/* the probe's address (as linked) */
	uint64_t base;		/* the address .stapsdt.base had when linked */
	uint64_t semaphore;	/* its semaphore's address (in .probes), 0: none */
	char provider[STAPSDT_NAME_MAX], name[STAPSDT_NAME_MAX];
};

/*
 * Parses the contents of a .note.stapsdt section (len bytes, the file's
 * byte order is the host's): the probes go to out[0..max). Returns how many
 * well-formed probe notes there are (more than max when out was too short),
 * or -EINVAL at the first damaged note (a size past the end, a name or
 * argument string without its NUL); notes of other owners or types are
 * skipped.
 */
int stapsdt__parse(const void *notes, size_t len, struct stapsdt_probe *out, int max);

/* The probes of the ELF file at fd (its .note.stapsdt section), as
 * stapsdt__parse(); 0 when it has none, -errno when it is not ELF. */
int stapsdt__read_fd(int fd, struct stapsdt_probe *out, int max);

/* Whether probes[0..n) has provider:name. */
const struct stapsdt_probe *stapsdt__find(const struct stapsdt_probe *probes, int n,
					  const char *provider, const char *name);

#endif

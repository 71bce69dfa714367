/* SPDX-License-Identifier: MIT */
/* What can be checked before any setup (checks.c). */
#ifndef XPU_RECORD_CHECKS_H
#define XPU_RECORD_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* one-line fatal errors for what can be checked before any setup */
void record__check_privileges(void);
void record__check_btf(void);
void record__check_pid_namespace(void);
/* Returns the resolved path of argv[0] (malloc'ed), or dies. */
char *record__find_program(const char *name);
const char *record__default_cupti_lib(void);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef XPU_RECORD_LAUNCH_RULES_H
#define XPU_RECORD_LAUNCH_RULES_H

#include <stdbool.h>
#include <stdint.h>
#include "common/unwind_table.h"

/* The launch walk's rule tables, one per CUDA process (launch_rules.c). */
struct launch_rules;

/* The tables' owner (--launch-stacks=walk; read by cupti/walk/walk_probe.c). */
struct launch_rules *launch_rules__new(void);
void launch_rules__free(struct launch_rules *lr);
/* A new table for process pid: a memfd to hand it (the caller closes it),
 * or -errno. */
int launch_rules__attach(struct launch_rules *lr, uint32_t pid);
/* The table of pid, or NULL (not a CUDA process, or lr NULL); its
 * header's Python layout raised first to what record/python/python.c knows now
 * (its BPF walk's self-checks: the library walks Python frames once it is
 * proved). */
struct unwind_table_hdr *launch_rules__table(struct launch_rules *lr, uint32_t pid);
/* Where the Python layouts the tables' headers carry come from (record/
 * python.c): fn fills cfg for pid and returns LAUNCH_RULES_PY_LAYOUT, or
 * says LAUNCH_RULES_PY_UNKNOWN (no layout yet, or not a Python process) or
 * LAUNCH_RULES_PY_NATIVE (a CPython the BPF walk cannot read: its stacks
 * stay native, so the launch walk takes native frames only, header flag
 * XPU_WALK_NO_PYTHON). */
struct xpu_bpf_py_cfg;
enum { LAUNCH_RULES_PY_NATIVE = -1, LAUNCH_RULES_PY_UNKNOWN, LAUNCH_RULES_PY_LAYOUT };
typedef int (*launch_rules_py_fn)(void *arg, uint32_t pid, struct xpu_bpf_py_cfg *cfg);
void launch_rules__set_python(struct launch_rules *lr, launch_rules_py_fn fn, void *arg);
/* For -v: tables, rules published, adds refused (full). */
void launch_rules__stats(struct launch_rules *lr, uint64_t *tables, uint64_t *rules,
			 uint64_t *full);

#endif

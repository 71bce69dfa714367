/* SPDX-License-Identifier: MIT */
/* The launched command's process tree (tree.c). */
#ifndef XPU_RECORD_TARGET_TREE_H
#define XPU_RECORD_TARGET_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_bpf;

/* the launched command's process tree, as the BPF tracked set has
 * it (the command and every process forked below it, until it exits) */
#define TREE_GRACE 5.0			/* seconds from SIGTERM to SIGKILL */
/* Sends sig to every process of the tree; returns how many got it. */
int tree__signal(struct record_bpf *b, int sig);
/* Ending the tree: SIGTERM to every process, SIGKILL to what is left
 * TREE_GRACE seconds later (and to what it forks), then TREE_GRACE seconds
 * more at most. Zero-initialize, call tree__end_step until it returns true. */
struct tree_end {
	int phase;			/* 0: not begun, 1: SIGTERM sent, 2: SIGKILL sent */
	double next;			/* when the phase ends (CLOCK_MONOTONIC seconds) */
	int signalled;			/* how many got the SIGTERM */
	int left;			/* processes left after the last step */
};
bool tree__end_step(struct record_bpf *b, struct tree_end *te, double now);
/* --kill-on-exit: forks the watchdog that ends the tree once xpu-record has
 * exited, however it exits. Call before the command is forked and before any
 * thread is started. */
int tree__watchdog(struct record_bpf *b);

#endif

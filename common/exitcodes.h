/* SPDX-License-Identifier: MIT */
/*
 * Exit codes shared by every xpu-perf command. Each failure class has its own
 * code so scripts can tell "you typed it wrong" from "the trace is damaged".
 * Documented in Documentation/exit-codes.md; keep both in step.
 */
#ifndef XPU_COMMON_EXITCODES_H
#define XPU_COMMON_EXITCODES_H

enum xpu_exit_code {	/* not "xpu_exit": that tag is the EXIT record (format/xpu_format.h) */
	XPU_EXIT_OK		= 0,
	XPU_EXIT_FAILURE	= 1,	/* internal error, out of memory */
	XPU_EXIT_USAGE		= 2,	/* bad option, missing command */
	XPU_EXIT_NOPERM		= 3,	/* not root / missing capabilities */
	XPU_EXIT_NOKERNEL	= 4,	/* kernel lacks BTF, eBPF or perf events */
	XPU_EXIT_NOTFOUND	= 5,	/* program to run not found / not executable */
	XPU_EXIT_OUTPUT		= 6,	/* output file not writable */
	XPU_EXIT_INPUT		= 7,	/* input trace missing or unreadable */
	XPU_EXIT_CORRUPT	= 8,	/* trace corrupt or truncated (data before damage still reported) */
	XPU_EXIT_VERSION	= 9,	/* trace written by a newer major version */
	XPU_EXIT_NODATA		= 10,	/* trace valid but holds nothing to report */
	XPU_EXIT_MERGE		= 11,	/* traces that cannot be merged (architectures, versions) */
	XPU_EXIT_ATTACH		= 12,	/* xpu-record -p: the GPU recording cannot be attached */
	/* xpu-record exits with the child's status otherwise (128+N for a signal). */
};

#endif

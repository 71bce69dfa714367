// SPDX-License-Identifier: MIT
/* The parts of an off-CPU record's stack: see offcpu.h. */
#include <stdio.h>
#include <string.h>
#include "report/session/offcpu.h"

#define OFFCPU_MODULE "[off-cpu]"

/* Blocking system calls by x86-64 number (the ones a thread sleeps in). */
static const char *const offcpu__syscalls[] = {
	[0] = "read", [1] = "write", [7] = "poll", [17] = "pread64", [18] = "pwrite64",
	[19] = "readv", [20] = "writev", [23] = "select", [24] = "sched_yield",
	[34] = "pause", [35] = "nanosleep", [42] = "connect", [43] = "accept",
	[44] = "sendto", [45] = "recvfrom", [46] = "sendmsg", [47] = "recvmsg",
	[61] = "wait4", [65] = "semop", [70] = "msgrcv", [73] = "flock", [74] = "fsync",
	[75] = "fdatasync", [128] = "rt_sigtimedwait", [130] = "rt_sigsuspend",
	[202] = "futex", [208] = "io_getevents", [230] = "clock_nanosleep",
	[232] = "epoll_wait", [247] = "waitid", [257] = "openat", [270] = "pselect6",
	[271] = "ppoll", [281] = "epoll_pwait", [288] = "accept4", [426] = "io_uring_enter",
	[441] = "epoll_pwait2", [449] = "futex_waitv",
};

const char *offcpu__syscall_name(int nr)
{
	if (nr < 0 || (size_t)nr >= sizeof(offcpu__syscalls) / sizeof(offcpu__syscalls[0]))
		return NULL;
	return offcpu__syscalls[nr];
}

/* Kernel functions that only say "the scheduler ran": the reason is below. */
static bool offcpu__sched_frame(const char *name)
{
	static const char *const prefixes[] = {
		"__schedule", "schedule", "preempt_schedule", "io_schedule", "__cond_resched",
		"_cond_resched", "finish_task_switch", "__traceiter", "bpf_", "__bpf",
		"do_syscall_64", "entry_SYSCALL", "__x64_sys_", "x64_sys_call",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The recorder's own frames at the top of a switch-out's kernel stack. */
static bool offcpu__bpf_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "__traceiter_", 12);
}

/* How many innermost kernel ips are the tracepoint's and the BPF program's. */
size_t offcpu__bpf_depth(struct profile *p, struct callchain *cc, const struct xpu_stack_view *v)
{
	size_t i;

	for (i = 0; i < v->hdr->nr_kernel_ips; i++) {
		uint64_t pc = v->kernel_ips[i];
		const struct frame *f = profile__frame(p, callchain__kernel_frame(cc, i ? pc - 1 : pc));

		if (f->unknown || !offcpu__bpf_frame(f->name))
			break;
	}
	return i;
}

uint32_t offcpu__reason_frame(struct profile *p, struct callchain *cc, const struct xpu_offcpu *o,
			      const struct xpu_stack_view *v)
{
	const char *sys = (o->flags & XPU_OFFCPU_SYSCALL) ? offcpu__syscall_name(o->syscall) : NULL;
	char buf[256];

	if (o->flags & (XPU_OFFCPU_SHORT | XPU_OFFCPU_PREEMPTED))
		goto fallback;
	for (size_t i = 0; i < v->hdr->nr_kernel_ips; i++) {
		uint64_t pc = v->kernel_ips[i];
		const struct frame *f;

		if (!pc || pc >= (uint64_t)-4095)
			continue;
		f = profile__frame(p, callchain__kernel_frame(cc, i ? pc - 1 : pc));
		if (f->unknown)
			break;		/* no kernel symbols: fall back to the call */
		if (!offcpu__sched_frame(f->name)) {
			snprintf(buf, sizeof(buf), "[off-cpu] %s", f->name);
			goto done;
		}
	}
fallback:
	if (o->flags & XPU_OFFCPU_SHORT)
		snprintf(buf, sizeof(buf), "[off-cpu] short blocks");
	else if (o->flags & XPU_OFFCPU_PREEMPTED)
		snprintf(buf, sizeof(buf), "[off-cpu] preempted");
	else if (sys)
		snprintf(buf, sizeof(buf), "[off-cpu] sys_%s", sys);
	else if (o->flags & XPU_OFFCPU_SYSCALL)
		snprintf(buf, sizeof(buf), "[off-cpu] syscall %d", o->syscall);
	else if (o->state & 2)
		snprintf(buf, sizeof(buf), "[off-cpu] uninterruptible");
	else
		snprintf(buf, sizeof(buf), "[off-cpu]");
done:
	return profile__intern_frame(p, FRAME_MARKER, OFFCPU_MODULE, buf, 0, false);
}

/*
 * A block outside a system call (preemption, a page fault) comes with the
 * user registers only: the leaf function, no callers. The thread's latest
 * CPU sample in the same function knows them: borrow its user frames down
 * to that function. frames[0..n) is root first, user frames then kernel.
 */
size_t offcpu__borrow_callers(struct profile *p, const struct u64map *last_stack, uint32_t tid,
			      uint32_t *frames, size_t n)
{
	const uint64_t *last = u64map__find(last_stack, tid);
	const uint32_t *sf;
	size_t sn, nu = 0, nfunc = 0, k;

	/* one user pc: its function, and those inlined into it there */
	while (nu < n && profile__frame(p, frames[nu])->kind == FRAME_CPU_USER)
		nfunc += !profile__frame(p, frames[nu++])->inlined;
	if (!last || nfunc != 1)
		return n;
	sf = profile__stack(p, (uint32_t)*last, &sn);
	for (k = sn; k-- > 0; )		/* the sample's innermost frame in the leaf function */
		if (sf[k] == frames[0])
			break;
	if (k == (size_t)-1 || k + n > CALLCHAIN_MAX)
		return n;
	memmove(frames + k, frames, n * sizeof(*frames));
	memcpy(frames, sf, k * sizeof(*frames));
	return n + k;
}

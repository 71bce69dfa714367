// SPDX-License-Identifier: MIT
/*
 * Stack pruning (format/stack_prune.c): which words of a stack record are
 * zeroed. Kept: rip and rsp always, stack addresses near the copy, code
 * addresses of the process or of an ancestor it was forked from, whatever
 * order the FORK and MMAP records were noted in (the side-band ring is per
 * CPU: a grandchild's FORK can come before its parent's, which lost the
 * grandchild's stacks past its first frame in a recording of a shell
 * script). Zeroed: everything else.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "format/record_types.h"
#include "format/stack_prune.h"
#include "tests/unit/test.h"

#define SP		0x7ffd00001000ull
#define NR_WORDS	16
#define CODE_A		0x400000ull	/* the grandparent's executable mapping */
#define CODE_B		0x7f0000000000ull	/* the child's own */

struct rec {
	struct xpu_sample s;
	uint64_t regs[XPU_X86_NR_REGS];
	uint64_t stack[NR_WORDS];
};

static void note_mmap(struct xpu_prune *p, uint32_t pid, uint64_t start, uint64_t len,
		      uint32_t prot)
{
	struct xpu_mmap m = { .pid = pid, .tid = pid, .start = start, .len = len, .prot = prot };

	xpu_prune__note(p, XPU_REC_MMAP, &m, sizeof(m));
}

static void note_fork(struct xpu_prune *p, uint32_t pid, uint32_t tid, uint32_t ppid)
{
	struct xpu_fork f = { .pid = pid, .tid = tid, .ppid = ppid, .ptid = ppid };

	xpu_prune__note(p, XPU_REC_FORK, &f, sizeof(f));
}

/* A sample of pid: a data word, a stack address, a return address into
 * each mapping, in regs and stack. */
static void rec__init(struct rec *r, uint32_t pid)
{
	memset(r, 0, sizeof(*r));
	r->s.pid = r->s.tid = pid;
	r->s.stack = (struct xpu_stack){ .nr_regs = XPU_X86_NR_REGS, .arch = XPU_ARCH_X86_64,
					 .stack_size = sizeof(r->stack) };
	r->regs[XPU_X86_RSP] = SP;
	r->regs[XPU_X86_RIP] = 0x1234;		/* kept whatever it is */
	r->regs[XPU_X86_RBX] = 42;		/* data */
	r->regs[XPU_X86_RBP] = SP + 0x40;	/* a frame address */
	r->regs[XPU_X86_R12] = CODE_A + 0x10;
	r->stack[0] = 7;			/* data */
	r->stack[1] = CODE_A + 0x100;		/* return addresses */
	r->stack[2] = CODE_B + 0x200;
	r->stack[3] = SP + 0x80;		/* a saved frame pointer */
	r->stack[4] = 0x5555deadbeefull;	/* a heap pointer */
}

static size_t prune(struct xpu_prune *p, struct rec *r, bool apply)
{
	return xpu_prune__stack(p, XPU_REC_SAMPLE, r, sizeof(*r), apply);
}

static void test_own_mappings(void)
{
	struct xpu_prune *p = xpu_prune__new();
	struct rec r;

	note_mmap(p, 100, CODE_A, 0x1000, 5);
	note_mmap(p, 100, CODE_B, 0x1000, 1);	/* not executable */
	rec__init(&r, 100);
	TEST_ASSERT_EQ(prune(p, &r, false), 4);	/* rbx, stack 0, 2 and 4 */
	TEST_ASSERT_EQ(r.stack[0], 7);		/* without apply: untouched */
	TEST_ASSERT_EQ(prune(p, &r, true), 4);
	TEST_ASSERT_EQ(r.regs[XPU_X86_RIP], 0x1234);
	TEST_ASSERT_EQ(r.regs[XPU_X86_RSP], SP);
	TEST_ASSERT_EQ(r.regs[XPU_X86_RBX], 0);
	TEST_ASSERT_EQ(r.regs[XPU_X86_RBP], SP + 0x40);
	TEST_ASSERT_EQ(r.regs[XPU_X86_R12], CODE_A + 0x10);
	TEST_ASSERT_EQ(r.stack[0], 0);
	TEST_ASSERT_EQ(r.stack[1], CODE_A + 0x100);
	TEST_ASSERT_EQ(r.stack[2], 0);
	TEST_ASSERT_EQ(r.stack[3], SP + 0x80);
	TEST_ASSERT_EQ(r.stack[4], 0);
	TEST_ASSERT(r.s.stack.flags & XPU_STACK_PRUNED);
	TEST_ASSERT_EQ(prune(p, &r, true), 0);	/* nothing left to zero */
	xpu_prune__free(p);
}

/* 1 -> 2 -> 3: 3 runs 1's code (never exec'd) and its own mapping. */
static void check_grandchild(struct xpu_prune *p)
{
	struct rec r;

	rec__init(&r, 3);
	TEST_ASSERT_EQ(prune(p, &r, true), 3);	/* rbx, stack 0 and 4 */
	TEST_ASSERT_EQ(r.regs[XPU_X86_R12], CODE_A + 0x10);
	TEST_ASSERT_EQ(r.stack[1], CODE_A + 0x100);
	TEST_ASSERT_EQ(r.stack[2], CODE_B + 0x200);
	TEST_ASSERT_EQ(r.stack[0], 0);
}

static void test_fork_in_order(void)
{
	struct xpu_prune *p = xpu_prune__new();

	note_mmap(p, 1, CODE_A, 0x1000, 5);
	note_fork(p, 2, 2, 1);
	note_fork(p, 3, 3, 2);
	note_mmap(p, 3, CODE_B, 0x1000, 5);
	check_grandchild(p);
	xpu_prune__free(p);
}

/* The order a per-CPU side-band gave: the grandchild's FORK first, the
 * parent's mapping last. */
static void test_fork_out_of_order(void)
{
	struct xpu_prune *p = xpu_prune__new();

	note_mmap(p, 3, CODE_B, 0x1000, 5);
	note_fork(p, 3, 3, 2);
	note_fork(p, 2, 2, 1);
	note_mmap(p, 1, CODE_A, 0x1000, 5);
	check_grandchild(p);
	xpu_prune__free(p);
}

/* A thread's FORK is no new process; a pid loop (reused pids) ends. */
static void test_threads_and_loops(void)
{
	struct xpu_prune *p = xpu_prune__new();
	struct rec r;

	note_mmap(p, 1, CODE_A, 0x1000, 5);
	note_fork(p, 1, 5, 1);		/* thread 5 of process 1 */
	rec__init(&r, 1);
	r.s.tid = 5;
	TEST_ASSERT_EQ(prune(p, &r, false), 4);	/* CODE_B is nobody's */
	note_fork(p, 2, 2, 1);
	note_fork(p, 1, 1, 2);		/* 1 reused as a child of 2 */
	rec__init(&r, 2);
	TEST_ASSERT_EQ(prune(p, &r, false), 4);
	rec__init(&r, 7);		/* unknown: only stack addresses kept */
	TEST_ASSERT_EQ(prune(p, &r, false), 6);
	xpu_prune__free(p);
}

/* A reused pid keeps what its earlier process could run. */
static void test_reused_pid(void)
{
	struct xpu_prune *p = xpu_prune__new();
	struct rec r;

	note_mmap(p, 1, CODE_A, 0x1000, 5);
	note_fork(p, 3, 3, 1);
	note_mmap(p, 2, CODE_B, 0x1000, 5);
	note_fork(p, 3, 3, 2);		/* 3 exited; a child of 2 got its pid */
	rec__init(&r, 3);
	TEST_ASSERT_EQ(prune(p, &r, false), 3);	/* CODE_A and CODE_B both kept */
	xpu_prune__free(p);
}

int main(void)
{
	TEST_RUN(test_own_mappings);
	TEST_RUN(test_fork_in_order);
	TEST_RUN(test_fork_out_of_order);
	TEST_RUN(test_threads_and_loops);
	TEST_RUN(test_reused_pid);
	TEST_EXIT();
}

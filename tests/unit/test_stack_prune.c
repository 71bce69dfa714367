// SPDX-License-Identifier: MIT
/*
 * Stack pruning (format/stack_prune.c): which words of a stack record are
 * zeroed. Kept: rip and rsp always, stack addresses near the copy, code
 * addresses of the process or of an ancestor it was forked from, whatever
 * order the FORK and MMAP records were noted in (the side-band ring is per
 * CPU: a grandchild's FORK can come before its parent's, which lost the
 * grandchild's stacks past its first frame in a recording of a shell
 * script). Zeroed: everything else, and with a reads hook (the recorder's
 * CFI step, record/unwind/unwind_reads.c) the stack words it says are not read,
 * where it knows; the hook sees the records it needs, whole. Where it
 * also gives the frames, they replace the regs and stack (format 1.6).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
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
	size_t len = sizeof(*r);
	size_t zeroed = xpu_prune__stack(p, XPU_REC_SAMPLE, r, &len, apply);

	if (len != sizeof(*r)) {		/* no frames given: the size stays */
		fprintf(stderr, "  FAIL %s:%d: the record's size changed\n", __FILE__, __LINE__);
		test__case_failed = 1;
	}
	return zeroed;
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

/* A hook that knows pid 100's reads: words 1 and 3 (a return address and a
 * saved frame pointer), not pid 3's. */
static int hook_notes, hook_mmap_path_ok;

static void hook_note(void *arg, uint16_t type, const void *body, size_t len)
{
	hook_notes++;
	if (type == XPU_REC_MMAP && len > sizeof(struct xpu_mmap) &&
	    !strcmp((const char *)body + sizeof(struct xpu_mmap), "/bin/x"))
		hook_mmap_path_ok++;
}

static bool hook_reads(void *arg, uint32_t pid, uint64_t time, const uint64_t *regs,
		       unsigned nr_regs, const uint8_t *stack, uint64_t size, uint8_t *read,
		       uint32_t *reg_read)
{
	if (pid != 100 || size != NR_WORDS * 8 || nr_regs != XPU_X86_NR_REGS)
		return false;
	read[1] = read[3] = 1;
	*reg_read = 1u << XPU_X86_RBP;	/* r12 (a code address) is not read */
	return true;
}

static void test_reads_hook(void)
{
	struct xpu_prune_reads hook = { hook_note, hook_reads, NULL, NULL };
	struct xpu_prune *p = xpu_prune__new();
	struct xpu_mmap m = { .pid = 100, .tid = 100, .start = CODE_A, .len = 0x1000, .prot = 5 };
	struct iovec iov[2] = { { &m, sizeof(m) }, { "/bin/x", 7 } };
	struct rec r;

	xpu_prune__set_reads(p, &hook);
	TEST_ASSERT(xpu_prune__has_reads(p));
	xpu_prune__notev(p, XPU_REC_MMAP, iov, 2);	/* as the writer gets it */
	TEST_ASSERT_EQ(hook_mmap_path_ok, 1);
	note_fork(p, 3, 3, 100);
	TEST_ASSERT_EQ(hook_notes, 2);
	rec__init(&r, 100);
	r.stack[5] = SP + 0x100;		/* a stack address no rule reads */
	r.stack[6] = CODE_A + 0x300;		/* a stale return address */
	TEST_ASSERT_EQ(prune(p, &r, true), 7);	/* rbx, r12, stack 0, 2, 4, 5, 6 */
	TEST_ASSERT_EQ(r.regs[XPU_X86_RBP], SP + 0x40);
	TEST_ASSERT_EQ(r.regs[XPU_X86_R12], 0);
	TEST_ASSERT_EQ(r.regs[XPU_X86_RIP], 0x1234);	/* always kept */
	TEST_ASSERT_EQ(r.regs[XPU_X86_RSP], SP);
	TEST_ASSERT_EQ(r.stack[1], CODE_A + 0x100);
	TEST_ASSERT_EQ(r.stack[3], SP + 0x80);
	TEST_ASSERT_EQ(r.stack[5], 0);
	TEST_ASSERT_EQ(r.stack[6], 0);
	TEST_ASSERT_EQ(r.s.stack.flags & (XPU_STACK_PRUNED | XPU_STACK_PRUNED_CFI),
		       XPU_STACK_PRUNED | XPU_STACK_PRUNED_CFI);
	rec__init(&r, 3);			/* not known: the rule alone */
	r.stack[5] = SP + 0x100;
	r.stack[6] = CODE_A + 0x300;
	TEST_ASSERT_EQ(prune(p, &r, true), 4);	/* rbx, stack 0, 2 (CODE_B), 4 */
	TEST_ASSERT_EQ(r.stack[5], SP + 0x100);
	TEST_ASSERT_EQ(r.stack[6], CODE_A + 0x300);
	TEST_ASSERT_EQ(r.s.stack.flags & XPU_STACK_PRUNED_CFI, 0);
	xpu_prune__free(p);
}

/* The same hook giving frames: pid 100's record becomes its frames, no
 * regs or stack (format 1.6); pid 101's frames (an activation after the
 * first, or too many for the words) keep the words. */
static unsigned hook_nr_frames;
static const uint64_t hook_pcs[3] = { 0x1234, CODE_A + 0x100, CODE_B + 0x200 };

static unsigned hook_frames(void *arg, const uint64_t **pcs)
{
	*pcs = hook_pcs;
	return hook_nr_frames;
}

static bool hook_reads_101(void *arg, uint32_t pid, uint64_t time, const uint64_t *regs,
			   unsigned nr_regs, const uint8_t *stack, uint64_t size, uint8_t *read,
			   uint32_t *reg_read)
{
	return hook_reads(arg, pid == 101 ? 100 : pid, time, regs, nr_regs, stack, size, read,
			  reg_read);
}

static void test_frames_hook(void)
{
	struct xpu_prune_reads hook = { hook_note, hook_reads_101, hook_frames, NULL };
	struct xpu_prune *p = xpu_prune__new();
	struct rec r;
	size_t len = sizeof(r);
	const uint64_t *ips;

	xpu_prune__set_reads(p, &hook);
	note_mmap(p, 100, CODE_A, 0x1000, 5);
	hook_nr_frames = 3;
	rec__init(&r, 100);
	r.s.stack.flags = XPU_STACK_USER_TRUNCATED;
	xpu_prune__stack(p, XPU_REC_SAMPLE, &r, &len, true);
	TEST_ASSERT_EQ(len, sizeof(r.s) + 3 * 8);
	TEST_ASSERT_EQ(r.s.stack.nr_user_ips, 3);
	TEST_ASSERT_EQ(r.s.stack.nr_regs, 0);
	TEST_ASSERT_EQ(r.s.stack.stack_size, 0);
	TEST_ASSERT_EQ(r.s.stack.flags, XPU_STACK_USER_TRUNCATED | XPU_STACK_PRUNED |
					XPU_STACK_PRUNED_CFI | XPU_STACK_UNWOUND);
	ips = (const uint64_t *)((const uint8_t *)&r + sizeof(r.s));
	TEST_ASSERT_EQ(ips[0], 0x1234);
	TEST_ASSERT_EQ(ips[2], CODE_B + 0x200);
	/* the hook has none for this one: the words, pruned */
	hook_nr_frames = 0;
	rec__init(&r, 101);
	len = sizeof(r);
	xpu_prune__stack(p, XPU_REC_SAMPLE, &r, &len, true);
	TEST_ASSERT_EQ(len, sizeof(r));
	TEST_ASSERT_EQ(r.s.stack.nr_regs, XPU_X86_NR_REGS);
	TEST_ASSERT_EQ(r.s.stack.flags & XPU_STACK_UNWOUND, 0);
	TEST_ASSERT_EQ(r.regs[XPU_X86_R12], 0);
	/* more frames than regs and stack words: kept as words */
	hook_nr_frames = XPU_X86_NR_REGS + NR_WORDS + 1;
	rec__init(&r, 101);
	len = sizeof(r);
	xpu_prune__stack(p, XPU_REC_SAMPLE, &r, &len, true);
	TEST_ASSERT_EQ(len, sizeof(r));
	TEST_ASSERT_EQ(r.s.stack.flags & XPU_STACK_UNWOUND, 0);
	/* not known (pid 3): never asked for frames */
	hook_nr_frames = 3;
	rec__init(&r, 3);
	len = sizeof(r);
	xpu_prune__stack(p, XPU_REC_SAMPLE, &r, &len, true);
	TEST_ASSERT_EQ(len, sizeof(r));
	TEST_ASSERT_EQ(r.s.stack.flags & XPU_STACK_UNWOUND, 0);
	TEST_ASSERT_EQ(xpu_prune__unwound(p), 1);	/* the first record only */
	xpu_prune__free(p);
}

int main(void)
{
	TEST_RUN(test_own_mappings);
	TEST_RUN(test_fork_in_order);
	TEST_RUN(test_fork_out_of_order);
	TEST_RUN(test_threads_and_loops);
	TEST_RUN(test_reused_pid);
	TEST_RUN(test_reads_hook);
	TEST_RUN(test_frames_hook);
	TEST_EXIT();
}

// SPDX-License-Identifier: MIT
/*
 * Off-CPU records in the report (report/session/offcpu.c) on traces built with
 * the format writer: MMAPs of this test binary, KSYM records for a made-up
 * kernel, OFFCPU records with fp user stacks made of real functions of this
 * binary. Checks the folded stacks, the reason frame of each kind of block,
 * the recorder's BPF frames dropped, callers borrowed for a leaf-only block,
 * the weights (off_ns at the frequency) and the views.
 */
#include <string.h>
#include "tests/unit/test.h"
#include "tests/unit/report_trace.h"
#include "report/output/output.h"
#include "report/session/session.h"

volatile int oc_sink;
__attribute__((noinline, used)) void oc_main(void) { oc_sink = 1; }
__attribute__((noinline, used)) void oc_wait(void) { oc_sink = 2; }
__attribute__((noinline, used)) void oc_spin(void) { oc_sink = 3; }

#define FREQ	1000
#define KBASE	0xffffffff81000000ull
static char oc_path[] = "/tmp/xpu-test-offcpu-XXXXXX";
static struct xpu_writer *w;
static uint64_t T0;
static uint32_t PID;

static const char *const ksyms[] = {	/* KBASE + 0x100 * i, 0x80 long */
	"bpf_prog_0123456789abcdef_xpu_offcpu_switch", "bpf_trace_run4", "__schedule",
	"schedule", "futex_wait_queue", "__futex_wait", "__x64_sys_futex", "do_syscall_64",
};
#define K(i) (KBASE + 0x100 * (i) + 0x10)

static void oc_open(void)
{
	struct xpu_writer_opts wo = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_FP_STACKS |
						 XPU_FEAT_OFF_CPU | XPU_FEAT_KERNEL_STACKS };
	int fd;

	strcpy(oc_path, "/tmp/xpu-test-offcpu-XXXXXX");
	fd = mkstemp(oc_path);
	if (fd >= 0)
		close(fd);
	w = xpu_writer__open(oc_path, &wo);
	T0 = rt_now();
	PID = (uint32_t)getpid();
	xpu_writer__meta(w, XPU_META_SAMPLE_FREQ, "1000");
	rt_write_maps_as(w, PID, T0, "app");
	for (size_t i = 0; i < sizeof(ksyms) / sizeof(ksyms[0]); i++) {
		struct xpu_ksym k = { .addr = KBASE + 0x100 * i, .size = 0x80 };
		struct iovec iov[2] = { { &k, sizeof(k) },
					{ (void *)ksyms[i], strlen(ksyms[i]) + 1 } };

		xpu_writer__addv(w, XPU_REC_KSYM, 0, iov, 2);
	}
}

static uint64_t fn(void (*f)(void))
{
	return (uint64_t)(uintptr_t)f + 1;
}

/* An OFFCPU record: kernel ips (0-terminated), then user ips (fp) or, when
 * leaf_ip is set, user registers with that ip and no stack copy. */
static void oc_offcpu(uint32_t tid, uint64_t start, uint64_t off_ms, uint32_t flags, int sys,
		      const uint64_t *kips, const uint64_t *uips, uint64_t leaf_ip)
{
	struct xpu_offcpu o = { .start = T0 + start, .end = T0 + start + off_ms * 1000000,
				.off_ns = off_ms * 1000000, .pid = PID, .tid = tid, .flags = flags,
				.syscall = sys, .state = (flags & XPU_OFFCPU_PREEMPTED) ? 0 : 1 };
	uint64_t regs[XPU_X86_NR_REGS] = { 0 };
	size_t nk = 0, nu = 0;
	struct iovec iov[4];

	while (kips && kips[nk])
		nk++;
	while (uips && uips[nu])
		nu++;
	o.stack.arch = XPU_ARCH_X86_64;
	o.stack.nr_kernel_ips = (uint16_t)nk;
	o.stack.nr_user_ips = (uint16_t)nu;
	iov[0] = (struct iovec){ &o, sizeof(o) };
	iov[1] = (struct iovec){ (void *)kips, nk * 8 };
	iov[2] = (struct iovec){ (void *)uips, nu * 8 };
	iov[3] = (struct iovec){ regs, 0 };
	if (leaf_ip) {
		o.stack.nr_regs = XPU_X86_NR_REGS;
		o.stack.flags = XPU_STACK_KERNEL_MODE;
		regs[XPU_X86_RIP] = leaf_ip;
		regs[XPU_X86_RSP] = 0x7ffc00000000ull;
		iov[3].iov_len = sizeof(regs);
	}
	xpu_writer__addv(w, XPU_REC_OFFCPU, 0, iov, 4);
}

static void oc_sample(uint32_t tid, uint64_t t, const uint64_t *uips)
{
	struct xpu_sample s = { .time = T0 + t, .pid = PID, .tid = tid, .weight = 1 };
	size_t nu = 0;
	struct iovec iov[2];

	while (uips[nu])
		nu++;
	s.stack.arch = XPU_ARCH_X86_64;
	s.stack.nr_user_ips = (uint16_t)nu;
	iov[0] = (struct iovec){ &s, sizeof(s) };
	iov[1] = (struct iovec){ (void *)uips, nu * 8 };
	xpu_writer__addv(w, XPU_REC_SAMPLE, 0, iov, 2);
}

static char *oc_folded(struct session *s, enum profile_view view)
{
	struct folded_opts o = { .view = view, .comm = true };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	output__folded(&s->profile, fp, &o);
	fclose(fp);
	return buf;
}

static void test_offcpu_stacks(void)
{
	const uint64_t kfutex[] = { K(0), K(1), K(2), K(3), K(4), K(5), K(6), K(7), 0 };
	const uint64_t kunknown[] = { KBASE + 0x100000, KBASE + 0x100100, 0 };
	const uint64_t kpreempt[] = { K(0), K(1), K(2), K(3), 0 };
	const uint64_t uwait[] = { fn(oc_wait), fn(oc_main), 0 };
	const uint64_t uspin[] = { fn(oc_spin), fn(oc_main), 0 };
	struct session s;
	char *out;

	oc_open();
	/* 1. blocked in futex: kernel path named, BPF frames gone, 40 ms */
	oc_offcpu(PID, 1000, 40, XPU_OFFCPU_SYSCALL, 202, kfutex, uwait, 0);
	/* 2. no kernel symbols for its path: the system call names it, 10 ms */
	oc_offcpu(PID, 50000, 10, XPU_OFFCPU_SYSCALL, 202, kunknown, uwait, 0);
	/* 3. a sample in oc_spin, then preempted there (leaf only): 7 ms under main */
	oc_sample(PID, 60000, uspin);
	oc_offcpu(PID, 61000, 7, XPU_OFFCPU_PREEMPTED | XPU_OFFCPU_LEAF_ONLY, -1, kpreempt,
		  NULL, (uint64_t)(uintptr_t)oc_spin + 4);
	/* 4. short blocks, no stack: 3 ms; 5. another thread's, filtered below */
	oc_offcpu(PID, 70000, 3, XPU_OFFCPU_SHORT, -1, NULL, NULL, 0);
	oc_offcpu(PID + 1, 80000, 5, XPU_OFFCPU_SYSCALL, 35, NULL, uwait, 0);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);

	TEST_ASSERT_EQ(session__open(&s, oc_path), 0);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	out = oc_folded(&s, VIEW_OFFCPU);
	TEST_ASSERT(strstr(out, "app;oc_main;oc_wait;do_syscall_64_[k];__x64_sys_futex_[k];"
			   "__futex_wait_[k];futex_wait_queue_[k];schedule_[k];__schedule_[k];"
			   "[off-cpu] futex_wait_queue 40\n"));
	TEST_ASSERT(strstr(out, ";[off-cpu] sys_futex 10\n"));
	TEST_ASSERT(strstr(out, "app;oc_main;oc_spin;schedule_[k];__schedule_[k];"
			   "[off-cpu] preempted 7\n"));
	TEST_ASSERT(strstr(out, "app;[off-cpu] short blocks 3\n"));
	TEST_ASSERT(strstr(out, "app;oc_main;oc_wait;[off-cpu] sys_nanosleep 5\n"));
	TEST_ASSERT(!strstr(out, "bpf_"));
	free(out);
	TEST_ASSERT(profile__total(&s.profile, VIEW_OFFCPU) > 64.99 &&
		    profile__total(&s.profile, VIEW_OFFCPU) < 65.01);
	TEST_ASSERT(profile__total(&s.profile, VIEW_WALL) > 65.99 &&
		    profile__total(&s.profile, VIEW_WALL) < 66.01);
	TEST_ASSERT_EQ(profile__total(&s.profile, VIEW_CPU), 1);
	TEST_ASSERT_EQ(s.offcpu.records, 5);
	TEST_ASSERT_EQ(s.offcpu.short_ns, 3000000);
	TEST_ASSERT_EQ(s.offcpu.preempted_ns, 7000000);
	TEST_ASSERT_EQ(s.offcpu.leaf_only, 1);
	session__close(&s);

	/* --tid: only the second thread's block */
	TEST_ASSERT_EQ(session__open(&s, oc_path), 0);
	TEST_ASSERT_EQ(filter__parse_ids(&s.filter.tids, &s.filter.nr_tids, "0"), 0);
	s.filter.tids[0] = PID + 1;
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	TEST_ASSERT(profile__total(&s.profile, VIEW_OFFCPU) > 4.99 &&
		    profile__total(&s.profile, VIEW_OFFCPU) < 5.01);
	TEST_ASSERT_EQ(s.nr_offcpu_filtered, 4);
	session__close(&s);
	unlink(oc_path);
}

int main(void)
{
	TEST_RUN(test_offcpu_stacks);
	TEST_EXIT();
}

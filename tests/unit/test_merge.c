// SPDX-License-Identifier: MIT
/*
 * Merged sessions (report/session/merge.c, session.c) over hand-written traces:
 * every record type of the table has its pid/time fields listed; pids of
 * two inputs that collide are kept apart; times are moved onto the clock of
 * the input that started first by the file headers' realtime/monotonic
 * pairs; ranks come from PROC_ENV, inherited over a fork; --rank keeps the
 * pids of its ranks; the per-device GPU summary adds up to the kernel
 * total and counts overlapping work once in busy time; different
 * architectures are refused.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/record_types.h"
#include "format/writer.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_stats.h"
#include "report/session/merge.h"
#include "report/session/session.h"
#include "test.h"

#define S 1000000000ULL

static char dir[] = "/tmp/test_merge.XXXXXX";

static void test_covers_every_type(void)
{
	for (unsigned t = 0; t < XPU_REC_MAX; t++) {
		if (!xpu_rectype__get((uint16_t)t) || merge__covers((uint16_t)t))
			continue;
		fprintf(stderr, "  record type %u %s has no row in report/session/merge.c: list its "
			"pid, tid and time fields there\n", t, xpu_record__type_name((uint16_t)t));
		TEST_ASSERT(0);
	}
}

static void put_env(struct xpu_writer *w, uint32_t pid, const char *rank)
{
	struct xpu_proc_env e = { .time = 0, .pid = pid };
	char kv[32];
	int n = snprintf(kv, sizeof(kv), "RANK%c%s", 0, rank) + 1;
	struct iovec iov[2] = { { &e, sizeof(e) }, { kv, (size_t)n } };

	xpu_writer__addv(w, XPU_REC_PROC_ENV, 0, iov, 2);
}

static void put_kernel(struct xpu_writer *w, uint32_t pid, uint32_t dev, uint64_t start,
		       uint64_t end)
{
	struct xpu_gpu_kernel k = { .start = start, .end = end, .pid = pid, .device = dev,
				    .correlation_id = start };

	xpu_writer__add(w, XPU_REC_GPU_KERNEL, &k, sizeof(k));
}

/* A trace of host (arch) whose clocks read realtime and mono at its start:
 * pid 100 (rank) with a forked 101, and GPU work at mono + 1 ms. */
static void write_trace(const char *path, const char *host, const char *arch,
			uint64_t realtime, uint64_t mono, const char *rank, bool two_devices)
{
	struct xpu_writer *w = xpu_writer__open(path, NULL);
	struct xpu_comm c = { .time = mono, .pid = 100, .tid = 100, .flags = XPU_COMM_EXEC,
			      .comm = "train" };
	struct xpu_fork f = { .time = mono + 10, .pid = 101, .tid = 101, .ppid = 100, .ptid = 100 };
	struct xpu_gpu_memcpy m = { .start = mono + S / 1000 + 500, .end = mono + 3 * S / 1000,
				    .pid = 100, .device = 0, .bytes = 64 };
	int fd;

	TEST_ASSERT(w);
	xpu_writer__meta(w, XPU_META_HOSTNAME, host);
	xpu_writer__meta(w, XPU_META_ARCH, arch);
	xpu_writer__meta(w, XPU_META_TOOL_VERSION, "0.1.0");
	xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c));
	put_env(w, 100, rank);
	xpu_writer__add(w, XPU_REC_FORK, &f, sizeof(f));
	/* device 0: kernel [1, 2) ms and a copy [1.0005, 3) ms: busy 2 ms */
	put_kernel(w, 100, 0, mono + S / 1000, mono + 2 * S / 1000);
	xpu_writer__add(w, XPU_REC_GPU_MEMCPY, &m, sizeof(m));
	if (two_devices)
		put_kernel(w, 101, 1, mono + S / 1000, mono + 5 * S / 1000);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	/* the clocks of the file header, as another host would have them */
	fd = open(path, O_WRONLY);
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(pwrite(fd, &realtime, 8, offsetof(struct xpu_file_header, realtime_ns)), 8);
	TEST_ASSERT_EQ(pwrite(fd, &mono, 8, offsetof(struct xpu_file_header, monotonic_ns)), 8);
	close(fd);
}

struct starts {
	struct session_tool tool;
	uint64_t kernel[4];
	uint32_t pid[4];
	int n;
};

static int starts__record(struct session *s, const struct xpu_record *rec, int pass, void *priv)
{
	struct starts *st = priv;
	const struct xpu_gpu_kernel *k = rec->body;

	if (pass == 1 && rec->type == XPU_REC_GPU_KERNEL && st->n < 4) {
		st->kernel[st->n] = k->start;
		st->pid[st->n++] = k->pid;
	}
	return 0;
}

static void test_merge_two(void)
{
	char a[64], b[64], c[64], why[256];
	const char *paths[2] = { a, b };
	struct starts st = { .tool = { .name = "starts", .record = starts__record } };
	struct gpu_stats *g;
	struct session s;
	uint32_t rank;
	uint64_t kern = 0;
	const uint32_t b100 = (1u << MERGE_PID_SHIFT) + 100;

	snprintf(a, sizeof(a), "%s/a.data", dir);
	snprintf(b, sizeof(b), "%s/b.data", dir);
	snprintf(c, sizeof(c), "%s/c.data", dir);
	/* a starts at wall 1000 s (its monotonic 100 s), b half a second
	 * later on a host whose monotonic clock reads 50 s */
	write_trace(a, "hostA", "x86_64", 1000 * S, 100 * S, "0", true);
	write_trace(b, "hostB", "x86_64", 1000 * S + S / 2, 50 * S, "1", false);
	write_trace(c, "hostC", "aarch64", 1000 * S, 100 * S, "2", false);

	st.tool.priv = &st;
	session__open_many_or_die(&s, paths, 2, NULL, "test");
	s.input_frames = true;			/* --input-frame */
	TEST_ASSERT_EQ(s.nr_inputs, 2);
	TEST_ASSERT_EQ(s.inputs[1].shift, (int64_t)(50 * S + S / 2));
	gpu_stats__attach(&s);
	gpu_join__attach(&s);
	session__add_tool(&s, &st.tool);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT(session__check_inputs(&s, why, sizeof(why)) == NULL);

	/* pid 100 of each input is its own process */
	TEST_ASSERT(machine__find_proc(&s.machine, 100));
	TEST_ASSERT(machine__find_proc(&s.machine, b100));
	TEST_ASSERT_EQ(session__input_of(&s, b100) - s.inputs, 1);
	TEST_ASSERT(!strcmp(s.inputs[1].hostname, "hostB"));
	/* ranks: own, inherited by the forked 101, per input */
	TEST_ASSERT(session__rank(&s, 100, RANK_GLOBAL, &rank) == 0 && rank == 0);
	TEST_ASSERT(session__rank(&s, 101, RANK_GLOBAL, &rank) == 0 && rank == 0);
	TEST_ASSERT(session__rank(&s, b100, RANK_GLOBAL, &rank) == 0 && rank == 1);
	TEST_ASSERT(session__rank(&s, 102, RANK_GLOBAL, &rank) != 0);
	/* times: b's kernel at its 50.001 s is a's 100.501 s */
	TEST_ASSERT_EQ(st.n, 3);
	TEST_ASSERT_EQ(st.kernel[0], 100 * S + S / 1000);
	TEST_ASSERT_EQ(st.pid[2], b100);
	TEST_ASSERT_EQ(st.kernel[2], 100 * S + S / 2 + S / 1000);

	/* per device: a dev 0, a dev 1, b dev 0; kernels add up to the total */
	g = session__tool(&s, GPU_STATS_TOOL);
	TEST_ASSERT(g);
	gpu_stats__finish(g);
	TEST_ASSERT_EQ(g->nr_devs, 3);
	for (size_t i = 0; i < g->nr_devs; i++)
		kern += g->devs[i].kernel_ns;
	TEST_ASSERT_EQ(kern, g->kernel_ns);
	TEST_ASSERT_EQ(g->devs[0].input, 0);
	TEST_ASSERT_EQ(g->devs[0].device, 0);
	TEST_ASSERT_EQ(g->devs[0].busy_ns, 2 * S / 1000);	/* [1, 3) ms, the overlap once */
	TEST_ASSERT_EQ(g->devs[1].device, 1);
	TEST_ASSERT_EQ(g->devs[1].busy_ns, 4 * S / 1000);
	TEST_ASSERT_EQ(g->devs[2].input, 1);

	/* pass 2: GPU work of no known thread still gets its input's label */
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	int labelled = 0;

	for (size_t i = 0; i < s.profile.nr_entries; i++) {
		const struct profile_entry *e = &s.profile.entries[i];
		const struct frame *f;
		size_t n;
		const uint32_t *fr = profile__stack(&s.profile, e->stack, &n);

		if (e->origin != ORIGIN_GPU)
			continue;
		TEST_ASSERT(n >= 2);
		f = profile__frame(&s.profile, fr[0]);
		TEST_ASSERT(!strcmp(f->module, SESSION_INPUT_MODULE));
		TEST_ASSERT(!strcmp(f->name, e->pid == b100 ? "[hostB rank 1]" : "[hostA rank 0]"));
		labelled++;
	}
	TEST_ASSERT_EQ(labelled, 5);	/* a: 2 kernels, 1 copy; b: 1 kernel, 1 copy */
	session__close(&s);

	/* --rank 1: b's pid only */
	session__open_many_or_die(&s, paths, 2, NULL, "test");
	TEST_ASSERT(filter__parse_ids(&s.filter.ranks, &s.filter.nr_ranks, "1") == 0);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT(!filter__match_task(&s.filter, 100, 100, FILTER_NO_TIME));
	TEST_ASSERT(filter__match_task(&s.filter, b100, b100, FILTER_NO_TIME));
	session__close(&s);

	/* without --input-frame: the stacks are the inputs' own, no label */
	session__open_many_or_die(&s, paths, 2, NULL, "test");
	gpu_join__attach(&s);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(session__pass2(&s), 0);
	labelled = 0;
	for (size_t i = 0; i < s.profile.nr_entries; i++) {
		const struct profile_entry *e = &s.profile.entries[i];
		size_t n;
		const uint32_t *fr = profile__stack(&s.profile, e->stack, &n);

		labelled += e->origin == ORIGIN_GPU;
		for (size_t j = 0; j < n; j++)
			TEST_ASSERT(strcmp(profile__frame(&s.profile, fr[j])->module,
					   SESSION_INPUT_MODULE));
	}
	TEST_ASSERT_EQ(labelled, 5);		/* the same GPU work, unlabelled */
	session__close(&s);

	/* different architectures: refused with the reason */
	paths[1] = c;
	session__open_many_or_die(&s, paths, 2, NULL, "test");
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT(session__check_inputs(&s, why, sizeof(why)) != NULL);
	TEST_ASSERT(strstr(why, "different architectures") && strstr(why, "aarch64"));
	session__close(&s);

	/* one input: nothing rewritten */
	session__open_or_die(&s, b, "test");
	st.n = 0;
	session__add_tool(&s, &st.tool);
	TEST_ASSERT_EQ(session__pass1(&s), 0);
	TEST_ASSERT_EQ(st.pid[0], 100);
	TEST_ASSERT_EQ(st.kernel[0], 50 * S + S / 1000);
	session__close(&s);
}

int main(void)
{
	char cmd[128];
	int ret;

	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_covers_every_type);
	TEST_RUN(test_merge_two);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ret = system(cmd);
	(void)ret;
	TEST_EXIT();
}

// SPDX-License-Identifier: MIT
/*
 * xpu-record's sideband filter (record/kernel/sideband.c) over perf rings in memory,
 * filled here with perf records laid out as the kernel writes them
 * (sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME). Which
 * mmap/comm/fork/exit records belong to the profiled tree, children found
 * from FORK records in any ring, records wrapping the ring's end, damaged
 * records. No BPF (record_bpf NULL) and no root.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "format/writer.h"
#include "format/reader.h"
#include "record/kernel/sideband.h"
#include "test.h"

#define RING_SIZE	4096
#define NR_RINGS	2

static char tmpdir[64];

struct ring {
	struct perf_event_mmap_page meta;
	uint8_t data[RING_SIZE];
};

struct rig {
	struct ring rings[NR_RINGS];
	struct xpu_writer *w;
	struct sideband *sb;
	char path[128];
	/* what the trace held at close */
	int nr_mmap, nr_comm, nr_fork, nr_exit, nr_other;
	struct xpu_mmap mmaps[8];
	char mmap_paths[8][64];
	struct xpu_comm comms[8];
	struct xpu_fork forks[8];
	struct xpu_exit exits[8];
};

static int rig__open(struct rig *r, const char *name)
{
	struct perf_event_mmap_page *meta[NR_RINGS];
	uint8_t *data[NR_RINGS];

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s/%s.data", tmpdir, name);
	r->w = xpu_writer__open(r->path, &(struct xpu_writer_opts){ 0 });
	if (!r->w)
		return -1;
	for (int i = 0; i < NR_RINGS; i++) {
		meta[i] = &r->rings[i].meta;
		data[i] = r->rings[i].data;
	}
	return sideband__open_rings(&r->sb, r->w, NULL, meta, data, NR_RINGS, RING_SIZE);
}

/* Starts ring i at stream position pos (as if pos bytes were consumed). */
static void rig__start_at(struct rig *r, int i, uint64_t pos)
{
	r->rings[i].meta.data_tail = pos;
	r->rings[i].meta.data_head = pos;
}

/* Appends a record to ring i as the kernel would, wrapping at the end. */
static void rig__put(struct rig *r, int i, const void *rec, size_t len)
{
	struct ring *g = &r->rings[i];

	for (size_t k = 0; k < len; k++)
		g->data[(g->meta.data_head + k) & (RING_SIZE - 1)] = ((const uint8_t *)rec)[k];
	g->meta.data_head += len;
}

struct trailer {			/* sample_id: PERF_SAMPLE_TID | PERF_SAMPLE_TIME */
	uint32_t pid, tid;
	uint64_t time;
};

static void put_mmap2(struct rig *r, int ring, uint32_t pid, uint32_t prot, const char *path,
		      int build_id_size, uint64_t time)
{
	uint8_t rec[256] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_MMAP2 };
	size_t fixed = 72, plen = (strlen(path) + 1 + 7) & ~7ul;
	struct trailer t = { pid, pid, time };
	uint32_t ids[2] = { pid, pid + 1 };
	uint64_t range[3] = { 0x400000, 0x1000, 0x2000 };	/* addr, len, pgoff */
	uint32_t pf[2] = { prot, MAP_PRIVATE };

	h.size = fixed + plen + sizeof(t);
	if (build_id_size >= 0) {
		h.misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
		rec[40] = build_id_size;
		for (int k = 0; k < 20; k++)
			rec[44 + k] = 0xb0 + k;
	}
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, ids, sizeof(ids));
	memcpy(rec + 16, range, sizeof(range));
	memcpy(rec + 64, pf, sizeof(pf));
	strcpy((char *)rec + fixed, path);
	memcpy(rec + fixed + plen, &t, sizeof(t));
	rig__put(r, ring, rec, h.size);
}

static void put_comm(struct rig *r, int ring, uint32_t pid, const char *comm, bool exec)
{
	uint8_t rec[128] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_COMM,
				       .misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0 };
	size_t clen = (strlen(comm) + 1 + 7) & ~7ul;
	struct trailer t = { pid, pid, 5 };
	uint32_t ids[2] = { pid, pid };

	h.size = 16 + clen + sizeof(t);
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, ids, sizeof(ids));
	strcpy((char *)rec + 16, comm);
	memcpy(rec + 16 + clen, &t, sizeof(t));
	rig__put(r, ring, rec, h.size);
}

static void put_task(struct rig *r, int ring, uint32_t type, uint32_t pid, uint32_t tid,
		     uint32_t ppid, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		struct trailer t;
	} rec = { { type, 0, sizeof(rec) }, pid, ppid, tid, ppid, time, { pid, tid, time } };

	rig__put(r, ring, &rec, sizeof(rec));
}

static void put_lost(struct rig *r, int ring, uint64_t n)
{
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
		struct trailer t;
	} rec = { { PERF_RECORD_LOST, 0, sizeof(rec) }, 1, n, { 0, 0, 0 } };

	rig__put(r, ring, &rec, sizeof(rec));
}

/* Closes the writer and reads back what the sideband wrote. */
static int rig__close(struct rig *r)
{
	struct xpu_reader *rd;
	struct xpu_record rec;
	int err;

	sideband__close(r->sb);
	if (xpu_writer__close(r->w))
		return -1;
	rd = xpu_reader__open(r->path, &err);
	if (!rd)
		return -1;
	while (xpu_reader__next(rd, &rec) == 1) {
		switch (rec.type) {
		case XPU_REC_MMAP:
			if (r->nr_mmap < 8) {
				memcpy(&r->mmaps[r->nr_mmap], rec.body, sizeof(struct xpu_mmap));
				snprintf(r->mmap_paths[r->nr_mmap], sizeof(r->mmap_paths[0]), "%s",
					 xpu_record__string(&rec, sizeof(struct xpu_mmap)));
			}
			r->nr_mmap++;
			break;
		case XPU_REC_COMM:
			if (r->nr_comm < 8)
				memcpy(&r->comms[r->nr_comm], rec.body, sizeof(struct xpu_comm));
			r->nr_comm++;
			break;
		case XPU_REC_FORK:
			if (r->nr_fork < 8)
				memcpy(&r->forks[r->nr_fork], rec.body, sizeof(struct xpu_fork));
			r->nr_fork++;
			break;
		case XPU_REC_EXIT:
			if (r->nr_exit < 8)
				memcpy(&r->exits[r->nr_exit], rec.body, sizeof(struct xpu_exit));
			r->nr_exit++;
			break;
		default:
			r->nr_other++;
		}
	}
	xpu_reader__close(rd);
	return 0;
}

static struct rig rig;

/* Only the tracked process's records, only its executable mappings. */
static void test_tracked_only(void)
{
	struct rig *r = &rig;

	TEST_ASSERT_EQ(rig__open(r, "tracked"), 0);
	sideband__track(r->sb, 100);
	put_mmap2(r, 0, 100, PROT_READ | PROT_EXEC, "/nonexistent/app", 20, 1000);
	put_mmap2(r, 0, 100, PROT_READ, "/nonexistent/data", 20, 1001);	/* not code */
	put_mmap2(r, 0, 999, PROT_READ | PROT_EXEC, "/nonexistent/other", 20, 1002);
	put_comm(r, 0, 100, "app", true);
	put_comm(r, 1, 999, "other", false);
	put_task(r, 1, PERF_RECORD_EXIT, 999, 999, 1, 1003);
	put_task(r, 1, PERF_RECORD_EXIT, 100, 100, 1, 1004);
	TEST_ASSERT_EQ(sideband__drain(r->sb), 0);
	TEST_ASSERT(sideband__seen(r->sb, 100));
	TEST_ASSERT(!sideband__seen(r->sb, 999));
	TEST_ASSERT_EQ(r->rings[0].meta.data_tail, r->rings[0].meta.data_head);
	TEST_ASSERT_EQ(r->rings[1].meta.data_tail, r->rings[1].meta.data_head);
	TEST_ASSERT_EQ(rig__close(r), 0);
	TEST_ASSERT_EQ(r->nr_mmap, 1);
	TEST_ASSERT_EQ(r->mmaps[0].pid, 100);
	TEST_ASSERT_EQ(r->mmaps[0].time, 1000);
	TEST_ASSERT_EQ(r->mmaps[0].start, 0x400000);
	TEST_ASSERT_EQ(r->mmaps[0].len, 0x1000);
	TEST_ASSERT_EQ(r->mmaps[0].pgoff, 0x2000);
	TEST_ASSERT_EQ(r->mmaps[0].build_id_size, 20);
	TEST_ASSERT_EQ(r->mmaps[0].build_id[19], 0xb0 + 19);
	TEST_ASSERT(!strcmp(r->mmap_paths[0], "/nonexistent/app"));
	TEST_ASSERT_EQ(r->nr_comm, 1);
	TEST_ASSERT_EQ(r->comms[0].pid, 100);
	TEST_ASSERT_EQ(r->comms[0].flags, XPU_COMM_EXEC);
	TEST_ASSERT(!strcmp(r->comms[0].comm, "app"));
	TEST_ASSERT_EQ(r->nr_exit, 1);
	TEST_ASSERT_EQ(r->exits[0].pid, 100);
	TEST_ASSERT_EQ(r->nr_fork, 0);
	TEST_ASSERT_EQ(r->nr_other, 0);
}

/* A child's mmap read from ring 0 before its FORK, which is in ring 1, is
 * kept; so are the child's own threads and children in later drains. An
 * unrelated process's fork is not. */
static void test_children_from_any_ring(void)
{
	struct rig *r = &rig;

	TEST_ASSERT_EQ(rig__open(r, "children"), 0);
	sideband__track(r->sb, 100);
	put_mmap2(r, 0, 101, PROT_EXEC, "/nonexistent/child", 20, 2001);
	put_task(r, 1, PERF_RECORD_FORK, 101, 101, 100, 2000);		/* 100 -> 101 */
	put_task(r, 1, PERF_RECORD_FORK, 500, 500, 400, 2000);		/* unrelated */
	put_mmap2(r, 1, 500, PROT_EXEC, "/nonexistent/unrelated", 20, 2002);
	TEST_ASSERT_EQ(sideband__drain(r->sb), 0);
	TEST_ASSERT(sideband__seen(r->sb, 101));
	TEST_ASSERT(!sideband__seen(r->sb, 500));
	put_task(r, 0, PERF_RECORD_FORK, 101, 102, 101, 2003);		/* thread of 101 */
	put_task(r, 1, PERF_RECORD_FORK, 103, 103, 101, 2004);		/* 101 -> 103 */
	put_comm(r, 0, 103, "grandchild", true);
	put_task(r, 0, PERF_RECORD_EXIT, 101, 102, 101, 2005);
	TEST_ASSERT_EQ(sideband__drain(r->sb), 0);
	TEST_ASSERT(sideband__seen(r->sb, 103));
	TEST_ASSERT_EQ(rig__close(r), 0);
	TEST_ASSERT_EQ(r->nr_mmap, 1);
	TEST_ASSERT_EQ(r->mmaps[0].pid, 101);
	TEST_ASSERT_EQ(r->nr_fork, 3);
	TEST_ASSERT_EQ(r->forks[0].pid, 101);
	TEST_ASSERT_EQ(r->forks[0].ppid, 100);
	TEST_ASSERT_EQ(r->forks[1].tid, 102);
	TEST_ASSERT_EQ(r->forks[2].pid, 103);
	TEST_ASSERT_EQ(r->nr_comm, 1);
	TEST_ASSERT_EQ(r->comms[0].pid, 103);
	TEST_ASSERT_EQ(r->nr_exit, 1);
	TEST_ASSERT_EQ(r->exits[0].tid, 102);
}

/* Records that straddle the end of the ring are read whole: one whose
 * header is split, one whose path is. */
static void test_wrapped_records(void)
{
	struct rig *r = &rig;
	const char *path = "/nonexistent/a-path-long-enough-to-wrap";

	for (int split = 4; split <= 80; split += 76) {
		TEST_ASSERT_EQ(rig__open(r, "wrap"), 0);
		sideband__track(r->sb, 100);
		rig__start_at(r, 0, 3 * RING_SIZE - split);
		put_mmap2(r, 0, 100, PROT_EXEC, path, 20, 3000);
		put_comm(r, 0, 100, "after", false);
		TEST_ASSERT_EQ(sideband__drain(r->sb), 0);
		TEST_ASSERT_EQ(rig__close(r), 0);
		TEST_ASSERT_EQ(r->nr_mmap, 1);
		TEST_ASSERT(!strcmp(r->mmap_paths[0], path));
		TEST_ASSERT_EQ(r->mmaps[0].time, 3000);
		TEST_ASSERT_EQ(r->nr_comm, 1);
		TEST_ASSERT(!strcmp(r->comms[0].comm, "after"));
	}
}

/* Lost counts add up; a build-id longer than the format's is cut; damaged
 * records are skipped and a record of size 0 ends the drain of its ring
 * (tail at head, no endless loop). */
static void test_lost_and_damage(void)
{
	struct rig *r = &rig;
	struct perf_event_header bad = { PERF_RECORD_COMM, 0, 16 };	/* too short */
	struct perf_event_header zero = { PERF_RECORD_MMAP2, 0, 0 };
	uint8_t pad[16] = { 0 };

	TEST_ASSERT_EQ(rig__open(r, "damage"), 0);
	sideband__track(r->sb, 100);
	put_lost(r, 0, 7);
	put_lost(r, 1, 5);
	put_mmap2(r, 0, 100, PROT_EXEC, "/nonexistent/x", 25, 4000);
	rig__put(r, 0, &bad, sizeof(bad));
	rig__put(r, 0, pad, 8);
	put_comm(r, 0, 100, "kept", false);
	rig__put(r, 1, &zero, sizeof(zero));
	put_comm(r, 1, 100, "unreachable", false);
	TEST_ASSERT_EQ(sideband__drain(r->sb), 0);
	TEST_ASSERT_EQ(sideband__lost(r->sb), 12);
	TEST_ASSERT_EQ(r->rings[1].meta.data_tail, r->rings[1].meta.data_head);
	TEST_ASSERT_EQ(rig__close(r), 0);
	TEST_ASSERT_EQ(r->nr_mmap, 1);
	TEST_ASSERT_EQ(r->mmaps[0].build_id_size, XPU_MMAP_BUILD_ID_MAX);
	TEST_ASSERT_EQ(r->nr_comm, 1);
	TEST_ASSERT(!strcmp(r->comms[0].comm, "kept"));
	TEST_ASSERT_EQ(r->nr_other, 0);		/* LOST is counted, not written here */
}

static void test_open_rings_checks(void)
{
	struct sideband *sb = (void *)1;
	struct perf_event_mmap_page *meta[1] = { &rig.rings[0].meta };
	uint8_t *data[1] = { rig.rings[0].data };

	TEST_ASSERT_EQ(sideband__open_rings(&sb, NULL, NULL, meta, data, 1, 3000), -EINVAL);
	TEST_ASSERT(sb == NULL);
	TEST_ASSERT_EQ(sideband__open_rings(&sb, NULL, NULL, meta, data, 0, 4096), -EINVAL);
	TEST_ASSERT_EQ(sideband__open_rings(&sb, NULL, NULL, meta, data, 1, 4096), 0);
	TEST_ASSERT_EQ(sideband__nr_fds(sb), 1);
	sideband__close(sb);
}

int main(void)
{
	char cmd[128];
	int ret;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_record_sideband.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	TEST_RUN(test_tracked_only);
	TEST_RUN(test_children_from_any_ring);
	TEST_RUN(test_wrapped_records);
	TEST_RUN(test_lost_and_damage);
	TEST_RUN(test_open_rings_checks);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ret = system(cmd);
	(void)ret;
	TEST_EXIT();
}

// SPDX-License-Identifier: MIT
/*
 * record/unwind/launch_rules.c's table headers as the CUPTI library maps them
 * (cupti/channel/wire.h's struct xpu_walk_hdr): the Python layout handed over and
 * when it counts as proved (8 BPF walks and 32 frames, at most one thread
 * state or code object in a hundred that did not fit), and the
 * XPU_WALK_NO_PYTHON flag (no Python frames recorded, or an interpreter
 * the BPF walk cannot read, at attach or later; never lowered).
 */
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "bpf/xpu_events.h"
#include "cupti/channel/wire.h"
#include "record/unwind/launch_rules.h"
#include "test.h"

/* what the fake record/python/python.c says, per pid */
static struct {
	int state;
	struct xpu_bpf_py_cfg cfg;
} py[8];

static int fake_layout(void *arg, uint32_t pid, struct xpu_bpf_py_cfg *cfg)
{
	(void)arg;
	if (py[pid % 8].state == LAUNCH_RULES_PY_LAYOUT)
		*cfg = py[pid % 8].cfg;
	return py[pid % 8].state;
}

/* the header a library would map from the handed memfd, or NULL */
static const struct xpu_walk_hdr *map_hdr(int fd)
{
	struct stat st;
	void *mem = MAP_FAILED;

	if (fd >= 0 && !fstat(fd, &st) && (size_t)st.st_size > XPU_WALK_TABLE_OFF)
		mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	return mem == MAP_FAILED ? NULL : mem;
}

static void checks(uint32_t pid, uint64_t walks, uint64_t frames, uint64_t bad_thread, uint64_t bad_code)
{
	py[pid % 8].state = LAUNCH_RULES_PY_LAYOUT;
	py[pid % 8].cfg = (struct xpu_bpf_py_cfg){ .code_type = 0x1234, .version = 0x030c,
						  .fr_code = 16, .walks = walks, .frames = frames,
						  .bad_thread = bad_thread, .bad_code = bad_code };
}

static void test_proof(void)
{
	struct launch_rules *lr = launch_rules__new();
	const struct xpu_walk_hdr *h;

	launch_rules__set_python(lr, fake_layout, NULL);
	py[1].state = LAUNCH_RULES_PY_UNKNOWN;
	h = map_hdr(launch_rules__attach(lr, 1));
	TEST_ASSERT(h);
	TEST_ASSERT(h->magic == XPU_WALK_MAGIC && h->table_off == XPU_WALK_TABLE_OFF);
	TEST_ASSERT(h->flags == 0 && h->py.valid == 0);
	/* a layout, too few walks or frames yet: handed, not proved */
	checks(1, 7, 100, 0, 0);
	TEST_ASSERT(launch_rules__table(lr, 1));
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_UNPROVEN && h->py.code_type == 0x1234 &&
		    h->py.version == 0x030c && h->py.fr_code == 16);
	checks(1, 8, 31, 0, 0);
	launch_rules__table(lr, 1);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_UNPROVEN);
	checks(1, 8, 32, 0, 0);
	launch_rules__table(lr, 1);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_PROVEN);
	/* proved stays proved */
	checks(1, 8, 32, 8, 32);
	launch_rules__table(lr, 1);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_PROVEN && h->flags == 0);

	/* a misfit now and then (a sample catching a frame half pushed): at
	 * most one in a hundred */
	py[2].state = LAUNCH_RULES_PY_UNKNOWN;
	h = map_hdr(launch_rules__attach(lr, 2));
	TEST_ASSERT(h);
	checks(2, 100, 1000, 0, 11);
	launch_rules__table(lr, 2);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_UNPROVEN);
	checks(2, 100, 1000, 2, 10);
	launch_rules__table(lr, 2);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_UNPROVEN);
	checks(2, 100, 1000, 1, 10);
	launch_rules__table(lr, 2);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_PROVEN);

	/* a layout known and proved at attach */
	checks(3, 50, 500, 0, 0);
	h = map_hdr(launch_rules__attach(lr, 3));
	TEST_ASSERT(h);
	TEST_ASSERT(h->py.valid == XPU_WALK_PY_PROVEN && h->flags == 0);
	launch_rules__free(lr);
}

static void test_native(void)
{
	struct launch_rules *lr = launch_rules__new(), *off = launch_rules__new();
	const struct xpu_walk_hdr *h;

	launch_rules__set_python(lr, fake_layout, NULL);
	/* an interpreter the BPF walk cannot read, known at attach */
	py[4].state = LAUNCH_RULES_PY_NATIVE;
	h = map_hdr(launch_rules__attach(lr, 4));
	TEST_ASSERT(h);
	TEST_ASSERT(h->flags == XPU_WALK_NO_PYTHON && h->py.valid == 0);
	/* found out later: raised then, and never lowered */
	py[5].state = LAUNCH_RULES_PY_UNKNOWN;
	h = map_hdr(launch_rules__attach(lr, 5));
	TEST_ASSERT(h);
	TEST_ASSERT(h->flags == 0);
	py[5].state = LAUNCH_RULES_PY_NATIVE;
	launch_rules__table(lr, 5);
	TEST_ASSERT(h->flags == XPU_WALK_NO_PYTHON);
	checks(5, 50, 500, 0, 0);
	launch_rules__table(lr, 5);
	TEST_ASSERT(h->flags == XPU_WALK_NO_PYTHON && h->py.valid == 0);
	/* no Python frames recorded at all (--python-frames=off, perf-map) */
	h = map_hdr(launch_rules__attach(off, 6));
	TEST_ASSERT(h);
	TEST_ASSERT(h->flags == XPU_WALK_NO_PYTHON);
	launch_rules__free(lr);
	launch_rules__free(off);
}

int main(void)
{
	TEST_RUN(test_proof);
	TEST_RUN(test_native);
	TEST_EXIT();
}

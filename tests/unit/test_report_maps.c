// SPDX-License-Identifier: MIT
/* Mapping timelines: latest mapping wins, exec replaces, fork inherits (until
 * the child execs), threads use their process's maps, the any-time fallback;
 * comm timelines and inheritance. */
#include <string.h>
#include "tests/unit/test.h"
#include "report/machine/machine.h"
#include "report/profile/profile.h"

static const char *map_path(struct machine *m, uint32_t pid, uint64_t addr, uint64_t t)
{
	struct map *map = machine__find_map(m, pid, addr, t);

	return map ? map->dso->path : NULL;
}

#define PATH_IS(m, pid, addr, t, want) do {				\
	const char *_p = map_path(m, pid, addr, t);			\
	TEST_ASSERT(_p && !strcmp(_p, want));				\
} while (0)

static void test_maps_timeline(void)
{
	struct profile p;
	struct machine m;
	uint64_t fb;

	profile__init(&p);
	machine__init(&m, &p);
	/* pid 100 runs /bin/a, dlopens libx, then execs /bin/b at t=50 */
	machine__add_comm(&m, 100, 100, 1, "a", true);
	machine__add_mmap(&m, 100, 2, 0x400000, 0x10000, 0, "/bin/a", NULL, 0);
	machine__add_mmap(&m, 100, 10, 0x7f0000000000, 0x1000, 0, "/lib/libx.so", NULL, 0);
	machine__add_mmap(&m, 100, 20, 0x7f0000000000, 0x1000, 0, "/lib/liby.so", NULL, 0);
	/* out of order in the file: the exec'd image's map arrives first */
	machine__add_mmap(&m, 100, 51, 0x400000, 0x20000, 0, "/bin/b", NULL, 0);
	machine__add_comm(&m, 100, 100, 50, "b", true);
	/* fork at t=30: 200 is a child of 100, execs /bin/c at t=60 */
	machine__add_fork(&m, 200, 200, 100, 100, 30);
	machine__add_comm(&m, 200, 200, 60, "c", true);
	machine__add_mmap(&m, 200, 61, 0x400000, 0x1000, 0, "/bin/c", NULL, 0);
	/* a thread of 100 */
	machine__add_fork(&m, 100, 101, 100, 100, 5);
	machine__finish(&m);

	PATH_IS(&m, 100, 0x400100, 3, "/bin/a");
	PATH_IS(&m, 100, 0x7f0000000010, 15, "/lib/libx.so");	/* before liby */
	PATH_IS(&m, 100, 0x7f0000000010, 25, "/lib/liby.so");	/* latest wins */
	PATH_IS(&m, 100, 0x400100, 55, "/bin/b");		/* exec replaced a */
	fb = m.map_fallbacks;				/* libs gone after exec: */
	machine__find_map(&m, 100, 0x7f0000000010, 55);	/* only the fallback finds one */
	TEST_ASSERT_EQ(m.map_fallbacks, fb + 1);
	TEST_ASSERT(machine__find_map(&m, 100, 0x410000, 55) != NULL);	/* b is larger */
	/* child: parent's maps as at the fork */
	PATH_IS(&m, 200, 0x7f0000000010, 40, "/lib/liby.so");
	PATH_IS(&m, 200, 0x400100, 40, "/bin/a");		/* not b: parent exec'd after */
	PATH_IS(&m, 200, 0x400100, 70, "/bin/c");		/* own exec */
	/* a thread's pid is its process: lookups are by pid */
	PATH_IS(&m, 100, 0x400100, 6, "/bin/a");
	/* timestamps that disagree: before any mapping, the fallback finds one */
	fb = m.map_fallbacks;
	PATH_IS(&m, 100, 0x400100, 1, "/bin/b");
	TEST_ASSERT_EQ(m.map_fallbacks, fb + 1);
	TEST_ASSERT(machine__find_map(&m, 100, 0x1000, 3) == NULL);
	TEST_ASSERT(machine__find_map(&m, 999, 0x400100, 3) == NULL);
	machine__exit(&m);
	profile__exit(&p);
}

static void test_maps_comm(void)
{
	struct profile p;
	struct machine m;

	profile__init(&p);
	machine__init(&m, &p);
	machine__add_comm(&m, 100, 100, 10, "bash", true);
	machine__add_comm(&m, 100, 100, 20, "python3", true);
	machine__add_fork(&m, 100, 101, 100, 100, 25);		/* thread, no comm */
	machine__add_comm(&m, 100, 102, 30, "worker-1", false);
	machine__add_fork(&m, 300, 300, 100, 100, 40);		/* child process */
	machine__add_comm(&m, 100, 100, 45, "renamed", false);	/* the parent, after */
	machine__add_comm(&m, 300, 300, 60, "xz", true);	/* the child's exec */
	machine__add_fork(&m, 400, 400, 999, 999, 10);		/* parent not recorded */
	machine__add_comm(&m, 400, 400, 20, "app", true);
	machine__finish(&m);
	/* before its exec a child carries the comm it was forked with */
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 300, 300, 50)), "python3"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 300, 300, 61)), "xz"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 100, 100, 50)), "renamed"));
	/* no parent comm known: its own first one */
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 400, 400, 15)), "app"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 100, 100, 15)), "bash"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 100, 100, 25)), "python3"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 100, 100, 5)), "bash"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 100, 101, 26)), "python3"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 100, 102, 31)), "worker-1"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 300, 300, 41)), "python3"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 300, 300, 46)), "python3"));
	TEST_ASSERT(!strcmp(profile__str(&p, machine__comm(&m, 77, 77, 1)), ":77"));
	machine__exit(&m);
	profile__exit(&p);
}

int main(void)
{
	TEST_RUN(test_maps_timeline);
	TEST_RUN(test_maps_comm);
	TEST_EXIT();
}

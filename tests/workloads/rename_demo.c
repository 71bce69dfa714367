// SPDX-License-Identifier: MIT
/*
 * A thread renamed after its first samples: the worker spins under the name
 * it was created with ("rename_demo", its process's), then names itself
 * "late-name" with prctl(PR_SET_NAME) and spins as long again. The outputs
 * must call it by its later name (tests/shell/e2e_rename.sh).
 *
 *   rename_demo [MS]   MS of spinning before and after the rename (300)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static long spin_ms = 300;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static __attribute__((noipa)) void spin_before(void)
{
	uint64_t end = now_ms() + (uint64_t)spin_ms;

	while (now_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i;
}

static __attribute__((noipa)) void spin_after(void)
{
	uint64_t end = now_ms() + (uint64_t)spin_ms;

	while (now_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink ^= (uint64_t)i * 3;
}

static void *worker(void *arg)
{
	(void)arg;
	printf("rename_demo: worker tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	spin_before();
	prctl(PR_SET_NAME, "late-name", 0, 0, 0);
	spin_after();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		spin_ms = atol(argv[1]);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}

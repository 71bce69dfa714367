/* SPDX-License-Identifier: MIT */
/*
 * cpu_demo: a CPU-bound workload with a KNOWN profile, for the end-to-end
 * tests, the demo and the benchmarks. Built -O2 -g -fomit-frame-pointer (see
 * tests/Makefile.tests), like the code users profile, so only DWARF
 * unwinding recovers its stacks.
 *
 *   main thread (comm = program name):
 *	main -> demo_run -> level1 -> ... -> level6 -> burn_a   60% of its work
 *	main -> demo_run -> level1 -> ... -> level6 -> burn_b   40% of its work
 *   second thread, comm "demo-worker":
 *	worker_main -> worker_l1 -> ... -> worker_l6 -> burn_worker
 *   forked child process, comm "demo-child":
 *	main -> spawn_child -> child_main -> child_l1 -> ... -> child_l6 -> burn_child
 *
 * Every chain function is noipa (no inlining, cloning or identical-code
 * folding, which would rename or merge frames), uses a 256-byte stack buffer
 * (frames far from where a frame-pointer walk would look) and does work after
 * its call, so no call becomes a tail jump.
 *
 * The rounds of the main thread are of random lengths (a fixed sequence):
 * rounds of one length, sampled at a fixed rate, alias with it, so that the
 * samples see the split through a few phases of the round only (on 2 cores
 * with builds running: 0.53 to 0.66 of ~1000 samples in burn_a over 8 runs,
 * against 0.60 measured with the thread's CPU clock around each call; 0.56
 * to 0.61 over 10 runs with the random lengths).
 *
 * Usage: cpu_demo [SECONDS]       run for SECONDS (default 3)
 *        cpu_demo --cpu SECONDS   each thread and the child run until they
 *                                 have had SECONDS of CPU time, however busy
 *                                 the machine (their wall time varies)
 *        cpu_demo --work N        main thread only, N fixed rounds (benchmarks);
 *                                 prints "cpu_demo: work took S s" on stderr
 *        cpu_demo --no-child --no-thread ...   leave those parts out
 * Prints its pids so tests can filter on them:
 *	cpu_demo: pid P
 *	cpu_demo: worker tid T
 *	cpu_demo: child pid C
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define CHAIN __attribute__((noinline, used))
#else
#define CHAIN __attribute__((noipa, used))
#endif

/* Work per round: burn_a gets A_UNITS x k, burn_b B_UNITS x k, so a 60/40
 * split; k is 3 to 7 (ROUND_K), from a fixed pseudo-random sequence, so the
 * rounds have random lengths (see above) and N rounds the same work in
 * every run (--work N). */
#define A_UNITS 3
#define B_UNITS 2
#define ROUND_K(r)	(3 + (r) % 5)
#define UNIT_ITERS 20000ULL	/* ~0.025 ms per unit on a 2020s core */
#define THREAD_UNITS 10		/* per call of the worker's and the child's chains */

volatile uint64_t sink;
static double deadline;		/* seconds: CLOCK_MONOTONIC, or --cpu: the thread's CPU clock */
static int cpu_deadline;	/* --cpu */
static long fixed_rounds;	/* --work N: rounds instead of a deadline */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the calling thread's clock that the deadline is on */
static double clock_now(void)
{
	struct timespec ts;

	if (!cpu_deadline)
		return now();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Touch a stack buffer so each frame is big and cannot be elided. */
#define FRAME(buf, seed)						\
	volatile char buf[256];						\
	for (unsigned _i = 0; _i < sizeof(buf); _i += 64)		\
		buf[_i] = (char)((seed) + _i)

#define AFTER(buf, r)	((r) + (uint64_t)buf[0] + (uint64_t)buf[128])

/* The leaves: same loop, different constants (keeps them distinct code). */
CHAIN uint64_t burn_a(uint64_t units)
{
	uint64_t x = sink | 1;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

CHAIN uint64_t burn_b(uint64_t units)
{
	uint64_t x = sink | 3;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963409ULL;
	return x;
}

CHAIN uint64_t burn_worker(uint64_t units)
{
	uint64_t x = sink | 5;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963411ULL;
	return x;
}

CHAIN uint64_t burn_child(uint64_t units)
{
	uint64_t x = sink | 7;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963413ULL;
	return x;
}

/* Main thread chain. which: 0 -> burn_a, 1 -> burn_b. */
CHAIN uint64_t level6(uint64_t units, int which)
{
	FRAME(buf, 6);
	uint64_t r = which ? burn_b(units) : burn_a(units);
	return AFTER(buf, r);
}

#define LEVEL(name, next, seed)						\
CHAIN uint64_t name(uint64_t units, int which)				\
{									\
	FRAME(buf, seed);						\
	uint64_t r = next(units, which);				\
	return AFTER(buf, r);						\
}
LEVEL(level5, level6, 5)
LEVEL(level4, level5, 4)
LEVEL(level3, level4, 3)
LEVEL(level2, level3, 2)
LEVEL(level1, level2, 1)

CHAIN uint64_t demo_run(void)
{
	FRAME(buf, 0);
	uint64_t r = 0, rnd = 1;

	for (long round = 0;; round++) {
		uint64_t k;

		if (fixed_rounds ? round >= fixed_rounds : clock_now() >= deadline)
			break;
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		k = ROUND_K(rnd >> 33);
		r += level1(A_UNITS * k, 0);
		r += level1(B_UNITS * k, 1);
	}
	return AFTER(buf, r);
}

/* Worker thread chain. */
#define WLEVEL(name, next, seed)					\
CHAIN uint64_t name(uint64_t units)					\
{									\
	FRAME(buf, seed);						\
	uint64_t r = next(units);					\
	return AFTER(buf, r);						\
}
WLEVEL(worker_l6, burn_worker, 16)
WLEVEL(worker_l5, worker_l6, 15)
WLEVEL(worker_l4, worker_l5, 14)
WLEVEL(worker_l3, worker_l4, 13)
WLEVEL(worker_l2, worker_l3, 12)
WLEVEL(worker_l1, worker_l2, 11)

CHAIN void *worker_main(void *arg)
{
	FRAME(buf, 10);
	uint64_t r = 0;

	/* Named by itself, before any work, so every sample carries the name. */
	pthread_setname_np(pthread_self(), "demo-worker");
	printf("cpu_demo: worker tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (clock_now() < deadline)
		r += worker_l1(THREAD_UNITS);
	sink = AFTER(buf, r);
	return NULL;
}

/* Child process chain. */
WLEVEL(child_l6, burn_child, 26)
WLEVEL(child_l5, child_l6, 25)
WLEVEL(child_l4, child_l5, 24)
WLEVEL(child_l3, child_l4, 23)
WLEVEL(child_l2, child_l3, 22)
WLEVEL(child_l1, child_l2, 21)

CHAIN int child_main(void)
{
	FRAME(buf, 20);
	uint64_t r = 0;

	prctl(PR_SET_NAME, "demo-child", 0, 0, 0);
	while (clock_now() < deadline)
		r += child_l1(THREAD_UNITS);
	sink = AFTER(buf, r);
	return 0;
}

CHAIN pid_t spawn_child(void)
{
	FRAME(buf, 30);
	pid_t pid = fork();

	if (pid == 0)
		_exit(child_main() + (int)(AFTER(buf, 0) & 0));
	return pid;
}

static void usage(void)
{
	fprintf(stderr, "usage: cpu_demo [SECONDS] [--cpu SECONDS] [--work N] [--no-child] [--no-thread]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double seconds = 3;
	int want_child = 1, want_thread = 1;
	pthread_t worker;
	pid_t child = -1;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--no-child")) {
			want_child = 0;
		} else if (!strcmp(argv[i], "--no-thread")) {
			want_thread = 0;
		} else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			cpu_deadline = 1;
			seconds = strtod(argv[++i], &end);
			if (*end || seconds <= 0)
				usage();
		} else if (!strcmp(argv[i], "--work") && i + 1 < argc) {
			fixed_rounds = strtol(argv[++i], &end, 10);
			if (*end || fixed_rounds <= 0)
				usage();
			want_child = want_thread = 0;
		} else {
			seconds = strtod(argv[i], &end);
			if (*end || seconds <= 0)
				usage();
		}
	}
	/* --cpu: every thread's CPU clock starts near 0 (the child's too,
	 * after the fork) */
	deadline = cpu_deadline ? seconds : now() + seconds;

	printf("cpu_demo: pid %d\n", getpid());
	fflush(stdout);
	if (want_child) {
		child = spawn_child();
		if (child < 0) {
			fprintf(stderr, "cpu_demo: fork: %s\n", strerror(errno));
			return 1;
		}
		printf("cpu_demo: child pid %d\n", child);
		fflush(stdout);
	}
	if (want_thread) {
		int err = pthread_create(&worker, NULL, worker_main, NULL);

		if (err) {
			fprintf(stderr, "cpu_demo: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	double t0 = now();
	sink += demo_run();
	if (fixed_rounds)	/* the benchmarks' in-process time, without profiler start/stop */
		fprintf(stderr, "cpu_demo: work took %.3f s\n", now() - t0);

	if (want_thread)
		pthread_join(worker, NULL);
	if (want_child) {
		int status;

		if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "cpu_demo: child failed\n");
			return 1;
		}
	}
	/* The CPU time the machine actually gave us (all threads and the
	 * child): tests compare sample counts with it, not with the wall time,
	 * so a busy machine does not fail them. */
	{
		struct rusage self, kids;

		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &kids);
		printf("cpu_demo: cpu %.3f s\n",
		       self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
		       kids.ru_stime.tv_sec + (self.ru_utime.tv_usec + self.ru_stime.tv_usec +
					       kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6);
	}
	return 0;
}

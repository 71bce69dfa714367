// SPDX-License-Identifier: MIT
/*
 * same_stack: several threads, in two processes, on the SAME call stacks, so
 * a report's profile has many entries (pid, tid, comm, origin) per stack —
 * what broke --pprof (issue 31: a buffer sized by unique stack frames, while
 * every entry writes its stack again). Each thread spins in spin_leaf() and
 * sleeps in sleep_leaf() under the same callers, so --wall also puts on- and
 * off-CPU time under shared frames.
 *
 * Usage: same_stack [SECONDS] [THREADS]   (defaults 1 and 4; the forked child
 * runs the same threads). Prints "same_stack: pid P" per process.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static unsigned long spin_leaf(double until)
{
	volatile unsigned long x = 0;

	while (now() < until)
		for (int i = 0; i < 10000; i++)
			x += i;
	return x;
}

__attribute__((noipa)) static void sleep_leaf(void)
{
	struct timespec ts = { 0, 2000000 };	/* 2 ms */

	nanosleep(&ts, NULL);
}

__attribute__((noipa)) static void *shared_work(void *arg)
{
	double end = now() + seconds;

	(void)arg;
	while (now() < end) {
		spin_leaf(now() + 0.008);
		sleep_leaf();
	}
	return NULL;
}

__attribute__((noipa)) static void run_threads(int n)
{
	pthread_t t[64];

	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, shared_work, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	int n = 4;
	pid_t child;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		n = atoi(argv[2]);
	if (n < 1 || n > 64 || !(seconds > 0)) {
		fprintf(stderr, "usage: same_stack [SECONDS] [THREADS 1-64]\n");
		return 2;
	}
	child = fork();
	printf("same_stack: pid %d\n", (int)getpid());
	fflush(stdout);
	run_threads(n);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}

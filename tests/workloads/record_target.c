// SPDX-License-Identifier: MIT
/*
 * record_target SECONDS [crash|exit:N]: the recorder tests' target. main
 * forks a child that spins in child_spin, starts a thread that spins in
 * thread_spin, and spins in main_spin itself, all for SECONDS; then exits 0,
 * exits N (exit:N), or dies of SIGSEGV (crash). Prints "ready PID" once
 * running so -p tests can attach, and "cpu SECONDS" (its and its child's
 * CPU time) at the end so tests can compare sample counts with it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double secs;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define SPINNER(name)							\
__attribute__((noinline)) static void name(double s)			\
{									\
	double end = now() + s;						\
	while (now() < end)						\
		for (int i = 0; i < 20000; i++)				\
			sink += i;					\
}
SPINNER(main_spin)
SPINNER(child_spin)
SPINNER(thread_spin)

static void *thread_main(void *arg)
{
	thread_spin(secs);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[2] : "";
	pthread_t t;
	pid_t child;

	secs = argc > 1 ? atof(argv[1]) : 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	child = fork();
	if (child == 0) {
		child_spin(secs);
		_exit(0);
	}
	pthread_create(&t, NULL, thread_main, NULL);
	main_spin(secs);
	pthread_join(t, NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	{
		struct rusage self, kids;

		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &kids);
		printf("cpu %.3f\n", self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6 +
		       self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6 +
		       kids.ru_utime.tv_sec + kids.ru_utime.tv_usec / 1e6 +
		       kids.ru_stime.tv_sec + kids.ru_stime.tv_usec / 1e6);
		fflush(stdout);
	}
	if (!strcmp(how, "crash"))
		*(volatile int *)0 = 1;
	if (!strncmp(how, "exit:", 5))
		return atoi(how + 5);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Blocks for known durations in three distinct call paths, for the off-CPU
 * tests: nanosleep (block_sleep), a pipe read that a helper thread answers
 * after a delay (block_pipe), and a futex wait with a timeout (block_futex);
 * spins in between (spin_work). It measures every block itself and prints
 *	offcpu_demo: PATH NS		total time spent blocked in PATH
 *	offcpu_demo: wall NAME TID NS	lifetime of each thread
 * so a test compares the report to what really happened, however busy the
 * machine is. Usage: offcpu_demo [SCALE] (durations x SCALE, default 1).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double scale = 1;
static int pipefd[2];
static atomic_int go;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) static uint64_t block_sleep(double ms)
{
	uint64_t t0 = now_ns();

	sleep_ms(ms);
	return now_ns() - t0;
}

__attribute__((noinline)) static uint64_t block_pipe(void)
{
	uint64_t t0 = now_ns();
	char c;

	atomic_store(&go, 1);		/* the helper answers after its delay */
	if (read(pipefd[0], &c, 1) != 1)
		exit(1);
	return now_ns() - t0;
}

__attribute__((noinline)) static uint64_t block_futex(double ms)
{
	static uint32_t word;
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(ms * 1e6);

	/* nobody wakes it: it times out (a spurious wakeup waits again) */
	while (now_ns() < end) {
		uint64_t left = end - now_ns();

		ts.tv_sec = (time_t)(left / 1000000000u);
		ts.tv_nsec = (long)(left % 1000000000u);
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
	return now_ns() - t0;
}

__attribute__((noinline)) static void spin_work(double ms)
{
	uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
	volatile uint64_t x = 0;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += i;
}

static void *answer_pipe(void *arg)
{
	int rounds = *(int *)arg;
	uint64_t t0 = now_ns();

	pthread_setname_np(pthread_self(), "demo-answer");
	for (int i = 0; i < rounds; i++) {
		while (!atomic_exchange(&go, 0))
			sleep_ms(1);
		sleep_ms(150 * scale);
		if (write(pipefd[1], "x", 1) != 1)
			exit(1);
	}
	printf("offcpu_demo: wall demo-answer %ld %llu\n", (long)gettid(),
	       (unsigned long long)(now_ns() - t0));
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t t0 = now_ns(), sleep_ns = 0, pipe_ns = 0, futex_ns = 0;
	int rounds = 3;
	pthread_t th;

	if (argc > 1)
		scale = atof(argv[1]);
	if (!(scale > 0) || pipe(pipefd) || pthread_create(&th, NULL, answer_pipe, &rounds))
		return 1;
	for (int i = 0; i < rounds; i++) {
		sleep_ns += block_sleep(100 * scale);
		spin_work(50 * scale);
		pipe_ns += block_pipe();
		spin_work(50 * scale);
		futex_ns += block_futex(200 * scale);
	}
	pthread_join(th, NULL);
	printf("offcpu_demo: block_sleep %llu\n", (unsigned long long)sleep_ns);
	printf("offcpu_demo: block_pipe %llu\n", (unsigned long long)pipe_ns);
	printf("offcpu_demo: block_futex %llu\n", (unsigned long long)futex_ns);
	printf("offcpu_demo: wall offcpu_demo %ld %llu\n", (long)gettid(),
	       (unsigned long long)(now_ns() - t0));
	return 0;
}

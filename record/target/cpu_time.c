// SPDX-License-Identifier: MIT
/*
 * The CPU time the recorded processes used, so that a recording that should
 * hold CPU samples and holds none says so (main.c): the launched command's
 * from the rusage of xpu-record's waited-for children (the command and the
 * processes it waited for), or from /proc/PID/stat while it still runs; a
 * -p process's from /proc/PID/stat, from the start of the recording while
 * it lives. A lower bound: processes nobody waited for are not counted.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "common/file.h"
#include "record/target/cpu_time.h"

static int64_t cpu_time__tv(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

int64_t cpu_time__children(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return -1;
	return cpu_time__tv(&ru.ru_utime) + cpu_time__tv(&ru.ru_stime);
}

int64_t cpu_time__proc(pid_t pid)
{
	unsigned long long ut, st, cut, cst;
	long hz = sysconf(_SC_CLK_TCK);
	char buf[1024];
	const char *f = file__proc_stat(pid, buf, sizeof(buf));

	/* from field 3 (state) on; utime, stime, cutime and cstime are fields
	 * 14-17, in clock ticks */
	if (!f || hz <= 0 || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
				    "%llu %llu", &ut, &st, &cut, &cst) != 4)
		return -1;
	return (int64_t)((ut + st + cut + cst) * (1000000000ULL / (unsigned long long)hz));
}

// SPDX-License-Identifier: MIT
/*
 * deny_perf_cpu CPU|all CMD [ARGS...]: runs CMD under a seccomp filter
 * that fails perf_event_open() on CPU CPU (or on every CPU) with ENODEV,
 * as for a CPU that is offline when xpu-record opens its per-CPU events
 * and comes online later. Lets record_zero_samples.sh record a command
 * pinned to that CPU for real: the sampler runs, on the other CPUs only.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int cpu = argc > 1 && strcmp(argv[1], "all") ? (unsigned int)atoi(argv[1]) : 0;
	bool all = argc > 1 && !strcmp(argv[1], "all");
	/* perf_event_open(attr, pid, cpu, group_fd, flags): cpu is args[2],
	 * an int (the low 32 bits on little-endian x86-64) */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cpu, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JA, all ? 0 : 1, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENODEV),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (argc < 3) {
		fprintf(stderr, "usage: deny_perf_cpu CPU|all CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "deny_perf_cpu: seccomp: %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "deny_perf_cpu: %s: %s\n", argv[2], strerror(errno));
	return 127;
}

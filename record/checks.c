// SPDX-License-Identifier: MIT
/*
 * What can be checked before anything is set up, each failure one line with
 * its own exit code: privileges, kernel BTF, the pid namespace, the program
 * to run, and where the CUPTI library is.
 */
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "record/checks.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif
#ifndef CAP_BPF
#define CAP_BPF		39
#endif

static bool checks__has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

void record__check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (syscall(SYS_capget, &h, d) == 0 &&
	    (checks__has_cap(d, CAP_SYS_ADMIN) ||
	     (checks__has_cap(d, CAP_BPF) && checks__has_cap(d, CAP_PERFMON))))
		return;
	die(XPU_EXIT_NOPERM, "eBPF sampling needs root, or the capabilities CAP_BPF and CAP_PERFMON "
	    "(CAP_SYS_ADMIN for system-wide perf events on older kernels): run with sudo");
}

void record__check_btf(void)
{
	const char *btf = "/sys/kernel/btf/vmlinux";

	if (access(btf, R_OK))
		die(XPU_EXIT_NOKERNEL, "%s: %s: the kernel lacks BTF type information, which the BPF "
		    "programs need; use a kernel built with CONFIG_DEBUG_INFO_BTF=y", btf, strerror(errno));
}

/* The initial pid namespace's inode number (PROC_PID_INIT_INO, fixed). */
#define CHECKS_PID_INIT_INO	0xEFFFFFFCU

/*
 * The BPF programs see the kernel's pids (the initial namespace's); the
 * command's pid from fork, and -p PIDs, are this namespace's. In another
 * pid namespace (a container without --pid=host) none would be tracked:
 * the recording would hold no sample at all, and nothing would say why.
 */
void record__check_pid_namespace(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == CHECKS_PID_INIT_INO)
		return;	/* no namespace support, or the initial namespace */
	die(XPU_EXIT_NOKERNEL, "xpu-record runs in a pid namespace of its own (a container?): "
	    "its BPF programs see the host's pids, so no process would be recorded; run it in "
	    "the host's pid namespace (docker run --pid=host, or on the host)");
}

static bool checks__is_exec(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *record__find_program(const char *name)
{
	const char *p, *path = getenv("PATH");

	if (strchr(name, '/')) {
		if (checks__is_exec(name))
			return xstrdup(name);
		die(XPU_EXIT_NOTFOUND, "%s: %s", name,
		    access(name, F_OK) ? "no such file" : "not an executable file");
	}
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		char *cand = xasprintf("%.*s/%s", (int)n, n ? p : ".", name);

		if (checks__is_exec(cand))
			return cand;
		free(cand);
		p = colon ? colon + 1 : NULL;
	}
	die(XPU_EXIT_NOTFOUND, "%s: command not found in PATH", name);
}

/* libxpu-cupti.so beside the executable (build tree) or in
 * ../lib/xpu-perf/ relative to it (installed). NULL when neither exists. */
const char *record__default_cupti_lib(void)
{
	static char buf[PATH_MAX + 64];
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(buf, sizeof(buf), "%s/libxpu-cupti.so", exe);
	if (access(buf, R_OK) == 0)
		return buf;
	snprintf(buf, sizeof(buf), "%s/../lib/xpu-perf/libxpu-cupti.so", exe);
	if (access(buf, R_OK) == 0)
		return buf;
	return NULL;
}

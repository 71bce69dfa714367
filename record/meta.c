// SPDX-License-Identifier: MIT
/*
 * Recording metadata (XPU_REC_META, written first so even a killed recording
 * has it) and the kernel symbols that cover the kernel IPs seen in samples
 * (XPU_REC_KSYM, written at the end), so a report on another machine can
 * name [k] frames without that machine's /proc/kallsyms.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "common/sort.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "cupti/wire.h"
#include "record/record.h"

const char *meta__nvtx(const struct record_opts *o, bool gpu, char *buf, size_t size)
{
	const char *user = getenv(XPU_NVTX_INJECTION_ENV);

	if (!gpu)
		return "off (no GPU recording)";
	if (o->no_nvtx)
		return "off (--no-nvtx)";
	if (!o->argv)
		return "off (-p: NVTX is injected into launched commands only)";
	if (user) {
		snprintf(buf, size, "as set by the user's %s=%s (kept)", XPU_NVTX_INJECTION_ENV, user);
		return buf;
	}
	return "on (" XPU_NVTX_INJECTION_ENV " set by xpu-record)";
}

int meta__write_start(struct xpu_writer *w, const struct record_opts *o, int argc, char **argv,
		      bool gpu, const char *cupti_lib)
{
	struct utsname u;
	struct timespec rt;
	char buf[64], host[256] = "", nvtx[512];
	size_t len = 0, cap = 0;
	char *cmd = NULL;
	int ret;

	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);

		cmd = xgrow(cmd, &cap, len + n + 2, 1);
		memcpy(cmd + len, argv[i], n);
		len += n;
		cmd[len++] = i + 1 < argc ? ' ' : 0;
	}
	ret = xpu_writer__meta(w, XPU_META_CMDLINE, cmd ? cmd : "");
	free(cmd);
	gethostname(host, sizeof(host) - 1);
	uname(&u);
	ret = ret ?: xpu_writer__meta(w, XPU_META_HOSTNAME, host);
	ret = ret ?: xpu_writer__meta(w, XPU_META_KERNEL, u.release);
	ret = ret ?: xpu_writer__meta(w, XPU_META_ARCH, u.machine);
	snprintf(buf, sizeof(buf), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	ret = ret ?: xpu_writer__meta(w, XPU_META_NR_CPUS, buf);
	snprintf(buf, sizeof(buf), "%u", o->freq);
	ret = ret ?: xpu_writer__meta(w, XPU_META_SAMPLE_FREQ, buf);
	ret = ret ?: xpu_writer__meta(w, XPU_META_CALL_GRAPH, o->dwarf ? "dwarf" : "fp");
	snprintf(buf, sizeof(buf), "%u", o->dwarf ? o->stack_bytes : 0);
	ret = ret ?: xpu_writer__meta(w, XPU_META_STACK_BYTES, buf);
	ret = ret ?: xpu_writer__meta(w, XPU_META_CLOCK, "monotonic");
	ret = ret ?: xpu_writer__meta(w, XPU_META_TOOL_VERSION, XPU_VERSION);
	clock_gettime(CLOCK_REALTIME, &rt);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rt.tv_sec * 1000000000ULL + rt.tv_nsec);
	ret = ret ?: xpu_writer__meta(w, XPU_META_RECORD_START_REALTIME, buf);
	snprintf(buf, sizeof(buf), "%ld", sysconf(_SC_PAGESIZE));
	ret = ret ?: xpu_writer__meta(w, XPU_META_PAGE_SIZE, buf);
	if (o->offcpu_min_us)
		snprintf(buf, sizeof(buf), "min_us=%u", o->offcpu_min_us);
	else
		snprintf(buf, sizeof(buf), "off");
	ret = ret ?: xpu_writer__meta(w, XPU_META_OFF_CPU, buf);
	ret = ret ?: xpu_writer__meta(w, XPU_META_GPU, gpu ? "on" : "off");
	ret = ret ?: xpu_writer__meta(w, XPU_META_NVTX, meta__nvtx(o, gpu, nvtx, sizeof(nvtx)));
	if (gpu)
		ret = ret ?: xpu_writer__meta(w, XPU_META_CUPTI_LIB, cupti_lib);
	return ret;
}

void ksyms__note(struct u64map *seen, const uint64_t *ips, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t ip;

		memcpy(&ip, &ips[i], sizeof(ip));
		if (ip)
			*u64map__slot(seen, ip) = 1;
	}
}

struct ksym {
	uint64_t addr;
	char *name;
	bool used;
};

static int ksym__cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ksyms__write(struct xpu_writer *w, struct u64map *seen)
{
	struct ksym *syms = NULL;
	size_t nr = 0, cap = 0, it = 0;
	uint64_t ip, v;
	char line[512];
	int ret = 0;
	FILE *f;

	if (!seen->len)
		return 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], mod[128] = "";
		unsigned long long addr;

		if (sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod) < 3)
			continue;
		if ((type != 't' && type != 'T' && type != 'w' && type != 'W') || !addr)
			continue;
		syms = xgrow(syms, &cap, nr + 1, sizeof(*syms));
		syms[nr].addr = addr;
		syms[nr].name = mod[0] ? xasprintf("%s [%s]", name, mod) : xstrdup(name);
		syms[nr].used = false;
		nr++;
	}
	fclose(f);
	if (!nr) {
		warn("/proc/kallsyms shows no addresses (kernel.kptr_restrict?): kernel frames stay unnamed");
		return 0;
	}
	xpu_qsort(syms, nr, sizeof(*syms), ksym__cmp);
	while (u64map__next(seen, &it, &ip, &v)) {
		size_t lo = 0, hi = nr;

		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (syms[mid].addr <= ip)
				lo = mid;
			else
				hi = mid;
		}
		if (syms[lo].addr <= ip)
			syms[lo].used = true;
	}
	for (size_t i = 0; i < nr && !ret; i++) {
		struct xpu_ksym k;
		struct iovec iov[2];
		size_t j = i + 1;

		if (!syms[i].used)
			continue;
		while (j < nr && syms[j].addr == syms[i].addr)
			j++;
		k.addr = syms[i].addr;
		k.size = j < nr ? syms[j].addr - syms[i].addr : 0;
		iov[0] = (struct iovec){ &k, sizeof(k) };
		iov[1] = (struct iovec){ syms[i].name, strlen(syms[i].name) + 1 };
		ret = xpu_writer__addv(w, XPU_REC_KSYM, 0, iov, 2);
	}
	for (size_t i = 0; i < nr; i++)
		free(syms[i].name);
	free(syms);
	return ret;
}

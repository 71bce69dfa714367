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

/* One kallsyms line, "ADDR TYPE NAME[\t[MODULE]]": a text symbol's address,
 * its name and module (NULL if none) cut out of line in place, else 0. No
 * sscanf: this runs on some 100k lines while the user waits for the end of
 * the recording. */
static uint64_t ksym__parse(char *line, char **name, char **mod)
{
	char *p, *e;
	uint64_t addr = strtoull(line, &p, 16);

	if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
		return 0;
	if (p[1] != 't' && p[1] != 'T' && p[1] != 'w' && p[1] != 'W')
		return 0;
	*name = p + 3;
	e = *name + strcspn(*name, " \t\n");
	if (e == *name)
		return 0;
	*mod = NULL;
	if (*e == '\t' && e[1] == '[') {
		*mod = e + 2;
		(*mod)[strcspn(*mod, "]\n")] = 0;
		if (!**mod)
			*mod = NULL;
	}
	*e = 0;
	return addr;
}

/* The symbols between two neighbouring kernel IPs seen: gap k holds those
 * at addresses in (ip[k-1], ip[k]]; its highest names ip[k] (and the IPs
 * after it up to the next gap with a symbol), its lowest ends the symbol
 * of ip[k-1]. */
struct ksym_gap {
	uint64_t lo, hi;		/* lowest, highest address; hi == 0: empty */
	char *name;			/* the symbol at hi (the first one there) */
	size_t cap;
};

static int ksym__cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Writes a KSYM record for every kernel function that holds a kernel IP seen:
 * one pass over /proc/kallsyms that keeps per gap between IPs seen only its
 * lowest and highest symbol (struct ksym_gap), not the 100k symbols of the
 * kernel: this is end-of-recording time and memory.
 */
int ksyms__write(struct xpu_writer *w, struct u64map *seen)
{
	size_t n = 0, it = 0, nsyms = 0;
	struct ksym_gap *gaps;
	uint64_t *ips, ip, v, prev = 0;
	char line[512], *name, *mod;
	int ret = 0;
	FILE *f;

	if (!seen->len)
		return 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	ips = xcalloc(seen->len, sizeof(*ips));
	while (u64map__next(seen, &it, &ip, &v) && n < seen->len)
		ips[n++] = ip;
	xpu_qsort(ips, n, sizeof(*ips), ksym__cmp_u64);
	gaps = xcalloc(n + 1, sizeof(*gaps));
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr = ksym__parse(line, &name, &mod);
		size_t lo = 0, hi = n, len;
		struct ksym_gap *g;

		if (!addr)
			continue;
		nsyms++;
		while (lo < hi) {	/* the first IP >= addr */
			size_t mid = (lo + hi) / 2;

			if (ips[mid] < addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		g = &gaps[lo];
		if (!g->hi || addr < g->lo)
			g->lo = addr;
		if (g->hi && addr <= g->hi)
			continue;
		g->hi = addr;
		len = strlen(name) + (mod ? strlen(mod) + 3 : 0) + 1;
		g->name = xgrow(g->name, &g->cap, len, 1);
		if (mod)
			snprintf(g->name, len, "%s [%s]", name, mod);
		else
			memcpy(g->name, name, len);
	}
	fclose(f);
	if (!nsyms)
		warn("/proc/kallsyms shows no addresses (kernel.kptr_restrict?): kernel frames stay unnamed");
	for (size_t k = 0, sym = 0; nsyms && k < n && !ret; k++) {
		struct xpu_ksym ks;
		struct iovec iov[2];
		size_t next = k + 1;

		if (gaps[k].hi)
			sym = k;
		else if (!gaps[sym].hi)
			continue;	/* below the first symbol */
		if (gaps[sym].hi == prev)
			continue;	/* written for an IP before */
		while (next <= n && !gaps[next].hi)
			next++;
		prev = gaps[sym].hi;
		ks.addr = prev;
		ks.size = next <= n ? gaps[next].lo - prev : 0;
		iov[0] = (struct iovec){ &ks, sizeof(ks) };
		iov[1] = (struct iovec){ gaps[sym].name, strlen(gaps[sym].name) + 1 };
		ret = xpu_writer__addv(w, XPU_REC_KSYM, 0, iov, 2);
	}
	for (size_t k = 0; k <= n; k++)
		free(gaps[k].name);
	free(gaps);
	free(ips);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * The kernel symbols that cover the kernel IPs seen in samples (XPU_REC_KSYM,
 * written at the end), so a report on another machine can name [k] frames
 * without that machine's /proc/kallsyms.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/sort.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/kernel/ksyms.h"

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

// SPDX-License-Identifier: MIT
/*
 * Recording metadata (XPU_REC_META, written first so even a killed recording
 * has it): the command, the machine, the options that shape the trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "common/sort.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "cupti/channel/wire.h"
#include "record/meta.h"
#include "record/options.h"

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

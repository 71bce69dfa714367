// SPDX-License-Identifier: MIT
/* The recording's state and the glue's common helpers; see cupti_state.h. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "format/xpu_format.h"
#include "cupti/memory/cupti_mem.h"
#include "cupti_state.h"

/* Every activity kind a recording may enable. */
static const CUpti_ActivityKind inject_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

struct inject inj = {
	.devices_done = ATOMIC_FLAG_INIT,
	.nested_noted = ATOMIC_FLAG_INIT,
	.finished = ATOMIC_FLAG_INIT,
};

void inject__warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line; stderr may be shared with the app. */
	fprintf(stderr, "xpu-cupti: warning: %s\n", buf);
}

const char *inject__strerr(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

void inject__fail(const char *what, CUptiResult r)
{
	char msg[256];
	int expect = INJECT_ACTIVE;

	if (!atomic_compare_exchange_strong(&inj.state, &expect, INJECT_OFF))
		return;
	snprintf(msg, sizeof(msg), "%s failed: %s", what, inject__strerr(r));
	inject__warn("%s; GPU activity is not recorded for pid %u, the application runs on",
		     msg, inj.pid);
	xpu_client__meta(&inj.client, XPU_META_GPU_ERROR, msg);
	if (inj.subscribed) {
		/* Best effort: CUPTI is already failing. Collected records still
		 * go out with the final flush. */
		cuptiEnableAllDomains(0, inj.sub);
		inject__disable_kinds();
	}
}

uint64_t CUPTIAPI inject__timestamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void inject__meta_u(const char *key, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	xpu_client__meta(&inj.client, key, buf);
}

void inject__disable_kinds(void)
{
	for (size_t i = 0; i < sizeof(inject_kinds) / sizeof(inject_kinds[0]); i++)
		cuptiActivityDisable(inject_kinds[i]);
	xpu_cupti_mem__disable();	/* --gpu-memory's, where enabled */
}

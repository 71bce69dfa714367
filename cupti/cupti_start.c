// SPDX-License-Identifier: MIT
/* The start of a recording; see cupti_start.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/xpu_format.h"
#include "cupti/channel/wire.h"
#include "cupti/nvtx/cupti_nvtx.h"
#include "cupti/nvtx/nvtx_ext.h"
#include "cupti/pcsamp/cupti_pcsamp.h"
#include "cupti/walk/unw_probe.h"
#include "cupti/walk/walk_probe.h"
#include "cupti/memory/cupti_mem.h"
#include "cupti_state.h"
#include "cupti_devices.h"
#include "cupti_callbacks.h"
#include "cupti_flush.h"
#include "cupti_start.h"

static void inject__meta_versions(void)
{
	uint32_t v = 0;

	xpu_client__meta(&inj.client, XPU_META_CUPTI_LIBRARY, "libxpu-cupti " XPU_VERSION);
	if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
		inject__meta_u(XPU_META_CUPTI_VERSION, v);
	inject__meta_u(XPU_META_CUPTI_API_VERSION_BUILT, CUPTI_API_VERSION);
}

/* CUPTI 13.0.0 crashes inside its NVTX handlers (nvtxNameOsThreadA,
 * NVIDIA/NVTX#125; CUDA.jl leaves NVTX alone with that version): we neither
 * inject NVTX nor enable its callbacks there. cuptiGetVersion() encodes
 * major.minor.patch from CUDA 13 on. */
bool inject__nvtx_broken(void)
{
	uint32_t v = 0;

	return cuptiGetVersion(&v) == CUPTI_SUCCESS && v == 130000;
}

/* The NVTX callbacks, unless xpu-record said --no-nvtx or CUPTI is one whose
 * NVTX support crashes. Says which in META cupti.nvtx. A failure here turns
 * NVTX off, not the GPU recording. */
static int inject__setup_nvtx(void)
{
	const char *env = inject__cfg(XPU_CUPTI_NVTX_ENV);

	if (env && !strcmp(env, "off")) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "off (" XPU_CUPTI_NVTX_ENV "=off)");
		return 0;
	}
	if (inject__nvtx_broken()) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "off: CUPTI 13.0.0 crashes in "
				 "NVTX calls (NVIDIA/NVTX#125); use CUDA 13.0.1 or later");
		return 0;
	}
	if (xpu_nvtx__init(&inj.nvtx, &inj.client, &inj.names, inj.pid, xpu_cupti_marker)) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "off: no thread-local key left");
		return 0;
	}
	for (size_t i = 0; i < xpu_cupti_nvtx_nr_cbids; i++) {
		CUptiResult r = cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_NVTX,
						    xpu_cupti_nvtx_cbids[i]);
		char msg[160];

		if (r == CUPTI_SUCCESS)
			continue;
		/* NVTX is an extra: without it the GPU recording goes on */
		for (size_t j = 0; j < i; j++)
			cuptiEnableCallback(0, inj.sub, CUPTI_CB_DOMAIN_NVTX, xpu_cupti_nvtx_cbids[j]);
		snprintf(msg, sizeof(msg), "off: cuptiEnableCallback(NVTX, %u) failed: %s",
			 xpu_cupti_nvtx_cbids[i], inject__strerr(r));
		xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, msg);
		inject__warn("pid %u: NVTX ranges are not recorded (%s)", inj.pid, msg);
		return 0;
	}
	inj.nvtx_on = true;
	xpu_nvtx_ext__attach(&inj.nvtx);
	xpu_client__meta(&inj.client, XPU_META_CUPTI_NVTX, "on");
	return 0;
}

static int inject__setup(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};
	const char *api_activity = inject__cfg(XPU_CUPTI_API_ACTIVITY_ENV);
	int api_records = !api_activity ? API_RECORDS_MARKED :
			  !strcmp(api_activity, "all") ? API_RECORDS_ALL :
			  !strcmp(api_activity, "none") ? API_RECORDS_NONE : API_RECORDS_MARKED;
	int all_api = api_records == API_RECORDS_ALL;
	CUptiResult r;
	int nrt, ndrv;

	r = cuptiSubscribe(&inj.sub, inject__callback_func(inj.walk_probe), NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		const char *why = "another CUPTI subscriber (torch.profiler, Nsight Systems, "
			"compute-sanitizer, ...) holds CUPTI in this process";

		inject__warn("pid %u: %s; GPU activity is not recorded, CPU profiling goes on",
			     inj.pid, why);
		xpu_client__meta(&inj.client, XPU_META_GPU_SUBSCRIBER_CONFLICT, why);
		atomic_store(&inj.state, INJECT_OFF);
		return -EBUSY;
	}
	if (r != CUPTI_SUCCESS) {
		inject__fail("cuptiSubscribe", r);
		return -EIO;
	}
	inj.subscribed = 1;

	/* The clock first: records must never carry CUPTI's own timebase. */
	if (!CUPTI_TRY(cuptiActivityRegisterTimestampCallback(inject__timestamp)) ||
	    !CUPTI_TRY(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) ||
	    !CUPTI_TRY(cuptiActivityRegisterCallbacks(inject__buffer_requested,
						      inject__buffer_completed)))
		return -EIO;

	nrt = inject__enable_apis(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, api_records);
	ndrv = inject__enable_apis(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, api_records);
	if (nrt < 0 || ndrv < 0)
		return -EIO;
	inject__meta_u(XPU_META_CUPTI_MARKED_RUNTIME, nrt);
	inject__meta_u(XPU_META_CUPTI_MARKED_DRIVER, ndrv);
	if (!CUPTI_TRY(cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_RESOURCE,
					   CUPTI_CBID_RESOURCE_CONTEXT_CREATED)))
		return -EIO;
	inject__setup_graphs();
	if (inj.pc_period) {
		xpu_pcsamp__init(&inj.pcsamp, &inj.client, &inj.names, inj.pid,
				 inject__cfg(XPU_CUPTI_CUBIN_MAX_ENV));
		if (!xpu_cupti_pcsamp__setup(&inj.pcsamp, inj.sub, inj.pc_period, &inj.pc_duty,
					     inject__timestamp) &&
		    (inj.pc_duty.after_ns || inj.pc_duty.on_ns))
			inject__pcs_exits(true);
	}
	inject__enable_copying(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	inject__enable_copying(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	if (inject__setup_nvtx())
		return -EIO;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!CUPTI_TRY(cuptiActivityEnable(kinds[i])))
			return -EIO;
	if (all_api && (!CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME)) ||
			!CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER))))
		return -EIO;
	if (inj.gpu_memory) {	/* --gpu-memory (cupti/memory/) */
		const char *what;

		if ((r = xpu_cupti_mem__enable(&what)) != CUPTI_SUCCESS) {
			inject__fail(what, r);
			return -EIO;
		}
	}
	return 0;
}

int inject__start(bool attach)
{
	const char *path = inject__cfg(XPU_CUPTI_SOCKET_ENV);
	const char *apis = inject__cfg(XPU_CUPTI_APIS_ENV);
	const char *marker = inject__cfg(XPU_CUPTI_MARKER_ENV);
	const char *pc = inject__cfg(XPU_CUPTI_PC_SAMPLING_ENV);
	int err;

	inj.pid = getpid();
	xpu_client__init(&inj.client, inj.pid, 0);
	xpu_names__init(&inj.names, inj.pid);
	xpu_convert__init(&inj.conv, &inj.client, &inj.names, inj.pid);

	if (!path || !*path) {
		inject__warn("%s is not set: libxpu-cupti.so runs only under xpu-record; "
			     "GPU activity is not recorded", XPU_CUPTI_SOCKET_ENV);
		goto off;
	}
	err = xpu_client__connect(&inj.client, path);
	if (err) {
		inject__warn("cannot connect to xpu-record at %s: %s; GPU activity is not recorded for pid %u",
			     path, strerror(-err), inj.pid);
		goto off;
	}
	/* the recorder's bounded capture: buffers that fill within its period */
	xpu_bufsize__init(&inj.bufsize, inj.client.flush_ms);
	/* the recorder's --gpu-memory, told with the ready byte (wire.h) */
	inj.gpu_memory = inj.client.flags & XPU_CHANNEL_GPU_MEMORY;
	xpu_cupti_mem__init(inj.gpu_memory, &inj.client, inj.pid, inject__timestamp);
	if (xpu_apis__parse(&inj.apis, apis)) {
		inject__warn("%s is longer than %d bytes or %d names; using the default API set",
			     XPU_CUPTI_APIS_ENV, XPU_APIS_SPEC_MAX - 1, XPU_APIS_MAX);
		xpu_apis__parse(&inj.apis, NULL);
	}
	if (apis)
		xpu_client__meta(&inj.client, XPU_META_CUPTI_APIS, apis);
	if (marker && !strcmp(marker, "off")) {
		inj.no_marker = true;
		xpu_client__meta(&inj.client, XPU_META_CUPTI_MARKER, "off (" XPU_CUPTI_MARKER_ENV "=off: no launch stacks)");
	}
	switch (xpu_walk_probe__init(marker, &inj.client, inj.pid)) {
	case 1:
		inj.walk_probe = true;
		if (!strcmp(marker, "walk"))
			xpu_client__meta(&inj.client, XPU_META_CUPTI_MARKER,
					 "walk (" XPU_CUPTI_MARKER_ENV "=walk: launch stacks walked in the "
					 "process, the marker where a walk cannot)");
		break;
	case -1:
		inject__warn("%s=%s: no rule table from xpu-record (--launch-stacks=marker or --call-graph fp?); "
			     "the marker stays", XPU_CUPTI_MARKER_ENV, marker);
		break;
	}
	switch (xpu_unw_probe__init(marker)) {
	case 1:
		inj.unw_probe = true;
		if (strncmp(marker, "unw+", 4))
			xpu_client__meta(&inj.client, XPU_META_CUPTI_MARKER,
					 "off (" XPU_CUPTI_MARKER_ENV "=unw: the unw benchmark probe, no launch stacks)");
		break;
	case -1:
		inject__warn("%s=%s: no unw_backtrace in that library; the marker stays on",
			     XPU_CUPTI_MARKER_ENV, marker);
		break;
	}
	inject__meta_versions();
	inj.pc_period = xpu_pcsamp__parse(pc);
	if (xpu_pcsamp__parse_duty(inject__cfg(XPU_CUPTI_PC_DUTY_ENV), &inj.pc_duty)) {
		inject__warn("%s=%s: not ON_MS:OFF_MS or off; the default duty cycle is used",
			     XPU_CUPTI_PC_DUTY_ENV, inject__cfg(XPU_CUPTI_PC_DUTY_ENV));
		xpu_pcsamp__parse_duty(NULL, &inj.pc_duty);
	}
	if (inj.pc_period < 0 && inj.pc_period != -1) {
		inject__warn("%s=%s: not a period (5-31, on, off); GPU PC sampling is off",
			     XPU_CUPTI_PC_SAMPLING_ENV, pc);
		xpu_client__meta(&inj.client, XPU_META_CUPTI_PC_SAMPLING, "off: bad " XPU_CUPTI_PC_SAMPLING_ENV);
		inj.pc_period = 0;
	}
	if (attach && !xpu_attach__cuda_initialised()) {
		xpu_client__meta(&inj.client, XPU_META_CUPTI_ATTACH, XPU_ATTACH_NOT_INITIALISED);
		xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
		atomic_store(&inj.state, INJECT_OFF);
		return -EAGAIN;
	}
	if (attach)
		xpu_client__meta(&inj.client, XPU_META_CUPTI_ATTACH,
				 "attached to the running process (xpu-record -p): its CUDA work from "
				 "the attach on; NVTX ranges only where its NVTX was injected with "
				 "CUPTI at start; graphs made before the attach keep their launch stacks");

	err = inject__setup();
	if (err) {
		/* Conflict or CUPTI failure: deliver the reason now, then stop
		 * (an attach: its thread detaches). */
		if (!attach)
			inject__finish();
		return err;
	}
	if (attach) {
		/* the contexts exist already: no CONTEXT_CREATED to wait for */
		if (!atomic_flag_test_and_set(&inj.devices_done))
			inject__devices();
		if (inj.gpu_memory)	/* the baseline: what was there before */
			xpu_cupti_mem__attached();
		inject__pcs_attach(xpu_cupti_pcsamp__on());
	} else if (inject__start_flusher()) {
		/* Without the thread the queue only drains at exit: still correct. */
		inject__warn("cannot start the flush thread; GPU records are sent at exit only");
	}
	xpu_client__flush(&inj.client, INJECT_SEND_TIMEOUT_MS);
	return 0;
off:
	atomic_store(&inj.state, INJECT_OFF);
	xpu_client__disconnect(&inj.client);
	return -ENOTCONN;
}

// SPDX-License-Identifier: MIT
/*
 * A stand-in for libcuda.so.1 (built under that name, soname included, as
 * tests/workloads/fake_cuda/libcuda.so.1) for the attach tests: a
 * fake_cuda_app started without xpu-record with FAKE_CUDA_DRIVER naming
 * this file launches through xpu_fake_cuda_launch(i), which does nothing
 * until a subscriber is there, as CUDA runs without CUPTI. libfake_cupti's
 * attach entry (xpu-record -p injects it) subscribes, as the real library
 * subscribes to CUPTI in a process whose CUDA already runs, and
 * unsubscribes at the detach. One subscriber at a time: a second one is
 * told -EBUSY, as CUPTI tells a second subscriber. cuCtxGetCurrent() says
 * CUDA_ERROR_NOT_INITIALIZED (3) while FAKE_CUDA_NOT_INITIALISED=1 is set
 * in the process (libcuda loaded, cuInit not called yet), 0 otherwise.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef void (*xpu_fake_cuda_hook)(int i);

static _Atomic(xpu_fake_cuda_hook) fake_hook;

int xpu_fake_cuda_subscribe(xpu_fake_cuda_hook hook)
{
	xpu_fake_cuda_hook none = 0;

	return atomic_compare_exchange_strong(&fake_hook, &none, hook) ? 0 : -EBUSY;
}

void xpu_fake_cuda_unsubscribe(void)
{
	atomic_store(&fake_hook, 0);
}

void xpu_fake_cuda_launch(int i)
{
	xpu_fake_cuda_hook hook = atomic_load(&fake_hook);

	if (hook)
		hook(i);
}

int cuCtxGetCurrent(void **ctx)
{
	const char *v = getenv("FAKE_CUDA_NOT_INITIALISED");

	*ctx = 0;
	return v && !strcmp(v, "1") ? 3 : 0;
}

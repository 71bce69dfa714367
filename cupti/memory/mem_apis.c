// SPDX-License-Identifier: MIT
/* The memory calls of --gpu-memory; see mem_apis.h. */
#include <pthread.h>

#include "cupti/walk/apis.h"
#include "cupti/memory/mem_apis.h"

static struct xpu_apis mem_apis;
static pthread_once_t mem_apis_once = PTHREAD_ONCE_INIT;

static void mem_apis__init(void)
{
	xpu_apis__parse(&mem_apis, XPU_CUPTI_MEMORY_APIS);
}

bool xpu_mem_apis__match(const char *cb_name)
{
	pthread_once(&mem_apis_once, mem_apis__init);
	return xpu_apis__match(&mem_apis, cb_name);
}

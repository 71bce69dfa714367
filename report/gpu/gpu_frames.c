// SPDX-License-Identifier: MIT
/* Frames of the GPU join: API names from CUPTI callback ids, the cut at the
 * CUDA entry point, and the GPU leaf frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/hashmap.h"
#include "cupti/channel/wire.h"
#include "report/symbols/demangle.h"
#include "report/gpu/gpu.h"

#define GPU_API_MODULE	"[cuda]"
#define GPU_LEAF_MODULE	"[gpu]"

const char *gpu_cbid__name(uint32_t domain, uint32_t cbid)
{
	if (domain == XPU_API_RUNTIME && cbid < gpu_cbid_runtime_size)
		return gpu_cbid_runtime[cbid];
	if (domain == XPU_API_DRIVER && cbid < gpu_cbid_driver_size)
		return gpu_cbid_driver[cbid];
	return NULL;
}

static void gpu_api_names__add(struct gpu_api_names *a, const char *const *tab, unsigned n)
{
	bool found;

	for (unsigned i = 0; i < n; i++)
		if (tab[i])
			*bmap__slot(&a->names, tab[i], strlen(tab[i]), &found) = (void *)1;
}

void gpu_api_names__init(struct gpu_api_names *a)
{
	bmap__init(&a->names);
	gpu_api_names__add(a, gpu_cbid_runtime, gpu_cbid_runtime_size);
	gpu_api_names__add(a, gpu_cbid_driver, gpu_cbid_driver_size);
}

void gpu_api_names__exit(struct gpu_api_names *a)
{
	bmap__exit(&a->names, NULL);
}

/* "cudaError cudaLaunchKernel<char>(char const*, ...)" -> "cudaLaunchKernel":
 * drop the argument list, template arguments and a return type. */
bool gpu_cbid__is_api(const struct gpu_api_names *a, const char *name)
{
	const char *end = name + strcspn(name, "(<"), *start = name;

	for (const char *c = name; c < end; c++)
		if (*c == ' ')
			start = c + 1;
	if (end == start || (start[0] != 'c' || start[1] != 'u'))
		return false;
	return bmap__find(&a->names, start, (size_t)(end - start)) != NULL;
}

/* Module basenames of the CUDA runtime, driver, CUPTI and our library. */
static bool gpu__cuda_module(const char *module)
{
	static const char *const prefixes[] = {
		"libcudart.so", "libcuda.so", "libcupti.so", "libxpu-cupti.so",
		"libnvidia-ptxjitcompiler.so",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(module, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

size_t gpu__stack_cut(const struct profile *p, const struct gpu_api_names *a,
		      const uint32_t *frames, size_t n)
{
	const char *marker_module = NULL;

	/* the uprobe fires on the marker's first instruction: the leaf names
	 * the injection library, whatever its file is called */
	if (n) {
		const struct frame *leaf = profile__frame(p, frames[n - 1]);

		if (!strcmp(leaf->name, XPU_CUPTI_MARKER_SYMBOL) && leaf->module[0])
			marker_module = leaf->module;
	}
	for (size_t i = 0; i < n; i++) {
		const struct frame *f = profile__frame(p, frames[i]);

		if (f->kind != FRAME_CPU_USER)
			continue;
		if (gpu__cuda_module(f->module) ||
		    (marker_module && !strcmp(f->module, marker_module)) ||
		    (!f->unknown && (gpu_cbid__is_api(a, f->name) ||
				     !strncmp(f->name, "__cudart", 8))))
			return i;
	}
	return n;
}

uint32_t gpu__api_frame(struct profile *p, uint32_t domain, uint32_t cbid)
{
	const char *name = gpu_cbid__name(domain, cbid);
	char buf[64];

	if (!name) {
		snprintf(buf, sizeof(buf), "%s_%u",
			 domain == XPU_API_DRIVER ? "cuda_driver_api" : "cuda_api", cbid);
		name = buf;
	}
	return profile__intern_frame(p, FRAME_GPU_API, GPU_API_MODULE, name, 0, false);
}

uint32_t gpu__unknown_frame(struct profile *p)
{
	return profile__intern_frame(p, FRAME_CPU_USER, "", "[unknown CPU stack]", 0, true);
}

uint32_t gpu__graph_replay_frame(struct profile *p)
{
	return profile__intern_frame(p, FRAME_MARKER, "", "[graph replay]", 0, false);
}

uint32_t gpu__graph_unknown_site_frame(struct profile *p)
{
	return profile__intern_frame(p, FRAME_MARKER, "", "[unknown capture site]", 0, true);
}

uint32_t gpu__graph_node_frame(struct profile *p)
{
	return profile__intern_frame(p, FRAME_GPU_API, GPU_API_MODULE, "[graph node]", 0, false);
}

uint32_t gpu__kernel_frame(struct profile *p, const char *kernel_name)
{
	char *dem = kernel_name ? demangle(kernel_name, true) : NULL;
	char buf[4096];
	uint32_t id;

	snprintf(buf, sizeof(buf), "[GPU_Kernel]%s",
		 dem ? dem : kernel_name && kernel_name[0] ? kernel_name : "[unknown]");
	free(dem);
	id = profile__intern_frame(p, FRAME_GPU_KERNEL, GPU_LEAF_MODULE, buf, 0, !kernel_name);
	return id;
}

uint32_t gpu__memcpy_frame(struct profile *p, uint32_t copy_kind)
{
	static const char *const kinds[] = {
		[XPU_MEMCPY_HTOD] = "HtoD", [XPU_MEMCPY_DTOH] = "DtoH",
		[XPU_MEMCPY_HTOA] = "HtoA", [XPU_MEMCPY_ATOH] = "AtoH",
		[XPU_MEMCPY_ATOA] = "AtoA", [XPU_MEMCPY_ATOD] = "AtoD",
		[XPU_MEMCPY_DTOA] = "DtoA", [XPU_MEMCPY_DTOD] = "DtoD",
		[XPU_MEMCPY_HTOH] = "HtoH", [XPU_MEMCPY_PTOP] = "PtoP",
	};
	const char *k = copy_kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[copy_kind] : NULL;
	char buf[64];

	snprintf(buf, sizeof(buf), "[GPU_Memcpy%s%s]", k ? " " : "", k ? k : "");
	return profile__intern_frame(p, FRAME_GPU_MEMCPY, GPU_LEAF_MODULE, buf, 0, false);
}

uint32_t gpu__memset_frame(struct profile *p)
{
	return profile__intern_frame(p, FRAME_GPU_MEMSET, GPU_LEAF_MODULE, "[GPU_Memset]", 0,
				     false);
}

uint32_t gpu__sync_frame(struct profile *p, uint32_t type)
{
	/* CUpti_ActivitySynchronizationType */
	static const char *const types[] = {
		"Unknown", "EventSynchronize", "StreamWaitEvent", "StreamSynchronize",
		"ContextSynchronize",
	};
	char buf[64];

	snprintf(buf, sizeof(buf), "[GPU_Sync]%s",
		 type < sizeof(types) / sizeof(types[0]) ? types[type] : "Unknown");
	return profile__intern_frame(p, FRAME_GPU_SYNC, GPU_LEAF_MODULE, buf, 0, false);
}

const char *gpu_kind__name(enum gpu_kind kind)
{
	switch (kind) {
	case GPU_KIND_KERNEL:	return "kernels";
	case GPU_KIND_MEMCPY:	return "memcpy";
	case GPU_KIND_MEMSET:	return "memset";
	case GPU_KIND_SYNC:	return "sync";
	case GPU_KIND_NR:	break;
	}
	return "?";
}

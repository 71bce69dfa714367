// SPDX-License-Identifier: MIT
/* The process's devices; see cupti_devices.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "format/xpu_format.h"
#include "cupti_state.h"
#include "cupti_devices.h"

typedef CUresult (*cu_count_fn)(int *);
typedef CUresult (*cu_get_fn)(CUdevice *, int);
typedef CUresult (*cu_name_fn)(char *, int, CUdevice);
typedef CUresult (*cu_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*cu_mem_fn)(size_t *, CUdevice);
typedef CUresult (*cu_ver_fn)(int *);
typedef int (*rt_ver_fn)(int *);

/* Driver calls made from libcuda's own handle (it is loaded: it loaded us);
 * no link-time dependency on libcuda. Best effort: missing data is left out. */
void inject__devices(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	cu_count_fn get_count;
	cu_get_fn get_dev;
	cu_name_fn get_name;
	cu_attr_fn get_attr;
	cu_mem_fn get_mem;
	cu_ver_fn drv_ver;
	rt_ver_fn rt_ver;
	int n = 0, v = 0;

	if (!cuda)
		return;
	get_count = (cu_count_fn)dlsym(cuda, "cuDeviceGetCount");
	get_dev = (cu_get_fn)dlsym(cuda, "cuDeviceGet");
	get_name = (cu_name_fn)dlsym(cuda, "cuDeviceGetName");
	get_attr = (cu_attr_fn)dlsym(cuda, "cuDeviceGetAttribute");
	get_mem = (cu_mem_fn)dlsym(cuda, "cuDeviceTotalMem_v2");
	drv_ver = (cu_ver_fn)dlsym(cuda, "cuDriverGetVersion");
	/* Only found when the app links libcudart dynamically (PyTorch does). */
	rt_ver = (rt_ver_fn)dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");

	if (drv_ver && drv_ver(&v) == CUDA_SUCCESS)
		inject__meta_u(XPU_META_CUDA_DRIVER_VERSION, v);
	if (rt_ver && rt_ver(&v) == 0)
		inject__meta_u(XPU_META_CUDA_RUNTIME_VERSION, v);
	if (!get_count || !get_dev || !get_name || !get_attr || !get_mem ||
	    get_count(&n) != CUDA_SUCCESS)
		goto out;
	inject__meta_u(XPU_META_GPU_COUNT, n);
	for (int i = 0; i < n; i++) {
		struct xpu_gpu_device d = { .pid = inj.pid, .id = i };
		char name[256] = "", key[32];
		CUdevice dev;
		size_t mem = 0;
		int val;

		if (get_dev(&dev, i) != CUDA_SUCCESS)
			continue;
		if (get_name(name, sizeof(name) - 1, dev) != CUDA_SUCCESS)
			strcpy(name, "unknown");
		if (get_attr(&val, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
			d.sm_count = val;
		if (get_attr(&val, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS)
			d.cc_major = val;
		if (get_attr(&val, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
			d.cc_minor = val;
		if (get_mem(&mem, dev) == CUDA_SUCCESS)
			d.global_memory = mem;
		xpu_client__add_str(&inj.client, XPU_REC_GPU_DEVICE, &d, sizeof(d), name);
		snprintf(key, sizeof(key), XPU_META_GPU_NAME_FMT, i);
		xpu_client__meta(&inj.client, key, name);
	}
out:
	dlclose(cuda);
}

/* SPDX-License-Identifier: MIT */
/*
 * NVTX's payload extension (nvToolsExtPayload.h), the calls of it that push,
 * pop, start or end a range (issue 31). CUPTI's NVTX callbacks cover the
 * core API only: NCCL 2.2x pushes its API ranges with nvtxDomainRangePushEx
 * (a callback) but pops those that got a payload (ncclCommInitRankConfig,
 * ncclCommFinalize, ...) with nvtxRangePopPayload, which CUPTI never
 * reports; without this those ranges stay open to the end of the process.
 *
 * An extension reaches a tool through InitializeInjectionNvtxExtension of
 * the library NVTX_INJECTION64_PATH names, called once per NVTX instance
 * and extension module with the module's function slots to fill; a slot
 * left empty makes that call a no-op. xpu_nvtx_ext__init() fills the
 * payload module's (module id 2) push, pop, start and end slots with
 * handlers that feed nvtx.h as the CUPTI callbacks do: a push or start
 * carries the domain and no message (its attributes are in the payload,
 * which we do not decode), a pop closes the innermost open push of its
 * domain on the thread, an end names the id the start returned (ids with
 * the top bit set, apart from CUPTI's). Other modules and slots are left
 * empty, as before this existed. Handlers do nothing until
 * xpu_nvtx_ext__attach(): NVTX may initialise the extension before CUDA
 * starts the library, or with NVTX recording off.
 *
 * The types below are NVTX's nvtxExtModuleInfo_t and nvtxExtModuleSegment_t
 * (nvtxDetail/nvtxExtTypes.h), an ABI NVTX keeps, copied so this file
 * builds without the CUDA toolkit (the fake CUPTI library uses it).
 */
#ifndef XPU_CUPTI_NVTX_EXT_H
#define XPU_CUPTI_NVTX_EXT_H

#include <stddef.h>
#include <stdint.h>

struct xpu_nvtx;

#define XPU_NVTX_EXT_PAYLOAD_MODULE	2	/* NVTX_EXT_PAYLOAD_MODULEID */
/* NVTX3EXT_CBID_*: slot indexes in the payload module's segment */
#define XPU_NVTX_EXT_PUSH		3	/* nvtxRangePushPayload */
#define XPU_NVTX_EXT_POP		4	/* nvtxRangePopPayload */
#define XPU_NVTX_EXT_START		5	/* nvtxRangeStartPayload */
#define XPU_NVTX_EXT_END		6	/* nvtxRangeEndPayload */
/* CUPTI_CBID_NVTX_* the marker gets for the extension's push and start:
 * the core calls they stand for (cupti_nvtx_cbid.h) */
#define XPU_NVTX_EXT_CBID_PUSH		33	/* nvtxDomainRangePushEx */
#define XPU_NVTX_EXT_CBID_START		31	/* nvtxDomainRangeStartEx */
#define XPU_NVTX_EXT_KEY_BIT		(1ull << 63)

struct xpu_nvtx_ext_segment {		/* nvtxExtModuleSegment_t */
	size_t segment_id;
	size_t slot_count;
	intptr_t *slots;
};

struct xpu_nvtx_ext_module {		/* nvtxExtModuleInfo_t */
	uint16_t nvtx_version;
	uint16_t struct_size;
	uint16_t module_id;
	uint16_t compat_id;
	size_t nr_segments;
	struct xpu_nvtx_ext_segment *segments;
	void *get_export_function;
	const void *ext_info;
};

/* InitializeInjectionNvtxExtension's work: fills the payload module's
 * slots. Returns 1 (NVTX's success) for every module, 0 for none given. */
int xpu_nvtx_ext__init(struct xpu_nvtx_ext_module *m);
/* From now on the handlers feed nv (NULL: they stop). */
void xpu_nvtx_ext__attach(struct xpu_nvtx *nv);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * CUPTI's NVTX callbacks (CUPTI_CB_DOMAIN_NVTX) decoded into the range
 * tracking of nvtx.h: which API it was, its message (ASCII, wide or
 * registered), color, domain, and NVTX's range id or handle from the return
 * value. Header types only (cupti_callbacks.h, generated_nvtx_meta.h), so
 * unit tests feed it synthetic callback data without libcupti.
 *
 * NVTX calls reach CUPTI only when the process's NVTX library was pointed at
 * CUPTI through NVTX_INJECTION64_PATH (xpu-record sets it to our library,
 * whose InitializeInjectionNvtx2 hands NVTX to the libcupti it links: see
 * cupti/cupti_inject.c).
 */
#ifndef XPU_CUPTI_CUPTI_NVTX_H
#define XPU_CUPTI_CUPTI_NVTX_H

#include <stddef.h>
#include <stdint.h>

struct xpu_nvtx;

/* The NVTX callback ids we enable, and how many. */
extern const uint32_t xpu_cupti_nvtx_cbids[];
extern const size_t xpu_cupti_nvtx_nr_cbids;

/* One NVTX callback: cbid a CUpti_nvtx_api_trace_cbid, cbdata the
 * CUpti_NvtxData CUPTI passed, time now (CLOCK_MONOTONIC ns). Runs on the
 * application's thread. Unknown cbids are ignored. */
void xpu_cupti_nvtx__callback(struct xpu_nvtx *nv, uint32_t cbid, const void *cbdata,
			      uint64_t time);

/* A wide string (NVTX's W calls) as UTF-8 in buf, truncated at a character
 * boundary; returns buf. */
const char *xpu_cupti_nvtx__utf8(const wchar_t *w, char *buf, size_t size);

#endif

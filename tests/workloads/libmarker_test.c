// SPDX-License-Identifier: MIT
/*
 * libmarker_test.so: the smallest injection library for the record tests.
 * It exports the marker the recorder's uprobe attaches to and the entry
 * points tests/workloads/fake_cuda_app.c calls; xpu_fake_launch(i) calls
 * xpu_cupti_marker(1000 + i, 211, 1), so a test knows every correlation ID
 * the trace must hold. It sends nothing over the GPU channel.
 */
#include <stdint.h>

/* Same shape as cupti/walk/marker.c: a nop5 first, so the kernel can optimize
 * the uprobe (see the comment there). */
__attribute__((visibility("default"), noinline, naked))
void xpu_cupti_marker(uint64_t correlation_id, uint32_t cbid, uint32_t domain)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret\n\t");
}

__attribute__((visibility("default")))
int InitializeInjection(void)
{
	return 1;
}

__attribute__((visibility("default"), noinline))
void xpu_fake_launch(int i)
{
	xpu_cupti_marker(1000 + (uint64_t)i, 211, 1);
	__asm__ volatile("" ::: "memory");
}

// SPDX-License-Identifier: MIT
/*
 * A fake libc10_cuda.so for GPU-less tests of xpu-record --gpu-memory
 * (tests/shell/record_gpu_blocks.sh; the build installs it under that
 * name, twice):
 *  - built with -DXPU_FAKE_USDT=1 (fake_c10_usdt/libc10_cuda.so): the
 *    USDT notes of PyTorch's caching allocator, pytorch:malloc(ptr, device,
 *    size, stream) fired after a block is handed out and pytorch:free(ptr)
 *    when one is given back, each gated by a semaphore in .probes, as
 *    torch/headeronly/util/static_tracepoint.h makes them (<sys/sdt.h>
 *    with _SDT_HAS_SEMAPHORES here: the semaphores' names differ, the notes
 *    and .probes are the same);
 *  - built without (fake_c10_uprobe/libc10_cuda.so): no notes, only the
 *    functions the uprobe fallback goes on, under their real C++ names:
 *    c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::
 *    malloc(void**, signed char, unsigned long, CUstream_st*) and
 *    ::free(void*).
 * Blocks are fake device addresses (a bump allocator from 0x7e0000000000,
 * 512-byte aligned), never touched; a request of 1 TiB or more throws
 * std::bad_alloc from NativeCachingAllocator::malloc, as PyTorch's
 * out-of-memory error, caught in xpu_fake_c10_alloc. The C entry points:
 *   xpu_fake_c10_alloc(size, device, stream)   allocate(): the block, or
 *                                              NULL (out of memory)
 *   xpu_fake_c10_free(ptr)                     raw_delete()
 *   xpu_fake_c10_probed()                      1 once xpu-record's probes are
 *                                              in this process (the
 *                                              semaphores set, or an int3
 *                                              on both functions and on
 *                                              the return site of the last
 *                                              malloc), so a workload can
 *                                              wait for them
 */
#include <new>
#include <stddef.h>
#include <stdint.h>
#ifdef XPU_FAKE_USDT
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
extern "C" {
volatile unsigned short pytorch_malloc_semaphore __attribute__((section(".probes"), used));
volatile unsigned short pytorch_free_semaphore __attribute__((section(".probes"), used));
}
#endif

struct CUstream_st;

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {
namespace Native {

class NativeCachingAllocator {
public:
	void malloc(void **devPtr, signed char device, size_t size, CUstream_st *stream);
	void free(void *ptr);
	uint64_t next = 0x7e0000000000ULL;
	uint64_t live = 0;
	const volatile unsigned char *last_ra = nullptr;	/* where malloc returned to */
};

__attribute__((noinline)) void NativeCachingAllocator::malloc(void **devPtr, signed char device,
							      size_t size, CUstream_st *stream)
{
	last_ra = (const unsigned char *)__builtin_return_address(0);
	if (size >= (1ULL << 40))	/* out of memory: PyTorch throws OutOfMemoryError */
		throw std::bad_alloc();
	*devPtr = (void *)next;
	next += (size + 511) & ~(uint64_t)511;
	live++;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void NativeCachingAllocator::free(void *ptr)
{
	if (ptr)
		live--;
	__asm__ volatile("" ::: "memory");
}

static NativeCachingAllocator allocator;

}  // namespace Native
}  // namespace CUDACachingAllocator
}  // namespace cuda
}  // namespace c10

using c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator;
using c10::cuda::CUDACachingAllocator::Native::allocator;

extern "C" __attribute__((noinline)) void *xpu_fake_c10_alloc(size_t size, int device, void *stream)
{
	void *p = nullptr;

	try {	/* as torch's binding turns the error into a Python exception */
		allocator.malloc(&p, (signed char)device, size, (CUstream_st *)stream);
	} catch (const std::bad_alloc &) {
		return nullptr;
	}
#ifdef XPU_FAKE_USDT
	if (pytorch_malloc_semaphore)
		STAP_PROBE4(pytorch, malloc, p, (signed char)device, size, (uint64_t)(uintptr_t)stream);
#endif
	return p;
}

extern "C" __attribute__((noinline)) void xpu_fake_c10_free(void *ptr)
{
#ifdef XPU_FAKE_USDT
	if (pytorch_free_semaphore)
		STAP_PROBE1(pytorch, free, ptr);
#endif
	allocator.free(ptr);
}

extern "C" int xpu_fake_c10_probed(void)
{
#ifdef XPU_FAKE_USDT
	return pytorch_malloc_semaphore && pytorch_free_semaphore;
#else
	/* a uprobe is an int3 on the function's first byte, in this process,
	 * and on the instruction malloc returned to, once it has been called */
	const volatile unsigned char *m = (const unsigned char *)(void *)&NativeCachingAllocator::malloc;
	const volatile unsigned char *f = (const unsigned char *)(void *)&NativeCachingAllocator::free;

	return *m == 0xcc && *f == 0xcc && (!allocator.last_ra || *allocator.last_ra == 0xcc);
#endif
}

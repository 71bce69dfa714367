// SPDX-License-Identifier: MIT
/*
 * The marker xpu-record's uprobe attaches to (wire.h). It does nothing:
 * the uprobe reads the arguments from the registers and the caller's stack.
 *
 * Its first instruction is a 5-byte NOP on purpose. A uprobe on an int3 trap
 * costs ~23 us per hit on the Firecracker VMs we measured (bench/marker_cost.sh:
 * the single-step out of line is what hurts), which tripled the time of a
 * launch-bound PyTorch loop. Linux 6.17+ turns a uprobe placed on a nop5 into
 * a call to a trampoline and a syscall instead (arch_uprobe_optimize): 1.5 us
 * per hit there. Older kernels just take the trap, as before.
 *
 * naked: no prologue, so the nop5 is at the symbol's address, where the
 * uprobe goes; the arguments stay in rdi/rsi/rdx. The FDE GCC emits (CFA =
 * rsp + 8) is right for the whole body, so unwinding from here is exact.
 */
#include <stdint.h>

#include "cupti/channel/wire.h"

__attribute__((visibility("default"), noinline, naked))
void xpu_cupti_marker(uint64_t correlation_id, uint32_t cbid, uint32_t domain)
{
#if defined(__x86_64__)
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"	/* nopl 0(%rax,%rax,1) */
			 "ret\n\t");
#elif defined(__aarch64__)
	__asm__ volatile("nop\n\tret\n\t");
#else
#error "xpu_cupti_marker: add the return sequence for this architecture"
#endif
}

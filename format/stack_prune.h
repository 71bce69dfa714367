/* SPDX-License-Identifier: MIT */
/*
 * Stack words no unwinder reads, zeroed before a stack record is written.
 *
 * A DWARF unwinder (the report's) reads, from the registers and the stack
 * copy of a sample, return addresses (code addresses of the process) and
 * the values that locate frames: stack pointers, frame pointers, saved
 * copies of them (addresses in the thread's stack). Everything else in the
 * copy is the program's data: locals, spilled temporaries, buffers, which
 * change at every sample and are most of a trace's compressed bytes. The
 * recorder keeps, of the regs (but rip and rsp, always kept) and the stack
 * words, those that are an address in the copied stack (with some slack)
 * or in an executable mapping of the process, and zeroes the others; the
 * record's stack part gets XPU_STACK_PRUNED.
 *
 * The executable mappings are learned from the records the trace gets
 * (MMAP; FORK of a new process links it to its parent, whose mappings,
 * and its ancestors', count as the child's too), kept for the
 * process's whole life (an exec or an exit forgets nothing: a sample of
 * the old image may be read after its exec). A sample can reach the
 * recorder before the MMAP of code it ran: xpu_prune__stack() says how
 * many words it would zero, so that the recorder first drains its
 * side-band once more (see record/kernel/bpf.c).
 */
#ifndef XPU_FORMAT_STACK_PRUNE_H
#define XPU_FORMAT_STACK_PRUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct xpu_prune;

struct xpu_prune *xpu_prune__new(void);
void xpu_prune__free(struct xpu_prune *p);

/* What a record says about a process's code: an executable MMAP adds its
 * range to its pid, a FORK of a new process links it to its parent (the
 * records may come in any order: a parent's FORK or MMAP noted after its
 * child's FORK still counts for the child). Other records are ignored.
 * Thread-safe. */
void xpu_prune__note(struct xpu_prune *p, uint16_t type, const void *body, size_t len);
/* The same for a record given in pieces, as xpu_writer__addv() takes it. */
void xpu_prune__notev(struct xpu_prune *p, uint16_t type, const struct iovec *iov, int n);

/*
 * The stack record (SAMPLE, OFFCPU, GPU_CORR) body of *len bytes: with
 * apply, zeroes its regs (but the stack and instruction pointers) and
 * stack words that are no code or stack address, and sets
 * XPU_STACK_PRUNED; without, changes nothing. Returns the number of
 * non-zero words zeroed (or that would be), 0 for other records. With
 * apply and a reads hook that gives the record's frames, the body becomes
 * shorter instead (*len: its new size): the frames in user_ips, no regs
 * or stack, XPU_STACK_UNWOUND.
 */
size_t xpu_prune__stack(struct xpu_prune *p, uint16_t type, void *body, size_t *len, bool apply);

/*
 * Which words of a stack record an unwinder following the CFI reads, where
 * that can be known exactly (record/unwind/unwind_reads.c runs the report's own
 * frame step). With it, xpu_prune__stack() with apply also zeroes the
 * stack words and registers of a record that it says are not read, and
 * sets XPU_STACK_PRUNED_CFI; or, where it gives the frames, writes them
 * instead of the registers and the stack (XPU_STACK_UNWOUND, format 1.6:
 * the report then has nothing left to unwind).
 */
struct xpu_prune_reads {
	/* told the MMAP, FORK, COMM and EXIT records xpu_prune__note() is
	 * told, under its lock */
	void (*note)(void *arg, uint16_t type, const void *body, size_t len);
	/* read[i] = 1 for each 8-byte word i of stack (size bytes, starting
	 * at regs' stack pointer) the unwinding of this record reads, and
	 * bit r of *reg_read for each register (DWARF order, as regs) whose
	 * value it reads; false when that is not known exactly (the words are
	 * kept by the rule above alone). read has size / 8 zeroed bytes,
	 * *reg_read is 0. */
	bool (*reads)(void *arg, uint32_t pid, uint64_t time, const uint64_t *regs,
		      unsigned nr_regs, const uint8_t *stack, uint64_t size, uint8_t *read,
		      uint32_t *reg_read);
	/* may be NULL: after reads() said true, the frames that unwinding
	 * gives, innermost first, as the report's unwinder would give them
	 * from the record (the sampled pc, then return addresses; at most
	 * XPU_UNWOUND_MAX); 0: none that user_ips can hold, keep the words */
	unsigned (*frames)(void *arg, const uint64_t **pcs);
	void *arg;
};

/* Sets the hook; before the first record is noted. */
void xpu_prune__set_reads(struct xpu_prune *p, const struct xpu_prune_reads *r);

/* Whether a reads hook is set. */
bool xpu_prune__has_reads(struct xpu_prune *p);

/* How many records xpu_prune__stack() wrote as their frames. */
uint64_t xpu_prune__unwound(struct xpu_prune *p);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Work with a time bound, for reading files the recorder did not choose.
 * file__open_regular() keeps FIFOs and devices out, but reading a regular
 * file can still block for good: a FUSE daemon or an NFS server that stopped
 * answering. Such work runs in a thread of its own and the caller waits for
 * it at most bounded__timeout_ms(): then the call fails (-ETIMEDOUT) and the
 * thread is left behind. It owns a copy of the job and frees it when the
 * work ends, if ever, and touches nothing else, so nothing of the caller
 * (the trace writer, the side band's tables) is ever written by a thread
 * left behind, and a recording ends whatever its files do.
 *
 * The job is plain data, copied in and (when the work ended in time) back
 * out: no pointer into the caller's memory, which is gone when the thread
 * is left behind (pointers to static data, such as string literals, are
 * fine). What the work opened or allocated for the caller (a descriptor,
 * a buffer) is released by drop() when the caller no longer waits for it.
 *
 * At most BOUNDED_MAX_LEFT threads are left behind at a time; later calls
 * fail at once (-EBUSY) until one of them ends. bounded__stats() counts
 * both, for the recorder's end-of-run account.
 */
#ifndef XPU_COMMON_BOUNDED_H
#define XPU_COMMON_BOUNDED_H

#include <stddef.h>
#include <stdint.h>

/* A read of a build-id or of libtorch_cpu.so's symbols takes 1-40 ms warm, a
 * few 100 ms from a cold disk: 5 s is a server that no longer answers. */
#define BOUNDED_TIMEOUT_MS	5000
#define BOUNDED_MAX_LEFT	4

struct bounded_stats {
	uint64_t calls;		/* works started */
	uint64_t timed_out;	/* not ended in time: their threads were left behind */
	uint64_t refused;	/* not started: BOUNDED_MAX_LEFT threads were left behind */
	uint64_t left;		/* threads left behind that still run */
};

/*
 * Runs fn on a copy of the size bytes at job, in a thread, and waits for it
 * at most the time bound. Returns fn's result with job updated from the
 * copy, or -ETIMEDOUT (drop(copy) runs when fn ends; drop may be NULL),
 * -EBUSY, or pthread_create()'s -errno, with job left as it was.
 */
int bounded__call(int (*fn)(void *job), void (*drop)(void *job), void *job, size_t size);

/* pread() of at most BOUNDED_READ_MAX bytes with the time bound: the
 * count read, or -errno (-ETIMEDOUT...). fd stays the caller's (the work
 * reads a dup() of it). */
#define BOUNDED_READ_MAX	65536
long bounded__pread(int fd, void *buf, size_t len, uint64_t off);

void bounded__stats(struct bounded_stats *st);

/* For tests: the time bound in ms (0: the default) */
void bounded__set_timeout_ms(unsigned ms);
unsigned bounded__timeout_ms(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The library's side of the channel to xpu-record (protocol: wire.h): a
 * bounded queue of encoded records that any thread may append to, and a
 * flush that sends the queue over the Unix socket in framed messages.
 *
 * Appending never blocks on the socket and never allocates beyond the bound:
 * a full queue drops the record and counts it. Only the flush (called from
 * the library's flush thread and at exit) touches the socket, which is
 * non-blocking. A peer that stops reading for longer than the flush timeout
 * keeps the connection: the framed bytes not yet written wait, and the next
 * flush goes on from the byte where this one stopped (a message may be cut
 * anywhere: the stream stays whole), while new records queue up to the
 * bound. Only a peer that has gone away (or a write error) loses the
 * connection; every later record is counted as dropped. Drops reach the
 * trace as XPU_REC_LOST / XPU_LOST_GPU_CHANNEL records at the next flush
 * that can deliver them.
 *
 * Does not include cupti.h: unit tests and the fake CUPTI library use it.
 */
#ifndef XPU_CUPTI_CLIENT_H
#define XPU_CUPTI_CLIENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define XPU_CLIENT_DEFAULT_CAP	(32u << 20)	/* queue bound in bytes */

struct xpu_client {
	pthread_mutex_t lock;		/* queue and counters */
	uint8_t *buf;			/* pending records */
	size_t len, cap, max;		/* max: the bound */
	uint64_t nr_queued;		/* records accepted since start */
	uint64_t nr_dropped;		/* records dropped, all causes */
	uint64_t dropped_unreported;	/* not yet sent as XPU_REC_LOST */

	pthread_mutex_t send_lock;	/* one flush at a time; guards out and wire */
	uint8_t *out;			/* swapped with buf while sending */
	size_t out_cap;
	uint8_t *wire;			/* framed messages being written */
	size_t wire_len, wire_off, wire_cap;	/* wire_off: bytes written */
	uint64_t wire_records;		/* records in wire: sent once all of it is */
	int fd;				/* -1: not connected or gone */
	int rules_fd;			/* the recorder's launch-rule table (wire.h), or -1 */
	uint32_t pid;			/* for XPU_REC_LOST records */
	uint32_t flush_ms;		/* the recorder's flush period (wire.h); 0: none */
	uint32_t flags;			/* the recorder's config flags (wire.h: XPU_CHANNEL_*) */
	uint64_t nr_sent;		/* records delivered to the socket */
};

/* max: queue bound in bytes (0: default). Returns 0 or -errno. */
int xpu_client__init(struct xpu_client *c, uint32_t pid, size_t max);
void xpu_client__exit(struct xpu_client *c);

/* Connects to the recorder's socket. Returns 0 or -errno. */
int xpu_client__connect(struct xpu_client *c, const char *path);

/* Queues one record: header + iov[0..n) + zero padding to 8 bytes.
 * Returns 0, or -ENOSPC when the queue is full (the record is counted as
 * dropped). Safe from any thread; never blocks on I/O. */
int xpu_client__addv(struct xpu_client *c, uint16_t type, const struct iovec *iov, int n);
int xpu_client__add(struct xpu_client *c, uint16_t type, const void *body, size_t len);
/* Two records queued together, the first right before the second in the
 * same batch (a PY_STACK and the GPU_CORR it belongs to), or neither. */
int xpu_client__add_pair(struct xpu_client *c, uint16_t type1, const void *body1, size_t len1,
			 uint16_t type2, const void *body2, size_t len2);
/* A fixed body followed by a NUL-terminated string (STRING, GPU_DEVICE). */
int xpu_client__add_str(struct xpu_client *c, uint16_t type, const void *body,
			size_t len, const char *str);
int xpu_client__meta(struct xpu_client *c, const char *key, const char *value);
/* An XPU_REC_LOST record for this process (source: enum xpu_lost_source). */
int xpu_client__lost(struct xpu_client *c, uint32_t source, uint64_t count);

/* Sends what an earlier flush left unwritten, then everything queued so
 * far, waiting at most timeout_ms each time the socket is full. Returns 0;
 * -ETIMEDOUT when the peer did not read in time (the rest waits for the
 * next flush, nothing is lost); or another -errno when the connection is
 * lost (the records are counted as dropped and the socket is closed). */
int xpu_client__flush(struct xpu_client *c, int timeout_ms);

/* Closes the socket without sending (e.g. in a forked child). */
void xpu_client__disconnect(struct xpu_client *c);
/* Closes the socket after a last flush: what is still unwritten or queued
 * is counted as dropped. Returns the number of records dropped so. */
uint64_t xpu_client__close(struct xpu_client *c);

/* Walks encoded records: returns the number of whole records in buf[0..len). */
uint64_t xpu_client__count_records(const uint8_t *buf, size_t len);

#endif

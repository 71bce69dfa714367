/* SPDX-License-Identifier: MIT */
/* The GPU records socket (channel.c; protocol: cupti/channel/wire.h). */
#ifndef XPU_RECORD_GPU_CHANNEL_H
#define XPU_RECORD_GPU_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xpu_writer;

/* the GPU records socket (protocol: cupti/channel/wire.h) */
struct channel;
int channel__open(struct channel **out, struct xpu_writer *w);
const char *channel__path(struct channel *ch);
int channel__fd(struct channel *ch);
/* Handles readiness of the listening socket or of a client fd. */
void channel__handle(struct channel *ch, int fd);
/* The complete messages at the start of buf (have bytes received from one
 * client): each one's records are validated and written as a whole
 * (xpu_writer__add_encoded), then counted; *used gets the bytes of the
 * messages written (a partial message at the end waits for more). Returns 0,
 * or -EPROTO (bad message header) or -EBADMSG (a record of the batch is
 * invalid): the client is then dropped and the message counted lost. */
int channel__receive(struct channel *ch, const uint8_t *buf, size_t have, size_t *used);
bool channel__owns(struct channel *ch, int fd);
void channel__set_epoll(struct channel *ch, int epfd);
/* Which peers may connect: fn(ctx, pid) of each connection's process
 * (SO_PEERCRED), true for a process of the recorded tree. The others are
 * closed before anything of them is read, and counted. Without fn every
 * peer is refused. */
void channel__set_peer_check(struct channel *ch, bool (*fn)(void *ctx, pid_t pid), void *ctx);
/* Connections refused so. */
uint64_t channel__refused(struct channel *ch);
/* The injected library, its real path and build-id (bid_size 0: none),
 * so that its loads are known: channel__mapped(). */
void channel__set_library(struct channel *ch, const char *path, const uint8_t *bid,
			  size_t bid_size);
/* An executable mapping of a tracked process (the side band's MMAP, its
 * build-id if it has one): a load of the library counts. */
void channel__mapped(struct channel *ch, pid_t pid, const char *path, const uint8_t *bid,
		     size_t bid_size);
/* The CUDA processes that loaded the library and did not connect (once
 * per load not matched by an accepted connection): their pids in *pids
 * (malloc'd, or NULL), how many the result. In the channel's thread, or
 * once it is stopped. */
int channel__unconnected(struct channel *ch, uint32_t **pids);
/* fn(ctx) runs at each accepted client, before the client may go on. */
void channel__set_on_accept(struct channel *ch, void (*fn)(void *ctx), void *ctx);
/* Bounded capture: the period each CUDA process's library hands its GPU
 * records over at, told it with the ready byte (cupti/channel/wire.h); 0: not. */
void channel__set_flush_ms(struct channel *ch, uint32_t ms);
/* What else each CUDA process's library is to record, told it with the
 * ready byte (cupti/channel/wire.h: XPU_CHANNEL_GPU_MEMORY); 0: nothing. */
void channel__set_config_flags(struct channel *ch, uint32_t flags);
/* Hand each client a rule table of these (launch_rules.c) with its ready
 * byte; NULL: none. */
struct launch_rules;
void channel__set_rules(struct channel *ch, struct launch_rules *rules);
/* The launch walk's PY_STACK records go through fn (python__stack(): their
 * code objects read, PY_CODE records written) before they are written. */
void channel__set_python(struct channel *ch, void (*fn)(void *arg, const void *body, size_t len),
			 void *arg);
void channel__drain_all(struct channel *ch);
uint64_t channel__lost(struct channel *ch);
/* How many CUDA processes connected during the recording. */
uint64_t channel__accepted(struct channel *ch);
uint64_t channel__records(struct channel *ch);
void channel__close(struct channel *ch);
/* NVTX range records received (GPU_NVTX): the feature bit at the end. */
uint64_t channel__nvtx_records(struct channel *ch);
/* Whether a received batch of encoded records (len bytes) holds only what a
 * CUDA process may send: GPU records but correlation ones (NVTX ranges
 * included; --gpu-memory's GPU_MEMORY, GPU_MEMPOOL, GPU_MEM_STATE and
 * GPU_OOM each well formed, the OOM a CUDA call's), interned strings, its own losses (XPU_LOST_CUPTI,
 * XPU_LOST_GPU_CHANNEL, XPU_LOST_NVTX) and META keys under cupti., gpu.
 * and cuda. Samples, sideband, FINISH, correlation records or the
 * recorder's META keys would forge the recorder's part of the trace.
 * Returns 0, -EPERM (a forbidden record) or -EINVAL (records overrun the
 * batch); the structure proper is xpu_writer__add_encoded()'s to check. */
int channel__check_batch(const void *data, size_t len);
/* The same for a client handed a launch-rule table, process walk_pid (0:
 * none): it may also send the GPU_CORR records of its launch walk, its own
 * runtime and driver calls, frames only (cupti/walk/walk_probe.c). */
int channel__check_batch_from(const void *data, size_t len, uint32_t walk_pid);

/* The end of an attach (xpu-record -p): every client's socket shut down for
 * writing, which tells the library to flush, detach and close
 * (cupti/attach.h). Call in the thread that handles the channel. */
void channel__shutdown_clients(struct channel *ch);
/* Clients connected now (any thread: a snapshot). */
int channel__nr_clients(struct channel *ch);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * xpu-record's internal interfaces. main.c runs the life cycle: options,
 * checks, output, BPF, sideband events, GPU channel, child launch, drain
 * thread, wait, finish. Each other file owns one of those pieces.
 */
#ifndef XPU_RECORD_H
#define XPU_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "common/hashmap.h"
#include "format/writer.h"

struct record_opts {
	const char *output;
	unsigned int freq;
	bool dwarf;
	unsigned int stack_bytes;
	double duration;		/* seconds; 0: until the command ends */
	bool no_gpu;
	const char *cupti_lib;		/* NULL: default location */
	bool buildid_cache;		/* copy mapped files into the build-id cache */
	bool no_python_frames;		/* do not set PYTHONPERFSUPPORT=1 */
	bool perfmap_cleanup;		/* remove the perf maps we caused, once copied */
	pid_t *pids;			/* -p */
	int nr_pids;
	char **argv;			/* command after -- */
};

/* options.c */
void record_opts__parse(struct record_opts *o, int argc, char **argv);

/* checks.c: one-line fatal errors for what can be checked before any setup */
void record__check_privileges(void);
void record__check_btf(void);
/* Returns the resolved path of argv[0] (malloc'ed), or dies. */
char *record__find_program(const char *name);
const char *record__default_cupti_lib(void);

/* bpf.c */
struct record_bpf;
int record_bpf__open(struct record_bpf **out, const struct record_opts *o, char *err, size_t errlen);
int record_bpf__attach_marker(struct record_bpf *b, const char *lib, char *err, size_t errlen);
void record_bpf__set_writer(struct record_bpf *b, struct xpu_writer *w);
struct u64map *record_bpf__kernel_ips(struct record_bpf *b);
void record_bpf__detach(struct record_bpf *b);
int record_bpf__track(struct record_bpf *b, pid_t pid);
bool record_bpf__is_tracked(struct record_bpf *b, pid_t pid);
int record_bpf__ring_fd(struct record_bpf *b);
/* Consumes both ring buffers, appending their records to the writer. */
int record_bpf__consume(struct record_bpf *b);
void record_bpf__lost(struct record_bpf *b, uint64_t *samples, uint64_t *corr, uint64_t *stack_read);
void record_bpf__close(struct record_bpf *b);

/* sideband.c: perf's mmap/comm/task records, filtered to tracked processes */
struct sideband;
int sideband__open(struct sideband **out, struct xpu_writer *w, struct record_bpf *b);
void sideband__track(struct sideband *sb, pid_t pid);
int sideband__nr_fds(struct sideband *sb);
int sideband__fd(struct sideband *sb, int i);
int sideband__drain(struct sideband *sb);
uint64_t sideband__lost(struct sideband *sb);
/* Whether pid was ever tracked during the recording. */
bool sideband__seen(struct sideband *sb, pid_t pid);
void sideband__close(struct sideband *sb);

/* synth.c: records for processes that already run (-p) */
int synth__process(struct xpu_writer *w, pid_t pid);

/* buildid.c */
int buildid__read_file(const char *path, uint8_t *id, uint8_t *size);

/* buildid_cache.c: copies the trace's mapped files into the build-id cache */
int buildid_cache__fill(const char *trace);

/* perfmap.c: /tmp/perf-PID.map of seen processes as XPU_REC_PERF_MAP; since:
 * files older than this (wall clock) are skipped unless -p named the pid */
int perfmap__copy(struct xpu_writer *w, struct sideband *sb, const struct record_opts *o,
		  time_t since);

/* channel.c: the GPU records socket (cupti/channel.h) */
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
void channel__drain_all(struct channel *ch);
uint64_t channel__lost(struct channel *ch);
uint64_t channel__records(struct channel *ch);
void channel__close(struct channel *ch);

/* drain.c: the reader thread */
struct drain;
int drain__start(struct drain **out, struct xpu_writer *w, struct record_bpf *b,
		 struct sideband *sb, struct channel *ch);
void drain__stop(struct drain *d);	/* final drain, then join */

/* meta.c */
int meta__write_start(struct xpu_writer *w, const struct record_opts *o, int argc, char **argv,
		      bool gpu, const char *cupti_lib);
/* Kernel IPs seen in samples, for XPU_REC_KSYM. */
void ksyms__note(struct u64map *seen, const uint64_t *ips, unsigned int n);
int ksyms__write(struct xpu_writer *w, struct u64map *seen);

/* launch.c */
struct launch {
	pid_t pid;
	int go_fd;			/* write end: closing it releases the child */
};
int launch__fork(struct launch *l, const char *path, char **argv, const char *cupti_lib,
		 const char *socket_path);
int launch__go(struct launch *l);
void launch__abort(struct launch *l);

#endif

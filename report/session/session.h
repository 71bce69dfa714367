/* SPDX-License-Identifier: MIT */
/*
 * A report session over one trace, read in two passes (format/reader.h):
 *
 *  pass 1  everything but samples: META, COMM/FORK/EXIT, MMAP timelines per
 *          pid, KSYM, PERF_MAP, STRING, LOST, FINISH; record counts per type.
 *          Then the machine's timelines are sorted (machine__finish()).
 *  pass 2  samples are filtered, unwound, symbolized and added to the profile;
 *          a PY_STACK record is kept for the record that follows it.
 *
 * Later work plugs in as a session_tool (the GPU join: collect GPU records in
 * pass 1, prepare in pass1_done(), resolve correlation stacks in pass 2, join
 * in finish()). Tools are found by name (session__tool) and freed by
 * session__close. Outputs read only s->profile, the joined events the GPU
 * join hands to its subscribers, and the statistics kept here for --header.
 */
#ifndef XPU_REPORT_SESSION_H
#define XPU_REPORT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "format/record_types.h"
#include "report/unwind/callchain.h"
#include "report/profile/filter.h"
#include "report/machine/machine.h"
#include "report/profile/profile.h"
#include "report/machine/ranks.h"

struct lost_count {
	uint32_t source;		/* enum xpu_lost_source */
	uint32_t pid;
	uint64_t count;
};

struct session;

struct session_tool {
	const char *name;		/* unique in a session: session__tool() */
	/* Each record of pass 1 (pass == 1) and pass 2. Non-zero stops the pass. */
	int (*record)(struct session *s, const struct xpu_record *rec, int pass, void *priv);
	/* After pass 1, once the machine's timelines are sorted. */
	int (*pass1_done)(struct session *s, void *priv);
	/* After pass 2. */
	int (*finish)(struct session *s, void *priv);
	/* At session__close(): frees priv (and the tool, if it owns it). */
	void (*exit)(void *priv);
	void *priv;
};

#define SESSION_MAX_TOOLS 8

/*
 * The CPU side of each thread as pass 2 sees it, handed to subscribers in
 * trace order (the GPU-idle analysis reads it): on-CPU samples and blocks
 * off CPU, each with its interned stack, after the filters.
 */
enum cpu_event_kind { CPU_EVENT_SAMPLE, CPU_EVENT_OFFCPU };
struct cpu_event {
	enum cpu_event_kind kind;
	uint32_t pid, tid;
	uint32_t comm;			/* profile string id */
	uint64_t start, end;		/* sample: its time twice; off-CPU: switch-out, switch-in */
	uint64_t off_ns;		/* off-CPU: time off CPU in [start, end]; sample: 0 */
	uint32_t stack;			/* profile stack id; off-CPU: ends in its [off-cpu] frame */
	double weight;			/* in samples: 1 per sample, off_ns at the frequency */
};
typedef void (*cpu_event_fn)(struct session *s, const struct cpu_event *ev, void *priv);

/*
 * A stack filter rewrites the CPU stack of thread (pid, tid) at time before
 * it is interned: frames[0..n), root first, in place, with room for cap;
 * returns the new length. Pass 2 runs the filters on every sample and
 * off-CPU stack (time: the sample, the switch-out), the GPU join on every
 * launch stack (time: the launch, the API frame at the leaf end). NVTX
 * ranges insert their frames this way (report/gpu/gpu_nvtx.c).
 */
typedef size_t (*stack_filter_fn)(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
				  uint32_t *frames, size_t n, size_t cap, void *priv);
#define SESSION_STACK_ROOM 64		/* frames a filter may add: callers leave this room */

/*
 * One trace of the session. A session reads several when xpu-report merges
 * recordings (-i a.data -i b.data): one after the other in each pass, their
 * records rewritten (report/session/merge.h) so that pids of different inputs
 * never collide and their clocks line up.
 */
struct session_input {
	const char *path;
	struct xpu_reader *reader;
	struct xpu_file_header header;
	uint32_t pid_base;		/* added to its pids and tids */
	int64_t shift;			/* ns added to its times */
	char *hostname, *arch, *tool_version;	/* its META, after pass 1 (or NULL) */
	char *label;			/* "host" or "host:file" for the [label] frames */
	char *recording_id;		/* META recording_id of its first chunk, or NULL */
	size_t group;			/* the first input of the same recording */
	size_t group_nr;		/* ... its recording's number among the inputs' */
	uint64_t first_time, last_time;	/* its records' span on the session's clock (0, 0: none) */
	/* a rotated or flight-recorder file's META window.* (0: none) */
	uint64_t window_start, window_end, recording_start;
	char *gpu_lag;			/* window.gpu_lag, or NULL */
	/* chunks that another file of its recording held before (xpu-report
	 * -i DIR of overlapping flight windows): skipped in every pass */
	struct u64map dup;		/* chunk index -> 1 skipped, 2 read */
	uint64_t cur_chunk;		/* the chunk of the last record + 1 */
	bool cur_dup;
};

/* Module of the "[host rank R]" root frames of merged sessions. */
#define SESSION_INPUT_MODULE "[input]"

/* Recordings a session merges at most: their pids are told apart by the
 * bits above Linux's 22 (report/session/merge.h). The files of one
 * recording (xpu-record --switch-output, --flight-recorder: the same META
 * recording_id) are one recording, however many there are. */
#define SESSION_MAX_RECORDINGS	(1u << (32 - 22))	/* MERGE_PID_SHIFT */
/* session__add_input: one more recording than that (negated). */
#define SESSION_ERECORDINGS	100

/* An input of a directory that was left out: not a trace, or cut inside
 * its file header (an empty file); named on stderr and in --header. */
struct session_skipped {
	char *path;
	int err;			/* -XPU_READER_E* */
};

struct session {
	const char *path;		/* the first input's */
	struct xpu_reader *reader;	/* the first input's */
	struct xpu_file_header header;	/* the first input's */
	struct session_input *inputs;
	size_t nr_inputs, cur_input, inputs_cap;
	size_t nr_groups;		/* distinct recordings among the inputs: the files
					 * of one rotated or flight recording (META
					 * recording_id) share their pids and clock */
	size_t *group_first;		/* per recording: its first input */
	bool aligned;			/* pid_base and shift of every input set */
	struct session_skipped *skipped;	/* left out of a directory */
	size_t nr_skipped;
	struct u64map chunk_seen;	/* a chunk's key -> 1: read once in its recording */
	uint64_t dup_chunks, dup_records;	/* chunks (and their records) read before: skipped */
	uint8_t *scratch;		/* rewritten records of merged inputs */
	size_t scratch_cap;
	struct ranks ranks;		/* PROC_ENV records (pass 1) */
	struct u64map label_frames;	/* merged: pid -> its [label] frame + 1 */
	bool input_frames;		/* merged: [label] as every stack's root (--input-frame) */
	struct profile profile;
	struct machine machine;
	struct callchain callchain;
	struct pyframes py;		/* Python frames (PY_CODE, PY_STACK) */
	struct filter filter;

	char **meta_keys, **meta_vals;	/* later keys override earlier ones */
	size_t nr_meta, meta_cap;
	uint64_t nr_records[XPU_REC_MAX];	/* per type, pass 1 */
	struct lost_count *lost;
	size_t nr_lost, lost_cap;
	struct xpu_finish finish;
	bool has_finish;
	uint64_t first_time, last_time;	/* over records with a timestamp */
	/* Known after pass 1: the recording frequency (meta sample_freq, or
	 * XPU_DEFAULT_SAMPLE_FREQ when the trace has none: freq_assumed). */
	double sample_freq;
	bool freq_assumed;

	uint64_t nr_samples;		/* sample records seen in pass 2 */
	uint64_t nr_samples_filtered;	/* dropped by --pid/--tid/--comm/--time */
	uint64_t nr_samples_bad;	/* malformed stack part */

	struct {			/* OFFCPU records of pass 1, unfiltered (--header) */
		uint64_t ns, short_ns, preempted_ns, syscall_ns;
		uint64_t records, leaf_only;
	} offcpu;
	uint64_t nr_offcpu;		/* OFFCPU records seen in pass 2 */
	struct u64map last_stack;	/* tid -> stack of its latest sample (traces with OFFCPU) */
	uint64_t nr_offcpu_filtered;
	uint64_t nr_offcpu_bad;

	struct session_tool *tools[SESSION_MAX_TOOLS];
	size_t nr_tools;
	struct { cpu_event_fn fn; void *priv; } cpu_subs[SESSION_MAX_TOOLS];
	size_t nr_cpu_subs;
	struct { stack_filter_fn fn; void *priv; } stack_filters[SESSION_MAX_TOOLS];
	size_t nr_stack_filters;
};

/* Opens the trace. Returns 0 or -XPU_READER_E* (errno holds the cause of EIO). */
int session__open(struct session *s, const char *path);
/* Adds another trace to merge with the first (before pass 1). Same returns,
 * or -SESSION_ERECORDINGS past SESSION_MAX_RECORDINGS recordings. */
int session__add_input(struct session *s, const char *path);
/* session__open, or die with the one-line error and exit code of each
 * failure (shared by xpu-report and xpu-archive); verb names what the
 * command would have done ("report", "archive"). */
void session__open_or_die(struct session *s, const char *path, const char *verb);
/* The same over n traces merged (n >= 1). An input whose optional[i] is
 * set (optional may be NULL: none), a file found in a directory, that is
 * not a trace or is cut inside its file header is left out with one
 * warning and kept in s->skipped (it counts as damage: session__damaged);
 * unless no input is left. */
void session__open_many_or_die(struct session *s, const char *const *paths, size_t n,
			       const bool *optional, const char *verb);
/* Why a skipped input was left out (its err), a few words. */
const char *session__skipped_why(int err);
/* After pass 1 of a merged session: NULL when the inputs can be merged,
 * else why not, one line (different architectures or format major
 * versions). Warns once about different tool versions. */
const char *session__check_inputs(struct session *s, char *buf, size_t size);
void session__close(struct session *s);

/* The records of every input in turn, rewritten for merging (what the
 * passes read; outputs that read records themselves use these too). */
void session__rewind(struct session *s);
int session__next(struct session *s, struct xpu_record *rec);

/* Merged sessions: stack with pid's "[host rank R]" frame at its root, for
 * stacks the stack filters do not see (GPU work of no known thread); else
 * stack itself. */
uint32_t session__label_stack(struct session *s, uint32_t pid, uint32_t stack);

/* The rank (RANK, ...: report/machine/ranks.h) of pid, after pass 1. */
int session__rank(const struct session *s, uint32_t pid, enum rank_kind kind, uint32_t *out);
/* pid (or tid) as its input's recorder saw it (merged sessions number the
 * processes of recording N from N << 22: report/session/merge.h), for
 * display. */
static inline uint32_t session__pid(const struct session *s, uint32_t pid)
{
	return s->nr_inputs > 1 ? pid & ((1u << 22) - 1) : pid;
}

/* The input pid belongs to: the first of its recording's. */
static inline const struct session_input *session__input_of(const struct session *s,
							    uint32_t pid)
{
	size_t g = s->nr_groups > 1 ? pid >> 22 : 0;	/* MERGE_PID_SHIFT */

	return &s->inputs[g < s->nr_groups ? s->group_first[g] : 0];
}

void session__add_tool(struct session *s, struct session_tool *tool);
/* The priv of the tool registered under name, or NULL. */
void *session__tool(const struct session *s, const char *name);

/* Adds a subscriber to the CPU events of pass 2 (before session__pass2). */
void session__subscribe_cpu(struct session *s, cpu_event_fn fn, void *priv);
void session__emit_cpu(struct session *s, const struct cpu_event *ev);

/* Adds a stack filter (before session__pass2); they run in the order added. */
void session__add_stack_filter(struct session *s, stack_filter_fn fn, void *priv);
/* Runs the filters over frames[0..n) (room for cap); returns the new length. */
size_t session__filter_stack(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
			     uint32_t *frames, size_t n, size_t cap);
/* The same on an interned stack: the id of the rewritten one (stack itself
 * when no filter changed it). */
uint32_t session__filter_stack_id(struct session *s, uint32_t pid, uint32_t tid, uint64_t time,
				  uint32_t stack);

int session__pass1(struct session *s);
int session__pass2(struct session *s);

const char *session__meta(const struct session *s, const char *key);

/* A duration in samples: ns at the recording frequency (after pass 1): GPU
 * time, time off CPU. */
static inline double session__ns_weight(const struct session *s, uint64_t ns)
{
	return (double)ns * s->sample_freq / 1e9;
}

/* Any input damaged, or one left out (s->skipped). */
bool session__damaged(const struct session *s);
/* The reader statistics of all inputs added up. */
void session__reader_stats(const struct session *s, struct xpu_reader_stats *st);
uint64_t session__lost_total(const struct session *s);
/* The count of one LOST source (enum xpu_lost_source), all pids. */
uint64_t session__lost_of(const struct session *s, uint32_t source);

/* The stderr warnings every report output must give: damage, lost events,
 * DSOs with build-id mismatches. */
void session__warn(const struct session *s);

#endif

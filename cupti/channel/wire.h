/* SPDX-License-Identifier: MIT */
/*
 * The wire protocol between libxpu-cupti.so (inside the profiled process)
 * and xpu-record: how GPU records travel and how the correlation uprobe
 * finds its marker. Both sides include this header; nothing else is shared.
 *
 * Transport: xpu-record listens on a Unix stream socket whose path it puts in
 * XPU_CUPTI_SOCKET_ENV for the launched command (inherited by children). Each
 * CUDA process connects once and sends messages:
 *
 *	struct xpu_channel_msg  (8 bytes)
 *	len bytes of encoded trace records (struct xpu_record_header + body,
 *	each padded to 8 bytes), exactly as they will appear in xpu.data.
 *
 * The first message carries the process's META records (cupti.version, ...)
 * and, if CUPTI refused to subscribe because another tool holds it, a META
 * record "gpu.subscriber_conflict". The recorder validates every record
 * before writing it, so a buggy or hostile peer cannot corrupt the trace,
 * and accepts only GPU records (GPU_BLOCK excepted: the recorder's probes';
 * --gpu-memory's each well formed; GPU_CORR excepted: those are the uprobe's,
 * but for the launch walk's of a process handed a rule table: its own
 * runtime and driver calls, frames only, cupti/walk/walk_probe.c),
 * XPU_REC_STRING, XPU_REC_LOST of sources XPU_LOST_CUPTI, XPU_LOST_GPU_CHANNEL
 * and XPU_LOST_NVTX, and META keys starting with
 * "cupti.", "gpu." or "cuda." (record/gpu/channel.c: channel__check_batch_from).
 * If the socket is gone (recorder killed), the library drops records, counts
 * them and never blocks or crashes the application.
 */
#ifndef XPU_CUPTI_WIRE_H
#define XPU_CUPTI_WIRE_H

#include <stdint.h>

#define XPU_CUPTI_SOCKET_ENV	"XPU_CUPTI_SOCKET"
/* Comma-separated list of API names to mark, overriding the default set. */
#define XPU_CUPTI_APIS_ENV	"XPU_CUPTI_APIS"
/* "all": API activity records for every runtime/driver call, not only the
 * marked ones (more data, more overhead; for the timestamp-join fallback). */
/* API activity records: unset = for the marked calls, "all", or "none". */
#define XPU_CUPTI_API_ACTIVITY_ENV "XPU_CUPTI_API_ACTIVITY"
/* "off": the callbacks run but never call the marker, so no launch has a
 * CPU stack (bench/gpu_overhead.sh: the callbacks' own cost). */
#define XPU_CUPTI_MARKER_ENV	"XPU_CUPTI_MARKER"
/* "1" (xpu-record -v): the library's own counts on stderr at exit */
#define XPU_CUPTI_VERBOSE_ENV	"XPU_CUPTI_VERBOSE"
/* "off": do not enable CUPTI's NVTX callbacks (xpu-record --no-nvtx). */
#define XPU_CUPTI_NVTX_ENV	"XPU_CUPTI_NVTX"
/* GPU PC sampling (xpu-record --gpu-pc-sampling, cupti/pcsamp/pcsamp.h): unset or
 * "off": none; "on": CUPTI's default period; N (5..31): a sample every 2^N
 * cycles per SM. */
#define XPU_CUPTI_PC_SAMPLING_ENV	"XPU_CUPTI_PC_SAMPLING"
#define XPU_PCSAMP_PERIOD_MIN		5
#define XPU_PCSAMP_PERIOD_MAX		31
/* What part of the run is sampled (xpu-record --gpu-pc-duty), so that the
 * launches outside sampling give each kernel's unperturbed time:
 *   "" or unset: each context is sampled from XPU_PCSAMP_AFTER_DEFAULT_MS
 *       after its first CUDA call on (the enable deferred; continuous then);
 *   "after:MS": the same after MS (1 to XPU_PCSAMP_DUTY_MAX_MS);
 *   "ON_MS:OFF_MS": off for OFF_MS, on for ON_MS, again and again
 *       (cuptiPCSamplingStart/Stop in the application's API exits: a Stop
 *       waits for CUPTI to take in the range's samples);
 *   "off": continuous from the context's creation, nothing to compare. */
#define XPU_CUPTI_PC_DUTY_ENV		"XPU_CUPTI_PC_DUTY"
#define XPU_PCSAMP_AFTER_DEFAULT_MS	500
#define XPU_PCSAMP_DUTY_MAX_MS		3600000
struct xpu_pcsamp_duty {
	uint64_t on_ns, off_ns;		/* cycles; both 0: none */
	uint64_t after_ns;		/* no cycles: sampling from this long on; 0: from the start */
};

/* A number of ms, 1 to XPU_PCSAMP_DUTY_MAX_MS, up to stop ("" for the end). */
static inline const char *xpu_pcsamp__ms(const char *p, char stop, unsigned long long *ms)
{
	*ms = 0;
	if (*p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((*ms = *ms * 10 + (unsigned)(*p - '0')) > XPU_PCSAMP_DUTY_MAX_MS)
			return 0;
	return *ms && *p == stop ? p : 0;
}

/* XPU_CUPTI_PC_DUTY's value into d. Returns 0, or -1 (d the default). */
static inline int xpu_pcsamp__parse_duty(const char *val, struct xpu_pcsamp_duty *d)
{
	unsigned long long a, b;
	const char *p;

	d->on_ns = d->off_ns = 0;
	d->after_ns = XPU_PCSAMP_AFTER_DEFAULT_MS * 1000000ull;
	if (!val || !*val)
		return 0;
	if (val[0] == 'o' && val[1] == 'f' && val[2] == 'f' && !val[3]) {
		d->after_ns = 0;
		return 0;
	}
	if (val[0] == 'a' && val[1] == 'f' && val[2] == 't' && val[3] == 'e' && val[4] == 'r' &&
	    val[5] == ':') {
		if (!xpu_pcsamp__ms(val + 6, 0, &a))
			return -1;
		d->after_ns = a * 1000000ull;
		return 0;
	}
	if (!(p = xpu_pcsamp__ms(val, ':', &a)) || !xpu_pcsamp__ms(p + 1, 0, &b))
		return -1;
	d->on_ns = a * 1000000ull;
	d->off_ns = b * 1000000ull;
	d->after_ns = 0;
	return 0;
}

/* Bytes of the largest cubin the library keeps in the trace (default and
 * most: 3 MiB, under XPU_CHANNEL_MAX_MSG); larger ones are counted. */
#define XPU_CUPTI_CUBIN_MAX_ENV		"XPU_CUPTI_CUBIN_MAX"
/* NVTX's injection variable: the library whose InitializeInjectionNvtx2 the
 * process's NVTX instances call (xpu-record sets it to libxpu-cupti.so). */
#define XPU_NVTX_INJECTION_ENV	"NVTX_INJECTION64_PATH"
/*
 * xpu-record -p on a running process (record/gpu/inject.c): the injector loads
 * the library with dlopen() in the process and calls this entry with the
 * variables above as "KEY=VALUE" lines (cupti/attach.h). Returns 0 when the
 * attach thread started, -EISCONN when an attach records (another
 * recorder's: the injector refuses at once), -EALREADY when the last
 * attach is ending (the injector tries again), -EBUSY when a launched
 * process records already, -EAGAIN when no thread could be made. The recorder ends an attach by shutting down its side of
 * the socket; the library then flushes, detaches from CUPTI (disable,
 * unsubscribe, cuptiFinalize) and closes it. Any number of attaches may
 * follow, one at a time.
 */
#define XPU_CUPTI_ATTACH_SYMBOL	"xpu_cupti_attach"
int xpu_cupti_attach(const char *config);
/* META key the library sets in an attach: "attached" and how it went */
#define XPU_META_CUPTI_ATTACH	"cupti.attach"
#define XPU_CHANNEL_MAGIC	0x314e4843u	/* "CHN1" */
#define XPU_CHANNEL_MAX_MSG	(4u << 20)	/* larger messages are a protocol error */
/* The one byte xpu-record sends a client it accepted, once its GPU
 * correlation ring is in place: the client waits for it (at most
 * XPU_CHANNEL_READY_MS) before its first marker call, so no early launch
 * finds only the small ring of before (record/kernel/bpf.c). With the launch
 * walk (xpu-record --launch-stacks=walk, the default) the byte carries (SCM_RIGHTS) a memfd holding the
 * process's launch-rule table (common/unwind_table.h, record/unwind/launch_rules.c),
 * which the library maps read-only; a client that read()s the byte leaves
 * the fd to the kernel, which closes it. */
#define XPU_CHANNEL_READY	'R'
#define XPU_CHANNEL_READY_MS	2000
/*
 * With bounded capture (xpu-record --switch-output, --flight-recorder,
 * --trigger), the ready byte is followed in the same message by this
 * config: flush_ms, the period at which the library hands its GPU records
 * over (CUPTI's completed buffers, the queue), so that they reach a window
 * of the recorder within a bounded delay; the library then also sizes
 * CUPTI's activity buffers by the rate of its records (cupti/activity/bufsize.h).
 * flags says what else the recording asks of the library: with
 * XPU_CHANNEL_GPU_MEMORY (xpu-record --gpu-memory) it records the CUDA-level
 * allocations (cupti/memory/). The config comes whenever flush_ms or flags
 * is not 0, so that a -p attach, whose process has no environment of ours,
 * learns them the same way as a launched one.
 * A plain recording sends the byte alone, and the library keeps its 200 ms
 * flush and 4 MB buffers. A library that reads only the byte leaves the
 * rest, which nothing reads (cupti/attach.h: ignored). The config of
 * before flags (8 bytes: magic, flush_ms) is still read as flush_ms alone.
 */
#define XPU_CHANNEL_CONFIG_MAGIC	0x31474643u	/* "CFG1" */
#define XPU_CHANNEL_GPU_MEMORY		(1u << 0)	/* xpu_channel_config.flags */
struct xpu_channel_config {
	uint32_t magic;			/* XPU_CHANNEL_CONFIG_MAGIC */
	uint32_t flush_ms;		/* 0: as without the config */
	uint32_t flags;			/* XPU_CHANNEL_*; unknown bits: ignored */
	uint32_t reserved;		/* zero */
};
/* the config's size before flags: magic and flush_ms */
#define XPU_CHANNEL_CONFIG_V1_SIZE	8u

/*
 * The launch-rule memfd (--launch-stacks=walk) starts with this header; the
 * rule table (common/unwind_table.h) is at table_off. py: the layout of the
 * process's CPython interpreter as xpu-record's BPF walk has it
 * (bpf/xpu_python.bpf.h; record/python/python.c chose it), so that the launch walk
 * reads the same Python frames in the process (cupti/walk/walk_python.c).
 * py.valid: 0 no layout (not a Python process, or not known yet), 1 a
 * layout the BPF walk has not yet proved on this process, 2 proved (its
 * walks found the thread states and code objects the layout says:
 * record/unwind/launch_rules.c). xpu-record raises it (release store) as it learns;
 * the library reads it at each walk and walks Python frames itself only
 * at 2, leaving the launch to the marker before then. flags
 * XPU_WALK_NO_PYTHON: the recording reads no Python frames from this
 * process's interpreter (--python-frames=off or perf-map, or a CPython the
 * BPF walk cannot read; raised at most once, release): walk native frames
 * only, as the marker's stacks have them.
 */
#define XPU_WALK_MAGIC		0x314b4c57u	/* "WLK1" */
#define XPU_WALK_TABLE_OFF	4096u
/* the layout's kinds, as bpf/xpu_events.h's XPU_PY_INSTR_* and XPU_PY_ENTRY_*
 * (record/unwind/launch_rules.c checks they agree) */
#define XPU_WALK_PY_INSTR_LASTI	1
#define XPU_WALK_PY_INSTR_PTR	2
#define XPU_WALK_PY_ENTRY_ALL	1
#define XPU_WALK_PY_ENTRY_FLAG	2
#define XPU_WALK_PY_ENTRY_SHIM	3
#define XPU_WALK_PY_NO_CFRAME	0xffff
#define XPU_WALK_PY_FRAMES	128		/* XPU_BPF_PY_FRAMES */
#define XPU_WALK_PY_UNPROVEN	1
#define XPU_WALK_PY_PROVEN	2
#define XPU_WALK_NO_PYTHON	1u		/* xpu_walk_hdr.flags */

struct xpu_walk_py {
	uint64_t code_type;		/* &PyCode_Type */
	uint16_t version;		/* 0x030b */
	uint16_t ts_thread_id, ts_cframe, cur_frame;
	uint16_t fr_code, fr_previous, fr_instr, fr_entry;
	uint16_t co_code, co_qualname, co_filename, co_firstlineno;
	uint8_t instr_kind, entry_kind, owner_cstack, valid;
	uint32_t pad;
};

struct xpu_walk_hdr {
	uint32_t magic;			/* XPU_WALK_MAGIC */
	uint32_t table_off;		/* XPU_WALK_TABLE_OFF */
	struct xpu_walk_py py;
	uint32_t flags;			/* XPU_WALK_NO_PYTHON */
	uint32_t pad;
};

struct xpu_channel_msg {
	uint32_t magic;			/* XPU_CHANNEL_MAGIC */
	uint32_t len;			/* bytes of records that follow */
};

/*
 * The marker: called by the CUPTI callback at API enter with the call's
 * correlation ID. xpu-record attaches a uprobe to this exported symbol; the
 * BPF program reads the arguments and the user stack and writes an
 * XPU_REC_GPU_CORR record. It must stay a real, non-inlined call. NVTX
 * pushes and starts call it too: (range id, NVTX cbid, XPU_API_NVTX).
 */
#define XPU_CUPTI_MARKER_SYMBOL	"xpu_cupti_marker"
/* In the marker's domain argument: the launch walk missed for want of a
 * rule this stack will teach; the BPF program wakes xpu-record for it at
 * once and writes the domain without the bit. */
#define XPU_MARKER_URGENT	0x80000000u
void xpu_cupti_marker(uint64_t correlation_id, uint32_t cbid, uint32_t domain);

#endif

// SPDX-License-Identifier: MIT
/*
 * BPF life cycle: open the skeleton, size maps and set .rodata from the
 * options, load, attach the fork/exit tracepoints, one cpu-clock sampling
 * event per CPU and (for GPU) the marker uprobe. The two ring buffers carry
 * finished trace records, appended here as they are.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "bpf/xpu_events.h"
#include "bpf/xpu_record.skel.h"
#include "common/file.h"
#include "common/log.h"
#include "cupti/channel/wire.h"
#include "common/xalloc.h"
#include "format/record_types.h"
#include "format/stack_prune.h"
#include "record/kernel/bpf.h"
#include "record/options.h"
#include "record/files/elf_funcs.h"
#include "record/python/python.h"
#include "record/kernel/ksyms.h"
#include "record/kernel/torch_alloc.h"
#include "record/clock.h"

_Static_assert(XPU_BPF_MARKER_URGENT == XPU_MARKER_URGENT, "the marker's urgent bit");

#define BPF_AUTOGRAD_FILES 8	/* libtorch_cpu.so files probed (venvs, containers) */
_Static_assert(BPF_AUTOGRAD_FILES <= ELF_FUNCS_KNOWN, "elf_funcs__open() takes them all");
/* libtorch_cpu.so's functions the autograd uprobes go on (format 1.7) */
#define BPF_TORCH_SET_GRADIENT_EDGE "_ZN5torch8autograd4impl17set_gradient_edgeERKN2at6TensorENS0_4EdgeE"
#define BPF_TORCH_EVALUATE_FUNCTION "_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE"

struct record_bpf {
	struct xpu_record_bpf *skel;
	struct ring_buffer *rb;
	struct xpu_writer *w;
	struct u64map kips;		/* kernel IPs seen, for ksyms */
	struct bpf_link **links;
	int nr_links;
	struct bpf_link *fork_link, *exit_link;	/* keep the tracked set current */
	struct bpf_link *marker_link;	/* the uprobe: detached by marker_thread */
	struct bpf_link *marker_copies[16];	/* on memfd copies of the library (-p) */
	int nr_marker_copies;
	pthread_t marker_thread;
	bool marker_detaching;
	int *pfds;
	int nr_pfds;
	int nr_sampled;			/* CPUs the sampler was opened on */
	uint64_t write_errors;
	struct python *py;
	/* zeroing what no unwinder reads (format/stack_prune.h) */
	struct xpu_prune *prune;
	bool prune_reads;		/* it runs the CFI step: every mapping must be known */
	void (*sync)(void *ctx);	/* drains the side-band: mappings up to now */
	void *sync_ctx;
	uint64_t synced_at;		/* CLOCK_MONOTONIC ns when sync last started */
	uint64_t exec_wakes;		/* XPU_BPF_EV_EXEC records (-v) */
	uint8_t *scratch;		/* a stack record's body, to prune (the ring is read-only) */
	size_t scratch_cap;
	size_t gpu_ring_size;		/* corr_rings[0]'s size; 0: --no-gpu */
	int gpu_ring_fd;		/* corr_rings[0] once made (record_bpf__gpu_ring), else -1 */
	bool autograd;			/* probe libtorch_cpu.so's autograd nodes */
	/* libtorch_cpu.so files seen (by dev and inode): the functions' offsets */
	struct { uint64_t key, off[2]; bool ok; } ag_files[BPF_AUTOGRAD_FILES];
	int nr_ag_files;
	/* the uprobes, two a process (only there: other processes using the
	 * same file take no trap) */
	struct bpf_link **ag_links;
	int nr_ag_links;
	size_t ag_links_cap;
	struct u64map ag_procs;		/* pid << 32 ^ file index -> 1: done */
	struct torch_alloc *ta;		/* --gpu-memory: the allocator probes, else NULL */
};

/* Why the last load failed, in one line: the verifier's last complaint
 * (the line before its statistics), else libbpf's last warning. */
static char bpf_last_msg[256];

static void bpf__note_verifier(const char *log)
{
	const char *end = strstr(log, "\nverification time");
	const char *start;

	if (!end)
		end = strstr(log, "\nprocessed ");
	if (!end)
		return;
	for (start = end; start > log && start[-1] != '\n'; start--)
		;
	snprintf(bpf_last_msg, sizeof(bpf_last_msg), "verifier: %.*s", (int)(end - start), start);
}

static int bpf__print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *line = NULL;
	size_t n;

	if (vasprintf(&line, fmt, ap) < 0)
		return 0;
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	if (strstr(line, "-- BEGIN PROG LOAD LOG --"))
		bpf__note_verifier(line);
	else if (level <= LIBBPF_WARN && n && strncmp(bpf_last_msg, "verifier", 8) != 0)
		snprintf(bpf_last_msg, sizeof(bpf_last_msg), "%s", line);
	if (xpu_verbose >= 2 || (xpu_verbose && level <= LIBBPF_WARN))
		fprintf(stderr, "libbpf: %s\n", line);
	free(line);
	return 0;
}

/* A PY_STACK record after the entry's first record (python__append() in
 * bpf/xpu_python.bpf.h) is written before it: readers take it for the
 * record that follows. */
static void bpf__python_first(struct record_bpf *b, const uint8_t *data, size_t len)
{
	struct xpu_record_header ph;
	struct iovec iov;

	if (len < sizeof(ph))
		return;
	memcpy(&ph, data, sizeof(ph));
	if (ph.type != XPU_REC_PY_STACK || ph.size > len || ph.size < sizeof(ph) +
	    sizeof(struct xpu_py_stack))
		return;
	python__stack(b->py, data + sizeof(ph), ph.size - sizeof(ph));
	iov.iov_base = (void *)(data + sizeof(ph));
	iov.iov_len = ph.size - sizeof(ph);
	if (xpu_writer__addv(b->w, XPU_REC_PY_STACK, 0, &iov, 1))
		b->write_errors++;
}

/* Drains the side-band now: the mappings (and execs) up to this moment. */
static void bpf__sync(struct record_bpf *b)
{
	if (!b->sync)
		return;
	b->synced_at = record__now_ns();
	b->sync(b->sync_ctx);
}

/*
 * A copy of the stack record's body with the words no unwinder reads
 * zeroed, or NULL (keep the body as it is). A word is kept when it is a
 * code address of the process, which the side-band says: when a word would
 * go and the sample is newer than the last side-band drain, the MMAP of
 * code the sample ran may still wait in the side-band ring (it was written
 * before the sample, so a drain started now has it): drain it first.
 */
static void *bpf__prune(struct record_bpf *b, uint16_t type, const void *body, size_t *lenp)
{
	size_t len = *lenp;
	uint64_t t;

	if (!b->prune || !xpu_rectype__is(type, XPU_RECF_STACK) || len < sizeof(t))
		return NULL;
	if (len > b->scratch_cap) {
		free(b->scratch);
		b->scratch_cap = len < 65536 ? 65536 : len;
		b->scratch = xmalloc(b->scratch_cap);
	}
	memcpy(b->scratch, body, len);
	memcpy(&t, body, sizeof(t));	/* SAMPLE, GPU_CORR: time; OFFCPU: switch-out */
	/* (where the CFI unwinding is run, every mapping valid at t must be
	 * known too: a newer one at the same address would change the rules) */
	if (t >= b->synced_at && (b->prune_reads ||
				  xpu_prune__stack(b->prune, type, b->scratch, &len, false)))
		bpf__sync(b);
	xpu_prune__stack(b->prune, type, b->scratch, lenp, true);	/* may shorten it */
	return b->scratch;
}

static int bpf__on_record(void *ctx, void *data, size_t len)
{
	struct record_bpf *b = ctx;
	struct xpu_record_header rh;
	struct iovec iov;

	if (len < sizeof(rh))
		return 0;
	memcpy(&rh, data, sizeof(rh));
	if (rh.size > len || rh.size < sizeof(rh))
		return 0;
	if (rh.type == XPU_BPF_EV_ALLOC_SITE && rh.size >= sizeof(rh) + sizeof(struct xpu_bpf_alloc_site)) {
		struct xpu_bpf_alloc_site as;

		memcpy(&as, (char *)data + sizeof(rh), sizeof(as));
		torch_alloc__site(b->ta, (pid_t)as.pid, as.ra);
		return 0;
	}
	if (rh.type == XPU_BPF_EV_EXEC) {	/* read the new image's mappings now */
		bpf__sync(b);
		b->exec_wakes++;
		return 0;
	}
	if (rh.type == XPU_REC_SAMPLE && rh.size >= sizeof(rh) + sizeof(struct xpu_sample)) {
		struct xpu_sample s;
		size_t room = (rh.size - sizeof(rh) - sizeof(s)) / 8;

		memcpy(&s, (char *)data + sizeof(rh), sizeof(s));
		if (s.stack.nr_kernel_ips <= room)
			ksyms__note(&b->kips, (const uint64_t *)((char *)data + sizeof(rh) + sizeof(s)),
				    s.stack.nr_kernel_ips);
	} else if (rh.type == XPU_REC_OFFCPU && rh.size >= sizeof(rh) + sizeof(struct xpu_offcpu)) {
		struct xpu_offcpu o;
		size_t room = (rh.size - sizeof(rh) - sizeof(o)) / 8;

		memcpy(&o, (char *)data + sizeof(rh), sizeof(o));
		if (o.stack.nr_kernel_ips <= room)
			ksyms__note(&b->kips, (const uint64_t *)((char *)data + sizeof(rh) + sizeof(o)),
				    o.stack.nr_kernel_ips);
	}
	/* the pruning first: a side-band drain it starts writes MMAPs, which
	 * must not come between the PY_STACK and its record */
	iov.iov_len = rh.size - sizeof(rh);
	iov.iov_base = bpf__prune(b, rh.type, (char *)data + sizeof(rh), &iov.iov_len);
	if (!iov.iov_base)
		iov.iov_base = (char *)data + sizeof(rh);
	if (len > rh.size)
		bpf__python_first(b, (const uint8_t *)data + rh.size, len - rh.size);
	if (xpu_writer__addv(b->w, rh.type, 0, &iov, 1))
		b->write_errors++;
	return 0;
}

static int bpf__open_sampling(struct record_bpf *b, unsigned int freq, char *err, size_t errlen)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, fd;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq,
	};

	b->pfds = xcalloc(ncpu, sizeof(int));
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct bpf_link *l;

		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV) {	/* offline CPU: not sampled if it comes online */
				debug(1, "CPU %d is offline: not sampled", cpu);
				continue;
			}
			snprintf(err, errlen, "cannot open the cpu-clock event on CPU %d: %s", cpu,
				 strerror(errno));
			return -errno;
		}
		b->pfds[b->nr_pfds++] = fd;
		l = bpf_program__attach_perf_event(b->skel->progs.xpu_sample, fd);
		if (!l) {
			int e = -errno;

			snprintf(err, errlen, "cannot attach the sampler to CPU %d: %s", cpu, strerror(-e));
			return e;
		}
		b->links[b->nr_links++] = l;
	}
	b->nr_sampled = b->nr_pfds;
	if (!b->nr_pfds) {	/* else a recording without a single sample */
		snprintf(err, errlen, "cannot open the cpu-clock event on any of the %d CPUs: %s",
			 ncpu, strerror(ENODEV));
		return -ENODEV;
	}
	return 0;
}

static int bpf__attach_offcpu(struct record_bpf *b, char *err, size_t errlen)
{
	struct bpf_program *progs[] = { b->skel->progs.xpu_offcpu_switch,
					b->skel->progs.xpu_offcpu_sys_exit };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_link *l = bpf_program__attach(progs[i]);

		if (!l) {
			int e = -errno;

			snprintf(err, errlen, "cannot attach the off-CPU tracepoint %s: %s (--no-off-cpu "
				 "records without it)", bpf_program__name(progs[i]), strerror(-e));
			return e;
		}
		b->links[b->nr_links++] = l;
	}
	return 0;
}

/* The power of two from MIN to MAX nearest above want. */
static size_t bpf__pow2(size_t want, size_t min, size_t max)
{
	size_t sz = min;

	while (sz < want && sz < max)
		sz <<= 1;
	return sz;
}

/*
 * Ring sizes (Documentation/xpu-record.md, "Ring buffers"). A ring only has
 * to hold what arrives while the reader is away: it polls every 20 ms, is
 * woken when a ring is a quarter full, runs at nice -20 (drain.c), and is
 * away longest while it compresses a 4 MiB chunk (10-20 ms). Each ring is
 * kernel memory mapped twice into xpu-record (a record that wraps reads as
 * one), so it counts twice in RSS.
 *   samples: a tenth of a second of every CPU at -F with a typical record
 *     (16 KB of stack in use, 2 KB of registers, kernel and Python frames;
 *     fp: 1 KB), 1-64 MiB, or --ring-size: 4 MiB for 2 CPUs at 999 Hz;
 *   GPU correlation records: a burst of 512 launches with up to 64 KB of
 *     stack each, 8-64 MiB (64 MiB at the default copy size). PyTorch's
 *     launch stacks are that deep, launches come in bursts of thousands,
 *     and the reader is away while it compresses and codes: 8 MiB lost
 *     30-50% of the correlation records on H100/H200 runs of gpu_demo,
 *     torch_demo and a 2-rank DDP job (none at 64 MiB). So a recording
 *     with GPU on (the default) peaks higher than one with --no-gpu;
 *   off-CPU records: 4 MiB (at most one per block of --off-cpu or more per
 *     thread; the short ones are summed).
 * A ring that cannot be used is one page. Overflow is never silent: each
 * full ring counts its LOST records.
 */
static void bpf__size_rings(struct record_bpf *b, const struct record_opts *o, int ncpu)
{
	size_t typ = o->dwarf ? (o->stack_bytes < 16384 ? o->stack_bytes : 16384) + 2048 : 1024;
	size_t samples = o->ring_size ? o->ring_size :
			 bpf__pow2((size_t)ncpu * o->freq * typ / 10, 1 << 20, 64 << 20);
	/* One page (the smallest ring) where nothing can come. */
	size_t corr_stack = o->dwarf ? (o->stack_bytes < 65536 ? o->stack_bytes : 65536) : 0;
	size_t corr = o->no_gpu ? 4096 : bpf__pow2(512 * (corr_stack + 1024), 8 << 20, 64 << 20);
	size_t early = o->no_gpu ? 4096 : 1 << 20;
	size_t offcpu = o->offcpu_min_us ? 4 << 20 : 4096;
	/* --gpu-memory: a burst of 512 allocations with their stacks, as
	 * launches (a training step allocates thousands of blocks) */
	size_t mem = o->gpu_memory ? bpf__pow2(512 * (corr_stack + 1024), 8 << 20, 64 << 20) : 4096;

	bpf_map__set_max_entries(b->skel->maps.rb_samples, samples);
	bpf_map__set_max_entries(b->skel->maps.rb_corr, early);
	/* the GPU ring: made when the first CUDA process connects */
	b->gpu_ring_size = o->no_gpu ? 0 : corr;
	b->autograd = !o->no_autograd;	/* CPU training too: backward CPU time */
	bpf_map__set_max_entries(b->skel->maps.rb_offcpu, offcpu);
	bpf_map__set_max_entries(b->skel->maps.rb_mem, mem);
	/* Batched wakeups (see cfg_wakeup_* in bpf/xpu_stack.bpf.h). */
	b->skel->rodata->cfg_wakeup_samples = samples / 4;
	b->skel->rodata->cfg_wakeup_corr = corr / 4;
	b->skel->rodata->cfg_wakeup_corr_early = early / 4;
	b->skel->rodata->cfg_wakeup_offcpu = offcpu / 4;
	b->skel->rodata->cfg_wakeup_mem = mem / 4;
	debug(1, "ring buffers: samples %zu KiB, GPU correlation %zu KiB (made when a CUDA "
	      "process connects; %zu KiB before), off-CPU %zu KiB, GPU memory %zu KiB",
	      samples >> 10, corr >> 10, early >> 10, offcpu >> 10, mem >> 10);
}

int record_bpf__open(struct record_bpf **out, const struct record_opts *o, char *err, size_t errlen)
{
	struct record_bpf *b = xzalloc(sizeof(*b));
	int ncpu = libbpf_num_possible_cpus();
	int ret;

	b->gpu_ring_fd = -1;
	libbpf_set_print(bpf__print);
	u64map__init(&b->kips);
	u64map__init(&b->ag_procs);
	b->links = xcalloc(ncpu + 8, sizeof(*b->links));
	*out = b;
	b->skel = xpu_record_bpf__open();
	if (!b->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		return ret;
	}
	b->skel->rodata->cfg_mode = o->dwarf ? XPU_BPF_MODE_DWARF : XPU_BPF_MODE_FP;
	b->skel->rodata->cfg_stack_bytes = o->stack_bytes;
	bpf_map__set_max_entries(b->skel->maps.scratch, ncpu * XPU_BPF_NR_SLOTS);
	bpf__size_rings(b, o, ncpu);
	/* Off-CPU: blocks of offcpu_min_us or more get a record of their own
	 * (shorter ones are summed per thread); 0: off-CPU recording is off. */
	b->skel->rodata->cfg_offcpu_min_ns = (uint64_t)o->offcpu_min_us * 1000;
	if (!o->offcpu_min_us) {	/* not even loaded: older kernels lack task storage */
		bpf_program__set_autoload(b->skel->progs.xpu_offcpu_switch, false);
		bpf_program__set_autoload(b->skel->progs.xpu_offcpu_sys_exit, false);
		bpf_map__set_autocreate(b->skel->maps.offcpu_tasks, false);
	}
	/* Python walk: the exec of a tracked process wakes the reader */
	b->skel->rodata->cfg_exec_wake = o->python_frames == RECORD_PY_WALK;
	if (o->python_frames != RECORD_PY_WALK)
		bpf_program__set_autoload(b->skel->progs.xpu_exec, false);
	if (!o->gpu_memory) {	/* the allocator probes (torch_alloc.c) */
		bpf_program__set_autoload(b->skel->progs.xpu_torch_malloc, false);
		bpf_program__set_autoload(b->skel->progs.xpu_torch_free, false);
		bpf_program__set_autoload(b->skel->progs.xpu_torch_umalloc, false);
		bpf_program__set_autoload(b->skel->progs.xpu_torch_umalloc_ret, false);
		bpf_program__set_autoload(b->skel->progs.xpu_torch_ufree, false);
		bpf_map__set_max_entries(b->skel->maps.alloc_sites, 1);
		bpf_map__set_max_entries(b->skel->maps.alloc_pending, 1);
	}

	ret = xpu_record_bpf__load(b->skel);
	if (ret) {
		snprintf(err, errlen, "the kernel refused the BPF programs (%s); xpu-record needs kernel "
			 "5.17+ with BTF, ring buffers and bpf_find_vma; -vv shows the verifier log",
			 strncmp(bpf_last_msg, "verifier", 8) ? strerror(-ret) : bpf_last_msg);
		return ret;
	}
	ret = bpf__open_sampling(b, o->freq, err, errlen);
	if (ret)
		return ret;
	b->links[b->nr_links] = b->fork_link = bpf_program__attach(b->skel->progs.xpu_fork);
	if (!b->links[b->nr_links]) {
		ret = -errno;
		snprintf(err, errlen, "cannot attach the sched_process_fork tracepoint: %s", strerror(-ret));
		return ret;
	}
	b->nr_links++;
	b->links[b->nr_links] = b->exit_link = bpf_program__attach(b->skel->progs.xpu_exit);
	if (!b->links[b->nr_links]) {
		ret = -errno;
		snprintf(err, errlen, "cannot attach the sched_process_exit tracepoint: %s", strerror(-ret));
		return ret;
	}
	b->nr_links++;
	if (o->python_frames == RECORD_PY_WALK) {
		b->links[b->nr_links] = bpf_program__attach(b->skel->progs.xpu_exec);
		if (b->links[b->nr_links])
			b->nr_links++;
		else	/* Python frames then start at the reader's next poll */
			debug(1, "cannot attach the sched_process_exec tracepoint: %s", strerror(errno));
	}
	if (o->offcpu_min_us) {
		ret = bpf__attach_offcpu(b, err, errlen);
		if (ret)
			return ret;
	}

	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.rb_samples), bpf__on_record, b, NULL);
	if (!b->rb || ring_buffer__add(b->rb, bpf_map__fd(b->skel->maps.rb_corr), bpf__on_record, b) ||
	    ring_buffer__add(b->rb, bpf_map__fd(b->skel->maps.rb_offcpu), bpf__on_record, b) ||
	    (o->gpu_memory && ring_buffer__add(b->rb, bpf_map__fd(b->skel->maps.rb_mem), bpf__on_record, b))) {
		ret = -errno;
		snprintf(err, errlen, "cannot map the BPF ring buffers: %s", strerror(-ret));
		return ret;
	}
	if (o->gpu_memory)
		b->ta = torch_alloc__new(b->skel);
	return 0;
}

void record_bpf__set_writer(struct record_bpf *b, struct xpu_writer *w)
{
	b->w = w;
}

int record_bpf__attach_marker(struct record_bpf *b, const char *lib, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = XPU_CUPTI_MARKER_SYMBOL);
	struct bpf_link *l;

	l = bpf_program__attach_uprobe_opts(b->skel->progs.xpu_marker, -1, lib, 0, &uo);
	if (!l) {
		int e = -errno;

		snprintf(err, errlen, "cannot attach the uprobe to %s in %s: %s", XPU_CUPTI_MARKER_SYMBOL,
			 lib, strerror(-e));
		return e;
	}
	b->marker_link = l;
	return 0;
}

int record_bpf__attach_marker_copy(struct record_bpf *b, const char *path)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = XPU_CUPTI_MARKER_SYMBOL);
	struct bpf_link *l;

	if (b->nr_marker_copies == (int)(sizeof(b->marker_copies) / sizeof(b->marker_copies[0])))
		return -ENOSPC;
	l = bpf_program__attach_uprobe_opts(b->skel->progs.xpu_marker, -1, path, 0, &uo);
	if (!l)
		return -errno;
	b->marker_copies[b->nr_marker_copies++] = l;
	return 0;
}

/*
 * The autograd uprobes (bpf/xpu_record.bpf.c, design-autograd.md) in a
 * libtorch_cpu.so a tracked process mapped, reached through the process's
 * root (a container's file): the functions' offsets found once per file,
 * the probes placed for that process only, so that other processes using
 * the file take no trap. A build without the two functions is left alone.
 * A process forked without exec inherits no probes (no MMAP tells us).
 */
void record_bpf__mapping(struct record_bpf *b, pid_t pid, uint64_t start, uint64_t end,
			const char *path)
{
	static const char *const names[2] = { BPF_TORCH_SET_GRADIENT_EDGE,
					      BPF_TORCH_EVALUATE_FUNCTION };
	const char *base = strrchr(path, '/');
	struct bpf_link *edge = NULL, *eval = NULL;
	char root[PATH_MAX], fdpath[64];
	uint64_t known[BPF_AUTOGRAD_FILES], t0, *done;
	struct elf_funcs_file ef;
	int f, ret;

	torch_alloc__mapping(b->ta, pid, start, end, path);	/* --gpu-memory */
	if (!b->autograd || !base || strcmp(base + 1, "libtorch_cpu.so"))
		return;
	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)pid, path);
	t0 = record__now_ns();
	for (f = 0; f < b->nr_ag_files; f++)
		known[f] = b->ag_files[f].key;
	/* a regular file, read with a time bound: what the program put at
	 * that path since is not ours to wait for */
	ret = elf_funcs__open(root, names, 2, known, b->nr_ag_files, &ef);
	if (ret) {
		debug(1, "autograd: %s (pid %d): %s: not probed", path, (int)pid, strerror(-ret));
		return;
	}
	for (f = 0; f < b->nr_ag_files && b->ag_files[f].key != ef.key; f++)
		;
	if (f == b->nr_ag_files) {
		if (f == BPF_AUTOGRAD_FILES || !ef.read)
			goto out_close;
		b->nr_ag_files++;
		b->ag_files[f].key = ef.key;
		b->ag_files[f].ok = ef.ok;
		memcpy(b->ag_files[f].off, ef.off, sizeof(b->ag_files[f].off));
		if (!b->ag_files[f].ok)
			debug(1, "autograd: %s (pid %d) has no %s and %s: not probed", path, (int)pid,
			      "torch::autograd::impl::set_gradient_edge",
			      "torch::autograd::Engine::evaluate_function");
	}
	done = u64map__slot(&b->ag_procs, (uint64_t)pid << 32 ^ (uint64_t)f);
	if (!b->ag_files[f].ok || *done)
		goto out_close;
	*done = 1;
	/* through the descriptor read: the probes go on that file, whatever
	 * the path names by now, and the kernel looks nothing up in its
	 * file system */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", ef.fd);
	edge = bpf_program__attach_uprobe(b->skel->progs.xpu_autograd_edge, false, pid, fdpath,
					  b->ag_files[f].off[0]);
	eval = edge ? bpf_program__attach_uprobe(b->skel->progs.xpu_autograd_eval, false, pid, fdpath,
						 b->ag_files[f].off[1]) : NULL;
	if (!edge || !eval) {
		bpf_link__destroy(edge);
		debug(1, "autograd: no uprobes in %s for pid %d: %s", path, (int)pid,
		      bpf_last_msg[0] ? bpf_last_msg : strerror(errno));
		goto out_close;
	}
	b->ag_links = xgrow(b->ag_links, &b->ag_links_cap, (size_t)b->nr_ag_links + 2,
			    sizeof(*b->ag_links));
	b->ag_links[b->nr_ag_links++] = edge;
	b->ag_links[b->nr_ag_links++] = eval;
	debug(1, "autograd: uprobes in %s for pid %d, placed in %.1f ms", path, (int)pid,
	      (double)(record__now_ns() - t0) / 1e6);
out_close:
	close(ef.fd);
}

/* Process pid is gone: a later one of that pid gets its own probes. */
void record_bpf__exit(struct record_bpf *b, pid_t pid)
{
	for (int f = 0; f < b->nr_ag_files; f++)
		u64map__del(&b->ag_procs, (uint64_t)pid << 32 ^ (uint64_t)f);
	torch_alloc__exit(b->ta, pid);
}

/* For -p: the libraries the process mapped before we came. */
void record_bpf__scan_maps(struct record_bpf *b, pid_t pid)
{
	char path[64], line[4096 + 128];
	int mm;
	FILE *f;

	if (!b->autograd && !b->ta)
		return;
	mm = file__proc_live_tid(pid);	/* an exited main thread shows no maps */
	snprintf(path, sizeof(path), "/proc/%d/maps", mm > 0 ? mm : (int)pid);
	if (!(f = file__fopen_regular(path, 0, FILE_TEXT_MAX)))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		unsigned long long start, end;

		if (file && strstr(line, " r-xp ") && sscanf(line, "%llx-%llx", &start, &end) == 2) {
			file[strcspn(file, "\n")] = 0;
			record_bpf__mapping(b, pid, start, end, file);
		}
	}
	fclose(f);
}

int record_bpf__track(struct record_bpf *b, pid_t pid)
{
	uint32_t key = pid;
	uint8_t one = 1;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.tracked), &key, &one, BPF_ANY) ? -errno : 0;
}

bool record_bpf__is_tracked(struct record_bpf *b, pid_t pid)
{
	uint32_t key = pid;
	uint8_t v;

	return bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.tracked), &key, &v) == 0;
}

static int bpf__cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int record_bpf__tracked(struct record_bpf *b, pid_t **pids)
{
	int fd = bpf_map__fd(b->skel->maps.tracked), n = 0, cap = 0, u = 0;
	int max = bpf_map__max_entries(b->skel->maps.tracked);
	uint32_t key, next;
	const uint32_t *prev = NULL;
	pid_t *p = NULL;

	/* A key deleted under us restarts the walk: bounded, duplicates removed. */
	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			p = xrealloc(p, cap * sizeof(*p));
		}
		p[n++] = next;
		key = next;
		prev = &key;
	}
	if (n)
		qsort(p, n, sizeof(*p), bpf__cmp_pid);
	for (int i = 0; i < n; i++)
		if (!u || p[u - 1] != p[i])
			p[u++] = p[i];
	if (pids)
		*pids = p;
	else
		free(p);
	return u;
}

int record_bpf__tracking_fds(struct record_bpf *b, int fds[3])
{
	fds[0] = bpf_map__fd(b->skel->maps.tracked);
	fds[1] = bpf_link__fd(b->fork_link);
	fds[2] = bpf_link__fd(b->exit_link);
	return 3;
}

int record_bpf__ring_fd(struct record_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int record_bpf__consume(struct record_bpf *b)
{
	return ring_buffer__consume(b->rb);
}

size_t record_bpf__ring_bytes(struct record_bpf *b)
{
	return (size_t)bpf_map__max_entries(b->skel->maps.rb_samples) +
	       bpf_map__max_entries(b->skel->maps.rb_corr) +
	       bpf_map__max_entries(b->skel->maps.rb_offcpu) +
	       (b->gpu_ring_fd >= 0 ? b->gpu_ring_size : 0);
}

int record_bpf__sampled_cpus(struct record_bpf *b)
{
	return b->nr_sampled;
}

/*
 * The GPU correlation ring, made when the first CUDA process connects (in
 * the reader thread, the rings' only consumer): kernel memory of up to
 * 64 MiB, mapped twice into xpu-record, that a recording of CPU programs
 * never needs. Until it is in corr_rings the uprobe writes to the 1 MiB
 * rb_corr, whose records the reader keeps reading. A ring that cannot be
 * made leaves that one (bursts may then lose records, which are counted).
 */
int record_bpf__gpu_ring(struct record_bpf *b)
{
	uint64_t t0 = record__now_ns();
	uint32_t zero = 0;
	int fd;

	if (b->gpu_ring_fd >= 0 || !b->gpu_ring_size)
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xpu_gpu_corr", 0, 0, (uint32_t)b->gpu_ring_size,
			    NULL);
	if (fd >= 0 && ring_buffer__add(b->rb, fd, bpf__on_record, b)) {
		close(fd);
		fd = -1;
	}
	/* read before it is written to: once added, rb keeps it (and fd) */
	if (fd < 0 || bpf_map_update_elem(bpf_map__fd(b->skel->maps.corr_rings), &zero, &fd, BPF_ANY)) {
		int ret = -errno;

		warn("cannot make the %zu MiB GPU correlation ring (%s): launch bursts may lose "
		     "correlation records", b->gpu_ring_size >> 20, strerror(errno));
		b->gpu_ring_size = 0;	/* once */
		return ret;
	}
	b->gpu_ring_fd = fd;
	debug(1, "GPU correlation ring: %zu KiB, made in %.1f ms", b->gpu_ring_size >> 10,
	      (record__now_ns() - t0) / 1e6);
	return 0;
}

struct u64map *record_bpf__kernel_ips(struct record_bpf *b)
{
	return &b->kips;
}

int record_bpf__py_procs_fd(struct record_bpf *b)
{
	return bpf_map__fd(b->skel->maps.py_procs);
}

struct python *record_bpf__python(struct record_bpf *b)
{
	return b->py;
}

void record_bpf__set_python(struct record_bpf *b, struct python *py)
{
	b->py = py;
}

void record_bpf__set_prune(struct record_bpf *b, struct xpu_prune *p)
{
	b->prune = p;
	b->prune_reads = p && xpu_prune__has_reads(p);
}

void record_bpf__set_sync(struct record_bpf *b, void (*sync)(void *ctx), void *ctx)
{
	b->sync = sync;
	b->sync_ctx = ctx;
}

void record_bpf__lost(struct record_bpf *b, struct record_bpf_lost *l)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum[XPU_BPF_LOST_MAX] = { 0 };
	uint64_t *vals = xcalloc(ncpu, sizeof(uint64_t));

	for (uint32_t k = 0; k < XPU_BPF_LOST_MAX; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.lost), &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum[k] += vals[c];
	}
	free(vals);
	debug(1, "BPF: stack copies %llu failed; stack VMA lookups %llu busy (%llu of them bounded "
	      "by the thread's last stack mapping), %llu without a mapping",
	      (unsigned long long)sum[XPU_BPF_LOST_STACK_READ], (unsigned long long)sum[XPU_BPF_STAT_VMA_BUSY],
	      (unsigned long long)sum[XPU_BPF_STAT_VMA_CACHED], (unsigned long long)sum[XPU_BPF_STAT_VMA_MISS]);
	debug(1, "BPF: %llu stack copies page by page (a page never touched in the range)",
	      (unsigned long long)sum[XPU_BPF_STAT_COPY_PAGES]);
	debug(1, "BPF: %llu off-CPU switch-outs of recorded threads, %llu switch-ins missed "
	      "(ended at the next system call exit or sample)",
	      (unsigned long long)sum[XPU_BPF_STAT_OFFCPU_BLOCKS],
	      (unsigned long long)sum[XPU_BPF_STAT_OFFCPU_MISSED_IN]);
	debug(1, "BPF: Python: %llu stacks with %llu frames, %llu cut short or stopped, %llu "
	      "samples of threads without a thread state; %llu execs read at once",
	      (unsigned long long)sum[XPU_BPF_STAT_PY_WALKS], (unsigned long long)sum[XPU_BPF_STAT_PY_FRAMES],
	      (unsigned long long)sum[XPU_BPF_LOST_PYTHON], (unsigned long long)sum[XPU_BPF_STAT_PY_NO_THREAD],
	      (unsigned long long)b->exec_wakes);
	if (b->nr_ag_links)
		debug(1, "BPF: autograd: %llu node records, %llu nodes whose layout did not check",
		      (unsigned long long)sum[XPU_BPF_STAT_AUTOGRAD],
		      (unsigned long long)sum[XPU_BPF_STAT_AUTOGRAD_BAD]);
	l->python = sum[XPU_BPF_LOST_PYTHON];
	l->samples = sum[XPU_BPF_LOST_SAMPLES] + b->write_errors;
	l->corr = sum[XPU_BPF_LOST_CORR];
	l->stack_read = sum[XPU_BPF_LOST_STACK_READ];
	l->offcpu = sum[XPU_BPF_LOST_OFFCPU];
	l->offcpu_blocks = sum[XPU_BPF_STAT_OFFCPU_BLOCKS];
	/* a malloc's block or its stack: the memory ring was full */
	l->gpu_block = sum[XPU_BPF_LOST_GPU_BLOCK] + sum[XPU_BPF_LOST_ALLOC_STACK] +
		       sum[XPU_BPF_LOST_ALLOC_NO_SITE];
	if (b->ta) {
		int usdt, uprobe;

		torch_alloc__stats(b->ta, &usdt, &uprobe);
		debug(1, "BPF: gpu-memory: %d processes probed by USDT, %d by uprobes; %llu block "
		      "records, %llu lost, %llu stacks lost, %llu mallocs from return sites not "
		      "probed yet, %llu mallocs whose return was not seen (threw)",
		      usdt, uprobe, (unsigned long long)sum[XPU_BPF_STAT_GPU_BLOCKS],
		      (unsigned long long)sum[XPU_BPF_LOST_GPU_BLOCK],
		      (unsigned long long)sum[XPU_BPF_LOST_ALLOC_STACK],
		      (unsigned long long)sum[XPU_BPF_LOST_ALLOC_NO_SITE],
		      (unsigned long long)sum[XPU_BPF_STAT_ALLOC_NO_RET]);
	}
}

static void *bpf__detach_marker(void *arg)
{
	struct record_bpf *b = arg;

	bpf_link__destroy(b->marker_link);
	b->marker_link = NULL;
	for (int i = 0; i < b->nr_marker_copies; i++)
		bpf_link__destroy(b->marker_copies[i]);
	b->nr_marker_copies = 0;
	for (int i = 0; i < b->nr_ag_links; i++)
		bpf_link__destroy(b->ag_links[i]);
	b->nr_ag_links = 0;
	torch_alloc__detach(b->ta);
	return NULL;
}

/*
 * Detaches the sampler first so no new events arrive during the final drain.
 * Removing a uprobe waits for an RCU grace period (about 80 ms measured):
 * the marker's link goes in a thread of its own, joined by
 * record_bpf__close(), while the trace is finished. Its records come only
 * from CUDA processes of the command, which have exited by now; one that
 * still arrives is drained like any other.
 */
void record_bpf__detach(struct record_bpf *b)
{
	for (int i = 0; i < b->nr_links; i++)
		bpf_link__destroy(b->links[i]);
	b->nr_links = 0;
	b->fork_link = b->exit_link = NULL;
	for (int i = 0; i < b->nr_pfds; i++)
		close(b->pfds[i]);
	b->nr_pfds = 0;
	/* uprobes: the marker's and the autograd ones */
	if ((b->marker_link || b->nr_ag_links || b->nr_marker_copies || b->ta) &&
	    !b->marker_detaching) {
		if (pthread_create(&b->marker_thread, NULL, bpf__detach_marker, b))
			bpf__detach_marker(b);
		else
			b->marker_detaching = true;
	}
}

void record_bpf__close(struct record_bpf *b)
{
	if (!b)
		return;
	record_bpf__detach(b);
	if (b->marker_detaching)
		pthread_join(b->marker_thread, NULL);
	ring_buffer__free(b->rb);
	if (b->gpu_ring_fd >= 0)
		close(b->gpu_ring_fd);
	xpu_record_bpf__destroy(b->skel);
	u64map__exit(&b->kips);
	u64map__exit(&b->ag_procs);
	torch_alloc__free(b->ta);
	free(b->ag_links);
	free(b->links);
	free(b->pfds);
	free(b->scratch);
	free(b);
}

// SPDX-License-Identifier: MIT
/*
 * The fake CUPTI library's PC sampling (see fake_cupti.c), through the real
 * library's record making (cupti/pcsamp/pcsamp.c) as cupti_pcsamp.c feeds it.
 * With XPU_CUPTI_PC_SAMPLING set (xpu-record --gpu-pc-sampling):
 *   - the stall reasons of fake_reasons[] (the _not_issued one filtered out
 *     as the real library does) go out once;
 *   - XPU_FAKE_CUBIN=PATH: that file goes out as the module's cubin, CRC
 *     xpu_pcsamp__crc64() of its bytes (tests/data/pcsamp/fake_kernel.cubin
 *     is the fake kernel's device code built with -lineinfo), kept whole
 *     up to XPU_CUPTI_CUBIN_MAX bytes as the real library does, reduced
 *     to its line mapping when larger;
 *   - each launch adds, to the open collection window, the samples of
 *     XPU_FAKE_PC_SAMPLES ("PC:REASON:COUNT,...", default below) at those
 *     PC offsets of _Z11fake_kerneli; continuous (duty off), each flush
 *     (200 ms) and the end send the window's PCs, as cuptiPCSamplingGetData gives them, with the
 *     cubin's CRC;
 *   - sampled in part as the real library (XPU_CUPTI_PC_DUTY): by default
 *     from 500 ms after the start on (after:MS), or off OFF_MS / on ON_MS
 *     again and again (ON:OFF), decided at launches; samples are taken
 *     while sampling is on only, and each range is a GPU_PC_RANGE (a
 *     cycle's PCs sent at its end with the range as their window);
 *     XPU_FAKE_PC_INFLATE=X makes the kernels launched while sampling is
 *     on X times longer (a perturbing sampler, for the report's measure);
 *   - XPU_FAKE_PC_DROPPED=N: N samples dropped, sent at the end;
 *   - XPU_FAKE_PC_MALFORMED=N: N GPU_PC_SAMPLE records whose stall count
 *     runs past their body, sent at the end (the recorder passes them: it
 *     checks sizes, not the parts; the report must count them);
 *   - XPU_FAKE_PC_ERROR=TEXT: none of this; the library's line and META
 *     cupti.pc_sampling "off: TEXT" instead, as when CUPTI refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/pcsamp/pcsamp.h"
#include "fake_pcsamp.h"

#define FAKE_PCS_MAX	32
/* long_scoreboard 4 + 2 on the memory loop's line 15, math_pipe_throttle
 * 3 on the compute loop's line 17 (fake_kernel.cu) */
#define FAKE_PCS_DEFAULT "0x180:0:4,0x300:0:2,0x4d0:1:3,0x4d0:3:5"

static const char *const fake_reasons[] = {
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
	"smsp__pcsamp_warps_issue_stalled_selected",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
};

static struct {
	bool on;
	struct xpu_pcsamp s;
	uint32_t device;
	uint64_t crc;
	uint64_t dropped;
	pthread_mutex_t lock;
	uint64_t window_start;
	size_t nr;
	uint64_t pc[FAKE_PCS_MAX];
	uint32_t reason[FAKE_PCS_MAX], count[FAKE_PCS_MAX];
	uint64_t acc[FAKE_PCS_MAX];	/* samples of the open window */
	struct xpu_pcsamp_duty duty;
	bool sampling;
	uint64_t range_start, next_toggle;
	double inflate;
} fp = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t fp__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void fp__cubin(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc(n)) && fread(buf, 1, n, f) == (size_t)n) {
		fp.crc = xpu_pcsamp__crc64(buf, n);
		xpu_pcsamp__cubin(&fp.s, fp.crc, buf, n);
	}
	free(buf);
	fclose(f);
}

void fake_pcsamp__start(struct xpu_client *c, struct xpu_names *names, uint32_t pid,
			uint32_t device, const char *setting)
{
	const char *err = getenv("XPU_FAKE_PC_ERROR"), *spec = getenv("XPU_FAKE_PC_SAMPLES");
	const char *cubin = getenv("XPU_FAKE_CUBIN"), *dropped = getenv("XPU_FAKE_PC_DROPPED");
	uint32_t idx[4], nsel = 0;
	const char *sel[4];
	char msg[256];

	fp.on = false;
	if (xpu_pcsamp__parse(setting) == 0)
		return;
	if (err) {
		snprintf(msg, sizeof(msg), "off: cuptiPCSamplingEnable: %s", err);
		fprintf(stderr, "xpu-cupti: warning: pid %u: GPU PC sampling %s; the rest of the "
			"recording goes on\n", pid, msg);
		xpu_client__meta(c, XPU_META_CUPTI_PC_SAMPLING, msg);
		return;
	}
	xpu_pcsamp__init(&fp.s, c, names, pid, getenv(XPU_CUPTI_CUBIN_MAX_ENV));
	fp.device = device;
	for (uint32_t i = 0; i < sizeof(fake_reasons) / sizeof(fake_reasons[0]); i++)
		if (xpu_pcsamp__want_reason(fake_reasons[i])) {
			idx[nsel] = i;
			sel[nsel++] = fake_reasons[i];
		}
	xpu_pcsamp__reasons(&fp.s, device, nsel, idx, sel);
	if (cubin)
		fp__cubin(cubin);
	fp.nr = 0;
	for (const char *p = spec ? spec : FAKE_PCS_DEFAULT; *p && fp.nr < FAKE_PCS_MAX; ) {
		char *end;

		fp.pc[fp.nr] = strtoull(p, &end, 0);
		if (*end != ':')
			break;
		fp.reason[fp.nr] = strtoul(end + 1, &end, 0);
		if (*end != ':')
			break;
		fp.count[fp.nr] = strtoul(end + 1, &end, 0);
		fp.acc[fp.nr++] = 0;
		p = *end == ',' ? end + 1 : end;
	}
	fp.dropped = dropped ? strtoull(dropped, NULL, 0) : 0;
	fp.window_start = fp__now();
	xpu_pcsamp__parse_duty(getenv(XPU_CUPTI_PC_DUTY_ENV), &fp.duty);
	fp.inflate = getenv("XPU_FAKE_PC_INFLATE") ? atof(getenv("XPU_FAKE_PC_INFLATE")) : 1.0;
	fp.sampling = false;
	if (fp.duty.on_ns) {
		snprintf(msg, sizeof(msg), "on (libfake_cupti, duty %llu ms on / %llu ms off)",
			 (unsigned long long)(fp.duty.on_ns / 1000000),
			 (unsigned long long)(fp.duty.off_ns / 1000000));
		fp.next_toggle = fp.window_start + fp.duty.off_ns;
	} else if (fp.duty.after_ns) {
		snprintf(msg, sizeof(msg), "on (libfake_cupti, from %llu ms after the start)",
			 (unsigned long long)(fp.duty.after_ns / 1000000));
		fp.next_toggle = fp.window_start + fp.duty.after_ns;
	} else {
		fp.sampling = true;
		snprintf(msg, sizeof(msg), "on (libfake_cupti)");
	}
	xpu_client__meta(c, XPU_META_CUPTI_PC_SAMPLING, msg);
	fp.on = true;
}

static void fp__emit(uint64_t end);

/* Duty: the range ends at now (its PCs and GPU_PC_RANGE sent), or one
 * starts. Caller holds the lock. */
static void fp__toggle(uint64_t now)
{
	if (fp.sampling) {
		fp__emit(now);
		xpu_pcsamp__range(&fp.s, fp.device, 1, fp.range_start, now);
		fp.sampling = false;
		fp.next_toggle = now + fp.duty.off_ns;
	} else {
		fp.sampling = true;
		fp.range_start = fp.window_start = now;
		fp.next_toggle = fp.duty.on_ns ? now + fp.duty.on_ns : UINT64_MAX;	/* after: for good */
	}
}

double fake_pcsamp__launch(void)
{
	double f = 1.0;

	if (!fp.on)
		return f;
	pthread_mutex_lock(&fp.lock);
	if ((fp.duty.on_ns || fp.duty.after_ns) && fp__now() >= fp.next_toggle)
		fp__toggle(fp__now());
	if (fp.sampling) {
		for (size_t i = 0; i < fp.nr; i++)
			fp.acc[i] += fp.count[i];
		f = fp.inflate;
	}
	pthread_mutex_unlock(&fp.lock);
	return f;
}

/* The open window's PCs, one per PC with its stall entries (reasons this
 * library does not select are given too, with their samples, as CUPTI
 * never does: the selection is the library's, so they must not count). */
static void fp__emit(uint64_t end)
{
	struct xpu_gpu_pc_stall st[FAKE_PCS_MAX][FAKE_PCS_MAX];
	struct xpu_pcsamp_pc pcs[FAKE_PCS_MAX];
	size_t n = 0;

	for (size_t i = 0; i < fp.nr; i++) {
		size_t j;

		if (!fp.acc[i] || !xpu_pcsamp__want_reason(fake_reasons[fp.reason[i] % 4]))
			continue;
		for (j = 0; j < n && pcs[j].pc_offset != fp.pc[i]; j++)
			;
		if (j == n) {
			pcs[n++] = (struct xpu_pcsamp_pc){ .cubin_crc = fp.crc, .pc_offset = fp.pc[i],
							   .function = "_Z11fake_kerneli",
							   .stalls = st[j] };
		}
		st[j][pcs[j].nr_stalls++] = (struct xpu_gpu_pc_stall){ fp.reason[i], (uint32_t)fp.acc[i] };
		fp.acc[i] = 0;
	}
	xpu_pcsamp__pcs(&fp.s, fp.device, 1, fp.window_start, end, pcs, n);
	fp.window_start = end;
}

void fake_pcsamp__flush(void)
{
	if (!fp.on || fp.duty.on_ns)	/* cycles: sent at each range's end */
		return;
	pthread_mutex_lock(&fp.lock);
	fp__emit(fp__now());
	pthread_mutex_unlock(&fp.lock);
}

void fake_pcsamp__finish(void)
{
	if (!fp.on)
		return;
	pthread_mutex_lock(&fp.lock);
	if ((fp.duty.on_ns || fp.duty.after_ns) && fp.sampling)
		fp__toggle(fp__now());	/* the last range */
	else
		fp__emit(fp__now());
	pthread_mutex_unlock(&fp.lock);
	xpu_pcsamp__dropped(&fp.s, fp.dropped);
	for (unsigned long n = strtoul(getenv("XPU_FAKE_PC_MALFORMED") ? : "0", NULL, 0); n; n--) {
		struct xpu_gpu_pc_sample r = { .pid = fp.s.pid, .nr_stalls = 100, .cubin_crc = fp.crc };

		xpu_client__add(fp.s.client, XPU_REC_GPU_PC_SAMPLE, &r, sizeof(r));
	}
	xpu_pcsamp__finish(&fp.s);
	fp.on = false;
}

// SPDX-License-Identifier: MIT
/* GPU PC sampling records (pcsamp.h). No CUPTI headers. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "format/xpu_format.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "pcsamp.h"
#include "pcsamp_cubin.h"

int xpu_pcsamp__parse(const char *val)
{
	char *end;
	long v;

	if (!val || !*val || !strcmp(val, "off") || !strcmp(val, "0"))
		return 0;
	if (!strcmp(val, "on"))
		return -1;
	v = strtol(val, &end, 10);
	if (*end || v < XPU_PCSAMP_PERIOD_MIN || v > XPU_PCSAMP_PERIOD_MAX)
		return -EINVAL;
	return (int)v;
}

void xpu_pcsamp__init(struct xpu_pcsamp *s, struct xpu_client *c, struct xpu_names *names,
		      uint32_t pid, const char *cubin_max)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->client = c;
	s->names = names;
	s->pid = pid;
	s->cubin_max = cubin_max && *cubin_max ? strtoull(cubin_max, NULL, 0) : XPU_PCSAMP_CUBIN_MAX;
	if (s->cubin_max > XPU_PCSAMP_CUBIN_MAX)
		s->cubin_max = XPU_PCSAMP_CUBIN_MAX;
}

bool xpu_pcsamp__want_reason(const char *name)
{
	static const char suffix[] = "_not_issued";
	size_t n = name ? strlen(name) : 0;

	return n && !(n >= sizeof(suffix) - 1 && !strcmp(name + n - (sizeof(suffix) - 1), suffix));
}

int xpu_pcsamp__reasons(struct xpu_pcsamp *s, uint32_t device, size_t n,
			const uint32_t *index, const char *const *names)
{
	uint64_t bit = device < 64 ? 1ull << device : 0;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (bit & s->reasons_sent) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	s->reasons_sent |= bit;
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n && !err; i++) {
		struct xpu_gpu_stall_reason r = { .pid = s->pid, .device = device, .index = index[i] };

		if (names[i])
			err = xpu_client__add_str(s->client, XPU_REC_GPU_STALL_REASON, &r, sizeof(r),
						  names[i]);
	}
	return err;
}

uint64_t xpu_pcsamp__pcs(struct xpu_pcsamp *s, uint32_t device, uint32_t context,
			 uint64_t start, uint64_t end, const struct xpu_pcsamp_pc *pcs, size_t n)
{
	struct xpu_gpu_pc_stall st[256];
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		const struct xpu_pcsamp_pc *pc = &pcs[i];
		struct xpu_gpu_pc_sample r = {
			.start = start, .end = end, .cubin_crc = pc->cubin_crc,
			.pc_offset = pc->pc_offset, .pid = s->pid,
			.correlation_id = pc->correlation_id, .device = device, .context = context,
		};
		struct iovec iov[2];
		uint64_t samples = 0;
		size_t k = 0;

		for (size_t j = 0; j < pc->nr_stalls && k < sizeof(st) / sizeof(st[0]); j++) {
			if (!pc->stalls[j].samples)
				continue;
			st[k++] = pc->stalls[j];
			samples += pc->stalls[j].samples;
		}
		if (!k)
			continue;
		r.name_id = xpu_names__intern(s->names, s->client,
					      pc->function ? pc->function : "[unknown kernel]");
		r.nr_stalls = (uint16_t)k;
		iov[0].iov_base = &r;
		iov[0].iov_len = sizeof(r);
		iov[1].iov_base = st;
		iov[1].iov_len = k * sizeof(st[0]);
		if (xpu_client__addv(s->client, XPU_REC_GPU_PC_SAMPLE, iov, 2))
			continue;	/* counted as a channel loss */
		total += samples;
		pthread_mutex_lock(&s->lock);
		s->nr_pcs++;
		s->nr_samples += samples;
		pthread_mutex_unlock(&s->lock);
	}
	return total;
}

int xpu_pcsamp__range(struct xpu_pcsamp *s, uint32_t device, uint32_t context, uint64_t start,
		      uint64_t end)
{
	struct xpu_gpu_pc_range r = {
		.start = start, .end = end, .pid = s->pid, .device = device, .context = context,
	};

	pthread_mutex_lock(&s->lock);
	s->nr_ranges++;
	pthread_mutex_unlock(&s->lock);
	return xpu_client__add(s->client, XPU_REC_GPU_PC_RANGE, &r, sizeof(r));
}

void xpu_pcsamp__dropped(struct xpu_pcsamp *s, uint64_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&s->lock);
	s->nr_dropped += n;
	pthread_mutex_unlock(&s->lock);
	xpu_client__lost(s->client, XPU_LOST_PC_SAMPLES, n);
}

int xpu_pcsamp__cubin(struct xpu_pcsamp *s, uint64_t crc, const void *data, size_t size)
{
	struct xpu_gpu_cubin r = { .crc = crc, .size = size, .pid = s->pid };
	struct iovec iov[2] = { { &r, sizeof(r) }, { (void *)data, size } };
	void *reduced = NULL;
	size_t reduced_size = 0;
	bool skip = !data, sent;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nr_crcs; i++)
		if (s->cubin_crcs[i] == crc) {
			pthread_mutex_unlock(&s->lock);
			return 0;
		}
	if (s->nr_crcs < XPU_PCSAMP_MAX_CUBINS)
		s->cubin_crcs[s->nr_crcs++] = crc;
	pthread_mutex_unlock(&s->lock);

	/* too large whole: its line mapping alone, when that fits */
	if (!skip && size > s->cubin_max) {
		skip = xpu_pcsamp__reduce_cubin(data, size, XPU_PCSAMP_REDUCED_MAX, &reduced,
						&reduced_size) != 0;
		if (!skip) {
			r.flags = XPU_CUBIN_REDUCED;
			r.size = reduced_size;
			iov[1].iov_base = reduced;
			iov[1].iov_len = reduced_size;
		}
	}
	pthread_mutex_lock(&s->lock);
	if (skip) {
		s->nr_cubins_skipped++;
	} else if (reduced) {
		s->nr_cubins_reduced++;
		s->reduced_bytes += reduced_size;
		s->reduced_from += size;
	} else {
		s->nr_cubins++;
		s->cubin_bytes += size;
	}
	pthread_mutex_unlock(&s->lock);
	if (skip)
		r.flags = XPU_CUBIN_SKIPPED;
	sent = !xpu_client__addv(s->client, XPU_REC_GPU_CUBIN, iov, skip ? 1 : 2);
	free(reduced);
	return sent ? 1 : 0;
}

void xpu_pcsamp__finish(struct xpu_pcsamp *s)
{
	char buf[384];

	pthread_mutex_lock(&s->lock);
	snprintf(buf, sizeof(buf), "pid %u: %" PRIu64 " kept whole (%" PRIu64 " bytes), %" PRIu64
		 " larger than %zu bytes reduced to their line tables (%" PRIu64 " bytes of %"
		 PRIu64 "), %" PRIu64 " skipped; %" PRIu64 " PCs, %" PRIu64 " samples, %" PRIu64
		 " dropped, %" PRIu64 " sampling ranges", s->pid, s->nr_cubins, s->cubin_bytes,
		 s->nr_cubins_reduced, s->cubin_max, s->reduced_bytes,
		 s->reduced_from, s->nr_cubins_skipped, s->nr_pcs, s->nr_samples, s->nr_dropped,
		 s->nr_ranges);
	pthread_mutex_unlock(&s->lock);
	xpu_client__meta(s->client, XPU_META_CUPTI_CUBINS, buf);
}

uint64_t xpu_pcsamp__crc64(const void *data, size_t size)
{
	const uint8_t *p = data;
	uint64_t crc = ~0ull;

	for (size_t i = 0; i < size; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xc96c5795d7870f42ull & -(crc & 1));
	}
	return ~crc;
}

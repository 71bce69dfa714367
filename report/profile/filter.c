// SPDX-License-Identifier: MIT
/* The report filters: parsing and the one matching rule (filter.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/xalloc.h"
#include "report/profile/filter.h"

static bool ids__has(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

bool filter__match_task(const struct filter *f, uint32_t pid, uint32_t tid, uint64_t time)
{
	double rel;

	if (f->nr_pids && !ids__has(f->pids, f->nr_pids, pid))
		return false;
	if (f->nr_tids && !ids__has(f->tids, f->nr_tids, tid))
		return false;
	if (f->nr_ranks && !u64map__find(&f->rank_pids, pid))
		return false;
	if (time == FILTER_NO_TIME || (!f->has_start && !f->has_end))
		return true;
	rel = time >= f->time_base ? (double)(time - f->time_base) / 1e9 : 0;
	if (f->has_start && rel < f->start)
		return false;
	if (f->has_end && rel > f->end)
		return false;
	return true;
}

bool filter__match_comm(const struct filter *f, const char *comm)
{
	if (!f->nr_comms)
		return true;
	for (size_t i = 0; i < f->nr_comms; i++)
		if (!strcmp(f->comms[i], comm))
			return true;
	return false;
}

bool filter__match_device(const struct filter *f, uint32_t dev)
{
	return !f->nr_devices || ids__has(f->devices, f->nr_devices, dev);
}

int filter__parse_ids(uint32_t **ids, size_t *nr, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;
	int err = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno || *end || end == tok || v > UINT32_MAX) {
			err = -EINVAL;
			break;
		}
		*ids = xrealloc(*ids, (*nr + 1) * sizeof(**ids));
		(*ids)[(*nr)++] = (uint32_t)v;
	}
	if (!*nr)
		err = -EINVAL;
	free(copy);
	return err;
}

int filter__parse_comms(struct filter *f, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		f->comms = xrealloc(f->comms, (f->nr_comms + 1) * sizeof(*f->comms));
		f->comms[f->nr_comms++] = xstrdup(tok);
	}
	free(copy);
	return f->nr_comms ? 0 : -EINVAL;
}

static int parse_seconds(const char *s, size_t len, double *out)
{
	char buf[64], *end;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, &end);
	return *end || end == buf || *out < 0 ? -EINVAL : 0;
}

int filter__parse_time(struct filter *f, const char *arg)
{
	const char *comma = strchr(arg, ',');

	if (!comma)
		return -EINVAL;
	if (comma > arg) {
		if (parse_seconds(arg, (size_t)(comma - arg), &f->start))
			return -EINVAL;
		f->has_start = true;
	}
	if (comma[1]) {
		if (parse_seconds(comma + 1, strlen(comma + 1), &f->end))
			return -EINVAL;
		f->has_end = true;
	}
	if (f->has_start && f->has_end && f->end < f->start)
		return -EINVAL;
	return 0;
}

void filter__copy(struct filter *dst, const struct filter *src)
{
	*dst = *src;
	dst->pids = src->nr_pids ? xcalloc(src->nr_pids, sizeof(*dst->pids)) : NULL;
	dst->tids = src->nr_tids ? xcalloc(src->nr_tids, sizeof(*dst->tids)) : NULL;
	if (src->nr_pids)
		memcpy(dst->pids, src->pids, src->nr_pids * sizeof(*dst->pids));
	if (src->nr_tids)
		memcpy(dst->tids, src->tids, src->nr_tids * sizeof(*dst->tids));
	dst->comms = src->nr_comms ? xcalloc(src->nr_comms, sizeof(*dst->comms)) : NULL;
	for (size_t i = 0; i < src->nr_comms; i++)
		dst->comms[i] = xstrdup(src->comms[i]);
}

void filter__exit(struct filter *f)
{
	for (size_t i = 0; i < f->nr_comms; i++)
		free(f->comms[i]);
	free(f->comms);
	free(f->pids);
	free(f->tids);
	free(f->ranks);
	free(f->devices);
	u64map__exit(&f->rank_pids);
	memset(f, 0, sizeof(*f));
}

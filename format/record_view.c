// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include "record_view.h"

int xpu_stack__parse(const void *stack, size_t avail, struct xpu_stack_view *v)
{
	const uint8_t *p = stack;
	struct xpu_stack h;
	size_t need;

	if (avail < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	need = sizeof(h) + 8 * ((size_t)h.nr_kernel_ips + h.nr_user_ips + h.nr_regs) +
	       (size_t)h.stack_size;
	if (need > avail)
		return -EINVAL;
	v->hdr = stack;
	v->kernel_ips = (const uint64_t *)(p + sizeof(h));
	v->user_ips = v->kernel_ips + h.nr_kernel_ips;
	v->regs = v->user_ips + h.nr_user_ips;
	v->stack = (const uint8_t *)(v->regs + h.nr_regs);
	return 0;
}

const char *xpu_record__string(const struct xpu_record *rec, size_t fixed)
{
	const char *s = (const char *)rec->body + fixed;

	if (rec->body_size <= fixed || !memchr(s, 0, rec->body_size - fixed))
		return NULL;
	return s;
}

int xpu_record__meta(const struct xpu_record *rec, const char **key, const char **value)
{
	const char *k = rec->body, *v, *end = k + rec->body_size;
	const char *nul = memchr(k, 0, rec->body_size);

	if (!nul)
		return -EINVAL;
	v = nul + 1;
	if (v >= end || !memchr(v, 0, end - v))
		return -EINVAL;
	*key = k;
	*value = v;
	return 0;
}

int xpu_proc_env__next(const struct xpu_record *rec, size_t *pos, const char **key,
		       const char **value)
{
	const char *body = rec->body, *k, *v, *nul;
	size_t off = sizeof(struct xpu_proc_env) + *pos;

	/* padding is zeros: an empty key ends the pairs */
	if (rec->body_size < off + 2 || !body[off])
		return 0;
	k = body + off;
	nul = memchr(k, 0, rec->body_size - off);
	if (!nul)
		return 0;
	v = nul + 1;
	nul = memchr(v, 0, body + rec->body_size - v);
	if (!nul)
		return 0;
	*key = k;
	*value = v;
	*pos = (size_t)(nul + 1 - body) - sizeof(struct xpu_proc_env);
	return 1;
}

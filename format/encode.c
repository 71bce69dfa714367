// SPDX-License-Identifier: MIT
/* The record framing (see encode.h). No dependencies beyond libc, so the
 * CUPTI library's tests and the fake library can compile it alone. */
#include <errno.h>
#include <string.h>
#include "format/encode.h"

size_t xpu_record__encoded_size(const struct iovec *iov, int n)
{
	size_t body = 0, size;

	for (int i = 0; i < n; i++)
		body += iov[i].iov_len;
	size = (sizeof(struct xpu_record_header) + body + XPU_RECORD_ALIGN - 1) &
	       ~(size_t)(XPU_RECORD_ALIGN - 1);
	return size > UINT32_MAX ? 0 : size;
}

void xpu_record__encode(void *dst, size_t size, uint16_t type, uint16_t flags,
			const struct iovec *iov, int n)
{
	struct xpu_record_header rh = { .type = type, .flags = flags, .size = (uint32_t)size };
	uint8_t *p = dst, *end = p + size;

	memcpy(p, &rh, sizeof(rh));
	p += sizeof(rh);
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	memset(p, 0, end - p);
}

int xpu_batch__next(const void *data, size_t len, size_t *off, struct xpu_record *rec)
{
	const uint8_t *p = (const uint8_t *)data + *off;
	struct xpu_record_header rh;

	if (*off >= len)
		return 0;
	if (len - *off < sizeof(rh))
		return -EINVAL;
	memcpy(&rh, p, sizeof(rh));
	if (rh.size < sizeof(rh) || rh.size > len - *off)
		return -EINVAL;
	*rec = (struct xpu_record){ .type = rh.type, .flags = rh.flags,
				    .body_size = rh.size - (uint32_t)sizeof(rh),
				    .body = p + sizeof(rh) };
	*off += rh.size;
	return 1;
}

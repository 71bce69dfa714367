// SPDX-License-Identifier: MIT
/* CUPTI NVTX callback data -> nvtx.h calls; see cupti_nvtx.h. */
#define NVTX_NO_IMPL		/* the NVTX types, not its implementation */
#include <stddef.h>
#include <string.h>

#include <cupti_callbacks.h>
#include <cupti_nvtx_cbid.h>
#include <generated_nvtx_meta.h>

#include "nvtx.h"
#include "cupti_nvtx.h"

#define NVTX_TEXT_MAX	1024	/* wide messages converted, bytes */

const uint32_t xpu_cupti_nvtx_cbids[] = {
	CUPTI_CBID_NVTX_nvtxMarkA, CUPTI_CBID_NVTX_nvtxMarkW, CUPTI_CBID_NVTX_nvtxMarkEx,
	CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW,
	CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
	CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW,
	CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
	CUPTI_CBID_NVTX_nvtxDomainMarkEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
	CUPTI_CBID_NVTX_nvtxDomainRangeEnd, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
	CUPTI_CBID_NVTX_nvtxDomainRangePop, CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
	CUPTI_CBID_NVTX_nvtxDomainRegisterStringW, CUPTI_CBID_NVTX_nvtxDomainCreateA,
	CUPTI_CBID_NVTX_nvtxDomainCreateW,
};
const size_t xpu_cupti_nvtx_nr_cbids = sizeof(xpu_cupti_nvtx_cbids) / sizeof(xpu_cupti_nvtx_cbids[0]);

const char *xpu_cupti_nvtx__utf8(const wchar_t *w, char *buf, size_t size)
{
	size_t len = 0;

	if (!size)
		return buf;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		char enc[4];
		size_t n;

		if (c >= 0xd800 && (c < 0xe000 || c > 0x10ffff))
			c = 0xfffd;	/* surrogates and non-characters: replacement */
		if (c < 0x80) {
			enc[0] = (char)c;
			n = 1;
		} else if (c < 0x800) {
			enc[0] = (char)(0xc0 | c >> 6);
			enc[1] = (char)(0x80 | (c & 0x3f));
			n = 2;
		} else if (c < 0x10000) {
			enc[0] = (char)(0xe0 | c >> 12);
			enc[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			enc[2] = (char)(0x80 | (c & 0x3f));
			n = 3;
		} else {
			enc[0] = (char)(0xf0 | c >> 18);
			enc[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			enc[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			enc[3] = (char)(0x80 | (c & 0x3f));
			n = 4;
		}
		if (len + n >= size)
			break;
		memcpy(buf + len, enc, n);
		len += n;
	}
	buf[len] = '\0';
	return buf;
}

/* The message and color of an event attributes struct, reading only the
 * fields its size says it has (older NVTX versions have fewer). */
static void cn__attribs(struct xpu_nvtx *nv, const nvtxEventAttributes_t *a,
			struct xpu_nvtx_event *ev)
{
	char buf[NVTX_TEXT_MAX];
	size_t have;

	if (!a)
		return;
	have = a->size;
	if (have >= offsetof(nvtxEventAttributes_t, color) + sizeof(a->color) &&
	    a->colorType == NVTX_COLOR_ARGB)
		ev->color = a->color;
	if (have < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		ev->message_id = xpu_nvtx__intern(nv, a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		if (a->message.unicode)
			ev->message_id = xpu_nvtx__intern(nv, xpu_cupti_nvtx__utf8(
				a->message.unicode, buf, sizeof(buf)));
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		ev->message_id = xpu_nvtx__string_id(nv, (uint64_t)(uintptr_t)a->message.registered);
		break;
	default:
		break;
	}
}

static void cn__domain(struct xpu_nvtx *nv, nvtxDomainHandle_t domain, struct xpu_nvtx_event *ev)
{
	ev->domain = (uint64_t)(uintptr_t)domain;
	ev->domain_id = xpu_nvtx__domain_id(nv, ev->domain);
}

static const void *cn__ret(const CUpti_NvtxData *d)
{
	return d ? d->functionReturnValue : NULL;
}

void xpu_cupti_nvtx__callback(struct xpu_nvtx *nv, uint32_t cbid, const void *cbdata,
			      uint64_t time)
{
	const CUpti_NvtxData *d = cbdata;
	const void *p = d ? d->functionParams : NULL;
	struct xpu_nvtx_event ev = { .time = time, .cbid = cbid };
	struct xpu_nvtx_thread *t;
	const void *ret = cn__ret(d);
	char buf[NVTX_TEXT_MAX];
	uint64_t key;

	if (!p && cbid != CUPTI_CBID_NVTX_nvtxRangePop)	/* a pop has no parameters */
		return;
	switch (cbid) {		/* names first: they come with no thread state */
	case CUPTI_CBID_NVTX_nvtxDomainCreateA:
		if (ret)
			xpu_nvtx__add_domain(nv, (uint64_t)(uintptr_t)*(const nvtxDomainHandle_t *)ret,
					     ((const nvtxDomainCreateA_params *)p)->name);
		return;
	case CUPTI_CBID_NVTX_nvtxDomainCreateW:
		/* no params struct in generated_nvtx_meta.h: one pointer, like A's */
		if (ret)
			xpu_nvtx__add_domain(nv, (uint64_t)(uintptr_t)*(const nvtxDomainHandle_t *)ret,
					     xpu_cupti_nvtx__utf8((const wchar_t *)
						((const nvtxDomainCreateA_params *)p)->name,
						buf, sizeof(buf)));
		return;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
		if (ret)
			xpu_nvtx__add_string(nv, (uint64_t)(uintptr_t)*(const nvtxStringHandle_t *)ret,
					     ((const nvtxDomainRegisterStringA_params *)p)->string);
		return;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW:
		/* generated_nvtx_meta.h types the string char *; the API passes wchar_t * */
		if (ret)
			xpu_nvtx__add_string(nv, (uint64_t)(uintptr_t)*(const nvtxStringHandle_t *)ret,
					     xpu_cupti_nvtx__utf8((const wchar_t *)
						((const nvtxDomainRegisterStringW_params *)p)->string,
						buf, sizeof(buf)));
		return;
	}
	t = xpu_nvtx__self(nv);
	if (!t)
		return;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		ev.message_id = xpu_nvtx__intern(nv, ((const nvtxRangePushA_params *)p)->message);
		xpu_nvtx__push(t, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushW:
		ev.message_id = xpu_nvtx__intern(nv, xpu_cupti_nvtx__utf8(
			((const nvtxRangePushW_params *)p)->message, buf, sizeof(buf)));
		xpu_nvtx__push(t, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		cn__attribs(nv, ((const nvtxRangePushEx_params *)p)->eventAttrib, &ev);
		xpu_nvtx__push(t, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *dp = p;

		cn__domain(nv, dp->domain, &ev);
		cn__attribs(nv, dp->core.eventAttrib, &ev);
		xpu_nvtx__push(t, &ev);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
		xpu_nvtx__pop(t, time, 0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		xpu_nvtx__pop(t, time, (uint64_t)(uintptr_t)((const nvtxDomainRangePop_params *)p)->domain);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
	case CUPTI_CBID_NVTX_nvtxRangeStartW:
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
		/* NVTX's range id is what the start returned, and its end names it */
		if (!ret)
			break;
		key = *(const nvtxRangeId_t *)ret;
		if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA) {
			ev.message_id = xpu_nvtx__intern(nv,
				((const nvtxRangeStartA_params *)p)->message);
		} else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartW) {
			ev.message_id = xpu_nvtx__intern(nv, xpu_cupti_nvtx__utf8(
				((const nvtxRangeStartW_params *)p)->message, buf, sizeof(buf)));
		} else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx) {
			cn__attribs(nv, ((const nvtxRangeStartEx_params *)p)->eventAttrib, &ev);
		} else {
			const nvtxDomainRangeStartEx_params *dp = p;

			cn__domain(nv, dp->domain, &ev);
			cn__attribs(nv, dp->core.eventAttrib, &ev);
		}
		xpu_nvtx__start(t, key, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		xpu_nvtx__end(t, time, ((const nvtxRangeEnd_params *)p)->id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
		xpu_nvtx__end(t, time, ((const nvtxDomainRangeEnd_params *)p)->core.id);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkA:
		ev.message_id = xpu_nvtx__intern(nv, ((const nvtxMarkA_params *)p)->message);
		xpu_nvtx__mark(t, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkW:
		ev.message_id = xpu_nvtx__intern(nv, xpu_cupti_nvtx__utf8(
			((const nvtxMarkW_params *)p)->message, buf, sizeof(buf)));
		xpu_nvtx__mark(t, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkEx:
		cn__attribs(nv, ((const nvtxMarkEx_params *)p)->eventAttrib, &ev);
		xpu_nvtx__mark(t, &ev);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
		const nvtxDomainMarkEx_params *dp = p;

		cn__domain(nv, dp->domain, &ev);
		cn__attribs(nv, dp->core.eventAttrib, &ev);
		xpu_nvtx__mark(t, &ev);
		break;
	}
	default:
		break;
	}
}

// SPDX-License-Identifier: MIT
/*
 * CUPTI's NVTX callbacks decoded (cupti/nvtx/cupti_nvtx.c) on synthetic
 * CUpti_NvtxData, as CUPTI hands them to the library (no GPU, no libcupti):
 * every NVTX call we enable, ASCII, wide and registered messages, colors,
 * domains, NVTX's range ids from return values, attribute structs of an
 * older, smaller size; the GPU_NVTX and STRING records that come out.
 */
#define NVTX_NO_IMPL
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <cupti_callbacks.h>
#include <cupti_nvtx_cbid.h>
#include <generated_nvtx_meta.h>

#include "test.h"
#include "test_cupti_server.h"
#include "cupti/channel/client.h"
#include "cupti/channel/names.h"
#include "cupti/nvtx/nvtx.h"
#include "cupti/nvtx/cupti_nvtx.h"

#define PID 31337

static int nr_marks;
static uint64_t last_mark;

static void marker(uint64_t id, uint32_t cbid, uint32_t domain)
{
	nr_marks++;
	last_mark = id;
}

struct rig {
	struct xpu_client c;
	struct xpu_names n;
	struct xpu_nvtx nv;
	struct xpu_gpu_nvtx rec[16];
	int nr;
	const char *strs[64];
};

static void rig__init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	xpu_client__init(&r->c, PID, 0);
	xpu_names__init(&r->n, PID);
	xpu_nvtx__init(&r->nv, &r->c, &r->n, PID, marker);
	nr_marks = 0;
}

static void rig__collect(struct rig *r)
{
	struct xpu_record_header h;
	const uint8_t *body;
	size_t off = 0;

	r->nr = 0;
	while (test__next(r->c.buf, r->c.len, &off, &h, &body)) {
		if (h.type == XPU_REC_GPU_NVTX && r->nr < 16) {
			memcpy(&r->rec[r->nr++], body, sizeof(r->rec[0]));
		} else if (h.type == XPU_REC_STRING) {
			struct xpu_string s;

			memcpy(&s, body, sizeof(s));
			if (s.id < 64)
				r->strs[s.id] = (const char *)body + sizeof(s);
		}
	}
}

static const char *rig__str(struct rig *r, uint32_t id)
{
	return id < 64 && r->strs[id] ? r->strs[id] : "";
}

static void rig__exit(struct rig *r)
{
	xpu_nvtx__finish(&r->nv);
	xpu_nvtx__exit(&r->nv);
	xpu_names__exit(&r->n);
	xpu_client__exit(&r->c);
}

/* One callback as CUPTI makes it: params and return value by pointer. */
static void cb(struct rig *r, uint32_t cbid, const void *params, const void *ret, uint64_t time)
{
	CUpti_NvtxData d = { .functionName = "nvtx", .functionParams = params,
			     .functionReturnValue = ret };

	xpu_cupti_nvtx__callback(&r->nv, cbid, &d, time);
}

static nvtxEventAttributes_t attr_ascii(const char *msg, uint32_t argb)
{
	nvtxEventAttributes_t a = { .version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE };

	a.colorType = argb ? NVTX_COLOR_ARGB : NVTX_COLOR_UNKNOWN;
	a.color = argb;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

/* nvtxRangePushA/W/Ex and nvtxRangePop (which has no parameters). */
static void test_push_pop(void)
{
	struct rig r;
	nvtxRangePushA_params a = { "alpha" };
	nvtxRangePushW_params w = { L"\u03b2eta \U0001F600" };
	nvtxEventAttributes_t at = attr_ascii("gamma", 0xff112233);
	nvtxRangePushEx_params ex = { &at };
	int level = 0;

	rig__init(&r);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePushA, &a, &level, 100);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePushW, &w, &level, 110);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePushEx, &ex, &level, 120);
	TEST_ASSERT_EQ(nr_marks, 3);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePop, NULL, &level, 130);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePop, NULL, &level, 140);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePop, NULL, &level, 150);
	rig__collect(&r);
	TEST_ASSERT_EQ(r.nr, 3);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[0].message_id), "gamma"));
	TEST_ASSERT_EQ(r.rec[0].color, 0xff112233);
	TEST_ASSERT_EQ(r.rec[0].start, 120);
	TEST_ASSERT_EQ(r.rec[0].end, 130);
	TEST_ASSERT_EQ(r.rec[0].depth, 2);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[1].message_id), "\xce\xb2" "eta \xf0\x9f\x98\x80"));
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[2].message_id), "alpha"));
	TEST_ASSERT_EQ(r.rec[2].color, 0);
	TEST_ASSERT_EQ(r.rec[2].tid, (uint32_t)gettid());
	TEST_ASSERT_EQ(r.rec[2].flags, XPU_NVTX_PUSHPOP);
	rig__exit(&r);
}

/* Domains: created (name from the params, handle from the return value),
 * pushed and popped by handle; a registered string as a message; wide
 * messages in attributes. */
static void test_domains_and_registered(void)
{
	struct rig r;
	nvtxDomainHandle_t dom = (nvtxDomainHandle_t)(uintptr_t)0xd0d0;
	nvtxStringHandle_t sh = (nvtxStringHandle_t)(uintptr_t)0x5757;
	nvtxDomainCreateA_params create = { "NCCL" };
	nvtxDomainRegisterStringA_params reg = { dom, "AllReduce" };
	nvtxEventAttributes_t at = attr_ascii(NULL, 0);
	nvtxEventAttributes_t wat = attr_ascii(NULL, 0);
	nvtxDomainRangePushEx_params push = { dom, { &at } };
	nvtxDomainRangePushEx_params wpush = { dom, { &wat } };
	nvtxRangePushA_params plain = { "default domain" };
	nvtxDomainRangePop_params pop = { dom };
	int level = 0;

	rig__init(&r);
	cb(&r, CUPTI_CBID_NVTX_nvtxDomainCreateA, &create, &dom, 1);
	cb(&r, CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &reg, &sh, 2);
	at.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	at.message.registered = sh;
	wat.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	wat.message.unicode = L"wide";
	cb(&r, CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &push, &level, 10);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePushA, &plain, &level, 20);
	cb(&r, CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &wpush, &level, 25);
	/* the domain's pops close its ranges, not the default domain's on top */
	cb(&r, CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop, &level, 30);
	cb(&r, CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop, &level, 35);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangePop, NULL, &level, 40);
	rig__collect(&r);
	TEST_ASSERT_EQ(r.nr, 3);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[0].message_id), "wide"));
	TEST_ASSERT_EQ(r.rec[0].start, 25);
	TEST_ASSERT_EQ(r.rec[0].end, 30);
	TEST_ASSERT_EQ(r.rec[0].depth, 1);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[1].message_id), "AllReduce"));
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[1].domain_id), "NCCL"));
	TEST_ASSERT_EQ(r.rec[1].start, 10);
	TEST_ASSERT_EQ(r.rec[1].end, 35);
	TEST_ASSERT_EQ(r.rec[1].depth, 0);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[2].message_id), "default domain"));
	TEST_ASSERT_EQ(r.rec[2].domain_id, 0);
	TEST_ASSERT_EQ(r.rec[2].end, 40);
	rig__exit(&r);
}

/* Start/end by NVTX's range id (the start's return value), marks, and an
 * attributes struct of an older NVTX, too small to hold a message. */
static void test_start_end_mark(void)
{
	struct rig r;
	nvtxRangeId_t id = 77;
	nvtxEventAttributes_t at = attr_ascii("epoch", 0xff000001);
	nvtxRangeStartEx_params start = { &at };
	nvtxRangeStartA_params start_a = { "unended" };
	nvtxRangeEnd_params end = { 77 };
	nvtxMarkA_params mark = { "checkpoint" };
	nvtxEventAttributes_t small = attr_ascii("not read", 0xff000002);
	nvtxMarkEx_params mark_small = { &small };
	nvtxRangeId_t other = 78;

	rig__init(&r);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangeStartEx, &start, &id, 1000);
	TEST_ASSERT_EQ(nr_marks, 1);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangeStartA, &start_a, &other, 1001);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangeStartA, &start_a, NULL, 1002);	/* no id: cannot end */
	TEST_ASSERT_EQ(nr_marks, 2);
	cb(&r, CUPTI_CBID_NVTX_nvtxMarkA, &mark, NULL, 1500);
	small.size = (uint16_t)offsetof(nvtxEventAttributes_t, payloadType);
	cb(&r, CUPTI_CBID_NVTX_nvtxMarkEx, &mark_small, NULL, 1600);
	cb(&r, CUPTI_CBID_NVTX_nvtxRangeEnd, &end, NULL, 2000);
	TEST_ASSERT_EQ(nr_marks, 2);		/* marks and ends call no marker */
	xpu_nvtx__finish(&r.nv);
	rig__collect(&r);
	TEST_ASSERT_EQ(r.nr, 4);
	TEST_ASSERT_EQ(r.rec[0].flags, XPU_NVTX_MARK);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[0].message_id), "checkpoint"));
	TEST_ASSERT_EQ(r.rec[1].flags, XPU_NVTX_MARK);
	TEST_ASSERT_EQ(r.rec[1].message_id, 0);
	TEST_ASSERT_EQ(r.rec[1].color, 0xff000002);	/* color fits in the small size */
	TEST_ASSERT_EQ(r.rec[2].flags, XPU_NVTX_STARTEND);
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[2].message_id), "epoch"));
	TEST_ASSERT_EQ(r.rec[2].start, 1000);
	TEST_ASSERT_EQ(r.rec[2].end, 2000);
	TEST_ASSERT_EQ(r.rec[2].color, 0xff000001);
	TEST_ASSERT_EQ(r.rec[3].end, 0);		/* never ended */
	TEST_ASSERT(!strcmp(rig__str(&r, r.rec[3].message_id), "unended"));
	rig__exit(&r);
}

static void test_utf8(void)
{
	char buf[8];

	TEST_ASSERT(!strcmp(xpu_cupti_nvtx__utf8(L"abc", buf, sizeof(buf)), "abc"));
	/* truncated at a character boundary, never in the middle of one */
	TEST_ASSERT(!strcmp(xpu_cupti_nvtx__utf8(L"abcdef\u00e9", buf, sizeof(buf)), "abcdef"));
	TEST_ASSERT(!strcmp(xpu_cupti_nvtx__utf8(L"\xd800", buf, sizeof(buf)), "\xef\xbf\xbd"));
	TEST_ASSERT(!strcmp(xpu_cupti_nvtx__utf8(NULL, buf, sizeof(buf)), ""));
	/* the NVTX calls enabled: pushes, pops, starts, ends, marks, domain and
	 * string registration, A/W/Ex and domain variants */
	TEST_ASSERT_EQ(xpu_cupti_nvtx_nr_cbids, 20);
}

int main(void)
{
	TEST_RUN(test_push_pop);
	TEST_RUN(test_domains_and_registered);
	TEST_RUN(test_start_end_mark);
	TEST_RUN(test_utf8);
	TEST_EXIT();
}

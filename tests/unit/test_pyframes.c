// SPDX-License-Identifier: MIT
/*
 * Python frames of the interpreter walk (report/unwind/pyframes.c): the line
 * tables of CPython 3.10 (PEP 626 pairs) and 3.11-3.13 (location tables),
 * checked against each interpreter's own co_lines() for one function
 * (each table and its ranges printed by that interpreter from
 * sample.__code__.co_linetable and co_lines()); the PY_STACK
 * waiting for its record; frame names with and without lines.
 */
#include <string.h>
#include "report/unwind/pyframes.h"
#include "tests/unit/test.h"

/*
 * def sample(a, b):			# line 2 (3 in 3.10's file: same source)
 *     x = a + b
 *     if x > 3:
 *         y = [i * 2
 *              for i in range(x)]
 *         return sum(y)
 *     z = (a,
 *          b)
 *     return z
 */
/* 3.10.13 */
static const uint8_t lt_310[] = { 0x08, 0x01, 0x08, 0x01, 0x06, 0x01, 0x06, 0x01, 0x06, 0xff, 0x08, 0x02, 0x02, 0x01, 0x02, 0x01, 0x04, 0xff, 0x04, 0x02 };
static const int lt_310_first = 2;
static const int lt_310_ranges[][3] = { { 0, 8, 3 }, { 8, 16, 4 }, { 16, 22, 5 }, { 22, 28, 6 }, { 28, 34, 5 }, { 34, 42, 7 }, { 42, 44, 8 }, { 44, 46, 9 }, { 46, 50, 8 }, { 50, 54, 10 } };
/* 3.11.2 */
static const uint8_t lt_311[] = { 0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x82, 0x75, 0x80, 0x75, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01, 0x0d, 0x20, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0xe5, 0x0f, 0x12, 0x90, 0x31, 0x89, 0x76, 0x8c, 0x76, 0x88, 0x0d, 0xd8, 0x09, 0x0a, 0xd8, 0x09, 0x0a, 0xf0, 0x03, 0x01, 0x09, 0x0c, 0x80, 0x41, 0xe0, 0x0b, 0x0c, 0x80, 0x48 };
static const int lt_311_first = 2;
static const int lt_311_ranges[][3] = { { 0, 2, 2 }, { 2, 4, 3 }, { 4, 6, 3 }, { 6, 10, 3 }, { 10, 12, 3 }, { 12, 14, 4 }, { 14, 16, 4 }, { 16, 22, 4 }, { 22, 24, 4 }, { 24, 26, 5 }, { 26, 28, 5 }, { 28, 40, 6 }, { 40, 42, 6 }, { 42, 46, 6 }, { 46, 56, 6 }, { 56, 58, 5 }, { 58, 62, 5 }, { 62, 72, 5 }, { 72, 74, 5 }, { 74, 86, 7 }, { 86, 88, 7 }, { 88, 92, 7 }, { 92, 102, 7 }, { 102, 104, 7 }, { 104, 106, 8 }, { 106, 108, 9 }, { 108, 110, 8 }, { 110, 112, 8 }, { 112, 114, 10 }, { 114, 116, 10 } };
/* 3.12.1 */
static const uint8_t lt_312[] = { 0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x82, 0x75, 0xe4, 0x16, 0x1b, 0x98, 0x41, 0x93, 0x68, 0xf6, 0x03, 0x01, 0x0d, 0x20, 0xd8, 0x11, 0x12, 0xf0, 0x03, 0x00, 0x0e, 0x0f, 0x90, 0x11, 0x8b, 0x55, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xe4, 0x0f, 0x12, 0x90, 0x31, 0x8b, 0x76, 0x88, 0x0d, 0xd8, 0x09, 0x0a, 0xd8, 0x09, 0x0a, 0xf0, 0x03, 0x01, 0x09, 0x0c, 0x80, 0x41, 0xe0, 0x0b, 0x0c, 0x80, 0x48, 0xf9, 0xf2, 0x0b, 0x01, 0x0d, 0x20 };
static const int lt_312_first = 2;
static const int lt_312_ranges[][3] = { { 0, 2, 2 }, { 2, 12, 3 }, { 12, 22, 4 }, { 22, 42, 6 }, { 42, 56, 5 }, { 56, 58, 6 }, { 58, 76, 5 }, { 76, 98, 7 }, { 98, 100, 8 }, { 100, 102, 9 }, { 102, 106, 8 }, { 106, 110, 10 }, { 110, 114, -1 }, { 114, 120, 5 } };
/* 3.13.0 */
static const uint8_t lt_313[] = { 0x80, 0x00, 0xd8, 0x08, 0x09, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x83, 0x75, 0xe4, 0x16, 0x1b, 0x98, 0x41, 0x94, 0x68, 0xf3, 0x03, 0x01, 0x0d, 0x20, 0xd9, 0x16, 0x1e, 0x90, 0x11, 0xf0, 0x03, 0x00, 0x0e, 0x0f, 0x90, 0x11, 0x8c, 0x55, 0xd9, 0x16, 0x1e, 0xf0, 0x03, 0x00, 0x09, 0x0a, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xe4, 0x0f, 0x12, 0x90, 0x31, 0x8b, 0x76, 0x88, 0x0d, 0xd8, 0x09, 0x0a, 0xd8, 0x09, 0x0a, 0xf0, 0x03, 0x01, 0x09, 0x0c, 0x80, 0x41, 0xe0, 0x0b, 0x0c, 0x80, 0x48, 0xf9, 0xf2, 0x0b, 0x01, 0x0d, 0x20 };
static const int lt_313_first = 2;
static const int lt_313_ranges[][3] = { { 0, 2, 2 }, { 2, 10, 3 }, { 10, 22, 4 }, { 22, 44, 6 }, { 44, 52, 5 }, { 52, 58, 6 }, { 58, 72, 5 }, { 72, 76, 6 }, { 76, 80, 5 }, { 80, 102, 7 }, { 102, 104, 8 }, { 104, 106, 9 }, { 106, 110, 8 }, { 110, 114, 10 }, { 114, 118, -1 }, { 118, 124, 5 } };

static void check_table(uint16_t version, const uint8_t *t, size_t size, int first,
			const int (*ranges)[3], size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		for (int off = ranges[i][0]; off < ranges[i][1]; off += 2) {
			int line = pyframes__line(version, t, size, first, (uint32_t)off);

			if (line != ranges[i][2])
				fprintf(stderr, "  version %#x offset %d: line %d, co_lines() says %d\n",
					version, off, line, ranges[i][2]);
			TEST_ASSERT_EQ(line, ranges[i][2]);
		}
	/* past the end, and no offset */
	TEST_ASSERT_EQ(pyframes__line(version, t, size, first, 100000), -1);
	TEST_ASSERT_EQ(pyframes__line(version, t, size, first, XPU_PY_NO_OFFSET), -1);
}

#define CHECK(v, name) check_table(v, name, sizeof(name), name##_first, name##_ranges, \
				   sizeof(name##_ranges) / sizeof(name##_ranges[0]))

static void test_line_tables(void)
{
	CHECK(0x030a, lt_310);
	CHECK(0x030b, lt_311);
	CHECK(0x030c, lt_312);
	CHECK(0x030d, lt_313);
	/* malformed: not at an entry's start */
	TEST_ASSERT_EQ(pyframes__line(0x030b, (const uint8_t *)"\x01\x02", 2, 5, 0), -1);
}

static struct xpu_record rec_of(uint16_t type, const void *body, size_t size)
{
	struct xpu_record r = { .type = type, .body = body, .body_size = (uint32_t)size };

	return r;
}

static void test_pending_and_names(void)
{
	struct pyframes py;
	struct profile p;
	uint8_t cbuf[256] = { 0 }, sbuf[64] = { 0 };
	struct xpu_py_code c = { .addr = 0x7f0000001000, .pid = 7, .version = 0x030b,
				 .firstlineno = 2, .qualname_size = 7, .filename_size = 6,
				 .linetable_size = sizeof(lt_311), .code_key = 0x1234 };
	struct xpu_py_stack st = { .time = 99, .pid = 7, .tid = 8, .nr_frames = 1,
				   .version = 0x030b };
	struct xpu_py_frame f = { .code = 0x7f0000001000, .offset = 2, .code_key = 0x1234 };
	struct xpu_record r;
	const struct xpu_py_frame *got;
	uint32_t loc, id, id2;
	uint16_t nr;

	pyframes__init(&py);
	profile__init(&p);
	memcpy(cbuf, &c, sizeof(c));
	memcpy(cbuf + sizeof(c), "sample\0a.py\0", 13);
	memcpy(cbuf + sizeof(c) + 13, lt_311, sizeof(lt_311));
	r = rec_of(XPU_REC_PY_CODE, cbuf, sizeof(c) + 13 + sizeof(lt_311));
	pyframes__code(&py, &r);
	memcpy(sbuf, &st, sizeof(st));
	memcpy(sbuf + sizeof(st), &f, sizeof(f));
	r = rec_of(XPU_REC_PY_STACK, sbuf, sizeof(st) + sizeof(f));
	pyframes__record(&py, &r);
	/* another thread's record, or another time: not its record */
	TEST_ASSERT(!pyframes__take(&py, 9, 99, &nr));
	TEST_ASSERT(!pyframes__take(&py, 8, 98, &nr));
	got = pyframes__take(&py, 8, 99, &nr);
	TEST_ASSERT(got && nr == 1 && got[0].code == f.code);
	/* again for the same record (the GPU join resolves some samples twice) */
	TEST_ASSERT(pyframes__take(&py, 8, 99, &nr) == got);
	TEST_ASSERT_EQ(py.used, 1);
	/* the next record ends it */
	r = rec_of(XPU_REC_SAMPLE, sbuf, 8);
	pyframes__record(&py, &r);
	TEST_ASSERT(!pyframes__take(&py, 8, 99, &nr));
	TEST_ASSERT_EQ(py.unmatched, 0);
	/* records with no stack in between (side-band MMAPs, a LOST count)
	 * leave it for its record */
	r = rec_of(XPU_REC_PY_STACK, sbuf, sizeof(st) + sizeof(f));
	pyframes__record(&py, &r);
	r = rec_of(XPU_REC_MMAP, sbuf, 8);
	pyframes__record(&py, &r);
	r = rec_of(XPU_REC_LOST, sbuf, 8);
	pyframes__record(&py, &r);
	got = pyframes__take(&py, 8, 99, &nr);
	TEST_ASSERT(got && nr == 1);
	TEST_ASSERT_EQ(py.used, 2);
	/* one no record took is counted: the next stack record is another's */
	r = rec_of(XPU_REC_PY_STACK, sbuf, sizeof(st) + sizeof(f));
	pyframes__record(&py, &r);
	r = rec_of(XPU_REC_OFFCPU, sbuf, 8);
	pyframes__record(&py, &r);
	TEST_ASSERT(!pyframes__take(&py, 8, 99, &nr));
	TEST_ASSERT_EQ(py.unmatched, 1);

	id = pyframes__frame(&py, &p, 7, &f, &loc);
	TEST_ASSERT(!strcmp(p.frames[id].name, "py::sample:a.py:3"));
	TEST_ASSERT(loc != 0);
	/* another key at the same address: not this code object */
	f.code_key = 0x4321;
	id2 = pyframes__frame(&py, &p, 7, &f, &loc);
	TEST_ASSERT(!strcmp(p.frames[id2].name, "py::[code 0x7f0000001000]"));
	TEST_ASSERT(p.frames[id2].unknown);
	pyframes__exit(&py);

	pyframes__init(&py);
	py.no_lines = true;
	r = rec_of(XPU_REC_PY_CODE, cbuf, sizeof(c) + 13 + sizeof(lt_311));
	pyframes__code(&py, &r);
	f.code_key = 0x1234;
	id = pyframes__frame(&py, &p, 7, &f, &loc);
	TEST_ASSERT(!strcmp(p.frames[id].name, "py::sample:a.py"));
	f.offset = 40;
	TEST_ASSERT_EQ(pyframes__frame(&py, &p, 7, &f, &loc), id);	/* one per function */
	pyframes__exit(&py);
	profile__exit(&p);

	TEST_ASSERT(pyframes__is_eval("_PyEval_EvalFrameDefault"));
	TEST_ASSERT(pyframes__is_eval("_PyEval_EvalFrameDefault.cold"));
	TEST_ASSERT(!pyframes__is_eval("_PyEval_EvalFrame"));
	TEST_ASSERT(!pyframes__is_eval("_PyEval_EvalFrameDefaultX"));
}

/* Names read from a freed or reused code object are garbage: rejected, so
 * their frames stay py::[code 0x...] (a 2-rank DDP recording had one). */
static void test_garbage_names(void)
{
	struct pyframes py;
	struct profile p;
	uint8_t cbuf[256] = { 0 };
	struct xpu_py_code c = { .addr = 0x7f0000002000, .pid = 7, .version = 0x030c,
				 .firstlineno = 1, .qualname_size = 8, .filename_size = 5,
				 .code_key = 0x99 };
	struct xpu_py_frame f = { .code = 0x7f0000002000, .code_key = 0x99 };
	struct xpu_record r;
	uint32_t loc, id;

	TEST_ASSERT(pyframes__text_ok("Model.forward"));
	TEST_ASSERT(pyframes__text_ok("/srv/d\xc3\xa9""j\xc3\xa0/x.py"));	/* UTF-8 */
	TEST_ASSERT(pyframes__text_ok("<module>"));
	TEST_ASSERT(!pyframes__text_ok("0\xca""T\x02"));
	TEST_ASSERT(!pyframes__text_ok("a\x1c""b"));		/* splitlines() splits here */
	TEST_ASSERT(!pyframes__text_ok("a\nb"));
	TEST_ASSERT(!pyframes__text_ok("\xe2\x82"));		/* cut sequence */
	TEST_ASSERT(!pyframes__text_ok("\xc0\xaf"));		/* overlong */
	TEST_ASSERT(!pyframes__text_ok("\xff"));

	pyframes__init(&py);
	profile__init(&p);
	memcpy(cbuf, &c, sizeof(c));
	memcpy(cbuf + sizeof(c), "0\xca""T\x02\x1c?!\0a.py", 13);
	r = rec_of(XPU_REC_PY_CODE, cbuf, sizeof(c) + 13);
	pyframes__code(&py, &r);
	id = pyframes__frame(&py, &p, 7, &f, &loc);
	TEST_ASSERT(!strcmp(p.frames[id].name, "py::[code 0x7f0000002000]"));
	pyframes__exit(&py);
	profile__exit(&p);
}

/* One Python function at two lines is one function (NVTX push points). */
static void test_same_function(void)
{
	TEST_ASSERT(pyframes__same_function("py::f:/a/x.py:12", "py::f:/a/x.py:40"));
	TEST_ASSERT(pyframes__same_function("py::C.m:<frozen io>:3", "py::C.m:<frozen io>:3"));
	TEST_ASSERT(!pyframes__same_function("py::f:/a/x.py:12", "py::g:/a/x.py:12"));
	TEST_ASSERT(!pyframes__same_function("py::f:/a/x.py:12", "py::f:/a/y.py:12"));
	TEST_ASSERT(!pyframes__same_function("py::f:/a/x.py", "py::f:/a/x.py"));	/* no lines: ids decide */
	TEST_ASSERT(!pyframes__same_function("main", "main"));
	TEST_ASSERT(!pyframes__same_function("py::f:/a/x.py:12", "py::f:/a/x.py:"));
}

int main(void)
{
	TEST_RUN(test_line_tables);
	TEST_RUN(test_same_function);
	TEST_RUN(test_garbage_names);
	TEST_RUN(test_pending_and_names);
	TEST_EXIT();
}

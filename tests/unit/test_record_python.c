// SPDX-License-Identifier: MIT
/*
 * record/python/python_layout.c: the layout read from an interpreter's own
 * _Py_DebugOffsets, against fixtures of real interpreters
 * (tests/data/python/cpython-3.N.txt, made by tests/tools/py_debug_fixture.py
 * from Debian's 3.11, 3.13, 3.14 and 3.15: the bytes at the start of
 * _PyRuntime in the file, and offsets measured in the running interpreter
 * without the debug offsets). 3.13's layout must equal the hand-made table
 * field for field; every version's must have the measured offsets; damaged
 * bytes must be refused, never read as a layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/python/python_layout.h"
#include "test.h"

struct fixture {
	uint32_t version;		/* Py_Version */
	uint8_t runtime[PY_DEBUG_READ];
	size_t len;
	/* measured: -1 when not */
	int ts_thread_id, co_qualname, co_filename, co_linetable, co_firstlineno, co_code;
	int ascii_size;
};

static int fixture__load(const char *name, struct fixture *fx)
{
	const char *top = getenv("XPU_TOP");
	char path[4096], line[512];
	FILE *f;

	memset(fx, 0, sizeof(*fx));
	fx->ts_thread_id = fx->co_qualname = fx->co_filename = fx->co_linetable = -1;
	fx->co_firstlineno = fx->co_code = fx->ascii_size = -1;
	snprintf(path, sizeof(path), "%s/tests/data/python/%s", top ? top : ".", name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot read %s (run from the repository root or set XPU_TOP)\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char key[64], hex[256];
		int v;

		if (sscanf(line, "version %x", &fx->version) == 1)
			continue;
		if (sscanf(line, "runtime %255s", hex) == 1) {
			for (size_t i = 0; hex[i] && hex[i + 1] && fx->len < sizeof(fx->runtime); i += 2) {
				unsigned b;

				sscanf(hex + i, "%2x", &b);
				fx->runtime[fx->len++] = (uint8_t)b;
			}
			continue;
		}
		if (sscanf(line, "measured %63s %d", key, &v) != 2)
			continue;
#define M(k) if (!strcmp(key, #k)) fx->k = v
		M(ts_thread_id); M(co_qualname); M(co_filename); M(co_linetable);
		M(co_firstlineno); M(co_code); M(ascii_size);
#undef M
	}
	fclose(f);
	return 0;
}

/* the layout read from fx's bytes has every offset measured in the process */
static void check_measured(const struct fixture *fx, const struct py_layout *l)
{
	TEST_ASSERT_EQ(l->cfg.version, fx->version >> 16);
	TEST_ASSERT_EQ(l->cfg.ts_thread_id, fx->ts_thread_id);
	TEST_ASSERT_EQ(l->co_qualname, fx->co_qualname);
	TEST_ASSERT_EQ(l->co_filename, fx->co_filename);
	TEST_ASSERT_EQ(l->co_linetable, fx->co_linetable);
	TEST_ASSERT_EQ(l->co_firstlineno, fx->co_firstlineno);
	TEST_ASSERT_EQ(l->cfg.co_code, fx->co_code);
	TEST_ASSERT_EQ(l->ascii_size, fx->ascii_size);
	/* what the walks take as given for 3.13+ */
	TEST_ASSERT_EQ(l->cfg.ts_cframe, XPU_PY_NO_CFRAME);
	TEST_ASSERT_EQ(l->cfg.instr_kind, XPU_PY_INSTR_PTR);
	TEST_ASSERT_EQ(l->cfg.entry_kind, XPU_PY_ENTRY_SHIM);
	TEST_ASSERT(l->cfg.fr_size <= 128 && l->cfg.fr_entry < l->cfg.fr_size);
	TEST_ASSERT(l->from_debug);
}

static void test_313_equals_table(void)
{
	const struct py_layout *hand = python_layout__table(0x030d, true);
	struct py_layout l;
	struct fixture fx;
	const char *why;

	if (fixture__load("cpython-3.13.txt", &fx))
		TEST_ASSERT(0);
	TEST_ASSERT_EQ(python_layout__debug(fx.runtime, fx.len, &l, &why), PY_DEBUG_OK);
	check_measured(&fx, &l);
	TEST_ASSERT(hand != NULL);
	TEST_ASSERT(python_layout__table(0x030d, false) == NULL);	/* the walk reads it */
	TEST_ASSERT_EQ(l.cfg.rt_interp_head, hand->cfg.rt_interp_head);
	TEST_ASSERT_EQ(l.cfg.is_threads_head, hand->cfg.is_threads_head);
	TEST_ASSERT_EQ(l.cfg.ts_next, hand->cfg.ts_next);
	TEST_ASSERT_EQ(l.cfg.ts_interp, hand->cfg.ts_interp);
	TEST_ASSERT_EQ(l.cfg.ts_thread_id, hand->cfg.ts_thread_id);
	TEST_ASSERT_EQ(l.cfg.ts_cframe, hand->cfg.ts_cframe);
	TEST_ASSERT_EQ(l.cfg.cur_frame, hand->cfg.cur_frame);
	TEST_ASSERT_EQ(l.cfg.fr_code, hand->cfg.fr_code);
	TEST_ASSERT_EQ(l.cfg.fr_previous, hand->cfg.fr_previous);
	TEST_ASSERT_EQ(l.cfg.fr_instr, hand->cfg.fr_instr);
	TEST_ASSERT_EQ(l.cfg.fr_entry, hand->cfg.fr_entry);
	TEST_ASSERT_EQ(l.cfg.fr_size, hand->cfg.fr_size);
	TEST_ASSERT_EQ(l.cfg.co_code, hand->cfg.co_code);
	TEST_ASSERT_EQ(l.cfg.owner_cstack, hand->cfg.owner_cstack);
	TEST_ASSERT_EQ(l.cfg.instr_kind, hand->cfg.instr_kind);
	TEST_ASSERT_EQ(l.cfg.entry_kind, hand->cfg.entry_kind);
	TEST_ASSERT_EQ(l.co_filename, hand->co_filename);
	TEST_ASSERT_EQ(l.co_qualname, hand->co_qualname);
	TEST_ASSERT_EQ(l.co_firstlineno, hand->co_firstlineno);
	TEST_ASSERT_EQ(l.co_linetable, hand->co_linetable);
	TEST_ASSERT_EQ(l.ascii_size, hand->ascii_size);
	TEST_ASSERT_EQ(l.compact_size, hand->compact_size);
	TEST_ASSERT_EQ(l.bytes_sval, hand->bytes_sval);
}

static void test_314_315(void)
{
	static const char *const names[] = { "cpython-3.14.txt", "cpython-3.15.txt" };

	for (size_t i = 0; i < 2; i++) {
		struct py_layout l;
		struct fixture fx;
		const char *why;

		if (fixture__load(names[i], &fx)) {
			TEST_ASSERT(0);
			continue;
		}
		TEST_ASSERT(python_layout__table(fx.version >> 16, false) == NULL);
		TEST_ASSERT_EQ(python_layout__debug(fx.runtime, fx.len, &l, &why), PY_DEBUG_OK);
		check_measured(&fx, &l);
	}
}

/* 3.11 has no _Py_DebugOffsets: its table, and the bytes are not one */
static void test_311_table(void)
{
	struct py_layout l;
	struct fixture fx;
	const char *why;

	if (fixture__load("cpython-3.11.txt", &fx))
		TEST_ASSERT(0);
	TEST_ASSERT_EQ(python_layout__debug(fx.runtime, fx.len, &l, &why), PY_DEBUG_NONE);
	TEST_ASSERT(python_layout__table(fx.version >> 16, false) != NULL);
	TEST_ASSERT_EQ(python_layout__table(fx.version >> 16, false)->cfg.ts_thread_id, fx.ts_thread_id);
	TEST_ASSERT_EQ(python_layout__table(fx.version >> 16, false)->co_qualname, fx.co_qualname);
}

static void put64(uint8_t *buf, size_t at, uint64_t v)
{
	memcpy(buf + at, &v, 8);
}

/* damaged or foreign bytes: refused, with the reason */
static void test_refused(void)
{
	struct py_layout l;
	struct fixture fx;
	uint8_t buf[PY_DEBUG_READ];
	const char *why;

	if (fixture__load("cpython-3.14.txt", &fx))
		TEST_ASSERT(0);
	memcpy(buf, fx.runtime, sizeof(buf));
	buf[0] = 'X';				/* the cookie */
	TEST_ASSERT_EQ(python_layout__debug(buf, fx.len, &l, &why), PY_DEBUG_NONE);
	memcpy(buf, fx.runtime, sizeof(buf));
	put64(buf, 8, 0x031000f0);		/* 3.16: not known */
	TEST_ASSERT_EQ(python_layout__debug(buf, fx.len, &l, &why), PY_DEBUG_UNKNOWN);
	TEST_ASSERT_EQ(l.cfg.version, 0x0310);
	memcpy(buf, fx.runtime, sizeof(buf));
	put64(buf, 16, 1);			/* free-threaded */
	TEST_ASSERT_EQ(python_layout__debug(buf, fx.len, &l, &why), PY_DEBUG_FREE_THREADED);
	memcpy(buf, fx.runtime, sizeof(buf));
	put64(buf, 216, 100000);		/* thread_id outside the thread state */
	TEST_ASSERT_EQ(python_layout__debug(buf, fx.len, &l, &why), PY_DEBUG_BAD);
	TEST_ASSERT(strstr(why, "thread state") != NULL);
	memcpy(buf, fx.runtime, sizeof(buf));
	put64(buf, 272, 200);			/* instr_ptr past the frame */
	TEST_ASSERT_EQ(python_layout__debug(buf, fx.len, &l, &why), PY_DEBUG_BAD);
	memcpy(buf, fx.runtime, sizeof(buf));
	put64(buf, 408, 24);			/* ob_type of a free-threaded object */
	TEST_ASSERT_EQ(python_layout__debug(buf, fx.len, &l, &why), PY_DEBUG_BAD);
	/* too short for its unicode block */
	TEST_ASSERT_EQ(python_layout__debug(fx.runtime, 600, &l, &why), PY_DEBUG_BAD);
	TEST_ASSERT_EQ(python_layout__debug(fx.runtime, 8, &l, &why), PY_DEBUG_NONE);
}

int main(void)
{
	TEST_RUN(test_313_equals_table);
	TEST_RUN(test_314_315);
	TEST_RUN(test_311_table);
	TEST_RUN(test_refused);
	TEST_EXIT();
}

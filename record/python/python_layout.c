// SPDX-License-Identifier: MIT
/*
 * CPython layouts for the interpreter walk (python_layout.h).
 *
 * 3.10-3.12: tables made by hand, x86-64, from each version's headers
 * (3.11: checked by compiling against Debian's python3.11-dev with
 * Py_BUILD_CORE; all: generated from the headers by bindgen, as py-spy's
 * src/python_bindings/v3_*.rs, offsets printed with offset_of!).
 *
 * 3.13+: the interpreter's own _Py_DebugOffsets, at the start of
 * _PyRuntime (Include/internal/pycore_debug_offsets.h; 3.13:
 * pycore_runtime.h): a cookie, PY_VERSION_HEX, a free-threaded flag, then
 * per structure its size and the offsets of its fields, all uint64_t,
 * written by the compiler that built the interpreter. Which fields the
 * struct has changes with each minor version (3.14 added threads_main and
 * the frame's stackpointer, 3.15 the thread state's base and last profiled
 * frames...), so where each field we need sits in it is known per minor
 * version (py_debug_pos below: the struct's layout, fixed for a minor
 * release, not the interpreter's); the offsets themselves come from the
 * interpreter. 3.13's hand table is kept for the tests' cross-check.
 */
#include <string.h>
#include "record/python/python_layout.h"

static const struct py_layout py_layouts[] = {
	{	/* 3.10: PyFrameObject chain, one eval activation per frame */
		.cfg = { .version = 0x030a, .rt_interp_head = 32, .is_threads_head = 8,
			 .ts_next = 8, .ts_interp = 16, .ts_thread_id = 176,
			 .ts_cframe = XPU_PY_NO_CFRAME, .cur_frame = 24,
			 .fr_code = 32, .fr_previous = 24, .fr_instr = 96, .fr_size = 104,
			 .instr_kind = XPU_PY_INSTR_LASTI, .entry_kind = XPU_PY_ENTRY_ALL },
		/* no co_qualname before 3.11: co_name */
		.co_filename = 104, .co_qualname = 112, .co_firstlineno = 40, .co_linetable = 120,
		.ascii_size = 48, .compact_size = 72, .bytes_sval = 32,
	},
	{	/* 3.11: _PyInterpreterFrame via tstate->cframe, is_entry */
		.cfg = { .version = 0x030b, .rt_interp_head = 40, .is_threads_head = 16,
			 .ts_next = 8, .ts_interp = 16, .ts_thread_id = 152,
			 .ts_cframe = 56, .cur_frame = 8,
			 .fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_entry = 68,
			 .fr_size = 72, .co_code = 184,
			 .instr_kind = XPU_PY_INSTR_PTR, .entry_kind = XPU_PY_ENTRY_FLAG },
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 72, .co_linetable = 136,
		.ascii_size = 48, .compact_size = 72, .bytes_sval = 32,
	},
	{	/* 3.12: cframe still; shim frames owned by the C stack (owner 3) */
		.cfg = { .version = 0x030c, .rt_interp_head = 40, .is_threads_head = 72,
			 .ts_next = 8, .ts_interp = 16, .ts_thread_id = 136,
			 .ts_cframe = 56, .cur_frame = 0,
			 .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_entry = 70,
			 .fr_size = 72, .co_code = 192, .owner_cstack = 3,
			 .instr_kind = XPU_PY_INSTR_PTR, .entry_kind = XPU_PY_ENTRY_SHIM },
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 68, .co_linetable = 136,
		.ascii_size = 40, .compact_size = 56, .bytes_sval = 32,
	},
	{	/* 3.13: tstate->current_frame, f_executable, instr_ptr (the
		 * walk reads 3.13's from _Py_DebugOffsets; this row is the
		 * tests' cross-check) */
		.cfg = { .version = 0x030d, .rt_interp_head = 632, .is_threads_head = 7344,
			 .ts_next = 8, .ts_interp = 16, .ts_thread_id = 152,
			 .ts_cframe = XPU_PY_NO_CFRAME, .cur_frame = 72,
			 .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_entry = 70,
			 .fr_size = 72, .co_code = 200, .owner_cstack = 3,
			 .instr_kind = XPU_PY_INSTR_PTR, .entry_kind = XPU_PY_ENTRY_SHIM },
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 68, .co_linetable = 136,
		.ascii_size = 40, .compact_size = 56, .bytes_sval = 32,
	},
};

const struct py_layout *python_layout__table(unsigned version, bool hand_313)
{
	if (version >= 0x030d && !hand_313)
		return NULL;
	for (size_t i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++)
		if (py_layouts[i].cfg.version == version)
			return &py_layouts[i];
	return NULL;
}

/*
 * Where the fields the walk needs sit in _Py_DebugOffsets, in bytes from
 * its start, per minor version (each field a uint64_t; each structure's
 * block starts with its size). Read off each version's header, and checked
 * against the interpreters themselves (tests/data/python/, made by
 * tests/tools/py_debug_fixture.py, which measures the offsets in the live
 * interpreter).
 */
struct py_debug_pos {
	uint16_t version;
	uint16_t rt_size, rt_interp_head;
	uint16_t is_size, is_threads_head;
	uint16_t ts_size, ts_next, ts_interp, ts_cur_frame, ts_thread_id;
	uint16_t fr_size, fr_previous, fr_exec, fr_instr, fr_owner;
	uint16_t co_size, co_filename, co_qualname, co_linetable, co_firstlineno, co_code;
	uint16_t ob_size, ob_type;
	uint16_t by_size, by_ob_size, by_sval;
	uint16_t un_size, un_state, un_length, un_ascii;
};

static const struct py_debug_pos py_debug_pos[] = {
	{	/* 3.13: pycore_runtime.h */
		.version = 0x030d, .rt_size = 24, .rt_interp_head = 40,
		.is_size = 48, .is_threads_head = 72,
		.ts_size = 152, .ts_next = 168, .ts_interp = 176, .ts_cur_frame = 184,
		.ts_thread_id = 192,
		.fr_size = 224, .fr_previous = 232, .fr_exec = 240, .fr_instr = 248, .fr_owner = 264,
		.co_size = 272, .co_filename = 280, .co_qualname = 296, .co_linetable = 304,
		.co_firstlineno = 312, .co_code = 344,
		.ob_size = 352, .ob_type = 360,
		.by_size = 512, .by_ob_size = 520, .by_sval = 528,
		.un_size = 536, .un_state = 544, .un_length = 552, .un_ascii = 560,
	},
	{	/* 3.14: pycore_debug_offsets.h; interpreter_state.threads_main,
		 * frame stackpointer and tlbc_index, code co_tlbc, set_object added */
		.version = 0x030e, .rt_size = 24, .rt_interp_head = 40,
		.is_size = 48, .is_threads_head = 72,
		.ts_size = 176, .ts_next = 192, .ts_interp = 200, .ts_cur_frame = 208,
		.ts_thread_id = 216,
		.fr_size = 248, .fr_previous = 256, .fr_exec = 264, .fr_instr = 272, .fr_owner = 288,
		.co_size = 312, .co_filename = 320, .co_qualname = 336, .co_linetable = 344,
		.co_firstlineno = 352, .co_code = 384,
		.ob_size = 400, .ob_type = 408,
		.by_size = 592, .by_ob_size = 600, .by_sval = 608,
		.un_size = 616, .un_state = 624, .un_length = 632, .un_ascii = 640,
	},
	{	/* 3.15: thread_state gained the base and last profiled frames
		 * (thread_id moved), exception fields; type_object grew */
		.version = 0x030f, .rt_size = 24, .rt_interp_head = 40,
		.is_size = 48, .is_threads_head = 72,
		.ts_size = 176, .ts_next = 192, .ts_interp = 200, .ts_cur_frame = 208,
		.ts_thread_id = 240,
		.fr_size = 312, .fr_previous = 320, .fr_exec = 328, .fr_instr = 336, .fr_owner = 352,
		.co_size = 376, .co_filename = 384, .co_qualname = 400, .co_linetable = 408,
		.co_firstlineno = 416, .co_code = 448,
		.ob_size = 464, .ob_type = 472,
		.by_size = 688, .by_ob_size = 696, .by_sval = 704,
		.un_size = 712, .un_state = 720, .un_length = 728, .un_ascii = 736,
	},
};

static uint64_t rd(const uint8_t *buf, uint16_t at)
{
	uint64_t v;

	memcpy(&v, buf + at, sizeof(v));
	return v;
}

/* field at pos: an offset inside a structure of the size at size_pos, that
 * also leaves room for want bytes within limit */
static bool field_ok(const uint8_t *buf, uint16_t size_pos, uint16_t pos, uint64_t want,
		     uint64_t limit)
{
	uint64_t size = rd(buf, size_pos), off = rd(buf, pos);

	return size && size < (1u << 24) && off + want <= size && off + want <= limit;
}

static uint16_t max16(uint16_t a, uint16_t b)
{
	return a > b ? a : b;
}

int python_layout__debug(const uint8_t *buf, size_t len, struct py_layout *out,
			 const char **why)
{
	const struct py_debug_pos *p = NULL;
	uint64_t version;
	struct xpu_bpf_py_cfg *c = &out->cfg;

	memset(out, 0, sizeof(*out));
	*why = "";
	if (len < 24 || memcmp(buf, "xdebugpy", 8)) {
		*why = "no _Py_DebugOffsets cookie at _PyRuntime";
		return PY_DEBUG_NONE;
	}
	version = rd(buf, 8);
	c->version = (uint16_t)(version >> 16);
	for (size_t i = 0; i < sizeof(py_debug_pos) / sizeof(py_debug_pos[0]); i++)
		if (py_debug_pos[i].version == c->version)
			p = &py_debug_pos[i];
	if (version >> 24 != 3 || !p) {
		*why = "a _Py_DebugOffsets of a version this recorder does not know";
		return PY_DEBUG_UNKNOWN;
	}
	if (rd(buf, 16)) {
		*why = "a free-threaded build";
		return PY_DEBUG_FREE_THREADED;
	}
	if (len < (size_t)p->un_ascii + 8) {
		*why = "_PyRuntime too short for its _Py_DebugOffsets";
		return PY_DEBUG_BAD;
	}
	/* every offset inside its structure; what the walks read at once
	 * within their bounds (a frame: 128 bytes; a code object's head: 255) */
	if (!field_ok(buf, p->rt_size, p->rt_interp_head, 8, 65535) ||
	    !field_ok(buf, p->is_size, p->is_threads_head, 8, 65535) ||
	    !field_ok(buf, p->ts_size, p->ts_next, 8, 65535) ||
	    !field_ok(buf, p->ts_size, p->ts_interp, 8, 65535) ||
	    !field_ok(buf, p->ts_size, p->ts_cur_frame, 8, 65535) ||
	    !field_ok(buf, p->ts_size, p->ts_thread_id, 8, 65535)) {
		*why = "a runtime, interpreter or thread state offset outside its structure";
		return PY_DEBUG_BAD;
	}
	if (!field_ok(buf, p->fr_size, p->fr_previous, 8, 128) ||
	    !field_ok(buf, p->fr_size, p->fr_exec, 8, 128) ||
	    !field_ok(buf, p->fr_size, p->fr_instr, 8, 128) ||
	    !field_ok(buf, p->fr_size, p->fr_owner, 1, 128)) {
		*why = "an interpreter frame offset outside the frame or past 128 bytes";
		return PY_DEBUG_BAD;
	}
	if (!field_ok(buf, p->co_size, p->co_filename, 8, 248) ||
	    !field_ok(buf, p->co_size, p->co_qualname, 8, 248) ||
	    !field_ok(buf, p->co_size, p->co_firstlineno, 4, 248) ||
	    !field_ok(buf, p->co_size, p->co_linetable, 8, 248) ||
	    !field_ok(buf, p->co_size, p->co_code, 0, 65535)) {
		*why = "a code object offset outside the object or past 248 bytes";
		return PY_DEBUG_BAD;
	}
	/* what user space and the walks take as given: PyObject's type, the
	 * str and bytes headers of GIL builds */
	if (rd(buf, p->ob_type) != 8 || rd(buf, p->by_ob_size) != 16 ||
	    !field_ok(buf, p->by_size, p->by_sval, 0, 64) || rd(buf, p->un_length) != 16 ||
	    rd(buf, p->un_state) != 32 || rd(buf, p->un_ascii) < 40 || rd(buf, p->un_ascii) > 48) {
		*why = "object, bytes or str headers unlike a default build's";
		return PY_DEBUG_BAD;
	}
	c->rt_interp_head = (uint16_t)rd(buf, p->rt_interp_head);
	c->is_threads_head = (uint16_t)rd(buf, p->is_threads_head);
	c->ts_next = (uint16_t)rd(buf, p->ts_next);
	c->ts_interp = (uint16_t)rd(buf, p->ts_interp);
	c->ts_thread_id = (uint16_t)rd(buf, p->ts_thread_id);
	c->ts_cframe = XPU_PY_NO_CFRAME;
	c->cur_frame = (uint16_t)rd(buf, p->ts_cur_frame);
	c->fr_code = (uint16_t)rd(buf, p->fr_exec);
	c->fr_previous = (uint16_t)rd(buf, p->fr_previous);
	c->fr_instr = (uint16_t)rd(buf, p->fr_instr);
	c->fr_entry = (uint16_t)rd(buf, p->fr_owner);
	c->fr_size = max16(max16(max16(c->fr_code, c->fr_previous), c->fr_instr) + 8,
			   c->fr_entry + 1);
	/* the frame read at once is a multiple of 8 (a 3.13 frame: 72) */
	c->fr_size = (uint16_t)((c->fr_size + 7) & ~7);
	c->co_code = (uint16_t)rd(buf, p->co_code);
	/* FRAME_OWNED_BY_CSTACK (3.12, 3.13), FRAME_OWNED_BY_INTERPRETER
	 * (3.14+; FRAME_OWNED_BY_CSTACK is 4 there): the eval loop's entry
	 * frame; the walks skip frames of this owner and above */
	c->owner_cstack = 3;
	c->instr_kind = XPU_PY_INSTR_PTR;
	c->entry_kind = XPU_PY_ENTRY_SHIM;
	out->co_filename = (uint16_t)rd(buf, p->co_filename);
	out->co_qualname = (uint16_t)rd(buf, p->co_qualname);
	out->co_firstlineno = (uint16_t)rd(buf, p->co_firstlineno);
	out->co_linetable = (uint16_t)rd(buf, p->co_linetable);
	out->ascii_size = (uint16_t)rd(buf, p->un_ascii);
	/* PyCompactUnicodeObject: the ASCII header, utf8_length, utf8 */
	out->compact_size = (uint16_t)(out->ascii_size + 16);
	out->bytes_sval = (uint16_t)rd(buf, p->by_sval);
	out->from_debug = 1;
	return PY_DEBUG_OK;
}

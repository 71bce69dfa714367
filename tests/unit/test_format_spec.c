// SPDX-License-Identifier: MIT
/*
 * The spec and the code agree: every byte-layout table in
 * Documentation/xpu-data-format.md lists exactly the fields of its struct in
 * format/xpu_format.h, with offsetof/sizeof's offsets and sizes, covering
 * every byte; the spec's record-type table gives the names and minimum body
 * sizes of format/record_types.c's table, and every value of enum
 * xpu_record_type in xpu_format.h has a row there with a name and a minimum
 * size, and a printer in format/record_print.c; every value of enum
 * xpu_lost_source has a row in the spec's LOST source table and a name the
 * reports print (not "other"), and XPU_LOST_MAX follows the last. A layout
 * change without its spec change, or a new record type or LOST source
 * without its table row, fails here.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/reader.h"
#include "format/record_types.h"
#include "format/xpu_format.h"
#include "test.h"

struct field {
	const char *strct, *name;
	size_t off, size, strct_size;
};

#define F(s, f) { #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f), sizeof(struct s) }
static const struct field fields[] = {
	F(xpu_file_header, magic),
	F(xpu_file_header, major),
	F(xpu_file_header, minor),
	F(xpu_file_header, header_size),
	F(xpu_file_header, features),
	F(xpu_file_header, realtime_ns),
	F(xpu_file_header, monotonic_ns),
	F(xpu_file_header, reserved),
	F(xpu_chunk_header, magic),
	F(xpu_chunk_header, header_size),
	F(xpu_chunk_header, comp_size),
	F(xpu_chunk_header, raw_size),
	F(xpu_chunk_header, nr_records),
	F(xpu_chunk_header, flags),
	F(xpu_chunk_header, payload_crc),
	F(xpu_chunk_header, header_crc),
	F(xpu_record_header, type),
	F(xpu_record_header, flags),
	F(xpu_record_header, size),
	F(xpu_comm, time),
	F(xpu_comm, pid),
	F(xpu_comm, tid),
	F(xpu_comm, flags),
	F(xpu_comm, comm),
	F(xpu_comm, reserved),
	F(xpu_fork, time),
	F(xpu_fork, pid),
	F(xpu_fork, tid),
	F(xpu_fork, ppid),
	F(xpu_fork, ptid),
	F(xpu_exit, time),
	F(xpu_exit, pid),
	F(xpu_exit, tid),
	F(xpu_exit, flags),
	F(xpu_exit, status),
	F(xpu_mmap, time),
	F(xpu_mmap, pid),
	F(xpu_mmap, tid),
	F(xpu_mmap, start),
	F(xpu_mmap, len),
	F(xpu_mmap, pgoff),
	F(xpu_mmap, prot),
	F(xpu_mmap, flags),
	F(xpu_mmap, build_id_size),
	F(xpu_mmap, reserved),
	F(xpu_mmap, build_id),
	F(xpu_stack, nr_kernel_ips),
	F(xpu_stack, nr_user_ips),
	F(xpu_stack, nr_regs),
	F(xpu_stack, arch),
	F(xpu_stack, stack_size),
	F(xpu_stack, flags),
	F(xpu_sample, time),
	F(xpu_sample, pid),
	F(xpu_sample, tid),
	F(xpu_sample, cpu),
	F(xpu_sample, weight),
	F(xpu_sample, stack),
	F(xpu_lost, time),
	F(xpu_lost, source),
	F(xpu_lost, pid),
	F(xpu_lost, count),
	F(xpu_ksym, addr),
	F(xpu_ksym, size),
	F(xpu_perf_map, pid),
	F(xpu_perf_map, reserved),
	F(xpu_perf_map, start),
	F(xpu_perf_map, size),
	F(xpu_string, pid),
	F(xpu_string, id),
	F(xpu_finish, time),
	F(xpu_finish, nr_samples),
	F(xpu_finish, nr_corr),
	F(xpu_finish, nr_gpu),
	F(xpu_finish, nr_lost),
	F(xpu_gpu_kernel, start),
	F(xpu_gpu_kernel, end),
	F(xpu_gpu_kernel, correlation_id),
	F(xpu_gpu_kernel, graph_node_id),
	F(xpu_gpu_kernel, pid),
	F(xpu_gpu_kernel, name_id),
	F(xpu_gpu_kernel, device),
	F(xpu_gpu_kernel, context),
	F(xpu_gpu_kernel, stream),
	F(xpu_gpu_kernel, graph_id),
	F(xpu_gpu_kernel, grid),
	F(xpu_gpu_kernel, block),
	F(xpu_gpu_kernel, static_smem),
	F(xpu_gpu_kernel, dynamic_smem),
	F(xpu_gpu_kernel, registers),
	F(xpu_gpu_kernel, launch_type),
	F(xpu_gpu_kernel, reserved),
	F(xpu_gpu_memcpy, start),
	F(xpu_gpu_memcpy, end),
	F(xpu_gpu_memcpy, correlation_id),
	F(xpu_gpu_memcpy, bytes),
	F(xpu_gpu_memcpy, graph_node_id),
	F(xpu_gpu_memcpy, pid),
	F(xpu_gpu_memcpy, device),
	F(xpu_gpu_memcpy, context),
	F(xpu_gpu_memcpy, stream),
	F(xpu_gpu_memcpy, graph_id),
	F(xpu_gpu_memcpy, copy_kind),
	F(xpu_gpu_memcpy, src_kind),
	F(xpu_gpu_memcpy, dst_kind),
	F(xpu_gpu_memcpy, flags),
	F(xpu_gpu_memset, start),
	F(xpu_gpu_memset, end),
	F(xpu_gpu_memset, correlation_id),
	F(xpu_gpu_memset, bytes),
	F(xpu_gpu_memset, graph_node_id),
	F(xpu_gpu_memset, pid),
	F(xpu_gpu_memset, device),
	F(xpu_gpu_memset, context),
	F(xpu_gpu_memset, stream),
	F(xpu_gpu_memset, graph_id),
	F(xpu_gpu_memset, value),
	F(xpu_gpu_sync, start),
	F(xpu_gpu_sync, end),
	F(xpu_gpu_sync, correlation_id),
	F(xpu_gpu_sync, pid),
	F(xpu_gpu_sync, type),
	F(xpu_gpu_sync, context),
	F(xpu_gpu_sync, stream),
	F(xpu_gpu_sync, event),
	F(xpu_gpu_sync, reserved),
	F(xpu_gpu_api, start),
	F(xpu_gpu_api, end),
	F(xpu_gpu_api, correlation_id),
	F(xpu_gpu_api, pid),
	F(xpu_gpu_api, tid),
	F(xpu_gpu_api, domain),
	F(xpu_gpu_api, cbid),
	F(xpu_gpu_api, ret),
	F(xpu_gpu_api, reserved),
	F(xpu_gpu_corr, time),
	F(xpu_gpu_corr, pid),
	F(xpu_gpu_corr, tid),
	F(xpu_gpu_corr, cpu),
	F(xpu_gpu_corr, domain),
	F(xpu_gpu_corr, correlation_id),
	F(xpu_gpu_corr, cbid),
	F(xpu_gpu_corr, reserved),
	F(xpu_gpu_corr, stack),
	F(xpu_gpu_device, pid),
	F(xpu_gpu_device, id),
	F(xpu_gpu_device, sm_count),
	F(xpu_gpu_device, cc_major),
	F(xpu_gpu_device, cc_minor),
	F(xpu_gpu_device, reserved),
	F(xpu_gpu_device, global_memory),
	F(xpu_offcpu, start),
	F(xpu_offcpu, end),
	F(xpu_offcpu, off_ns),
	F(xpu_offcpu, pid),
	F(xpu_offcpu, tid),
	F(xpu_offcpu, cpu),
	F(xpu_offcpu, state),
	F(xpu_offcpu, flags),
	F(xpu_offcpu, syscall),
	F(xpu_offcpu, stack),
	F(xpu_py_stack, time),
	F(xpu_py_stack, pid),
	F(xpu_py_stack, tid),
	F(xpu_py_stack, nr_frames),
	F(xpu_py_stack, version),
	F(xpu_py_stack, flags),
	F(xpu_py_frame, code),
	F(xpu_py_frame, offset),
	F(xpu_py_frame, flags),
	F(xpu_py_frame, code_key),
	F(xpu_py_code, addr),
	F(xpu_py_code, pid),
	F(xpu_py_code, version),
	F(xpu_py_code, flags),
	F(xpu_py_code, firstlineno),
	F(xpu_py_code, qualname_size),
	F(xpu_py_code, filename_size),
	F(xpu_py_code, linetable_size),
	F(xpu_py_code, code_key),
	F(xpu_py_code, reserved),
	F(xpu_gpu_nvtx, start),
	F(xpu_gpu_nvtx, end),
	F(xpu_gpu_nvtx, range_id),
	F(xpu_gpu_nvtx, pid),
	F(xpu_gpu_nvtx, tid),
	F(xpu_gpu_nvtx, end_tid),
	F(xpu_gpu_nvtx, domain_id),
	F(xpu_gpu_nvtx, message_id),
	F(xpu_gpu_nvtx, flags),
	F(xpu_gpu_nvtx, depth),
	F(xpu_gpu_nvtx, color),
	F(xpu_gpu_graph_node, time),
	F(xpu_gpu_graph_node, node_id),
	F(xpu_gpu_graph_node, orig_node_id),
	F(xpu_gpu_graph_node, api_correlation_id),
	F(xpu_gpu_graph_node, pid),
	F(xpu_gpu_graph_node, tid),
	F(xpu_gpu_graph_node, graph_id),
	F(xpu_gpu_graph_node, orig_graph_id),
	F(xpu_gpu_graph_node, node_type),
	F(xpu_gpu_graph_node, flags),
	F(xpu_proc_env, time),
	F(xpu_proc_env, pid),
	F(xpu_proc_env, flags),
	F(xpu_autograd, time),
	F(xpu_autograd, pid),
	F(xpu_autograd, tid),
	F(xpu_autograd, seq),
	F(xpu_autograd, node),
	F(xpu_autograd, kind),
	F(xpu_autograd, reserved),
	F(xpu_gpu_pc_sample, start),
	F(xpu_gpu_pc_sample, end),
	F(xpu_gpu_pc_sample, cubin_crc),
	F(xpu_gpu_pc_sample, pc_offset),
	F(xpu_gpu_pc_sample, pid),
	F(xpu_gpu_pc_sample, name_id),
	F(xpu_gpu_pc_sample, correlation_id),
	F(xpu_gpu_pc_sample, device),
	F(xpu_gpu_pc_sample, context),
	F(xpu_gpu_pc_sample, nr_stalls),
	F(xpu_gpu_pc_sample, flags),
	F(xpu_gpu_pc_stall, reason),
	F(xpu_gpu_pc_stall, samples),
	F(xpu_gpu_stall_reason, pid),
	F(xpu_gpu_stall_reason, device),
	F(xpu_gpu_stall_reason, index),
	F(xpu_gpu_stall_reason, reserved),
	F(xpu_gpu_cubin, crc),
	F(xpu_gpu_cubin, size),
	F(xpu_gpu_cubin, pid),
	F(xpu_gpu_cubin, flags),
	F(xpu_gpu_pc_range, start),
	F(xpu_gpu_pc_range, end),
	F(xpu_gpu_pc_range, pid),
	F(xpu_gpu_pc_range, device),
	F(xpu_gpu_pc_range, context),
	F(xpu_gpu_pc_range, flags),
	F(xpu_gpu_memory, time),
	F(xpu_gpu_memory, correlation_id),
	F(xpu_gpu_memory, address),
	F(xpu_gpu_memory, bytes),
	F(xpu_gpu_memory, pool_address),
	F(xpu_gpu_memory, pid),
	F(xpu_gpu_memory, device),
	F(xpu_gpu_memory, context),
	F(xpu_gpu_memory, stream),
	F(xpu_gpu_memory, op),
	F(xpu_gpu_memory, memory_kind),
	F(xpu_gpu_memory, pool_type),
	F(xpu_gpu_memory, reserved),
	F(xpu_gpu_memory, flags),
	F(xpu_gpu_mempool, time),
	F(xpu_gpu_mempool, correlation_id),
	F(xpu_gpu_mempool, address),
	F(xpu_gpu_mempool, size),
	F(xpu_gpu_mempool, utilized),
	F(xpu_gpu_mempool, release_threshold),
	F(xpu_gpu_mempool, pid),
	F(xpu_gpu_mempool, device),
	F(xpu_gpu_mempool, op),
	F(xpu_gpu_mempool, pool_type),
	F(xpu_gpu_mempool, reserved),
	F(xpu_gpu_mempool, flags),
	F(xpu_gpu_block, time),
	F(xpu_gpu_block, ptr),
	F(xpu_gpu_block, size),
	F(xpu_gpu_block, stream),
	F(xpu_gpu_block, stack_id),
	F(xpu_gpu_block, pid),
	F(xpu_gpu_block, tid),
	F(xpu_gpu_block, device),
	F(xpu_gpu_block, op),
	F(xpu_gpu_block, source),
	F(xpu_gpu_block, flags),
	F(xpu_gpu_mem_state, time),
	F(xpu_gpu_mem_state, free),
	F(xpu_gpu_mem_state, total),
	F(xpu_gpu_mem_state, used_before),
	F(xpu_gpu_mem_state, pid),
	F(xpu_gpu_mem_state, device),
	F(xpu_gpu_mem_state, flags),
	F(xpu_gpu_mem_state, reserved),
	F(xpu_gpu_oom, time),
	F(xpu_gpu_oom, bytes),
	F(xpu_gpu_oom, correlation_id),
	F(xpu_gpu_oom, pid),
	F(xpu_gpu_oom, tid),
	F(xpu_gpu_oom, device),
	F(xpu_gpu_oom, source),
	F(xpu_gpu_oom, domain),
	F(xpu_gpu_oom, cbid),
	F(xpu_gpu_oom, ret),
	F(xpu_gpu_oom, reserved),
	F(xpu_stack_delta, type),
	F(xpu_stack_delta, flags),
	F(xpu_stack_delta, back),
	F(xpu_stack_delta, ops_size),
	F(xpu_stack_delta, shift),
};
#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* Section headings that name their struct without "`struct x`" in them. */
static const struct { const char *heading, *strct; } named[] = {
	{ "## File header", "xpu_file_header" },
	{ "## Chunks", "xpu_chunk_header" },
	{ "## Records", "xpu_record_header" },
};

static char *spec;

/* A file of the source tree, NUL-terminated; exits when it cannot be read. */
static char *load_file(const char *rel)
{
	const char *top = getenv("XPU_TOP");
	char path[4096], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", top ? top : ".", rel);
	f = fopen(path, "r");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0) {
		fprintf(stderr, "cannot read %s (run from the repository root or set XPU_TOP)\n", path);
		exit(1);
	}
	rewind(f);
	buf = calloc(1, n + 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n)
		exit(1);
	fclose(f);
	return buf;
}

static void load_spec(void)
{
	spec = load_file("Documentation/xpu-data-format.md");
}

/* The struct a heading line documents, or NULL. */
static const char *heading_struct(const char *line, size_t len, char *buf, size_t cap)
{
	const char *p = memmem(line, len, "`struct xpu_", 12);

	if (p) {
		size_t n = strcspn(p + 8, "`");

		snprintf(buf, cap, "%.*s", (int)n, p + 8);
		return buf;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (len == strlen(named[i].heading) && !memcmp(line, named[i].heading, len))
			return named[i].strct;
	return NULL;
}

/* Walks the spec: in each struct's section, rows "| off | size | type | field |"
 * must match the fields of that struct, in order. */
static void test_layout_tables(void)
{
	char cur[64], buf[64];
	const char *strct = NULL, *p = spec;
	size_t next = 0, covered = 0;
	unsigned seen = 0, rows = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		size_t off, size;
		char type[64], name[64];

		if (*p == '#') {
			if (strct)	/* the previous struct's table must be complete */
				TEST_ASSERT(next == NR_FIELDS || strcmp(fields[next].strct, cur));
			strct = heading_struct(p, len, buf, sizeof(buf));
			if (strct) {
				snprintf(cur, sizeof(cur), "%s", strct);
				strct = cur;
				for (next = 0; next < NR_FIELDS && strcmp(fields[next].strct, cur); next++)
					;
				if (next == NR_FIELDS) {
					fprintf(stderr, "  spec documents unknown struct %s\n", cur);
					TEST_ASSERT(0);
				}
				covered = 0;
				seen++;
			}
		} else if (strct && sscanf(p, "| %zu | %zu | %63[^|]| %63[^ |] |", &off, &size, type, name) == 4) {
			const struct field *f = &fields[next];

			if (next == NR_FIELDS || strcmp(f->strct, cur) || strcmp(f->name, name) ||
			    f->off != off || f->size != size || off != covered) {
				fprintf(stderr, "  spec row '%.*s' of %s: code has %s.%s at %zu, %zu bytes\n",
					(int)len, p, cur, next < NR_FIELDS ? f->strct : "-",
					next < NR_FIELDS ? f->name : "-", next < NR_FIELDS ? f->off : 0,
					next < NR_FIELDS ? f->size : 0);
				TEST_ASSERT(0);
			}
			covered = off + size;
			if (next + 1 == NR_FIELDS || strcmp(fields[next + 1].strct, cur))
				TEST_ASSERT_EQ(covered, f->strct_size);	/* every byte documented */
			next++;
			rows++;
		}
		p += len + (eol != NULL);
	}
	TEST_ASSERT_EQ(rows, NR_FIELDS);
	TEST_ASSERT_EQ(seen, 40);
}

/* The first field of struct strct in fields[], or NULL. */
static const struct field *first_field(const char *strct)
{
	for (size_t i = 0; i < NR_FIELDS; i++)
		if (!strcmp(fields[i].strct, strct))
			return &fields[i];
	return NULL;
}

/* A table row's flags against its spec body ("`struct xpu_mmap` + path"):
 * a time is the struct's first field, time or start; a stack part is its
 * field "stack"; a string follows the whole struct. */
static bool row_parts_agree(unsigned type, const char *body)
{
	const struct xpu_rectype *row = xpu_rectype__get(type);
	const struct field *f;
	char strct[64];

	if (!row)
		return false;
	if (sscanf(body, "`struct %63[a-z0-9_]`", strct) != 1)	/* META: no struct */
		return !(row->flags & (XPU_RECF_TIME | XPU_RECF_STACK | XPU_RECF_STRING));
	f = first_field(strct);
	if (!f)
		return false;
	if ((row->flags & XPU_RECF_TIME) &&
	    (f->off || f->size != 8 || (strcmp(f->name, "time") && strcmp(f->name, "start"))))
		return false;
	if (!!(row->flags & XPU_RECF_STRING) != (strstr(body, "` + ") && !strstr(body, "stack")))
		return false;
	if ((row->flags & XPU_RECF_STRING) && row->fixed != f->strct_size)
		return false;
	if (!!(row->flags & XPU_RECF_STACK) != !!strstr(body, "+ stack part"))
		return false;
	for (; (row->flags & XPU_RECF_STACK) && f < fields + NR_FIELDS && !strcmp(f->strct, strct); f++)
		if (!strcmp(f->name, "stack"))
			return f->off == row->stack_off;
	return !(row->flags & XPU_RECF_STACK);
}

/* Types the record-type table knows. */
static unsigned nr_table_rows(void)
{
	unsigned n = 0;

	for (unsigned t = 0; t <= UINT16_MAX; t++)
		n += xpu_rectype__get(t) != NULL;
	return n;
}

/* "| 6 | SAMPLE | ... | 40 | ..." rows of the record-type table. */
static void test_type_table(void)
{
	const char *p = strstr(spec, "## Record types");
	unsigned found = 0;

	TEST_ASSERT(p);
	for (; *p && strncmp(p, "\n### ", 5); p++) {
		unsigned type;
		size_t min;
		char name[32], body[128];

		if (*p != '\n' || sscanf(p + 1, "| %u | %31[A-Z_] | %127[^|]| %zu |", &type, name, body, &min) != 4)
			continue;
		if (strcmp(xpu_record__type_name(type), name) || xpu_record__min_size(type) != min) {
			fprintf(stderr, "  spec: type %u %s min %zu; code: %s min %zu\n", type, name, min,
				xpu_record__type_name(type), xpu_record__min_size(type));
			TEST_ASSERT(0);
		}
		if (!row_parts_agree(type, body)) {
			fprintf(stderr, "  type %u %s: the table's flags or offsets disagree with its "
				"body '%s'\n", type, name, body);
			TEST_ASSERT(0);
		}
		found++;
	}
	TEST_ASSERT_EQ(found, nr_table_rows());
}

/* Every "XPU_REC_NAME = N," of enum xpu_record_type (but XPU_REC_MAX) has a
 * table row named NAME with a minimum size, and a printer; the table has no
 * other rows: a type added to the enum alone fails here. */
static void test_enum_has_rows(void)
{
	char *hdr = load_file("format/xpu_format.h");
	const char *p = strstr(hdr, "enum xpu_record_type {");
	const char *end = p ? strstr(p, "};") : NULL;
	unsigned found = 0;

	TEST_ASSERT(p && end);
	while ((p = strstr(p, "XPU_REC_")) && p < end) {
		const struct xpu_rectype *row;
		char name[32];
		unsigned val;

		if (sscanf(p, "XPU_REC_%31[A-Z0-9_] = %u", name, &val) != 2) {
			p++;
			continue;
		}
		p++;
		if (!strcmp(name, "MAX")) {
			TEST_ASSERT_EQ(val, XPU_REC_MAX);
			continue;
		}
		row = xpu_rectype__get(val);
		if (!row || strcmp(row->name, name) || !row->min_size || !xpu_record__printer(val)) {
			fprintf(stderr, "  enum xpu_record_type has XPU_REC_%s = %u: add its row to "
				"format/record_types.c (name, min_size, flags) and its printer to "
				"format/record_print.c\n", name, val);
			TEST_ASSERT(0);
		}
		TEST_ASSERT(val < XPU_REC_MAX);
		found++;
	}
	free(hdr);
	TEST_ASSERT(found > 0);
	TEST_ASSERT_EQ(found, nr_table_rows());
}

/* Every "XPU_LOST_NAME = N," of enum xpu_lost_source has the spec's row
 * "| N | `XPU_LOST_NAME` |" and a name of its own; XPU_LOST_MAX is one
 * past the last, so the reports' loops over the sources reach it. */
static void test_lost_sources(void)
{
	char *hdr = load_file("format/xpu_format.h");
	const char *p = strstr(hdr, "enum xpu_lost_source {");
	const char *end = p ? strstr(p, "};") : NULL;
	unsigned found = 0, last = 0;

	TEST_ASSERT(p && end);
	while ((p = strstr(p, "XPU_LOST_")) && p < end) {
		char name[32], row[64];
		unsigned val;

		if (sscanf(p++, "XPU_LOST_%31[A-Z0-9_] = %u", name, &val) != 2)
			continue;
		snprintf(row, sizeof(row), "| %u | `XPU_LOST_%s` |", val, name);
		if (!strstr(spec, row) || !strcmp(xpu_lost_source__name(val), "other")) {
			fprintf(stderr, "  enum xpu_lost_source has XPU_LOST_%s = %u: add the spec's "
				"row '%s' and its name to xpu_lost_source__name() "
				"(format/record_print.c)\n", name, val, row);
			TEST_ASSERT(0);
		}
		TEST_ASSERT_EQ(val, last + 1);
		last = val;
		found++;
	}
	free(hdr);
	TEST_ASSERT(found > 0);
	TEST_ASSERT_EQ(last + 1, (unsigned)XPU_LOST_MAX);
	TEST_ASSERT(!strcmp(xpu_lost_source__name(XPU_LOST_MAX), "other"));
}

/* Version line and the constants the prose quotes. */
static void test_constants(void)
{
	char line[64];

	snprintf(line, sizeof(line), "**Format version %d.%d**", XPU_VERSION_MAJOR, XPU_VERSION_MINOR);
	TEST_ASSERT(strstr(spec, line));
	snprintf(line, sizeof(line), "0x%08x", XPU_CHUNK_MAGIC);
	TEST_ASSERT(strstr(spec, line));
	snprintf(line, sizeof(line), "%u", XPU_CHUNK_MAX_RAW);
	TEST_ASSERT(strstr(spec, line));
	snprintf(line, sizeof(line), "| %d.%d |", XPU_VERSION_MAJOR, XPU_VERSION_MINOR);
	TEST_ASSERT(strstr(spec, line));		/* a change-log entry */
}

int main(void)
{
	load_spec();
	TEST_RUN(test_layout_tables);
	TEST_RUN(test_type_table);
	TEST_RUN(test_enum_has_rows);
	TEST_RUN(test_lost_sources);
	TEST_RUN(test_constants);
	free(spec);
	TEST_EXIT();
}

/* SPDX-License-Identifier: MIT */
/*
 * One record of every known type with distinct, recognisable field values,
 * shared by the format unit tests and the fuzz corpus generator
 * (tests/fuzz/make_corpus.c) so both exercise every layout in xpu_format.h.
 */
#ifndef XPU_TESTS_FORMAT_RECORDS_H
#define XPU_TESTS_FORMAT_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "format/xpu_format.h"

struct tf_rec {
	uint16_t type;
	uint16_t flags;
	uint32_t len;			/* body bytes before padding */
	uint64_t body[80];		/* 8-aligned, like the reader's bodies */
};

/* Appends a fixed part and an optional NUL-terminated string. */
static inline struct tf_rec *tf__put(struct tf_rec *r, uint16_t type, const void *fixed,
				     size_t flen, const char *str)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	memcpy(r->body, fixed, flen);
	r->len = flen;
	if (str) {
		memcpy((char *)r->body + flen, str, strlen(str) + 1);
		r->len += strlen(str) + 1;
	}
	return r + 1;
}

/* A stack part: nk kernel ips, nu user ips, nr regs, ns stack bytes. */
static inline size_t tf__stack(uint8_t *p, uint16_t nk, uint16_t nu, uint16_t nr,
			       uint32_t ns, uint32_t flags, uint64_t seed)
{
	struct xpu_stack h = {
		.nr_kernel_ips = nk, .nr_user_ips = nu, .nr_regs = nr,
		.arch = nr ? XPU_ARCH_X86_64 : 0, .stack_size = ns, .flags = flags,
	};
	uint8_t *q = p + sizeof(h);

	memcpy(p, &h, sizeof(h));
	for (unsigned i = 0; i < (unsigned)nk + nu + nr; i++, q += 8) {
		uint64_t v = (i < nk ? 0xffffffff81000000ull : 0x555555554000ull) + seed * 0x1000 + i * 16;

		memcpy(q, &v, 8);
	}
	for (uint32_t i = 0; i < ns; i++)
		*q++ = (uint8_t)(seed + i * 7);
	return sizeof(h) + 8 * ((size_t)nk + nu + nr) + ns;
}

/* Fills recs (room for at least TF_NR_RECORDS) and returns how many. seed
 * varies the values so records of different calls differ. */
#define TF_NR_RECORDS 37
static inline int tf__make_records(struct tf_rec *recs, uint64_t seed)
{
	struct tf_rec *r = recs;
	uint64_t t = 1000000000ull + seed * 1000;

	{	/* META: key\0value\0 */
		static const char kv[] = "cmdline\0./app --steps 10";

		r = tf__put(r, XPU_REC_META, kv, sizeof(kv), NULL);
	}
	{
		struct xpu_comm c = { .time = t + 1, .pid = 100 + seed, .tid = 101 + seed,
				      .flags = XPU_COMM_EXEC, .comm = "trainer" };
		r = tf__put(r, XPU_REC_COMM, &c, sizeof(c), NULL);
	}
	{
		struct xpu_fork f = { .time = t + 2, .pid = 200, .tid = 201, .ppid = 100, .ptid = 101 };
		r = tf__put(r, XPU_REC_FORK, &f, sizeof(f), NULL);
	}
	{
		struct xpu_exit e = { .time = t + 3, .pid = 200, .tid = 201,
				      .flags = XPU_EXIT_HAS_STATUS, .status = 256 };
		r = tf__put(r, XPU_REC_EXIT, &e, sizeof(e), NULL);
	}
	{
		struct xpu_mmap m = { .time = t + 4, .pid = 100, .tid = 100, .start = 0x7f0000000000ull,
				      .len = 0x21000, .pgoff = 0x1000, .prot = 5, .flags = 2,
				      .build_id_size = 20 };
		for (int i = 0; i < 20; i++)
			m.build_id[i] = (uint8_t)(0xa0 + i + seed);
		r = tf__put(r, XPU_REC_MMAP, &m, sizeof(m), "/usr/lib/x86_64-linux-gnu/libfoo.so.1");
	}
	{	/* frame-pointer sample: kernel + user ips */
		struct xpu_sample s = { .time = t + 5, .pid = 100, .tid = 102, .cpu = 1, .weight = 1 };

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_SAMPLE;
		memcpy(r->body, &s, offsetof(struct xpu_sample, stack));
		r->len = offsetof(struct xpu_sample, stack) +
			 tf__stack((uint8_t *)r->body + offsetof(struct xpu_sample, stack),
				   3, 6, 0, 0, XPU_STACK_KERNEL_MODE, seed);
		r++;
	}
	{	/* DWARF sample: registers + copied stack (odd size: padding follows) */
		struct xpu_sample s = { .time = t + 6, .pid = 100, .tid = 100, .cpu = 0, .weight = 1 };

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_SAMPLE;
		memcpy(r->body, &s, offsetof(struct xpu_sample, stack));
		r->len = offsetof(struct xpu_sample, stack) +
			 tf__stack((uint8_t *)r->body + offsetof(struct xpu_sample, stack),
				   0, 0, XPU_X86_NR_REGS, 203, XPU_STACK_USER_TRUNCATED, seed);
		r++;
	}
	{
		struct xpu_lost l = { .time = t + 7, .source = XPU_LOST_SAMPLES, .pid = 0, .count = 42 };
		r = tf__put(r, XPU_REC_LOST, &l, sizeof(l), NULL);
	}
	{
		struct xpu_ksym k = { .addr = 0xffffffff81234560ull, .size = 0x80 };
		r = tf__put(r, XPU_REC_KSYM, &k, sizeof(k), "do_sys_openat2");
	}
	{
		struct xpu_perf_map pm = { .pid = 100, .start = 0x7f1234000000ull, .size = 0x40 };
		r = tf__put(r, XPU_REC_PERF_MAP, &pm, sizeof(pm), "py::train_step:/work/train.py");
	}
	{
		struct xpu_string s = { .pid = 100, .id = 7 };
		r = tf__put(r, XPU_REC_STRING, &s, sizeof(s), "_Z10vector_addPKfS0_Pfi");
	}
	{
		struct xpu_gpu_kernel k = { .start = t + 100, .end = t + 900, .correlation_id = 55 + seed,
					    .graph_node_id = 0, .pid = 100, .name_id = 7, .device = 0,
					    .context = 1, .stream = 7, .graph_id = 0,
					    .grid = { 128, 1, 1 }, .block = { 256, 1, 1 },
					    .static_smem = 1024, .dynamic_smem = 4096,
					    .registers = 32, .launch_type = 0 };
		r = tf__put(r, XPU_REC_GPU_KERNEL, &k, sizeof(k), NULL);
	}
	{
		struct xpu_gpu_memcpy m = { .start = t + 10, .end = t + 50, .correlation_id = 54 + seed,
					    .bytes = 1 << 20, .pid = 100, .stream = 7,
					    .copy_kind = XPU_MEMCPY_HTOD, .src_kind = 1, .dst_kind = 2,
					    .flags = 1 };
		r = tf__put(r, XPU_REC_GPU_MEMCPY, &m, sizeof(m), NULL);
	}
	{
		struct xpu_gpu_memset m = { .start = t + 60, .end = t + 70, .correlation_id = 53 + seed,
					    .bytes = 4096, .pid = 100, .stream = 7, .value = 0xab };
		r = tf__put(r, XPU_REC_GPU_MEMSET, &m, sizeof(m), NULL);
	}
	{
		struct xpu_gpu_sync s = { .start = t + 900, .end = t + 950, .correlation_id = 56 + seed,
					  .pid = 100, .type = 3, .context = 1, .stream = ~0u };
		r = tf__put(r, XPU_REC_GPU_SYNC, &s, sizeof(s), NULL);
	}
	{
		struct xpu_gpu_api a = { .start = t + 90, .end = t + 99, .correlation_id = 55 + seed,
					 .pid = 100, .tid = 100, .domain = XPU_API_RUNTIME,
					 .cbid = 211, .ret = 0 };
		r = tf__put(r, XPU_REC_GPU_API, &a, sizeof(a), NULL);
	}
	{	/* correlation record with a frame-pointer stack */
		struct xpu_gpu_corr c = { .time = t + 91, .pid = 100, .tid = 100, .cpu = 1,
					  .domain = XPU_API_RUNTIME, .correlation_id = 55 + seed,
					  .cbid = 211 };

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_GPU_CORR;
		memcpy(r->body, &c, offsetof(struct xpu_gpu_corr, stack));
		r->len = offsetof(struct xpu_gpu_corr, stack) +
			 tf__stack((uint8_t *)r->body + offsetof(struct xpu_gpu_corr, stack),
				   0, 12, 0, 0, 0, seed);
		r++;
	}
	{
		struct xpu_gpu_device d = { .pid = 100, .id = 0, .sm_count = 132, .cc_major = 9,
					    .cc_minor = 0, .global_memory = 80ull << 30 };
		r = tf__put(r, XPU_REC_GPU_DEVICE, &d, sizeof(d), "NVIDIA H100 80GB HBM3");
	}
	{	/* off-CPU block in a system call: kernel ips + fp user ips */
		struct xpu_offcpu o = { .start = t + 8, .end = t + 80, .off_ns = 70, .pid = 100,
					.tid = 101, .cpu = 1, .state = 1,
					.flags = XPU_OFFCPU_SYSCALL, .syscall = 202 };

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_OFFCPU;
		memcpy(r->body, &o, offsetof(struct xpu_offcpu, stack));
		r->len = offsetof(struct xpu_offcpu, stack) +
			 tf__stack((uint8_t *)r->body + offsetof(struct xpu_offcpu, stack),
				   5, 4, 0, 0, XPU_STACK_KERNEL_MODE, seed);
		r++;
	}
	{
		struct xpu_gpu_nvtx n = { .start = t + 85, .end = t + 960, .range_id = 1 + seed,
					  .pid = 100, .tid = 100, .end_tid = 100, .message_id = 7,
					  .flags = XPU_NVTX_PUSHPOP, .depth = 0, .color = 0xff00ff00 };
		r = tf__put(r, XPU_REC_GPU_NVTX, &n, sizeof(n), NULL);
	}
	{	/* a kernel node cloned at instantiation from a captured one */
		struct xpu_gpu_graph_node gn = { .time = t + 86, .node_id = 0x200000002ull + seed,
						 .orig_node_id = 0x100000002ull, .pid = 100, .tid = 100,
						 .graph_id = 3, .orig_graph_id = 2,
						 .flags = XPU_GRAPH_NODE_CLONED };

		r = tf__put(r, XPU_REC_GPU_GRAPH_NODE, &gn, sizeof(gn), NULL);
	}
	{	/* a code object, then a Python stack of two frames naming it */
		static const char names[] = "Model.forward\0/srv/train.py\0\x80\x00\xd8\x04";
		struct xpu_py_code c = { .addr = 0x7f00aa000000ull + seed * 64, .pid = 100,
					 .version = 0x030b, .firstlineno = 40, .qualname_size = 14,
					 .filename_size = 14, .linetable_size = 4, .code_key = 0x5eed };

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_PY_CODE;
		memcpy(r->body, &c, sizeof(c));
		memcpy((char *)r->body + sizeof(c), names, 32);
		r->len = sizeof(c) + 32;
		r++;
	}
	{
		struct xpu_py_stack st = { .time = t + 90, .pid = 100, .tid = 100, .nr_frames = 2,
					   .version = 0x030b };
		struct xpu_py_frame f[2] = {
			{ .code = 0x7f00aa000000ull + seed * 64, .offset = 6, .code_key = 0x5eed },
			{ .code = 0x7f00aa000000ull + seed * 64, .offset = 2,
			  .flags = XPU_PY_FRAME_ENTRY, .code_key = 0x5eed },
		};

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_PY_STACK;
		memcpy(r->body, &st, sizeof(st));
		memcpy((char *)r->body + sizeof(st), f, sizeof(f));
		r->len = sizeof(st) + sizeof(f);
		r++;
	}
	{	/* rank variables: two pairs, the padding after them is zero */
		static const char kv[] = "RANK\0" "1\0" "CUDA_VISIBLE_DEVICES\0" "2,3";
		struct xpu_proc_env e = { .time = t + 9, .pid = 100 + seed, .flags = 0 };

		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_PROC_ENV;
		memcpy(r->body, &e, sizeof(e));
		memcpy((char *)r->body + sizeof(e), kv, sizeof(kv));
		r->len = sizeof(e) + sizeof(kv);
		r++;
	}
	{	/* PC sampling: a stall name, a PC's samples by two reasons, a cubin */
		struct xpu_gpu_stall_reason sr = { .pid = 100, .device = 0, .index = 3 };
		struct xpu_gpu_pc_sample ps = { .start = t + 100, .end = t + 900,
						.cubin_crc = 0xc0b1 + seed, .pc_offset = 0x40,
						.pid = 100, .name_id = 7, .nr_stalls = 2 };
		struct xpu_gpu_pc_stall st[2] = { { 3, 5 + seed }, { 7, 2 } };
		struct xpu_gpu_cubin cb = { .crc = 0xc0b1 + seed, .size = 12, .pid = 100 };

		r = tf__put(r, XPU_REC_GPU_STALL_REASON, &sr, sizeof(sr),
			    "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_GPU_PC_SAMPLE;
		memcpy(r->body, &ps, sizeof(ps));
		memcpy((char *)r->body + sizeof(ps), st, sizeof(st));
		r->len = sizeof(ps) + sizeof(st);
		r++;
		memset(r, 0, sizeof(*r));
		r->type = XPU_REC_GPU_CUBIN;
		memcpy(r->body, &cb, sizeof(cb));
		memcpy((char *)r->body + sizeof(cb), "\x7f" "ELF" "cubin...", 12);
		r->len = sizeof(cb) + 16;
		r++;
	}
	{	/* a PC sampling range (duty-cycled sampling) */
		struct xpu_gpu_pc_range pr = { .start = t + 5, .end = t + 9, .pid = 100 + seed,
					       .device = 0, .context = 1 };

		r = tf__put(r, XPU_REC_GPU_PC_RANGE, &pr, sizeof(pr), NULL);
	}
	{	/* GPU memory: a cudaMalloc'd segment, a pool, a block in it, an OOM */
		struct xpu_gpu_memory gm = { .time = t + 6, .correlation_id = 7 + seed,
					     .address = 0x7f0000000000ull, .bytes = 2u << 20,
					     .pid = 100 + seed, .device = 0, .context = 1,
					     .stream = XPU_GPU_MEMORY_NO_STREAM,
					     .op = XPU_MEMORY_ALLOC, .memory_kind = XPU_MEMKIND_DEVICE };
		struct xpu_gpu_mempool mp = { .time = t + 6, .address = 0x5000, .size = 4u << 20,
					      .utilized = 1u << 20, .pid = 100 + seed,
					      .op = XPU_MEMPOOL_CREATED, .pool_type = 1 };
		struct xpu_gpu_block gb = { .time = t + 7, .ptr = 0x7f0000000200ull, .size = 512,
					    .stream = 0, .stack_id = 1, .pid = 100 + seed,
					    .tid = 101 + seed, .device = 0, .op = XPU_BLOCK_MALLOC,
					    .source = XPU_BLOCK_USDT };
		struct xpu_gpu_mem_state ms = { .time = t + 2, .free = 60ull << 30,
						.total = 80ull << 30, .used_before = 20ull << 30,
						.pid = 100 + seed, .flags = XPU_MEM_STATE_ATTACH };
		struct xpu_gpu_oom oom = { .time = t + 8, .bytes = 1ull << 40,
					   .correlation_id = 8 + seed, .pid = 100 + seed,
					   .tid = 101 + seed, .device = 0, .source = XPU_OOM_CUDA,
					   .domain = XPU_API_RUNTIME, .cbid = 20, .ret = 2 };

		r = tf__put(r, XPU_REC_GPU_MEMORY, &gm, sizeof(gm), NULL);
		r = tf__put(r, XPU_REC_GPU_MEMPOOL, &mp, sizeof(mp), NULL);
		r = tf__put(r, XPU_REC_GPU_BLOCK, &gb, sizeof(gb), NULL);
		r = tf__put(r, XPU_REC_GPU_MEM_STATE, &ms, sizeof(ms), NULL);
		r = tf__put(r, XPU_REC_GPU_OOM, &oom, sizeof(oom), NULL);
	}
	{	/* an autograd node made (its PY_STACK would come first) and run */
		struct xpu_autograd a = { .time = t + 10, .pid = 100 + seed, .tid = 101 + seed,
					  .seq = 12 + seed, .node = 0x5555000000a0ull,
					  .kind = XPU_AUTOGRAD_NODE };

		r = tf__put(r, XPU_REC_AUTOGRAD, &a, sizeof(a), NULL);
		a.time = t + 11;
		a.tid = 102 + seed;
		a.kind = XPU_AUTOGRAD_EVAL;
		r = tf__put(r, XPU_REC_AUTOGRAD, &a, sizeof(a), NULL);
	}
	{
		struct xpu_finish f = { .time = t + 1000, .nr_samples = 2, .nr_corr = 1,
					.nr_gpu = 4, .nr_lost = 42 };
		r = tf__put(r, XPU_REC_FINISH, &f, sizeof(f), NULL);
	}
	return (int)(r - recs);
}

/* Offset of chunk number idx (0-based) in a well-formed file, or len if it
 * has fewer chunks: for tests that damage a chosen chunk. */
static inline size_t test_format__chunk_at(const uint8_t *buf, size_t len, int idx)
{
	size_t pos = sizeof(struct xpu_file_header);

	while (pos + sizeof(struct xpu_chunk_header) <= len) {
		struct xpu_chunk_header ch;

		memcpy(&ch, buf + pos, sizeof(ch));
		if (!idx--)
			return pos;
		pos += ch.header_size + ch.comp_size;
	}
	return len;
}

#endif

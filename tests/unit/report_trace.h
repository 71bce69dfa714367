/* SPDX-License-Identifier: MIT */
/*
 * Test helper (header-only, included by the report unit tests): captures the
 * calling thread's registers and stack into an xpu_sample, and writes the
 * process's own executable mappings as MMAP records, so a test can build a
 * real DWARF-mode trace of itself without eBPF.
 */
#ifndef XPU_TESTS_REPORT_TRACE_H
#define XPU_TESTS_REPORT_TRACE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gelf.h>
#include "format/writer.h"
#include "report/symbols/dso.h"

/* Stores rax..r15 in DWARF order, then rsp and rip as they are in the caller
 * right after the call returns: the caller's frame as a sampler would see it. */
void rt_capture(uint64_t *regs);
__asm__(".text\n.globl rt_capture\n.type rt_capture,@function\nrt_capture:\n"
	"movq %rax,0(%rdi)\n movq %rdx,8(%rdi)\n movq %rcx,16(%rdi)\n movq %rbx,24(%rdi)\n"
	"movq %rsi,32(%rdi)\n movq %rdi,40(%rdi)\n movq %rbp,48(%rdi)\n"
	"leaq 8(%rsp),%rax\n movq %rax,56(%rdi)\n"
	"movq %r8,64(%rdi)\n movq %r9,72(%rdi)\n movq %r10,80(%rdi)\n movq %r11,88(%rdi)\n"
	"movq %r12,96(%rdi)\n movq %r13,104(%rdi)\n movq %r14,112(%rdi)\n movq %r15,120(%rdi)\n"
	"movq (%rsp),%rax\n movq %rax,128(%rdi)\n ret\n.size rt_capture,.-rt_capture\n");

#define RT_STACK_MAX 32768

struct rt_sample {
	struct xpu_sample s;
	uint64_t regs[XPU_X86_NR_REGS];
	uint8_t stack[RT_STACK_MAX];
};

static inline uint64_t rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* End of the mapping holding addr (the stack's vm_end), from /proc/self/maps. */
static inline uint64_t rt_map_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t end = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && addr >= s && addr < e) {
			end = e;
			break;
		}
	}
	if (f)
		fclose(f);
	return end;
}

/* Call right after rt_capture(smp->regs) in the function to be sampled.
 * It copies the live stack, other frames' ASan redzones included, as the
 * BPF program does: exempt from ASan, and a plain loop rather than the
 * intercepted memcpy. */
__attribute__((no_sanitize("address")))
static inline void rt_fill(struct rt_sample *smp, uint64_t stack_end)
{
	uint64_t sp = smp->regs[XPU_X86_RSP];
	uint64_t n = stack_end > sp ? stack_end - sp : 0;
	const volatile uint8_t *src = (const volatile uint8_t *)sp;

	if (n > RT_STACK_MAX)
		n = RT_STACK_MAX;
	for (uint64_t i = 0; i < n; i++)
		smp->stack[i] = src[i];
	smp->s = (struct xpu_sample){
		.time = rt_now(), .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
		.weight = 1,
		.stack = { .nr_regs = XPU_X86_NR_REGS, .arch = XPU_ARCH_X86_64,
			   .stack_size = (uint32_t)n },
	};
}

static inline int rt_write_sample(struct xpu_writer *w, const struct rt_sample *smp)
{
	struct iovec iov[3] = {
		{ (void *)&smp->s, sizeof(smp->s) },
		{ (void *)smp->regs, sizeof(smp->regs) },
		{ (void *)smp->stack, smp->s.stack.stack_size },
	};

	return xpu_writer__addv(w, XPU_REC_SAMPLE, 0, iov, 3);
}

static inline size_t rt_file_build_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t n = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		n = elf__build_id(elf, id, XPU_MMAP_BUILD_ID_MAX);
		elf_end(elf);
	}
	close(fd);
	return n;
}

/* MMAP records for our executable file mappings (+ COMM), written as those
 * of process pid (tests make up second processes with our code). time:
 * their creation time. Returns 0 or -1. */
static inline int rt_write_maps_as(struct xpu_writer *w, uint32_t pid, uint64_t time,
				   const char *comm)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	struct xpu_comm c = { .time = time, .pid = pid, .tid = pid, .flags = XPU_COMM_EXEC };

	if (!f)
		return -1;
	snprintf(c.comm, sizeof(c.comm), "%s", comm);
	xpu_writer__add(w, XPU_REC_COMM, &c, sizeof(c));
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perms[8], path[512] = "";
		struct xpu_mmap m = { 0 };
		struct iovec iov[2];

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %511s", &s, &e, perms, &off, path) < 4 ||
		    perms[2] != 'x' || path[0] != '/')
			continue;
		m.time = time;
		m.pid = m.tid = pid;
		m.start = s;
		m.len = e - s;
		m.pgoff = off;
		m.prot = 5;
		m.build_id_size = (uint8_t)rt_file_build_id(path, m.build_id);
		iov[0] = (struct iovec){ &m, sizeof(m) };
		iov[1] = (struct iovec){ path, strlen(path) + 1 };
		xpu_writer__addv(w, XPU_REC_MMAP, 0, iov, 2);
	}
	fclose(f);
	return 0;
}

static inline int rt_write_maps(struct xpu_writer *w, uint64_t time, const char *comm)
{
	return rt_write_maps_as(w, (uint32_t)getpid(), time, comm);
}

#endif

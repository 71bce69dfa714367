// SPDX-License-Identifier: MIT
/*
 * The trampoline xpu-record -p runs in a borrowed thread (trampoline.h;
 * Documentation/design-attach.md, "The order of things"): x86-64 code
 * generated for the process's addresses of dlopen, dlsym, dlerror and
 * __errno_location, written into a code cave by inject.c. It needs no
 * tracer: saved FPU state and errno, optional memfd_create, dlopen, the
 * attach entry, then the magic syscall, and, with no tracer there, every
 * register back from constants in its own code and a jump to where the
 * thread was.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>
#include "record/gpu/trampoline.h"

static void emit(struct trampoline *c, const void *bytes, size_t n)
{
	if (c->n + n <= sizeof(c->b))
		memcpy(c->b + c->n, bytes, n);
	c->n += n;
}

/* movabs $v, %reg (reg 0-15 in the x86 encoding) */
static void emit_movabs(struct trampoline *c, int reg, uint64_t v)
{
	uint8_t b[10] = { (uint8_t)(0x48 | (reg >= 8)), (uint8_t)(0xb8 + (reg & 7)) };

	memcpy(b + 2, &v, 8);
	emit(c, b, 10);
}

/* call *%rax */
static void emit_call_rax(struct trampoline *c)
{
	emit(c, "\xff\xd0", 2);
}

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };

void trampoline__build(struct trampoline *c, const struct trampoline_calls *t,
		       const struct trampoline_frame *fa, const struct user_regs_struct *back)
{
	size_t jz_dlopen, jz_dlsym, jmp_done, have_entry, to_error[2] = { 0, 0 };
	uint64_t regs[16] = {
		back->rax, back->rcx, back->rdx, back->rbx, back->rsp, back->rbp, back->rsi,
		back->rdi, back->r8, back->r9, back->r10, back->r11, back->r12, back->r13,
		back->r14, back->r15,
	};

	c->n = 0;
	/* the FPU, SSE and AVX state: xsave, every component (edx:eax = -1) */
	emit(c, "\x31\xc0\xf7\xd0\x89\xc2", 6);		/* xor eax; not eax; mov eax,edx */
	emit_movabs(c, RCX, fa->xsave);
	emit(c, fa->xsave_ok ? "\x48\x0f\xae\x21" : "\x48\x0f\xae\x01", 4);	/* xsave64/fxsave64 (%rcx) */
	emit(c, "\x45\x31\xed\x45\x31\xe4\x45\x31\xf6", 9);	/* r13 = r12 = r14 = 0 */
	emit(c, "\x49\xc7\xc7\xff\xff\xff\xff", 7);	/* r15 = -1: no memfd */
	if (t->errno_location) {
		/* the thread's errno, kept: *slot = *__errno_location() */
		emit_movabs(c, RAX, t->errno_location);
		emit_call_rax(c);
		emit(c, "\x8b\x08", 2);			/* mov (rax), ecx */
		emit_movabs(c, RDX, fa->errno_slot);
		emit(c, "\x89\x0a", 2);			/* mov ecx, (rdx) */
	}
	if (t->memfd) {
		/* r15 = memfd_create(name, MFD_CLOEXEC); the tracer fills it
		 * at the first stop and says go (0); no tracer: -ENOSYS */
		emit_movabs(c, RDI, fa->name);
		emit_movabs(c, RSI, 1);
		emit_movabs(c, RAX, 319);
		emit(c, "\x0f\x05\x49\x89\xc7", 5);		/* syscall; mov rax, r15 */
		emit(c, "\x41\xbd\x03\x00\x00\x00", 6);	/* r13 = 3 */
		emit(c, "\x48\x85\xc0\x0f\x88\x00\x00\x00\x00", 9);	/* test; js error */
		to_error[0] = c->n;
		emit_movabs(c, RDI, TRAMPOLINE_STAGE_MEMFD);
		emit(c, "\x4c\x89\xfe", 3);			/* mov r15, rsi */
		emit_movabs(c, RAX, TRAMPOLINE_MAGIC_SYSCALL);
		emit(c, "\x0f\x05", 2);
		emit(c, "\x41\xbd\x04\x00\x00\x00", 6);	/* r13 = 4 */
		emit(c, "\x48\x85\xc0\x0f\x85\x00\x00\x00\x00", 9);	/* test; jnz error */
		to_error[1] = c->n;
	}
	emit_movabs(c, RAX, t->attach);
	emit(c, "\x48\x85\xc0", 3);			/* test rax */
	emit(c, "\x0f\x85\x00\x00\x00\x00", 6);		/* jnz have_entry */
	have_entry = c->n;
	emit_movabs(c, RDI, fa->path);
	emit_movabs(c, RSI, t->libc_private ? 0x80000002ull : 2);	/* RTLD_NOW (| __RTLD_DLOPEN) */
	emit_movabs(c, RAX, t->dlopen);
	emit_call_rax(c);
	emit(c, "\x41\xbd\x01\x00\x00\x00", 6);		/* r13 = 1 */
	emit(c, "\x48\x85\xc0", 3);
	emit(c, "\x0f\x84\x00\x00\x00\x00", 6);		/* jz error */
	jz_dlopen = c->n;
	emit(c, "\x48\x89\xc7", 3);			/* mov rax, rdi */
	emit_movabs(c, RSI, fa->sym);
	emit_movabs(c, RAX, t->dlsym);
	emit_call_rax(c);
	emit(c, "\x41\xbd\x02\x00\x00\x00", 6);		/* r13 = 2 */
	emit(c, "\x48\x85\xc0", 3);
	emit(c, "\x0f\x84\x00\x00\x00\x00", 6);		/* jz error */
	jz_dlsym = c->n;
	/* have_entry: */
	{
		int32_t rel = (int32_t)(c->n - have_entry);

		memcpy(c->b + have_entry - 4, &rel, 4);
	}
	emit(c, "\x45\x31\xed", 3);			/* r13 = 0 */
	emit_movabs(c, RDI, fa->config);
	emit_call_rax(c);
	emit(c, "\x4c\x63\xe0", 3);			/* movslq eax, r12 */
	emit(c, "\xe9\x00\x00\x00\x00", 5);		/* jmp done */
	jmp_done = c->n;
	/* error: */
	{
		int32_t rel = (int32_t)(c->n - jz_dlopen);

		memcpy(c->b + jz_dlopen - 4, &rel, 4);
		rel = (int32_t)(c->n - jz_dlsym);
		memcpy(c->b + jz_dlsym - 4, &rel, 4);
		for (int i = 0; i < 2; i++) {
			rel = (int32_t)(c->n - to_error[i]);
			if (to_error[i])
				memcpy(c->b + to_error[i] - 4, &rel, 4);
		}
	}
	if (t->dlerror) {
		emit_movabs(c, RAX, t->dlerror);
		emit_call_rax(c);
		emit(c, "\x49\x89\xc6", 3);		/* mov rax, r14 */
	}
	/* done: */
	{
		int32_t rel = (int32_t)(c->n - jmp_done);

		memcpy(c->b + jmp_done - 4, &rel, 4);
	}
	if (t->memfd) {
		/* close(r15): the mapping keeps the file; -1 gives EBADF */
		emit(c, "\x4c\x89\xff", 3);
		emit_movabs(c, RAX, 3);
		emit(c, "\x0f\x05", 2);
	}
	if (t->errno_location) {
		/* errno back: *__errno_location() = *slot */
		emit_movabs(c, RAX, t->errno_location);
		emit_call_rax(c);
		emit_movabs(c, RDX, fa->errno_slot);
		emit(c, "\x8b\x0a\x89\x08", 4);		/* mov (rdx), ecx; mov ecx, (rax) */
	}
	emit(c, "\x31\xc0\xf7\xd0\x89\xc2", 6);
	emit_movabs(c, RCX, fa->xsave);
	emit(c, fa->xsave_ok ? "\x48\x0f\xae\x29" : "\x48\x0f\xae\x09", 4);	/* xrstor64/fxrstor64 */
	emit(c, "\x4c\x89\xef\x4c\x89\xe6\x4c\x89\xf2", 9);	/* rdi=r13 rsi=r12 rdx=r14 */
	emit_movabs(c, RAX, TRAMPOLINE_MAGIC_SYSCALL);
	emit(c, "\x0f\x05", 2);				/* syscall: the tracer stops here */
	/* no tracer: put everything back ourselves */
	emit_movabs(c, RAX, back->eflags);
	emit(c, "\x50\x9d", 2);				/* push rax; popfq */
	for (int r = 0; r < 16; r++)
		if (r != RSP)
			emit_movabs(c, r, regs[r]);
	emit_movabs(c, RSP, regs[RSP]);
	emit(c, "\xff\x25\x00\x00\x00\x00", 6);		/* jmp *0(%rip) */
	emit(c, &back->rip, 8);
}

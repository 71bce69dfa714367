/* SPDX-License-Identifier: MIT */
/*
 * The shape of Debian's CPython 3.14/3.15 eval loop, for tests/unit/test_pyeval.c
 * (report/symbols/pyeval.h): an exported _PyEval_EvalFrameDefault that is only
 * a head jumping into its cold part, a function of its own in .eh_frame
 * whose code a 256-entry dispatch table points into. Built stripped
 * (python3.99-fake, libpython3.99-fake.so: no symbol covers the cold part)
 * and not (*.full, where the test reads the local symbols' addresses).
 * Decoys that must stay nameless: a local function the head tail-calls
 * (fake_helper, no table), and one with a 256-entry switch table of its
 * own that the head never jumps into (fake_switch).
 */
	.text
	.globl	_PyEval_EvalFrameDefault
	.type	_PyEval_EvalFrameDefault, @function
_PyEval_EvalFrameDefault:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	testq	%rdi, %rdi
	je	fake_eval_cold
	cmpq	$1, %rdi
	je	fake_helper
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	_PyEval_EvalFrameDefault, .-_PyEval_EvalFrameDefault

	.type	fake_switch, @function
fake_switch:
	.cfi_startproc
	leaq	fake_switch_table(%rip), %rcx
	jmp	*(%rcx,%rdi,8)
.irp a,0,1,2,3,4,5,6,7
.irp b,0,1,2,3,4,5,6,7
.Lcase\a\b:
	movl	$0x\a\b, %eax
	ret
.endr
.endr
	.cfi_endproc
	.size	fake_switch, .-fake_switch

/* after fake_switch: the head's jump there is a rel32 one too */
	.type	fake_helper, @function
fake_helper:
	.cfi_startproc
	movq	%rsi, %rax
	ret
	.cfi_endproc
	.size	fake_helper, .-fake_helper

	.globl	main
	.type	main, @function
main:
	.cfi_startproc
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	main, .-main

/* the cold part: the dispatch loop, entered from the head by a jump */
	.section .text.unlikely,"ax",@progbits
	.type	fake_eval_cold, @function
fake_eval_cold:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	leaq	fake_dispatch_table(%rip), %rbx
	xorl	%eax, %eax
.Ldispatch:
	movzbl	(%rsi,%rax), %ecx
	jmp	*(%rbx,%rcx,8)
.irp a,0,1,2,3,4,5,6,7
.irp b,0,1,2,3,4,5,6,7
.Lop\a\b:
	addq	$\a\b, %rax
	jmp	.Ldispatch
.endr
.endr
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	fake_eval_cold, .-fake_eval_cold

/* the opcode dispatch table: 256 code pointers into the cold part
 * (relocated in the shared object) */
	.section .data.rel.ro,"aw"
	.balign	32
fake_dispatch_table:
.irp r,0,1,2,3
.irp a,0,1,2,3,4,5,6,7
.irp b,0,1,2,3,4,5,6,7
	.quad	.Lop\a\b
.endr
.endr
.endr

	.balign	32
fake_switch_table:
.irp r,0,1,2,3
.irp a,0,1,2,3,4,5,6,7
.irp b,0,1,2,3,4,5,6,7
	.quad	.Lcase\a\b
.endr
.endr
.endr
	.section .note.GNU-stack,"",@progbits

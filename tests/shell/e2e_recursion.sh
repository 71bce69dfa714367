#!/usr/bin/env bash
# Deep recursion through one call site (recurse_demo: main -> walk x13 ->
# spin, DWARF unwinding without frame pointers): every frame repeats the
# same return address at a higher stack pointer, and unwinding must go on
# to main rather than stop as "stuck" after two repeats (what cut 2.2% of
# gcc's cc1 stacks short), in the frames xpu-record writes and in the
# report's unwinding of the words; both unwinders agree (XPU_UNWIND_CHECK).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
DEMO=$XPU_BUILD/tests/workloads/recurse_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"
walk13=$(printf 'walk;%.0s' $(seq 13))
# the frames xpu-record writes (format 1.6), then the words, which the
# report unwinds (XPU_STACK_PRUNE=cfi)
for mode in frames words; do
	prune=
	[ $mode = words ] && prune=cfi
	XPU_STACK_PRUNE=$prune "$RECORD" -o "$T/run.data" -F 999 -- "$DEMO" 1 >"$T/run.out" 2>"$T/run.err" ||
		{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
	XPU_UNWIND_CHECK=1 report "$T/folded" -i "$T/run.data" --folded
	spin=$(folded_sum 'spin' <"$T/folded")
	full=$(folded_sum "main;${walk13}spin" <"$T/folded")
	note "$mode: spin: $spin samples, $full through main and 13 walk frames"
	[ "$spin" -gt 100 ] || fail "$mode: too few samples in spin: $spin"
	[ $((full * 100)) -ge $((spin * 99)) ] ||
		fail "$mode: only $full of $spin spin samples reach main through 13 walk frames: $(grep spin "$T/folded" | sort -k2 -nr | head -3)"
done
exit 0

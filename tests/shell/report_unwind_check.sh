#!/usr/bin/env bash
# The report's fast unwinder (common/unwind_cfi.c) evaluates libdw's CFI rules
# itself for speed; XPU_UNWIND_CHECK=1 unwinds every sample with libdwfl too
# and dies at the first difference. Run that over real recordings (C code
# built without frame pointers, a second thread, a forked child, libc), and
# check that reading chunks on worker threads (XPU_READER_THREADS) and
# unwinding each chunk's stacks on several (XPU_UNWIND_THREADS,
# report/unwind/unwind_ahead.c) change nothing either: the folded and stdio
# outputs must be byte for byte the same.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

# (the words the report unwinds, not the frames xpu-record writes by default)
XPU_STACK_PRUNE=cfi record_demo uc -F 999 --no-gpu -- 2
report "$T/plain" -i "$T/uc.data" --folded
XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/uc.data" --folded >"$T/checked" 2>"$T/checked.err" ||
	fail "XPU_UNWIND_CHECK=1: $(tail -n 1 "$T/checked.err")"
cmp -s "$T/plain" "$T/checked" || fail "--folded differs with XPU_UNWIND_CHECK=1"
for n in 1 3; do
	XPU_READER_THREADS=$n "$REPORT" -i "$T/uc.data" --folded >"$T/threads$n" 2>/dev/null ||
		fail "XPU_READER_THREADS=$n failed"
	cmp -s "$T/plain" "$T/threads$n" || fail "--folded differs with XPU_READER_THREADS=$n"
done
report "$T/plain.stdio" -i "$T/uc.data" --stdio
for n in 1 3; do
	XPU_UNWIND_THREADS=$n "$REPORT" -i "$T/uc.data" --folded -v >"$T/unwind$n" 2>"$T/unwind$n.err" ||
		fail "XPU_UNWIND_THREADS=$n failed: $(tail -n 1 "$T/unwind$n.err")"
	cmp -s "$T/plain" "$T/unwind$n" || fail "--folded differs with XPU_UNWIND_THREADS=$n"
	XPU_UNWIND_THREADS=$n "$REPORT" -i "$T/uc.data" --stdio >"$T/unwind$n.stdio" 2>/dev/null ||
		fail "XPU_UNWIND_THREADS=$n --stdio failed"
	cmp -s "$T/plain.stdio" "$T/unwind$n.stdio" || fail "--stdio differs with XPU_UNWIND_THREADS=$n"
done
grep -q 'unwound ahead' "$T/unwind1.err" && fail "XPU_UNWIND_THREADS=1 still unwound ahead"
ahead=$(sed -nE 's/.*unwind: ([0-9]+) stacks unwound ahead on 3 threads, ([0-9]+) of them used/\1 \2/p' "$T/unwind3.err")
read -r unwound used <<<"$ahead"
[ -n "$unwound" ] && [ "$unwound" -gt 0 ] && [ "$used" -eq "$unwound" ] ||
	fail "XPU_UNWIND_THREADS=3: no stacks unwound ahead, or some not used: $(grep 'unwind:' "$T/unwind3.err")"
note "$unwound stacks unwound on 3 threads, outputs identical"
note "$(folded_sum <"$T/plain") samples unwound identically by libdwfl and the fast unwinder"
echo ok

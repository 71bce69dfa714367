#!/usr/bin/env bash
# The report's fast unwinder (report/util/unwind_cfi.c) evaluates libdw's CFI rules
# itself for speed; XPU_UNWIND_CHECK=1 unwinds every sample with libdwfl too
# and dies at the first difference. Run that over real recordings (C code
# built without frame pointers, a second thread, a forked child, libc), and
# check that reading chunks on worker threads (XPU_READER_THREADS) changes
# nothing either: the folded output must be byte for byte the same.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

record_demo uc -F 999 --no-gpu -- 2
report "$T/plain" -i "$T/uc.data" --folded
XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/uc.data" --folded >"$T/checked" 2>"$T/checked.err" ||
	fail "XPU_UNWIND_CHECK=1: $(tail -n 1 "$T/checked.err")"
cmp -s "$T/plain" "$T/checked" || fail "--folded differs with XPU_UNWIND_CHECK=1"
for n in 1 3; do
	XPU_READER_THREADS=$n "$REPORT" -i "$T/uc.data" --folded >"$T/threads$n" 2>/dev/null ||
		fail "XPU_READER_THREADS=$n failed"
	cmp -s "$T/plain" "$T/threads$n" || fail "--folded differs with XPU_READER_THREADS=$n"
done
note "$(folded_sum <"$T/plain") samples unwound identically by libdwfl and the fast unwinder"
echo ok

#!/usr/bin/env bash
# Simple rules give the same frames (common/unwind_simple.h): with
# XPU_UNWIND_SIMPLE_CHECK=1 xpu-record walks every stack it unwinds a second
# time with rules cut down to rsp, rbp and the return address, from rip, rsp
# and rbp alone, and compares. On cpu_demo (threads and a forked child; also
# copies cut at 2 KiB), dlopen_demo (mappings that grow), Debian's
# python3.11 (the interpreter's frames) and gcc -O2 (cc1, a big C++
# program): no stack may walk to other frames, and nearly all must walk
# (the launch path's in-process walk, Documentation/design-gpu.md, falls
# back for the others).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
DL_DEMO=$XPU_BUILD/tests/workloads/dlopen_demo
[ -x "$DL_DEMO" ] || fail "dlopen_demo not built: run make tests-build"

# check NAME MIN_SHARE: the -v line of $T/NAME.err
check() {
	local line known same none differ
	line=$(grep 'unwind check: of the' "$T/$1.err") ||
		{ cat "$T/$1.err" >&2; fail "$1: no 'unwind check' line at -v"; }
	read -r known same none differ < <(sed -nE 's/.*of the ([0-9]+) known, ([0-9]+) walked .*, ([0-9]+) met a pc without one, ([0-9]+) gave other frames.*/\1 \2 \3 \4/p' <<<"$line")
	[ -n "${differ:-}" ] || fail "$1: cannot parse: $line"
	note "$1: $line"
	[ "$differ" -eq 0 ] || fail "$1: $differ stacks walked to other frames with simple rules"
	[ "$known" -gt 0 ] || fail "$1: no stack unwound by xpu-record"
	[ $((same + none)) -eq "$known" ] || fail "$1: $same + $none is not $known"
	in_range "$(ratio "$same" "$known")" "$2" 1 || fail "$1: only $same of $known stacks walked with simple rules"
}

export XPU_UNWIND_SIMPLE_CHECK=1
record_demo demo -v -F 999 -- 2
check demo 0.9
record_demo small -v -F 999 --call-graph dwarf,2048 -- 1
check small 0.9
"$RECORD" -v -o "$T/dl.data" -F 999 -- "$DL_DEMO" >"$T/dl.out" 2>"$T/dl.err" ||
	{ cat "$T/dl.err" >&2; fail "xpu-record dlopen_demo failed"; }
check dl 0.9

if command -v python3.11 >/dev/null; then
	"$RECORD" -v -o "$T/py.data" -F 999 -- python3.11 -c '
import json
for i in range(30000):
    json.loads(json.dumps({"k": list(range(50)), "s": str(i)}))
' >"$T/py.out" 2>"$T/py.err" || { cat "$T/py.err" >&2; fail "xpu-record python3.11 failed"; }
	check py 0.9
else
	note "no python3.11: its check skipped"
fi
if command -v gcc >/dev/null; then
	awk 'BEGIN { for (i = 0; i < 150; i++) {
		printf "int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++)\n", i
		printf "  s += a[i] * %d ^ (s >> 3); switch (n %% 3) { case 0: s++; break;\n", i + 1
		printf "  case 1: s -= a[0]; break; default: s ^= n; } return s; }\n" } }' >"$T/gen.c"
	"$RECORD" -v -o "$T/gcc.data" -F 999 -- gcc -O2 -c "$T/gen.c" -o "$T/gen.o" \
		>"$T/gcc.out" 2>"$T/gcc.err" || { cat "$T/gcc.err" >&2; fail "xpu-record gcc failed"; }
	check gcc 0.9
fi
exit 0

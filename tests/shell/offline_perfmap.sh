#!/usr/bin/env bash
# perf-map files: jit_demo runs a loop from an anonymous executable mapping
# that it names in /tmp/perf-PID.map. xpu-record copies the map into the
# trace; with the map file deleted the report still names the JIT frames.
. "$(dirname "$0")/lib/e2e.sh"
JIT_DEMO=$XPU_BUILD/tests/workloads/jit_demo
need_tools
need_bpf
[ "$(uname -m)" = x86_64 ] || skip "jit_demo writes x86-64 code"
[ -x "$JIT_DEMO" ] || fail "$JIT_DEMO not built: run make tests-build"

"$RECORD" -o "$T/run.data" -F 499 -- "$JIT_DEMO" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
map=$(sed -n 's/^jit_demo: map //p' "$T/run.out")
[ -n "$map" ] || fail "jit_demo did not print its map"
[ -f "$map" ] || fail "$map missing after the run"
rm -f "$map"

report "$T/dump" -i "$T/run.data" --dump
grep -Eq '^PERF_MAP +pid=[0-9]+ 0x[0-9a-f]+ size=15 jit_spin_hot' "$T/dump" ||
	fail "no PERF_MAP record for jit_spin_hot in the trace"
report "$T/folded" -i "$T/run.data" --folded
cat "$T/folded"
all=$(folded_sum '^jit_demo;' <"$T/folded")
jit=$(folded_sum '^jit_demo;(.*;)?jit_spin_hot$' <"$T/folded")
note "jit_spin_hot: $jit of $all samples"
[ "$all" -ge 50 ] || fail "only $all jit_demo samples"
in_range "$(ratio "$jit" "$all")" 0.8 1 || fail "only $jit of $all samples in jit_spin_hot"
grep -q 'anon' "$T/folded.err" && fail "the anonymous mapping is reported as a missing file"
exit 0

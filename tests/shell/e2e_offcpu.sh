#!/usr/bin/env bash
# End to end, off-CPU time (real eBPF): offcpu_demo blocks in nanosleep, a
# pipe read and a futex wait and measures each block itself. Recorded at
# 999 Hz with the default off-CPU recording, the report must give
#  - under --off-cpu, each path's weight within 5% of the time the workload
#    measured, under its own function and an [off-cpu] reason frame;
#  - under --wall, each thread's total within 5% of its lifetime (however
#    busy the machine: waiting for a CPU is off-CPU time too);
#  - under the default and --cpu-only views, the recorded samples only;
#  - with --no-off-cpu, no off-CPU records and a one-line error for --off-cpu.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
DEMO=$XPU_BUILD/tests/workloads/offcpu_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"

"$RECORD" -F 999 -o "$T/run.data" -- "$DEMO" >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err"; fail "xpu-record exited $?"; }
report "$T/off" -i "$T/run.data" --off-cpu --folded
folded_check_syntax <"$T/off" || fail "malformed folded output"
report "$T/off-nok" -i "$T/run.data" --off-cpu --folded --no-kernel

measured() { sed -nE "s/^offcpu_demo: $1 ([0-9]+)$/\1/p" "$T/run.out"; }

# check_path FUNC REASON_RE: the off-CPU weight under main;FUNC;...;[off-cpu] R
# (R matching REASON_RE) is the measured time at 999 Hz, within 5%.
check_path() {
	local fn=$1 reason=$2 ns want got
	ns=$(measured "$fn")
	[ -n "$ns" ] || fail "offcpu_demo printed no time for $fn: $(cat "$T/run.out")"
	want=$(awk -v n="$ns" 'BEGIN { printf "%d", n * 999 / 1e9 }')
	got=$(folded_sum "^offcpu_demo;(.*;)?main;$fn;(.*;)?\\[off-cpu\\] [^;]*$reason[^;]*\$" <"$T/off-nok")
	note "$fn: $got samples off CPU, measured $ns ns = $want samples"
	in_range "$(ratio "$got" "$want")" 0.95 1.05 ||
		fail "$fn: $got off-CPU samples under a '$reason' reason, expected $want +- 5%"
}
check_path block_sleep 'sleep'
check_path block_pipe 'pipe|read'
check_path block_futex 'futex'

# The kernel path is there too (--no-kernel drops it, not the reason).
grep -q 'block_futex;.*_\[k\];\[off-cpu\] ' "$T/off" || fail "no kernel frames above [off-cpu] in --off-cpu"
! grep -q 'bpf_prog_\|bpf_trace_run' "$T/off" || fail "the recorder's own BPF frames are in the stacks"

# --wall: each thread sums to its lifetime.
report "$T/wall" -i "$T/run.data" --wall --folded
while read -r name tid ns; do
	want=$(awk -v n="$ns" 'BEGIN { printf "%d", n * 999 / 1e9 }')
	got=$(folded_sum "^$name;" <"$T/wall")
	note "wall $name ($tid): $got samples, lifetime $ns ns = $want"
	in_range "$(ratio "$got" "$want")" 0.95 1.05 ||
		fail "--wall gives $name $got samples, its lifetime is $want +- 5%"
done < <(sed -nE 's/^offcpu_demo: wall ([^ ]+) ([0-9]+) ([0-9]+)$/\1 \2 \3/p' "$T/run.out")
[ "$(grep -c '^offcpu_demo: wall' "$T/run.out")" -eq 2 ] || fail "expected two threads' lifetimes"

# The default view and --cpu-only hold exactly the recorded samples.
written=$(summary_samples run)
report "$T/def" -i "$T/run.data" --folded
report "$T/cpu" -i "$T/run.data" --folded --cpu-only
[ "$(folded_sum <"$T/def")" -eq "$written" ] || fail "default view: $(folded_sum <"$T/def") samples, $written written"
[ "$(folded_sum <"$T/cpu")" -eq "$written" ] || fail "--cpu-only: $(folded_sum <"$T/cpu") samples, $written written"
! grep -q '\[off-cpu\]' "$T/def" || fail "off-CPU frames in the default view"

# --header says it was on and how.
report "$T/hdr" -i "$T/run.data" --header
grep -q '^# features:.* off-cpu' "$T/hdr" || fail "--header: no off-cpu feature"
grep -q 'off_cpu.*min_us=100' "$T/hdr" || fail "--header: no off_cpu = min_us=100"

# --off-cpu=MIN_US and --no-off-cpu.
"$RECORD" -F 99 --off-cpu=50000 -o "$T/min.data" -- "$DEMO" 0.5 >"$T/min.out" 2>"$T/min.err" ||
	fail "--off-cpu=50000 exited $?"
report "$T/min" -i "$T/min.data" --off-cpu --folded --no-kernel
grep -q 'block_futex;.*\[off-cpu\] [^;]*futex' "$T/min" || fail "--off-cpu=50000 lost the 100 ms futex blocks"
grep -q '\[off-cpu\] short blocks' "$T/min" || fail "--off-cpu=50000: blocks under 50 ms were not summed"
"$RECORD" -F 99 --no-off-cpu -o "$T/no.data" -- "$DEMO" 0.2 >"$T/no.out" 2>"$T/no.err" ||
	fail "--no-off-cpu exited $?"
"$REPORT" -i "$T/no.data" --dump | grep -q '^OFFCPU' && fail "--no-off-cpu wrote OFFCPU records"
"$REPORT" -i "$T/no.data" --off-cpu --folded >"$T/no.folded" 2>"$T/no.folded.err"
rc=$?
[ $rc -eq "$EXIT_NODATA" ] || fail "--off-cpu of a --no-off-cpu trace exited $rc, expected $EXIT_NODATA"
# one error line (warnings, e.g. a lost stack read, may come before it)
[ "$(grep -c '^xpu-report: error:' "$T/no.folded.err")" -eq 1 ] &&
	grep -q '^xpu-report: error: .*no off-CPU records' "$T/no.folded.err" ||
	fail "--off-cpu of a --no-off-cpu trace: $(cat "$T/no.folded.err")"
"$RECORD" --off-cpu=abc -- true 2>"$T/bad.err"
[ $? -eq "$EXIT_USAGE" ] || fail "--off-cpu=abc is not a usage error"
exit 0

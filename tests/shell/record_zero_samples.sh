#!/usr/bin/env bash
# A recording that should hold CPU samples and holds none says so (issue 31
# item 5): xpu-record on stderr, META cpu_samples, xpu-report --header and
# the profile outputs. The sampler is made blind for real: deny_perf_cpu
# fails perf_event_open on CPU 1 with ENODEV (as for a CPU offline when the
# recording started), and the command spins 0.5 s of CPU time pinned there.
. "$(dirname "$0")/lib/e2e.sh"

DENY=$XPU_BUILD/tests/workloads/deny_perf_cpu
APP=$XPU_BUILD/tests/workloads/fake_cuda_app	# without CUDA it only spins
[ -x "$DENY" ] && [ -x "$APP" ] || skip "test workloads not built: make tests-build"
need_tools
need_bpf
command -v taskset >/dev/null || skip "no taskset"
taskset -c 1 true 2>/dev/null || skip "CPU 1 is not online"

# the recorder is pinned too, so its child is on CPU 1 from the fork on: a
# command pinned only by its own taskset ran on CPU 0 until then, and one
# sample caught it there once beside a make -j2
"$DENY" 1 taskset -c 1 "$RECORD" --no-gpu -o "$T/blind.data" -- "$APP" 0 0.5 \
	>"$T/blind.out" 2>"$T/blind.err" || { cat "$T/blind.err" >&2; fail "xpu-record exited $?"; }
grep -Eq '^xpu-record: 0 samples,' "$T/blind.err" || fail "samples recorded: $(cat "$T/blind.err")"
WANT='CPU samples: none, although the recorded processes used 0\.[45][0-9]* s of CPU time \([0-9]+ sampling periods at 99 Hz\); 1 of the [0-9]+ online CPUs had no sampler'
grep -Eq "^xpu-record: warning: $WANT" "$T/blind.err" ||
	{ cat "$T/blind.err" >&2; fail "xpu-record did not say that no sample came"; }

report "$T/blind.header" -i "$T/blind.data" --header
grep -Eq "^#   cpu_samples: none, although" "$T/blind.header" || fail "no META cpu_samples"
grep -Eq "^#   WARNING: $WANT" "$T/blind.header" || fail "--header does not warn: $(cat "$T/blind.header")"
# --folded: the warning, then no profile (exit 10), not an empty one
"$REPORT" -i "$T/blind.data" --folded >"$T/blind.folded" 2>"$T/blind.folded.err"
rc=$?
[ $rc -eq "$EXIT_NODATA" ] || fail "--folded exited $rc, want $EXIT_NODATA"
grep -Eq "^xpu-report: warning: .*blind.data: $WANT" "$T/blind.folded.err" ||
	fail "--folded does not warn: $(cat "$T/blind.folded.err")"
grep -q "xpu-record did not see the command run" "$T/blind.folded.err" ||
	fail "--folded blames the workload: $(cat "$T/blind.folded.err")"

# The same command sampled: samples, and no warning anywhere.
"$RECORD" --no-gpu -o "$T/seen.data" -- taskset -c 1 "$APP" 0 0.5 >"$T/seen.out" 2>"$T/seen.err" ||
	{ cat "$T/seen.err" >&2; fail "xpu-record exited $? (sampled)"; }
[ "$(summary_samples seen)" -gt 0 ] || fail "no samples without deny_perf_cpu"
grep -q "CPU samples" "$T/seen.err" && fail "warned with samples: $(cat "$T/seen.err")"
report "$T/seen.header" -i "$T/seen.data" --header
grep -q "cpu_samples\|WARNING" "$T/seen.header" && fail "--header warns with samples"

# No CPU could be sampled at all: refused before the command runs.
"$DENY" all "$RECORD" --no-gpu -o "$T/none.data" -- true >"$T/none.out" 2>"$T/none.err"
rc=$?
[ $rc -eq 4 ] || fail "no sampler at all: exit $rc, want 4: $(cat "$T/none.err")"
grep -q "cannot open the cpu-clock event on any of the" "$T/none.err" || fail "$(cat "$T/none.err")"
[ -e "$T/none.data" ] && fail "a refused start left a trace"
note "$(grep -o 'used [0-9.]* s of CPU time' "$T/blind.err"), no sample: said"
exit 0

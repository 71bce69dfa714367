#!/usr/bin/env bash
# A CUDA process whose library loads but cannot connect to the recorder
# (another /tmp, a sandbox, XPU_CUPTI_SOCKET changed: here pointed at a
# path that does not exist) sends no GPU record. xpu-record must say so at
# the end ("N CUDA processes could not send GPU records ... fix: ..."),
# count it in its summary, write a LOST record of source gpu-unconnected
# with its pid, and say it in META gpu; every report warns and --header
# has the lines. Before, the recording ended with "0 lost" and "gpu: on",
# and only the app's own stderr said anything. A process that connects is
# not counted, also beside one that does not.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
CHECK=$XPU_BUILD/tests/record_check
[ -x "$APP" ] && [ -f "$LIB" ] && [ -x "$CHECK" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $CHECK): make tests-build"
need_tools
need_bpf
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }
NOSOCK=$T/no-such-dir/x.sock

# one process that cannot connect
"$RECORD" --cupti-lib "$LIB" -o "$T/u.data" -- env XPU_CUPTI_SOCKET="$NOSOCK" "$APP" 20 0.1 \
	>"$T/u.out" 2>"$T/u.err" || { cat "$T/u.err" >&2; fail "xpu-record exited $?"; }
cat "$T/u.err"
grep -q "^libfake_cupti: warning: cannot connect to $NOSOCK" "$T/u.err" ||
	fail "the library connected after all"
pid=$(sed -n 's/.*could not send GPU records (pid \([0-9]*\)).*/\1/p' "$T/u.err")
grep -q '^xpu-record: warning: 1 CUDA process could not send GPU records (pid [0-9]*): .*; fix: ' \
	"$T/u.err" || fail "no warning of the process that could not connect"
[ -n "$pid" ] || fail "the warning names no pid"
grep -Eq '^xpu-record: [0-9]+ samples, [0-9]+ GPU records, 1 lost,' "$T/u.err" ||
	fail "the summary does not count it as lost"
"$CHECK" "$T/u.data" >"$T/sum"
[ "$(val lost.12 "$T/sum")" -eq 1 ] || fail "LOST gpu-unconnected: $(val lost.12 "$T/sum"), want 1"
[ "$(val GPU_KERNEL "$T/sum")" -eq 0 ] || fail "kernels from a process that did not connect?"
grep -q '^meta.gpu requested; 1 CUDA process could not send GPU records (lost: gpu-unconnected)$' \
	"$T/sum" || fail "META gpu: $(grep '^meta.gpu ' "$T/sum")"
report "$T/h.txt" -i "$T/u.data" --header
grep -Eq '^#   gpu-unconnected +1$' "$T/h.txt" || fail "--header: no gpu-unconnected line"
grep -q "^#     pid $pid: gpu-unconnected 1$" "$T/h.txt" || fail "--header: no line for pid $pid"
grep -q '^#   CUDA processes that could not send GPU records: 1 (lost: gpu-unconnected)$' \
	"$T/h.txt" || fail "--header: no line in the gpu section"
grep -q '^#   gpu: requested; 1 CUDA process could not send' "$T/h.txt" || fail "--header: META gpu"
for out in --folded --stdio; do
	report "$T/r.txt" -i "$T/u.data" $out
	grep -q "^xpu-report: warning: 1 CUDA process could not send GPU records (pid $pid): its GPU work is missing (lost: gpu-unconnected); see --header$" \
		"$T/r.txt.err" || fail "xpu-report $out: no warning ($(cat "$T/r.txt.err"))"
	grep -q 'events were lost' "$T/r.txt.err" && fail "xpu-report $out: counted as lost events"
done
echo "a process that could not connect: warned, counted, in the trace and every report"

# beside one that connects: only the other counted, the GPU data of the first kept
cat >"$T/two.sh" <<'SH'
"$1" 20 0.05
XPU_CUPTI_SOCKET="$2" "$1" 5 0.05
SH
"$RECORD" --cupti-lib "$LIB" -o "$T/m.data" -- bash "$T/two.sh" "$APP" "$NOSOCK" \
	>"$T/m.out" 2>"$T/m.err" || { cat "$T/m.err" >&2; fail "two processes: xpu-record exited $?"; }
"$CHECK" "$T/m.data" >"$T/sum"
[ "$(val lost.12 "$T/sum")" -eq 1 ] || fail "two processes: gpu-unconnected $(val lost.12 "$T/sum"), want 1"
[ "$(val GPU_KERNEL "$T/sum")" -eq 20 ] || fail "two processes: kernels $(val GPU_KERNEL "$T/sum"), want 20"
grep -q '^meta.gpu on; 1 CUDA process could not send GPU records (lost: gpu-unconnected)$' \
	"$T/sum" || fail "two processes: META gpu: $(grep '^meta.gpu ' "$T/sum")"
grep -q '^xpu-record: warning: 1 CUDA process could not send' "$T/m.err" || fail "two processes: no warning"

# all connect: nothing said, a zero count written
"$RECORD" --cupti-lib "$LIB" -o "$T/c.data" -- "$APP" 10 0.05 >"$T/c.out" 2>"$T/c.err" ||
	{ cat "$T/c.err" >&2; fail "connected: xpu-record exited $?"; }
grep -q 'could not send' "$T/c.err" && fail "a process that connected was counted"
"$CHECK" "$T/c.data" >"$T/sum"
grep -q '^lost.12 0$' "$T/sum" || fail "connected: no zero gpu-unconnected count"
echo "beside one that connected, one counted; all connected, none"

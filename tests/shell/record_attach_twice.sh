#!/usr/bin/env bash
# A second xpu-record -p on a CUDA process another xpu-record -p records
# (its library attached and connected): the library's entry says so
# (-EISCONN) and the second recorder must refuse at once, in one line with
# exit 12, long before the first one's -d ends (it used to retry for about
# 4 s, then record the CPU side for its whole -d); the first recording must
# be untouched: every kernel of its window under main;app_step;app_launch,
# matched by id. A third attach after the first ended works again.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
DRV=$XPU_BUILD/tests/workloads/fake_cuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$LIB" ] && [ -f "$DRV" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $DRV): make tests-build"
need_tools
need_bpf
EXIT_ATTACH=12

LAUNCH_RE=';main;app_step;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)$'
STOP=$T/stop
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 XPU_FAKE_KERNEL_NS=5000000 \
	"$APP" 1 0.05 >"$T/app.out" 2>"$T/app.err" &
app=$!
first=
trap 'touch "$STOP"; [ -n "$first" ] && kill $first 2>/dev/null; sleep 0.2; kill -9 $app 2>/dev/null' EXIT
sleep 0.3
kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "fake_cuda_app did not start"; }

# gpu_view NAME: every kernel of NAME's trace under app_launch, by id
gpu_view() {
	local got all
	report "$T/$1.folded" -i "$T/$1.data" --folded --gpu-only
	report "$T/$1.header" -i "$T/$1.data" --header
	got=$(folded_sum "$LAUNCH_RE" <"$T/$1.folded")
	all=$(folded_sum <"$T/$1.folded")
	[ "$got" -gt 0 ] && [ "$got" -eq "$all" ] ||
		{ cat "$T/$1.folded" >&2; fail "$1: GPU weight under app_launch: $got of $all"; }
	grep -Eq '^#   kernels +[0-9]+: by id [0-9]+ \(100\.0%\), by time 0 \(0\.0%\), unmatched 0 ' \
		"$T/$1.header" || { grep kernels "$T/$1.header" >&2; fail "$1: not every kernel matched by id"; }
	note "$1: GPU weight $got under app_launch"
}

"$RECORD" -v -p $app -d 6 -o "$T/first.data" --cupti-lib "$LIB" >"$T/first.out" 2>"$T/first.err" &
first=$!
for i in $(seq 100); do
	grep -q 'GPU recording attached' "$T/first.err" && break
	kill -0 $first 2>/dev/null || break
	sleep 0.05
done
grep -q 'GPU recording attached' "$T/first.err" || { cat "$T/first.err" >&2; fail "the first -p did not attach"; }

"$RECORD" -p $app -d 6 -o "$T/second.data" --cupti-lib "$LIB" >"$T/second.out" 2>"$T/second.err"
rc=$?
# not a timing test: the second is refused before the first's -d 6 ends
kill -0 $first 2>/dev/null || { cat "$T/second.err" >&2; fail "the second -p (exit $rc) ended after the first"; }
[ $rc -eq $EXIT_ATTACH ] || { cat "$T/second.err" >&2; fail "the second -p: exit $rc, not $EXIT_ATTACH"; }
[ "$(wc -l <"$T/second.err")" -eq 1 ] || { cat "$T/second.err" >&2; fail "the second -p: not one line"; }
grep -q "pid $app is recorded already by another xpu-record -p" "$T/second.err" ||
	fail "the second -p: $(cat "$T/second.err")"
note "second: $(cat "$T/second.err")"

wait $first
rc=$?
first=
[ $rc -eq 0 ] || { cat "$T/first.err" >&2; fail "the first -p exited $rc"; }
gpu_view first

# the first ended: its library detached, a new attach works (an attach
# still ending is waited for, not refused)
"$RECORD" -p $app -d 1 -o "$T/third.data" --cupti-lib "$LIB" >"$T/third.out" 2>"$T/third.err" ||
	{ cat "$T/third.err" >&2; fail "the third -p exited $?"; }
gpu_view third

touch "$STOP"
wait $app
rc=$?
trap - EXIT
[ $rc -eq 0 ] || { cat "$T/app.err" >&2; fail "the app exited $rc"; }
grep -Eq '^fake_cuda_app: [0-9]+ launches done$' "$T/app.out" || fail "the app's output: $(cat "$T/app.out")"
exit 0

#!/usr/bin/env bash
# xpu-record -p on a CUDA process whose main thread has exited
# (pthread_exit; its CUDA work on a worker): the main thread is a zombie,
# its /proc/PID/maps is empty, and so are its map_files, mem, exe and root.
# The recorder must read the process through a live thread: the injection
# finds libcuda, the kernels come under the worker's app_step;app_launch
# (named from the maps read at the attach), and the app finishes its loop
# with exit 0. A process all of whose threads exited (a zombie its parent
# has not reaped) is said in one line.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
DRV=$XPU_BUILD/tests/workloads/fake_cuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$LIB" ] && [ -f "$DRV" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $DRV): make tests-build"
need_tools
need_bpf

LAUNCH_RE=';app_step;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)$'
STOP=$T/stop
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 XPU_FAKE_KERNEL_NS=5000000 \
	FAKE_MAIN_EXIT=1 "$APP" 1 0.05 >"$T/app.out" 2>"$T/app.err" &
app=$!
trap 'touch "$STOP"; sleep 0.2; kill -9 $app 2>/dev/null' EXIT
sleep 0.3
kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "fake_cuda_app did not start"; }
grep -q '^State:.*Z' /proc/$app/status || fail "the app's main thread has not exited: $(grep State /proc/$app/status)"
[ -s /proc/$app/maps ] && fail "the zombie main thread's /proc/$app/maps is not empty: the test shows nothing"

"$RECORD" -v -p $app -d 1 -o "$T/attach.data" --cupti-lib "$LIB" >"$T/attach.out" 2>"$T/attach.err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/attach.err" >&2; fail "xpu-record -p exited $rc"; }
grep -q "GPU recording attached" "$T/attach.err" ||
	{ cat "$T/attach.err" >&2; fail "no GPU recording attached to a process whose main thread exited"; }
report "$T/attach.folded" -i "$T/attach.data" --folded --gpu-only
got=$(folded_sum "$LAUNCH_RE" <"$T/attach.folded")
all=$(folded_sum <"$T/attach.folded")
[ "$got" -gt 0 ] && [ "$got" -eq "$all" ] ||
	{ cat "$T/attach.folded" >&2; fail "GPU weight under app_step;app_launch: $got of $all"; }
note "$(grep -m1 'GPU recording attached' "$T/attach.err" | sed 's/.*attached//'); GPU weight $got under app_launch"

touch "$STOP"
wait $app
rc=$?
trap - EXIT
[ $rc -eq 0 ] || { cat "$T/app.err" >&2; fail "the app exited $rc"; }
grep -Eq '^fake_cuda_app: [0-9]+ launches done$' "$T/app.out" || fail "the app's output: $(cat "$T/app.out")"

# A zombie (exited, its parent not reaping it): one line, no thread to read
sh -c 'sleep 0 & exec sleep 3' &
parent=$!
for i in $(seq 50); do
	zombie=$(pgrep -P $parent)
	[ -n "$zombie" ] && grep -q '^State:.*Z' /proc/$zombie/status 2>/dev/null && break
	sleep 0.05
done
grep -q '^State:.*Z' /proc/$zombie/status || fail "no zombie to attach to"
"$RECORD" -p $zombie -d 0.3 -o "$T/zombie.data" --cupti-lib "$LIB" >"$T/zombie.out" 2>"$T/zombie.err"
rc=$?
kill $parent 2>/dev/null
wait $parent 2>/dev/null
grep -q "^xpu-record: warning: -p $zombie has no live thread" "$T/zombie.err" ||
	{ cat "$T/zombie.err" >&2; fail "a zombie: no warning that it has no live thread"; }
[ "$(grep -c "$zombie" "$T/zombie.err")" -eq 1 ] || { cat "$T/zombie.err" >&2; fail "a zombie: more than one line about it"; }
note "a zombie: exit $rc, $(grep "$zombie" "$T/zombie.err")"
exit 0

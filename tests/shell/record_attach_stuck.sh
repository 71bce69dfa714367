#!/usr/bin/env bash
# xpu-record -p whose borrowed thread never comes back from the library's
# load (the fake entry blocks in pause(), as a loader stuck on a lock held
# by a thread that died would): the recorder must give the GPU recording
# up after its 10 s bound in one line (exit 12), and leave the thread
# running (not stopped: the interrupt's stop is detached); it used to wait
# for the thread forever (the bound was only checked at a system call
# stop, and a blocked call makes none). The app's other threads run on.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
DRV=$XPU_BUILD/tests/workloads/fake_cuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$LIB" ] && [ -f "$DRV" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $DRV): make tests-build"
need_tools
need_bpf

STOP=$T/stop
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 XPU_FAKE_ATTACH_BLOCK=1 \
	"$APP" 1 0.05 >"$T/app.out" 2>"$T/app.err" &
app=$!
trap 'touch "$STOP"; sleep 0.2; kill -9 $app 2>/dev/null' EXIT
sleep 0.3
kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "fake_cuda_app did not start"; }
# not a timing test: 60 s is far past the 10 s bound; before, it never returned
timeout -s KILL 60 "$RECORD" -p $app -d 1 -o "$T/x.data" --cupti-lib "$LIB" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -ne 137 ] || { cat "$T/err" >&2; fail "xpu-record -p still waited for the stuck thread after 60 s"; }
[ $rc -eq 12 ] || { cat "$T/err" >&2; fail "exit $rc, not 12"; }
grep -q "loading the library took over 10 s; left to finish alone" "$T/err" ||
	{ cat "$T/err" >&2; fail "no line says the load was given up"; }
note "xpu-record exited $rc: $(head -1 "$T/err")"
kill -0 $app 2>/dev/null || fail "the app died"
for task in /proc/$app/task/*; do
	grep -q '^State:.*[tT]' "$task/status" && fail "thread ${task##*/} is left stopped: $(grep State "$task/status")"
done
echo "ok    the stuck attach was given up in one line, the app runs on, no thread stopped"

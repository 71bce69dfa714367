#!/usr/bin/env bash
# xpu-record -p on a CUDA process under seccomp: fake_cuda_app with a filter
# whose openat kills the process (FAKE_SECCOMP=process: every thread; =thread:
# one thread only, the one the injection would borrow, the main thread's
# status shows none) or a thread in strict mode (=strict). Injecting the GPU
# library (dlopen's openat, the library's own calls) would kill it: the
# recorder must refuse in one line with exit 12, naming seccomp and the fix,
# and leave the app running, no thread of it stopped or gone; --no-gpu (CPU
# samples only, nothing injected) records it; at the end the app finishes
# its loop with exit 0.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
DRV=$XPU_BUILD/tests/workloads/fake_cuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$LIB" ] && [ -f "$DRV" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $DRV): make tests-build"
need_tools
need_bpf
EXIT_ATTACH=12

app=
trap '[ -n "$app" ] && { touch "$T/stop"; sleep 0.2; kill -9 $app 2>/dev/null; }' EXIT

# no thread of the app stopped (job control or a tracer's stop: t/T)
not_stopped() {
	local s
	for s in /proc/$app/task/*/status; do
		grep -q '^State:.*[tT]' "$s" 2>/dev/null && fail "$1: thread ${s%/status} is left stopped"
	done
	return 0
}

for how in process thread strict; do
	rm -f "$T/stop"
	FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$T/stop FAKE_LAUNCH_GAP_US=2000 FAKE_SECCOMP=$how \
		"$APP" 1 0.05 >"$T/$how.app.out" 2>"$T/$how.app.err" &
	app=$!
	sleep 0.3
	kill -0 $app 2>/dev/null || { cat "$T/$how.app.err" >&2; fail "$how: fake_cuda_app did not start"; }
	grep -Eq '^Seccomp:[[:space:]]+[12]$' /proc/$app/task/*/status ||
		fail "$how: no thread under seccomp: the test shows nothing"
	threads0=$(ls /proc/$app/task | wc -l)

	# bounded: a strict thread killed in the loader leaves its lock held,
	# and the next thread borrowed hangs in dlopen with the recorder waiting
	timeout -s KILL 30 "$RECORD" -p $app -d 1 -o "$T/$how.data" --cupti-lib "$LIB" \
		>"$T/$how.out" 2>"$T/$how.err"
	rc=$?
	sleep 0.2
	kill -0 $app 2>/dev/null || { cat "$T/$how.err" >&2; fail "$how: the attach killed the app (xpu-record exit $rc)"; }
	not_stopped "$how"
	[ "$(ls /proc/$app/task | wc -l)" -eq "$threads0" ] ||
		fail "$how: the app has $(ls /proc/$app/task | wc -l) threads after the attach, $threads0 before"
	[ $rc -eq $EXIT_ATTACH ] || { cat "$T/$how.err" >&2; fail "$how: exit $rc, not $EXIT_ATTACH"; }
	[ "$(wc -l <"$T/$how.err")" -eq 1 ] || { cat "$T/$how.err" >&2; fail "$how: not one line"; }
	grep -q "pid $app .*seccomp.*--no-gpu.*start it under xpu-record" "$T/$how.err" ||
		fail "$how: the line does not name seccomp and the fix: $(cat "$T/$how.err")"
	note "$how: $(cat "$T/$how.err")"

	# CPU only: nothing is injected, the recording goes on
	"$RECORD" -p $app --no-gpu -d 0.5 -o "$T/$how.cpu.data" >"$T/$how.cpu.out" 2>"$T/$how.cpu.err" ||
		{ cat "$T/$how.cpu.err" >&2; fail "$how: --no-gpu -p exited $?"; }
	grep -q warning "$T/$how.cpu.err" && fail "$how: --no-gpu -p warns: $(cat "$T/$how.cpu.err")"
	report "$T/$how.cpu.header" -i "$T/$how.cpu.data" --header
	kill -0 $app 2>/dev/null || fail "$how: the app died under --no-gpu -p"
	not_stopped "$how --no-gpu"

	touch "$T/stop"
	wait $app
	rc=$?
	app=
	[ $rc -eq 0 ] || { cat "$T/$how.app.err" >&2; fail "$how: the app exited $rc"; }
	grep -Eq '^fake_cuda_app: [0-9]+ launches done$' "$T/$how.app.out" ||
		fail "$how: the app's output: $(cat "$T/$how.app.out")"
done
exit 0

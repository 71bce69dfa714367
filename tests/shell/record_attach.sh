#!/usr/bin/env bash
# xpu-record -p on a CUDA process started without it (issue 32, section 1):
# fake_cuda_app runs the fake libcuda.so.1 (FAKE_CUDA_DRIVER), with no
# profiler. xpu-record -p injects libfake_cupti.so (record/gpu/inject.c), whose
# attach entry subscribes to the fake driver: every kernel of the window
# must come under main;app_step;app_launch by correlation ID, the library
# must detach at the end (no thread or fd of ours left), a second attach
# must work the same, a recorder killed at each step of the injection
# (XPU_INJECT_DIE_AT) must leave the app running, and at the end the app's
# loop finishes with its normal output and exit 0.
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
rm -f "$STOP"
# a launch every 2 ms (the main thread mostly in clock_nanosleep: the
# injection interrupts a system call that must be restarted), 5 ms kernels
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 XPU_FAKE_KERNEL_NS=5000000 \
	FAKE_COUNT_SIGNALS=1 "$APP" 1 0.05 >"$T/app.out" 2>"$T/app.err" &
app=$!
trap 'touch "$STOP"; sleep 0.2; kill -9 $app 2>/dev/null' EXIT
sleep 0.3
kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "fake_cuda_app did not start"; }

nr_threads() { ls /proc/$app/task | wc -l; }
nr_fds() { ls /proc/$app/fd | wc -l; }
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/$app/status; }
threads0=$(nr_threads) fds0=$(nr_fds)

# attach NAME SECONDS: records the app for SECONDS, checks the GPU view
attach() {
	local name=$1 secs=$2 rc got all
	"$RECORD" -v -p $app -d "$secs" -o "$T/$name.data" --cupti-lib "$LIB" \
		>"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/$name.err" >&2; fail "$name: xpu-record -p exited $rc"; }
	grep -q "GPU recording attached" "$T/$name.err" ||
		{ cat "$T/$name.err" >&2; fail "$name: no attach line with -v"; }
	kill -0 $app 2>/dev/null || fail "$name: the app did not survive the attach"
	report "$T/$name.folded" -i "$T/$name.data" --folded --gpu-only
	report "$T/$name.header" -i "$T/$name.data" --header
	got=$(folded_sum "$LAUNCH_RE" <"$T/$name.folded")
	all=$(folded_sum <"$T/$name.folded")
	[ "$got" -gt 0 ] || { cat "$T/$name.folded" >&2; fail "$name: no GPU weight under app_launch"; }
	[ "$got" -eq "$all" ] || { cat "$T/$name.folded" >&2; fail "$name: GPU weight elsewhere than under app_launch ($got of $all)"; }
	grep -Eq '^#   kernels +[0-9]+: by id [0-9]+ \(100\.0%\), by time 0 \(0\.0%\), unmatched 0 ' \
		"$T/$name.header" || { grep kernels "$T/$name.header" >&2; fail "$name: not every kernel matched by id"; }
	grep -q '^#   cupti.attach: attached' "$T/$name.header" || fail "$name: no cupti.attach in the header"
	note "$name: $(grep -m1 'GPU recording attached' "$T/$name.err" | sed 's/.*attached//'); GPU weight $got under app_launch"
}

# after an attach ended, the library has let go: no thread or fd of ours
detached() {
	local i
	for i in $(seq 50); do
		[ "$(nr_threads)" -eq "$threads0" ] && [ "$(nr_fds)" -eq "$fds0" ] && return 0
		sleep 0.1
	done
	fail "$1: the app has $(nr_threads) threads and $(nr_fds) fds after the detach, $threads0 and $fds0 before"
}

attach first 1.5
detached first
# signals sent all through the second attach (queued real-time ones: none
# may be lost at the injection's stops, each handler runs once); the thread
# is held stopped 200 ms at its first stop and at the loader's end
# (XPU_INJECT_HOLD_MS) so that many come while it is stopped
rm -f "$T/sigstop"
( n=0; while [ ! -e "$T/sigstop" ] && kill -RTMIN $app 2>/dev/null; do n=$((n + 1)); sleep 0.002; done
  echo $n >"$T/sent" ) &
sender=$!
XPU_INJECT_HOLD_MS=200 attach second 1
touch "$T/sigstop"
wait $sender
sent=$(cat "$T/sent")
detached second

# The recorder killed at each step of the injection: the app runs on
# (its loop still makes progress) and a later attach works.
for step in 1 2 3 4 5 6; do
	XPU_INJECT_DIE_AT=$step "$RECORD" -p $app -d 1 -o "$T/die$step.data" --cupti-lib "$LIB" \
		>"$T/die$step.out" 2>"$T/die$step.err"
	rc=$?
	[ $rc -eq 137 ] || { cat "$T/die$step.err" >&2; fail "XPU_INJECT_DIE_AT=$step: xpu-record exited $rc, not killed"; }
	s0=$(switches)
	sleep 0.3
	kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "XPU_INJECT_DIE_AT=$step: the app died"; }
	grep -q '^State:.*[tT]' /proc/$app/status && fail "XPU_INJECT_DIE_AT=$step: the app is left stopped"
	[ "$(switches)" -gt "$s0" ] || fail "XPU_INJECT_DIE_AT=$step: the app's loop does not go on"
done
detached "the killed recorders"
attach after_kills 1
detached after_kills

# --gpu-pc-sampling through the attach (issue 35: "works with the attach"):
# the config reaches the library, the kernels of the window split into
# [sass];[stall] frames (no cubin here: offsets without lines), the GPU
# total the same with and without the split.
"$RECORD" -p $app -d 1 -o "$T/pc.data" --cupti-lib "$LIB" --gpu-pc-sampling >"$T/pc.out" 2>"$T/pc.err" ||
	{ cat "$T/pc.err" >&2; fail "xpu-record -p --gpu-pc-sampling exited $?"; }
report "$T/pc.folded" -i "$T/pc.data" --folded --gpu-only
report "$T/pc.plain" -i "$T/pc.data" --folded --gpu-only --no-pc-sampling
report "$T/pc.header" -i "$T/pc.data" --header
pc_all=$(folded_sum <"$T/pc.folded")
pc_split=$(folded_sum ';main;app_step;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\);\[sass\]fake_kernel\+0x[0-9a-f]+;\[stall\][a-z_]+$' <"$T/pc.folded")
[ "$pc_all" -gt 0 ] && [ "$pc_split" -eq "$pc_all" ] ||
	{ cat "$T/pc.folded" >&2; fail "attach --gpu-pc-sampling: $pc_split of $pc_all GPU weight split into [sass];[stall] under app_launch"; }
[ "$(folded_sum <"$T/pc.plain")" -eq "$pc_all" ] ||
	fail "attach --gpu-pc-sampling: GPU total $pc_all with the split, $(folded_sum <"$T/pc.plain") without"
grep -q '^#   pc sampling: on' "$T/pc.header" || { grep 'pc sampl' "$T/pc.header" >&2; fail "attach --gpu-pc-sampling: not on in --header"; }
note "attach --gpu-pc-sampling: $pc_split of $pc_all GPU weight split"
detached "attach --gpu-pc-sampling"

# Refusals, one line and an exit code each, the app unharmed: no
# CAP_SYS_PTRACE (3), a debugger attached (12)
if command -v capsh >/dev/null; then
	capsh --drop=cap_sys_ptrace -- -c '"$0" -p "$1" -d 0.3 -o "$2" --cupti-lib "$3"' \
		"$RECORD" $app "$T/perm.data" "$LIB" >"$T/perm.out" 2>"$T/perm.err"
	rc=$?
	[ $rc -eq 3 ] || { cat "$T/perm.err" >&2; fail "without CAP_SYS_PTRACE: exit $rc, not 3"; }
	grep -q 'ptrace of pid [0-9]* not permitted: run as root or with CAP_SYS_PTRACE' "$T/perm.err" ||
		fail "without CAP_SYS_PTRACE: $(cat "$T/perm.err")"
	[ "$(wc -l <"$T/perm.err")" -eq 1 ] || fail "without CAP_SYS_PTRACE: not one line: $(cat "$T/perm.err")"
fi
if command -v strace >/dev/null; then
	strace -p $app -o /dev/null 2>/dev/null &
	tracer=$!
	sleep 0.3
	"$RECORD" -p $app -d 0.3 -o "$T/traced.data" --cupti-lib "$LIB" >"$T/traced.out" 2>"$T/traced.err"
	rc=$?
	kill $tracer
	wait $tracer 2>/dev/null
	[ $rc -eq $EXIT_ATTACH ] || { cat "$T/traced.err" >&2; fail "a traced process: exit $rc, not $EXIT_ATTACH"; }
	grep -q "is traced by pid $tracer" "$T/traced.err" || fail "a traced process: $(cat "$T/traced.err")"
fi
kill -0 $app 2>/dev/null || fail "the app did not survive the refusals"

# The real libxpu-cupti.so (built with the CUDA toolkit) into the same app:
# dlopen of it and of libcupti in a running process, its attach thread; with
# no GPU driver CUPTI refuses to subscribe, which must reach the trace as
# gpu.error and end in a clean detach (no thread left), twice.
REAL=$XPU_BIN/libxpu-cupti.so
if [ -f "$REAL" ]; then
	for n in 1 2; do
		"$RECORD" -v -p $app -d 0.5 -o "$T/real$n.data" --cupti-lib "$REAL" \
			>"$T/real$n.out" 2>"$T/real$n.err" || { cat "$T/real$n.err" >&2; fail "real library, attach $n: exit $?"; }
		grep -q 'GPU recording attached' "$T/real$n.err" || fail "real library, attach $n: no attach line"
		report "$T/real$n.header" -i "$T/real$n.data" --header
		grep -q '^#   cupti.attach: attached to the running process' "$T/real$n.header" ||
			fail "real library, attach $n: no cupti.attach"
		grep -Eq '^#   (gpu.error|cupti.version)' "$T/real$n.header" ||
			fail "real library, attach $n: nothing from the library in the header"
		detached "real library, attach $n"
	done
	note "real library: $(grep -m1 '^#   gpu.error' "$T/real1.header" || echo 'no error')"
fi

# a CPU program with no libcuda: CPU samples only, quietly, exit 0
"$RECORD" -p $app --no-gpu -d 0.3 -o "$T/nogpu.data" >"$T/nogpu.out" 2>"$T/nogpu.err" ||
	{ cat "$T/nogpu.err" >&2; fail "--no-gpu -p exited $?"; }

touch "$STOP"
wait $app
rc=$?
[ $rc -eq 0 ] || { cat "$T/app.err" >&2; fail "the app exited $rc"; }
grep -Eq '^fake_cuda_app: [0-9]+ launches done$' "$T/app.out" || fail "the app's output: $(cat "$T/app.out")"
got=$(sed -n 's/^fake_cuda_app: signals //p' "$T/app.out")
[ "$got" = "$sent" ] || fail "the app got $got of the $sent signals sent during an attach"
note "app: $(paste -sd' ' "$T/app.out")"

# A mount namespace in which our library's path does not exist (a
# container without it: a tmpfs over its directory): the library goes
# through a memfd, the marker's uprobe on that copy, and its mappings are
# written as the library; the recorder killed while it fills the memfd
# (steps 7, 8) leaves the app running; a second attach finds the copy.
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	mkdir -p "$T/lib" && cp "$LIB" "$T/lib/" || fail "cannot copy $LIB"
	rm -f "$STOP"
	FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 XPU_FAKE_KERNEL_NS=5000000 \
		unshare -m --propagation private sh -c 'mount -t tmpfs none "$1" && exec "$2" 1 0.05' \
		sh "$T/lib" "$APP" >"$T/app.out" 2>"$T/app.err" &
	app=$!		# sh execs the app: the same pid
	sleep 0.5
	kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "the app in its mount namespace did not start"; }
	[ -e "/proc/$app/root$T/lib/libfake_cupti.so" ] && fail "the library is visible in the app's namespace"
	LIB=$T/lib/libfake_cupti.so
	threads0=$(nr_threads) fds0=$(nr_fds)
	for step in 7 8; do
		XPU_INJECT_DIE_AT=$step "$RECORD" -p $app -d 1 -o "$T/ns-die$step.data" --cupti-lib "$LIB" \
			>"$T/ns-die$step.out" 2>"$T/ns-die$step.err"
		rc=$?
		[ $rc -eq 137 ] || { cat "$T/ns-die$step.err" >&2; fail "namespace, XPU_INJECT_DIE_AT=$step: exited $rc"; }
		sleep 0.3
		kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "namespace, XPU_INJECT_DIE_AT=$step: the app died"; }
	done
	detached "the killed recorders (namespace)"
	attach ns_first 1
	grep -q 'through a memfd' "$T/ns_first.err" || fail "ns_first: not through a memfd"
	detached ns_first
	attach ns_second 1
	grep -q 'library loaded already' "$T/ns_second.err" || fail "ns_second: the memfd copy was not found again"
	touch "$STOP"
	wait $app
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/app.err" >&2; fail "the app in its namespace exited $rc"; }
	grep -Eq '^fake_cuda_app: [0-9]+ launches done$' "$T/app.out" || fail "the app's output: $(cat "$T/app.out")"
	LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
else
	note "no unshare -m here: the mount-namespace case is not run"
fi

# --pid-tree: a launcher with two CUDA workers (torchrun's shape) attached
# by the launcher's pid: each worker gets the library, both kernels come
# under their launch path; the launcher (no libcuda) is recorded CPU only.
rm -f "$STOP"
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 XPU_FAKE_KERNEL_NS=5000000 \
	sh -c '"$1" 1 0.05 & "$1" 1 0.05 & wait' sh "$APP" >"$T/tree.app.out" 2>"$T/tree.app.err" &
launcher=$!
sleep 0.5
"$RECORD" -v --pid-tree $launcher -d 1 -o "$T/tree.data" --cupti-lib "$LIB" >"$T/tree.out" 2>"$T/tree.err" ||
	{ cat "$T/tree.err" >&2; fail "--pid-tree exited $?"; }
touch "$STOP"
wait $launcher || fail "the launcher exited $?"
[ "$(grep -c 'GPU recording attached' "$T/tree.err")" -eq 2 ] ||
	{ grep attached "$T/tree.err" >&2; fail "--pid-tree: not both workers attached"; }
[ "$(grep -c 'launches done' "$T/tree.app.out")" -eq 2 ] || fail "--pid-tree: the workers did not finish"
report "$T/tree.folded" -i "$T/tree.data" --folded --gpu-only
report "$T/tree.header" -i "$T/tree.data" --header
[ "$(folded_sum "$LAUNCH_RE" <"$T/tree.folded")" -eq "$(folded_sum <"$T/tree.folded")" ] &&
	[ "$(folded_sum <"$T/tree.folded")" -gt 0 ] || { cat "$T/tree.folded" >&2; fail "--pid-tree: GPU weight not under app_launch"; }
[ "$(grep -c '^#   cupti.attach' "$T/tree.header")" -ge 1 ] || fail "--pid-tree: no cupti.attach"
note "--pid-tree: $(grep '^#   kernels ' "$T/tree.header")"

# A thread blocked in read() on a pipe, its errno set to 4242 (the one the
# injection borrows: a calm thread, not the main one): after an attach, and
# after one whose recorder died with the loader running (the trampoline
# restores the thread alone), the read is made again as the kernel would
# (-ERESTARTSYS), returns the bytes written later, and errno is 4242 still.
rm -f "$STOP" "$T/fifo"
mkfifo "$T/fifo"
exec 7<>"$T/fifo"
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 FAKE_STDIN_THREAD=1 \
	"$APP" 1 0.05 <"$T/fifo" >"$T/stdin.app.out" 2>"$T/stdin.app.err" &
app=$!
sleep 0.3
attach stdin 0.5
grep -q "thread $app " "$T/stdin.err" && fail "stdin: the main thread was borrowed, not the reader"
XPU_INJECT_DIE_AT=4 "$RECORD" -p $app -d 0.5 -o "$T/stdin-die.data" --cupti-lib "$LIB" \
	>"$T/stdin-die.out" 2>"$T/stdin-die.err"
[ $? -eq 137 ] || fail "stdin: XPU_INJECT_DIE_AT=4 not killed"
sleep 0.3
echo hello >&7
touch "$STOP"
wait $app || { cat "$T/stdin.app.err" >&2; fail "stdin: the app exited $?"; }
exec 7>&-
grep -q '^fake_cuda_app: stdin read 6 bytes, errno 4242$' "$T/stdin.app.out" ||
	fail "stdin: the blocked read after the attaches: $(grep stdin "$T/stdin.app.out")"

# libcuda loaded, CUDA not initialised yet (no cuInit: the fake driver's
# cuCtxGetCurrent says so): the library does not subscribe (that would
# initialise CUDA in the process), says why, detaches; exit 0, CPU only.
rm -f "$STOP"
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 FAKE_CUDA_NOT_INITIALISED=1 \
	"$APP" 1 0.05 >"$T/noinit.app.out" 2>"$T/noinit.app.err" &
app=$!
sleep 0.3
threads0=$(nr_threads) fds0=$(nr_fds)
"$RECORD" -p $app -d 0.5 -o "$T/noinit.data" --cupti-lib "$LIB" >"$T/noinit.out" 2>"$T/noinit.err" ||
	{ cat "$T/noinit.err" >&2; fail "CUDA not initialised: exit $?"; }
grep -q 'warning: not attached: CUDA is not initialised in the process yet' "$T/noinit.err" ||
	fail "CUDA not initialised: no warning: $(cat "$T/noinit.err")"
report "$T/noinit.header" -i "$T/noinit.data" --header
grep -q '^#   cupti.attach: not attached: CUDA is not initialised' "$T/noinit.header" ||
	fail "CUDA not initialised: not in the header"
grep -Eq '^#   kernels +[1-9]' "$T/noinit.header" && fail "CUDA not initialised: kernels recorded"
detached "CUDA not initialised"
touch "$STOP"
wait $app || fail "CUDA not initialised: the app exited $?"

# A process that has not loaded libcuda: recorded CPU only, exit 0
"$CPU_DEMO" 2 >/dev/null &
cpu=$!
sleep 0.2
"$RECORD" -p $cpu -d 0.3 -o "$T/cpu.data" --cupti-lib "$LIB" >"$T/cpu.out" 2>"$T/cpu.err" ||
	{ cat "$T/cpu.err" >&2; fail "-p on a CPU program exited $?"; }
kill $cpu 2>/dev/null
wait $cpu 2>/dev/null
grep -q 'warning' "$T/cpu.err" && fail "-p on a CPU program warns: $(cat "$T/cpu.err")"
exit 0

#!/usr/bin/env bash
# xpu-record --flight-recorder=2 --trigger 'nvtx:step>200' with the fake
# CUPTI library (Documentation/xpu-record.md "Bounded capture"):
# fake_cuda_app runs 60 NVTX "step" ranges 50 ms apart, step 30 spins 300 ms
# (FAKE_SLOW_STEP). The trigger fires once, on that step, and writes the
# window around it: a file that holds the slow range, the fast steps before
# it, and the samples of app_slow_step under [nvtx]step, readable alone.
# Then 'gpu-idle>PCT' on the same loop: its device is idle ~60% of each
# second (20 ms kernels launched 50 ms apart), so gpu-idle>30 fires and
# gpu-idle>90 does not.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
need_tools
need_bpf

D=$T/trig && mkdir -p "$D"
FAKE_SLOW_STEP=30 FAKE_LAUNCH_GAP_US=50000 "$RECORD" --flight-recorder=2 --trigger 'nvtx:step>200' \
	--cupti-lib "$LIB" -o "$D/t.data" -- "$APP" 60 0.3 nvtx >"$T/rec.out" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "xpu-record exited $?"; }
grep 'flight recorder: nvtx:' "$T/rec.err" >"$T/fired"
[ "$(wc -l <"$T/fired")" -eq 1 ] || { cat "$T/rec.err" >&2; fail "the trigger fired $(wc -l <"$T/fired") times, want once"; }
# the slow step spins 300 ms of wall clock inside its range; the range's
# times are the NVTX records' (299.0 ms seen beside a make -j2); the fast
# steps take ~50 ms
grep -Eq 'nvtx:step>200: a range of pid [0-9]+ took (29[0-9]|3[0-9][0-9])\.[0-9] ms' "$T/fired" ||
	fail "not the slow step: $(cat "$T/fired")"
f=$(sed -E 's/.* written to //' "$T/fired")
[ -f "$f" ] || fail "no file $f"
"$REPORT" -i "$f" --header >"$T/header" 2>&1 || fail "--header failed on $f"
grep -q 'finished cleanly: yes' "$T/header" || fail "$f: no FINISH"
"$REPORT" -i "$f" --dump 2>/dev/null | awk '$1=="GPU_NVTX"{split($2,a,"="); split($3,b,"="); print b[2]-a[2]}' >"$T/ranges"
slow=$(awk '$1>200e6' "$T/ranges" | wc -l) fast=$(awk '$1<100e6' "$T/ranges" | wc -l)
note "$f: $slow slow and $fast fast step ranges"
[ "$slow" -eq 1 ] || fail "$f holds $slow ranges over 200 ms, want the slow step"
[ "$fast" -ge 10 ] || fail "$f holds $fast fast steps: not the seconds around the slow one"
"$REPORT" -i "$f" --folded >"$T/folded" 2>"$T/folded.err" || fail "--folded failed on $f"
grep -Eq ';main;app_step;\[nvtx\]step;app_slow_step( [0-9]+|;)' "$T/folded" ||
	{ cat "$T/folded" >&2; fail "$f: no samples of app_slow_step under [nvtx]step"; }

# gpu-idle: fires at ~60% idle, not above 90%
for pct in 30 90; do
	rm -rf "$D" && mkdir -p "$D"
	XPU_FAKE_KERNEL_NS=20000000 FAKE_LAUNCH_GAP_US=50000 "$RECORD" --flight-recorder=2 \
		--trigger "gpu-idle>$pct" --cupti-lib "$LIB" -o "$D/t.data" -- "$APP" 60 0.1 \
		>"$T/idle$pct.out" 2>"$T/idle$pct.err" ||
		{ cat "$T/idle$pct.err" >&2; fail "gpu-idle>$pct: xpu-record exited $?"; }
	n=$(grep -c 'flight recorder: gpu-idle>' "$T/idle$pct.err")
	note "gpu-idle>$pct: $(grep 'flight recorder: gpu-idle' "$T/idle$pct.err" | head -1)"
	if [ $pct = 30 ]; then
		[ "$n" -ge 1 ] || { cat "$T/idle$pct.err" >&2; fail "gpu-idle>30 did not fire"; }
	else
		[ "$n" -eq 0 ] || fail "gpu-idle>90 fired on a device ~60% idle"
	fi
done
note "ok: the slow step caught with the steps before it; gpu-idle fires at its threshold"

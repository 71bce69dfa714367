#!/usr/bin/env bash
# xpu-report --gpu-idle, --sync-wait, --idle-from-start and their --header
# sections end to end, on a tests/tools/gen_trace.c trace with GPU work and
# cudaStreamSynchronize calls (--gpu --sync) at 1000 Hz, so a sample is 1 ms:
# the folded weights must add up to the header's times (each folded line is
# rounded, so within one sample per line), every stack starts or ends where
# the view says, and the views without data fail with exit 10 and a reason.
# Exact weights on hand-built traces: tests/unit/test_gpu_idle.c.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
tui_gen "$T/s.data" -n 3000 --gpu --sync --freq 1000
tui_gen "$T/g.data" -n 1000 --gpu --freq 1000
R() { "$REPORT" -i "$T/s.data" "$@" 2>"$T/err"; }

# sum of the folded counts; number of lines
fsum() { awk '{ n = $NF; s += n; l++ } END { printf "%d %d\n", s, l }' "$1"; }
# |a - b| <= tol
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

R --header >"$T/h" || fail "--header failed: $(cat "$T/err")"
idle=$(sed -n 's/^#   pid 100 device 0: busy [0-9.]*% of [0-9.]* ms, idle \([0-9.]*\) ms, [0-9]* gaps$/\1/p' "$T/h")
[ -n "$idle" ] || { cat "$T/h"; fail "no gpu idle line for pid 100 device 0 in --header"; }
grep -q '^#     idle causes (what its 1 launching thread did):$' "$T/h" || fail "no idle causes"
grep -q '^#      [0-9. ]*% *[0-9.]* ms  tui_demo_matmul  gen_trace$' "$T/h" || fail "matmul is not a cause"
grep -qF '#   22 calls, 6.600 ms: on GPU work ' "$T/h" || { cat "$T/h"; fail "sync waits line"; }
grep -qE '^#   cudaStreamSynchronize +22 calls +6\.600 ms$' "$T/h" || fail "per-API sync line"
grep -qF '#   sync records without a CPU stack: 0 of 22' "$T/h" || fail "sync records line"

# --gpu-idle: every line under [GPU idle dev0]; the counts add up to the idle time
R --folded --gpu-idle --no-comm >"$T/f" || fail "--gpu-idle failed: $(cat "$T/err")"
grep -v '^\[GPU idle dev0\];' "$T/f" && fail "a --gpu-idle stack without the [GPU idle dev0] root"
grep -qE ' [0-9]+$' "$T/f" || fail "folded lines must end in a count (flamegraph.pl)"
read -r sum lines < <(fsum "$T/f")
near "$sum" "$idle" "$lines" || fail "--gpu-idle counts $sum, header idle $idle ms ($lines lines)"
top=$(awk '{ print $NF, $0 }' "$T/f" | sort -n | tail -1)
case "$top" in *"tui_demo_forward;tui_demo_matmul "*) ;; *) fail "heaviest idle stack: $top";; esac
grep -q '^\[GPU idle dev0\];\[no CPU activity recorded\] [0-9]*$' "$T/f" ||
	fail "the time no CPU event of the launcher covers has no [no CPU activity recorded] line"
# the other threads (tid 101, pid 200) launch nothing: never charged
R --folded --gpu-idle --tid 101 >/dev/null; [ $? -eq 10 ] || fail "--gpu-idle --tid 101 must be empty"
grep -q 'no GPU in .*s.data was idle between its first and last work in the filtered selection' "$T/err" ||
	fail "--tid 101 reason: $(cat "$T/err")"

# --idle-from-start: more idle time, said in the header
R --header --idle-from-start >"$T/h2" || fail "--header --idle-from-start failed"
grep -qF "device), from the process's first CPU event:" "$T/h2" || fail "--idle-from-start header title"
idle2=$(sed -n 's/^#   pid 100 device 0: .*, idle \([0-9.]*\) ms, .*/\1/p' "$T/h2")
awk -v a="$idle2" -v b="$idle" 'BEGIN { exit !(a > b) }' || fail "--idle-from-start: $idle2 <= $idle"
R --folded --gpu-idle --idle-from-start >"$T/f2" || fail "--gpu-idle --idle-from-start failed"
read -r sum2 lines2 < <(fsum "$T/f2")
near "$sum2" "$idle2" "$lines2" || fail "--idle-from-start counts $sum2, header idle $idle2 ms"

# --sync-wait: the call's stack, then what it waited on; 22 x 300 us in all
R --folded --sync-wait --no-comm >"$T/w" || fail "--sync-wait failed: $(cat "$T/err")"
grep -v '^main;tui_demo_main;tui_demo_step;tui_demo_launch;cudaStreamSynchronize;\[waits on\] ' "$T/w" &&
	fail "a --sync-wait stack not under the sync call"
grep -q '^main;.*;cudaStreamSynchronize;\[waits on\] matmul_f32(float const\*, float const\*, float\*, int) [0-9]*$' "$T/w" ||
	fail "no wait on matmul_f32"
grep -q ';\[waits on\] nothing (GPU idle) [0-9]*$' "$T/w" || fail "no GPU-idle part of the waits"
read -r sum lines < <(fsum "$T/w")
near "$sum" 6.6 "$lines" || fail "--sync-wait counts $sum, want 6.6 ($lines lines)"
R --stdio --sync-wait >"$T/st" || fail "--stdio --sync-wait failed"
grep -q '^# Total: 7 samples .*, sync wait$' "$T/st" || { head -3 "$T/st"; fail "--stdio --sync-wait total"; }

# views without data: exit 10 and why
"$REPORT" -i "$T/g.data" --folded --sync-wait >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 10 ] || fail "--sync-wait without sync calls exited $rc"
grep -q 'holds no synchronizing CUDA call' "$T/err" || fail "--sync-wait reason: $(cat "$T/err")"
echo "ok: --gpu-idle $idle ms (from start $idle2 ms), --sync-wait 6.6 ms, header sections"

#!/usr/bin/env bash
# What xpu-record -p costs a running CUDA process (Documentation/design-attach.md),
# no GPU: tests/workloads/fake_cuda_app launching through the fake
# libcuda.so.1 (a launch, then FAKE_LAUNCH_GAP_US of sleep, as a training
# loop's pace), attached ROUNDS times (default 10) for SECS seconds (default
# 1) with libfake_cupti.so. Prints, per round, the time the borrowed thread
# was away from its own code (-v's attach line: its stop, the dlopen or the
# attach entry, its system call stops), and the app's launch rate in the
# second before the first attach, inside the windows and in the seconds
# after the last detach (from its voluntary context switches: one a launch).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
BUILD=${XPU_BUILD:-$TOP/build}
ROUNDS=${ROUNDS:-10}
SECS=${SECS:-1}
GAP=${FAKE_LAUNCH_GAP_US:-200}
W=$BUILD/tests/workloads
[ -x "$W/fake_cuda_app" ] && [ -f "$W/libfake_cupti.so" ] && [ -f "$W/fake_cuda/libcuda.so.1" ] ||
	{ echo "fake CUDA pieces not built: run make tests-build"; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "needs root (eBPF, ptrace)"; exit 2; }
TMP=$(mktemp -d)
trap 'touch "$TMP/stop"; sleep 0.2; rm -rf "$TMP"' EXIT

FAKE_CUDA_DRIVER=$W/fake_cuda/libcuda.so.1 FAKE_UNTIL_FILE=$TMP/stop FAKE_LAUNCH_GAP_US=$GAP \
	XPU_FAKE_KERNEL_NS=100000 "$W/fake_cuda_app" 1 0.01 >"$TMP/app.out" 2>&1 &
app=$!
sleep 0.5
sw() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/$app/status; }
now() { date +%s.%N; }
rate() { awk -v a="$1" -v b="$2" -v t0="$3" -v t1="$4" 'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }'; }

s0=$(sw) t0=$(now); sleep 2; s1=$(sw) t1=$(now)
before=$(rate "$s0" "$s1" "$t0" "$t1")
in_n=0 in_t=0
printf '%-6s %10s %10s %10s %8s %s\n' round stop_ms load_ms away_ms stops "launches/s attached"
for r in $(seq "$ROUNDS"); do
	a=$(sw) ta=$(now)
	"$BIN/xpu-record" -v -p $app -d "$SECS" --cupti-lib "$W/libfake_cupti.so" -o "$TMP/a.data" \
		>/dev/null 2>"$TMP/a.err" || { tail -n 3 "$TMP/a.err"; exit 1; }
	b=$(sw) tb=$(now)
	line=$(grep -m1 'GPU recording attached' "$TMP/a.err")
	stop=$(sed -nE 's/.*stopped ([0-9.]+) ms before.*/\1/p' <<<"$line")
	load=$(sed -nE 's/.* ([0-9.]+) ms in dlopen.*/\1/p' <<<"$line")
	away=$(sed -nE 's/.* ([0-9.]+) ms away from.*/\1/p' <<<"$line")
	stops=$(sed -nE 's/.*\(([0-9]+) system call stops\).*/\1/p' <<<"$line")
	printf '%-6s %10s %10s %10s %8s %s\n' "$r" "$stop" "$load" "$away" "$stops" "$(rate "$a" "$b" "$ta" "$tb")"
	echo "$away" >>"$TMP/away"
	in_n=$(awk -v x="$in_n" -v a="$a" -v b="$b" 'BEGIN { print x + b - a }')
	in_t=$(awk -v x="$in_t" -v a="$ta" -v b="$tb" 'BEGIN { print x + b - a }')
	sleep 0.5
done
sleep 1
s0=$(sw) t0=$(now); sleep 2; s1=$(sw) t1=$(now)
after=$(rate "$s0" "$s1" "$t0" "$t1")
sort -n "$TMP/away" | awk '{ v[NR] = $1 } END { printf "away from its own code: median %.3f ms, max %.3f ms (%d attaches)\n", v[int((NR + 1) / 2)], v[NR], NR }'
echo "launches/s: before $before, during the recordings (setup included) $(awk -v n="$in_n" -v t="$in_t" 'BEGIN { printf "%.0f", n / t }'), after the last detach $after ($(awk -v a="$after" -v b="$before" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'))"

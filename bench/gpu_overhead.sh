#!/usr/bin/env bash
# GPU overhead benchmark (issue 3), for the GPU machine, as root:
#   bench/gpu_overhead.sh
# Runs bench/gpu_loop.py launch-bound and GPU-bound, REPEAT times each,
# interleaved: with no profiler, under xpu-record (a CPU stack for every
# launch + CUPTI activity + CPU sampling at FREQ), two breakdown rows of
# xpu-record (--no-gpu: CPU sampling only; XPU_CUPTI_APIS= : CUPTI activity
# but no API callbacks, markers or launch stacks), xpu-record with Python
# frames from PYTHONPERFSUPPORT trampolines (--python-frames=perf-map)
# instead of the interpreter walk (the default, the xpu row), and inside
# torch.profiler(with_stack=True) with export_stacks. Prints the median loop
# time and end-to-end wall time of each, their ratios to no profiler, and
# the trace's bytes per GPU event.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
PY=${PYTHON:-python3}
REPEAT=${REPEAT:-3}
FREQ=${FREQ:-99}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run_one() {	# mode tool -> appends "loop wall" to $TMP/mode.tool
	local mode=$1 tool=$2 out=$TMP/out t0 t1
	t0=$(date +%s.%N)
	case $tool in
	none)	$PY "$TOP/bench/gpu_loop.py" "$mode" > "$out" 2>&1 ;;
	xpu)	"$BIN/xpu-record" -q -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/$mode.data" -- $PY "$TOP/bench/gpu_loop.py" "$mode" > "$out" 2>&1 ;;
	nogpu)	"$BIN/xpu-record" -q -F "$FREQ" --no-gpu -o "$TMP/x.data" -- \
			$PY "$TOP/bench/gpu_loop.py" "$mode" > "$out" 2>&1 ;;
	perfmap) "$BIN/xpu-record" -q -F "$FREQ" --python-frames=perf-map \
			--cupti-lib "$BIN/libxpu-cupti.so" -o "$TMP/x.data" -- \
			$PY "$TOP/bench/gpu_loop.py" "$mode" > "$out" 2>&1 ;;
	cupti)	XPU_CUPTI_APIS= "$BIN/xpu-record" -q -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/x.data" -- $PY "$TOP/bench/gpu_loop.py" "$mode" > "$out" 2>&1 ;;
	torch)	$PY "$TOP/bench/gpu_loop.py" "$mode" --profiler > "$out" 2>&1 ;;
	esac
	t1=$(date +%s.%N)
	local loop
	loop=$(awk '/^LOOP/ {print $2}' "$out")
	[ -n "$loop" ] || { echo "run failed: $mode $tool"; tail -5 "$out"; return 1; }
	echo "$loop $(awk -v a="$t1" -v b="$t0" 'BEGIN {print a - b}')" >> "$TMP/$mode.$tool"
}

for mode in launch gpu; do
	for ((i = 0; i < REPEAT; i++)); do
		for tool in none nogpu cupti perfmap xpu torch; do
			run_one "$mode" "$tool" || exit 1
		done
	done
done

printf '%-8s %-22s %10s %10s %10s %10s\n' mode tool loop_s wall_s loop_x wall_x
for mode in launch gpu; do
	base_l=$(awk '{print $1}' "$TMP/$mode.none" | median)
	base_w=$(awk '{print $2}' "$TMP/$mode.none" | median)
	for tool in none nogpu cupti perfmap xpu torch; do
		l=$(awk '{print $1}' "$TMP/$mode.$tool" | median)
		w=$(awk '{print $2}' "$TMP/$mode.$tool" | median)
		name=$tool
		[ $tool = xpu ] && name="xpu-record -F $FREQ"
		[ $tool = torch ] && name="torch.profiler+stack"
		[ $tool = nogpu ] && name="  xpu --no-gpu"
		[ $tool = cupti ] && name="  xpu CUPTI only"
		[ $tool = perfmap ] && name="  xpu py perf-map"
		awk -v m="$mode" -v n="$name" -v l="$l" -v w="$w" -v bl="$base_l" -v bw="$base_w" \
			'BEGIN {printf "%-8s %-22s %10.3f %10.3f %10.2f %10.2f\n", m, n, l, w, l / bl, w / bw}'
	done
	if [ -f "$TMP/$mode.data" ]; then
		"$BIN/xpu-report" -i "$TMP/$mode.data" --header > "$TMP/$mode.hdr" 2>/dev/null
		gpu=$(awk '/^#   GPU_(KERNEL|MEMCPY|MEMSET|SYNC|API|CORR)/ {n += $3} END {print n+0}' "$TMP/$mode.hdr")
		bytes=$(stat -c %s "$TMP/$mode.data")
		awk -v m="$mode" -v b="$bytes" -v g="$gpu" 'BEGIN {printf "%-8s trace %d bytes, %d GPU records (kernel+copy+set+sync+api+corr), %.1f bytes/GPU record (upper bound: CPU samples included)\n", m, b, g, b / (g + 1)}'
	fi
done

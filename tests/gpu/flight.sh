#!/usr/bin/env bash
# The flight recorder on the GPU machine (issue 32, Documentation/
# design-fleet.md): what it costs a CUDA process and how much memory its
# ring takes per second of GPU records, against writing the whole trace;
# and that a window written at the end is readable alone with its GPU
# kernels under Python launch stacks. Run as root (XPU_BIN, OUT as for
# tests/gpu/run.sh; not run by it):
#   bash tests/gpu/flight.sh          # prints a table, writes $OUT/flight.txt
# bench/gpu_loop.py launch (tiny kernels, launch-bound) and gpu (matmuls),
# REPEAT (default 3) interleaved rounds of: no profiler, xpu-record (whole
# trace), xpu-record --flight-recorder=SECS (default 10) --trigger
# 'gpu-idle>90'. Exit 0 all checks passed, 1 a check failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
PY=${PYTHON:-python3}
REPEAT=${REPEAT:-3} SECS=${SECS:-10}
# per mode: the launch loop's 2 x 20,000 tiny kernels take ~2 s; a matmul of
# the gpu loop ~1.5 ms on an H100 (20,000 of them ran past the device's
# 10-minute limit over the 9 runs)
ITERS_LAUNCH=${ITERS_LAUNCH:-20000} ITERS_GPU=${ITERS_GPU:-3000}
mkdir -p "$RES/flight"
for f in xpu-record xpu-report libxpu-cupti.so; do
	[ -e "$BIN/$f" ] || { echo "missing $BIN/$f"; exit 2; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU (nvidia-smi -L failed)"; exit 2; }
fail=0
out=$RES/flight.txt
: >"$out"
for mode in launch gpu; do
	for r in $(seq "$REPEAT"); do
		for c in none whole flight; do
			D=$RES/flight/$mode.$c.$r && rm -rf "$D" && mkdir -p "$D"
			case $c in
			none)   C=() ;;
			whole)  C=("$BIN/xpu-record" -v --cupti-lib "$BIN/libxpu-cupti.so" -o "$D/x.data" --) ;;
			flight) C=("$BIN/xpu-record" -v --cupti-lib "$BIN/libxpu-cupti.so" --flight-recorder="$SECS"
				   --trigger 'gpu-idle>90' -o "$D/x.data" --) ;;
			esac
			iters=$([ $mode = launch ] && echo "$ITERS_LAUNCH" || echo "$ITERS_GPU")
			"${C[@]}" "$PY" "$TOP/bench/gpu_loop.py" "$mode" --iters "$iters" >"$D/out" 2>"$D/err" ||
				{ echo "FAIL  $mode $c: exit $? ($D/err)"; fail=1; continue; }
			loop=$(awk '$1=="LOOP"{print $2}' "$D/out")
			rss=$(sed -nE 's/.*peak RSS ([0-9.]+) MB.*CPU time ([0-9.]+) s.*/\1 \2/p' "$D/err")
			ring=$(sed -nE 's/.*flight ring peak ([0-9.]+) KB.*/\1/p' "$D/err")
			size=$(du -b "$D"/x.data* 2>/dev/null | awk '{s+=$1} END{print s+0}')
			echo "$mode $c round $r: loop ${loop:-?} s; recorder RSS MB, CPU s: ${rss:-none}; ring peak ${ring:--} KB; files $size bytes" | tee -a "$out"
		done
	done
done
# the last flight window: readable alone, GPU kernels under Python frames
f=$(ls "$RES"/flight/launch.flight.*/x.data.* 2>/dev/null | tail -1)
if [ -z "$f" ]; then
	echo "FAIL  no flight recorder file"; fail=1
else
	"$BIN/xpu-report" -i "$f" --header >"$RES/flight/window.header" 2>&1
	"$BIN/xpu-report" -i "$f" --folded --gpu-only >"$RES/flight/window.folded" 2>/dev/null
	grep -q 'finished cleanly: yes' "$RES/flight/window.header" || { echo "FAIL  $f: no FINISH"; fail=1; }
	grep -q 'gpu_loop.py' "$RES/flight/window.folded" && grep -q 'GPU_Kernel' "$RES/flight/window.folded" ||
		{ echo "FAIL  $f: no GPU kernels under gpu_loop.py's Python frames"; fail=1; }
	[ $fail = 0 ] && echo "ok    $f: readable alone, GPU kernels under Python frames" | tee -a "$out"
fi
exit $fail

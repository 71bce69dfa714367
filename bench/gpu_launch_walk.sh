#!/usr/bin/env bash
# GPU machine (issue 13): how the default launch walk (--launch-stacks=walk)
# takes CUDA calls' stacks, against the uprobe marker for every call
# (--launch-stacks=marker), on programs from a short native demo to GPT-2
# training. Per workload and ROUNDS (argument, default 1) interleaved: the
# walk's own counts (calls, walks complete, served by the memo, ns a walk
# timed inside the library), the same with no memo at all
# (XPU_CUPTI_WALK_MEMO=0), and whether the GPU flame
# graph's call paths (--folded --gpu-only --no-py-lines) are the marker's:
# "paths walk N, marker N, both N".
#   XPU_BIN=<dir> [WORK="gpu_demo torch"] bench/gpu_launch_walk.sh [ROUNDS]
# Workloads: gpu_demo, graph_demo (tests/gpu/*.cu, built with nvcc),
# torch (tests/gpu/torch_demo.py), gpt2 (bench/gpt2_train.py 20, needs
# transformers). FREQ (default 999) is the sampling rate.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
OUT=${OUT:-${XPU_BUILD:-$TOP/build}/bench-gpu}
PY=${PYTHON:-python3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
FREQ=${FREQ:-999}
ROUNDS=${1:-1}
read -r -a work <<<"${WORK:-gpu_demo graph_demo torch gpt2}"
mkdir -p "$OUT"
nvidia-smi -L >/dev/null 2>&1 || { echo "skip: no GPU (nvidia-smi -L failed)"; exit 2; }

cmd_of() {	# workload -> its command line, or nothing when it cannot run
	case $1 in
	gpu_demo|graph_demo)
		[ -x "$OUT/$1" ] || "$NVCC" -O2 -g -arch=sm_90 -o "$OUT/$1" "$TOP/tests/gpu/$1.cu" \
			-lpthread >"$OUT/nvcc_$1.log" 2>&1 || return 0
		echo "$OUT/$1" ;;
	torch)	echo "$PY $TOP/tests/gpu/torch_demo.py" ;;
	gpt2)	$PY -c 'import transformers' 2>/dev/null && echo "$PY $TOP/bench/gpt2_train.py 20" ;;
	esac
}

# record NAME OPTIONS... -- COMMAND: prints the walk's counts, if it walked
record() {
	local name=$1
	shift
	"$BIN/xpu-record" -q -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" -o "$OUT/$name.data" "$@" \
		>"$OUT/$name.out" 2>"$OUT/$name.err" || { echo "xpu-record failed (see $OUT/$name.err)"; return 1; }
	"$BIN/xpu-report" -i "$OUT/$name.data" --folded --gpu-only --no-py-lines 2>/dev/null |
		sed 's/ [0-9]*$//' | sort -u >"$OUT/$name.paths"
	"$BIN/xpu-report" -i "$OUT/$name.data" --header 2>/dev/null |
		sed -nE 's/^#   cupti.launch_walk: pid [0-9]+: ([0-9]+ walks, [0-9]+ to their end).* ([0-9]+ checked against a memo instead; [0-9]+ ns a walk).*/\1, \2/p'
}

for ((r = 1; r <= ROUNDS; r++)); do
	for w in "${work[@]}"; do
		cmd=$(cmd_of "$w")
		[ -n "$cmd" ] || { echo "$w: skipped (not built, or no transformers)"; continue; }
		# shellcheck disable=SC2086
		{
			echo "$w round $r, walk:          $(record "$w.walk" -- $cmd)"
			echo "$w round $r, no memo:       $(XPU_CUPTI_WALK_MEMO=0 record "$w.nomemo" -- $cmd)"
			record "$w.marker" --launch-stacks=marker -- $cmd >/dev/null
		}
		echo "$w round $r: GPU paths walk $(wc -l <"$OUT/$w.walk.paths"), marker" \
		     "$(wc -l <"$OUT/$w.marker.paths"), both $(comm -12 "$OUT/$w.walk.paths" "$OUT/$w.marker.paths" | wc -l)"
	done
done

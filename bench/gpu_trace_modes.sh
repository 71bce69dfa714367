#!/usr/bin/env bash
# GPU machine (issue 13): what the writer's stack modes cost a recording of
# CUDA processes. xpu-record writes a CUDA process's stacks as the frames
# of their CFI unwinding where it knows them (format 1.6), else pruned, and
# does not code them (no STACK_DELTA, zstd 3), because coding lost
# correlation records on the GPU machines; each mode alone:
#   default        frames or pruned, not coded, zstd 3 (once a CUDA process connects)
#   cfi-words      the words the CFI unwinding reads instead of its frames
#                  (XPU_STACK_PRUNE=cfi, format 1.5's default)
#   whole          not pruned either              (XPU_STACK_PRUNE=0)
#   coded          pruned + STACK_DELTA + zstd 9 (the CPU-only default)
#   coded-address  the same with the address rule alone (1.4's pruning)
#   delta-only     STACK_DELTA + zstd 9, whole copies
#   address-only   pruned by the address rule alone, not coded
# Workloads: tests/gpu/torch_demo.py, and the 2-rank DDP job of
# tests/gpu/ddp_demo.py where two GPUs are visible. Rounds interleave the
# modes. Per row: trace MB, bytes per stack record, correlation records
# lost, kernels matched by ID, the recorder's reader-thread CPU seconds.
#   XPU_BIN=<dir> [MODES="default whole"] bench/gpu_trace_modes.sh [ROUNDS]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
OUT=${OUT:-${XPU_BUILD:-$TOP/build}/bench-gpu}
PY=${PYTHON:-python3}
ROUNDS=${1:-1}
mkdir -p "$OUT"
$PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	{ echo "skip: needs PyTorch with CUDA"; exit 2; }
ngpu=$($PY -c 'import torch; print(torch.cuda.device_count())')
read -r -a modes <<<"${MODES:-default whole coded coded-address delta-only address-only}"
work=(torch)
[ "$ngpu" -ge 2 ] && work+=(ddp)

mode_env() {
	case $1 in
	default) echo "" ;;
	cfi-words) echo "XPU_STACK_PRUNE=cfi" ;;
	whole) echo "XPU_STACK_PRUNE=0" ;;
	coded) echo "XPU_GPU_PLAIN=0" ;;
	coded-address) echo "XPU_GPU_PLAIN=0 XPU_STACK_PRUNE=address" ;;
	delta-only) echo "XPU_GPU_PLAIN=0 XPU_STACK_PRUNE=0" ;;
	address-only) echo "XPU_STACK_PRUNE=address" ;;
	esac
}

one() {	# workload mode round
	local t=$OUT/modes-$1-$2.data cmd
	case $1 in
	torch) cmd=("$PY" "$TOP/tests/gpu/torch_demo.py") ;;
	ddp) cmd=("$PY" -m torch.distributed.run --standalone --nproc_per_node=2
		"$TOP/tests/gpu/ddp_demo.py" --steps 200) ;;
	esac
	env $(mode_env "$2") "$BIN/xpu-record" -v -F 999 --cupti-lib "$BIN/libxpu-cupti.so" \
		-o "$t" -- "${cmd[@]}" >"$OUT/modes.out" 2>"$OUT/modes-$1-$2.err"
	local rc=$?
	"$BIN/xpu-report" -i "$t" --header >"$OUT/modes-$1-$2.header" 2>/dev/null
	$PY - "$t" "$OUT/modes-$1-$2.header" "$OUT/modes-$1-$2.err" "$1" "$2" "$rc" <<'PY'
import os, re, sys
trace, header, err, work, mode, rc = sys.argv[1:]
h = open(header, errors="replace").read()
e = open(err, errors="replace").read()
def num(pat, text, default="?"):
    m = re.search(pat, text, re.M)
    return m.group(1) if m else default
stacks = sum(int(num(r"^#   %s\s+(\d+)" % t, h, "0")) for t in ("SAMPLE", "OFFCPU", "GPU_CORR"))
size = os.path.getsize(trace) if os.path.exists(trace) else 0
lost = num(r"^#   correlation lost:\s+(\d+)", h)
k = re.search(r"^#   kernels\s+(\d+): by id (\d+)", h, re.M)
matched = "%.1f%%" % (100.0 * int(k.group(2)) / max(1, int(k.group(1)))) if k else "?"
reader = num(r"of which the reader thread's ([0-9.]+) s", e)
print(f"{work:<6} {mode:<14} {size / 1e6:8.1f} {size / max(1, stacks):9.0f} {lost:>9} {matched:>8} {reader:>8} {rc:>3}")
PY
}

{
	echo "# stack modes of GPU recordings, $ROUNDS round(s), $ngpu GPU(s): $(nvidia-smi -L 2>/dev/null | head -n 1)"
	printf '%-6s %-14s %8s %9s %9s %8s %8s %3s\n' work mode "MB" "B/stack" "corr lost" matched "reader s" rc
	for r in $(seq "$ROUNDS"); do
		for w in "${work[@]}"; do
			for m in "${modes[@]}"; do
				one "$w" "$m" "$r"
			done
		done
	done
} | tee "$OUT/gpu_trace_modes.txt"

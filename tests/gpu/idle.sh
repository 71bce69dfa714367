#!/usr/bin/env bash
# GPU-idle, sync-wait and off-CPU checks on the GPU machine (issue 9), run by
# tests/gpu/run.sh or alone (as root, XPU_BIN and OUT as for run.sh):
#  - idle_demo.cu: the GPU's idle time under cpu_work (on CPU) and under
#    sleep_work (off CPU) within 5% of the time the program measured; the
#    cudaStreamSynchronize in wait_for_gpu charged to the kernel it waited on,
#    within 5%;
#  - starve.py: a PyTorch loop starved by its data loading: load_batch on top
#    of the --gpu-idle flame graph.
# Prints "ok"/"FAIL" lines; exit 0 all passed, 1 a check failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
FREQ=${FREQ:-999}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
PY=${PYTHON:-python3}
mkdir -p "$RES"
fail=0
bad() { echo "FAIL  $*"; fail=1; }

for f in xpu-record xpu-report libxpu-cupti.so; do
	[ -e "$BIN/$f" ] || { echo "missing $BIN/$f"; exit 2; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU (nvidia-smi -L failed)"; exit 2; }

record() {	# name, command...: trace, then the three views folded and the header
	local name=$1; shift
	"$BIN/xpu-record" -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" -o "$RES/$name.data" -- "$@" \
		> "$RES/$name.out" 2> "$RES/$name.err" || return 1
	for v in gpu-idle sync-wait off-cpu; do
		"$BIN/xpu-report" -i "$RES/$name.data" --$v --folded > "$RES/$name.$v.folded" \
			2>> "$RES/$name.report.err"
	done
	"$BIN/xpu-report" -i "$RES/$name.data" --header > "$RES/$name.header" 2>> "$RES/$name.report.err"
}

"$NVCC" -O2 -g -arch=sm_90 -o "$RES/idle_demo" "$TOP/tests/gpu/idle_demo.cu" \
	> "$RES/nvcc_idle.log" 2>&1 || { cat "$RES/nvcc_idle.log"; exit 1; }
if record idle "$RES/idle_demo"; then
	$PY "$TOP/tests/gpu/check_idle.py" demo "$RES/idle" "$FREQ" | tee "$RES/idle.check"
	[ "${PIPESTATUS[0]}" = 0 ] || fail=1
else
	bad "xpu-record on idle_demo failed (see $RES/idle.err)"
fi

if $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	if record starve $PY "$TOP/tests/gpu/starve.py"; then
		$PY "$TOP/tests/gpu/check_idle.py" starve "$RES/starve" "$FREQ" | tee "$RES/starve.check"
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
	else
		bad "xpu-record on starve.py failed (see $RES/starve.err)"
	fi
else
	echo "note  PyTorch with CUDA not importable: starve.py skipped"
fi
exit $fail

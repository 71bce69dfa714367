#!/usr/bin/env bash
# CUDA graph capture sites on a GPU (issue 12); run by run.sh, or alone:
#   XPU_BIN=... OUT=DIR tests/gpu/graph.sh
# Records graph_demo.cu (stream capture, explicit construction, a clone,
# replays from elsewhere) and compile_demo.py (torch.compile
# mode="reduce-overhead"), reports each with --graph-attribution=both,
# capture and launch, and checks them with check_graph.py. Exit 0: passed.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
PY=${PYTHON:-python3}
FREQ=${FREQ:-999}
mkdir -p "$RES"
fail=0

rec() {	# name, command...
	local name=$1; shift
	"$BIN/xpu-record" -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" -o "$RES/$name.data" -- "$@" \
		> "$RES/$name.out" 2> "$RES/$name.err" || { echo "FAIL  xpu-record on $name exited $?"; return 1; }
	for m in both capture launch; do
		"$BIN/xpu-report" -i "$RES/$name.data" --folded --gpu-only --graph-attribution=$m \
			> "$RES/$name.$m.folded" 2>> "$RES/$name.report.err"
	done
	"$BIN/xpu-report" -i "$RES/$name.data" --header > "$RES/$name.header" 2>> "$RES/$name.report.err"
}

echo "== graph_demo: capture, construction, clone, replay"
if "$NVCC" -O2 -g -arch=sm_90 -o "$RES/graph_demo" "$TOP/tests/gpu/graph_demo.cu" > "$RES/nvcc_graph.log" 2>&1; then
	if rec graph "$RES/graph_demo"; then
		grep -q '^DONE' "$RES/graph.out" || { echo "FAIL  graph_demo did not finish"; fail=1; }
		grep -E '^#   graph' "$RES/graph.header"
		$PY "$TOP/tests/gpu/check_graph.py" demo "$RES" | tee "$RES/graph.check"
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
	else
		fail=1
	fi
else
	cat "$RES/nvcc_graph.log"; fail=1
fi

if $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "== compile_demo.py: torch.compile(mode=\"reduce-overhead\")"
	if rec compile $PY "$TOP/tests/gpu/compile_demo.py"; then
		grep -q '^DONE' "$RES/compile.out" || { echo "FAIL  compile_demo did not finish"; fail=1; }
		grep -E '^#   graph' "$RES/compile.header"
		$PY "$TOP/tests/gpu/check_graph.py" torch "$RES" | tee "$RES/compile.check"
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
	else
		fail=1
	fi
else
	echo "skip  compile_demo.py: no PyTorch with CUDA"
fi
exit $fail

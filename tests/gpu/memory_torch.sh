#!/usr/bin/env bash
# xpu-record --gpu-memory on memory_torch.py (PyTorch holders of known
# sizes) on the GPU machine, as root, and xpu-report's memory views of it
# next to what torch itself printed: writes $OUT/memtorch.{json,header,
# folded,leak,err} for check_memory.py and a reader. XPU_BIN, OUT as for
# tests/gpu/run.sh. Exit 0 recorded, 1 a step failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
PY=${PYTHON:-python3}
mkdir -p "$RES"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU"; exit 2; }
D=$RES/memtorch
"$BIN/xpu-record" -v --gpu-memory --cupti-lib "$BIN/libxpu-cupti.so" -o "$D.data" -- \
	"$PY" "$TOP/tests/gpu/memory_torch.py" >"$D.json" 2>"$D.err" || { echo "record: exit $?"; tail "$D.err"; exit 1; }
"$BIN/xpu-report" -i "$D.data" --header --gpu-memory >"$D.header" 2>>"$D.err"
"$BIN/xpu-report" -i "$D.data" --gpu-memory --folded >"$D.folded" 2>>"$D.err"
"$BIN/xpu-report" -i "$D.data" --gpu-memory=leak --folded >"$D.leak" 2>>"$D.err"
"$BIN/xpu-report" -i "$D.data" --gpu-memory=alloc --folded >"$D.alloc" 2>>"$D.err"
"$BIN/xpu-record" --gpu-memory --flight-recorder=30 --trigger oom --cupti-lib "$BIN/libxpu-cupti.so" \
	-o "$RES/memoom.data" -- "$PY" "$TOP/tests/gpu/memory_torch.py" --oom >"$RES/memoom.out" 2>"$RES/memoom.err"
echo "oom run exit $? (the program's own: 3)" >>"$RES/memoom.out"
ls "$RES"/memoom* >>"$RES/memoom.out" 2>&1
exit 0

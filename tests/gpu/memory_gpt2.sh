#!/usr/bin/env bash
# xpu-record --gpu-memory on HuggingFace GPT-2 training (memory_gpt2.py),
# on the GPU machine, as root, checked by check_memory.py against torch's
# own figures ($OUT/memgpt2.check): the peaks, parameters, optimizer state
# and activations under their lines, the live blocks at the end against
# _snapshot() block by block. Then an attach (-p, 3 s) to the same
# training running untraced: the baseline before the attach reported, the
# allocations after it with their stacks, the program's exit status
# unchanged ($OUT/memattach.check). XPU_BIN, OUT as for tests/gpu/run.sh.
# Exit 0 passed, 1 a check failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
PY=${PYTHON:-python3}
SRC=$TOP/tests/gpu/memory_gpt2.py
mkdir -p "$RES"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU"; exit 2; }
"$PY" -c 'import transformers' 2>/dev/null || { echo "no transformers"; exit 2; }
rc=0
D=$RES/memgpt2
"$BIN/xpu-record" --gpu-memory --cupti-lib "$BIN/libxpu-cupti.so" -o "$D.data" -- \
	"$PY" "$SRC" >"$D.json" 2>"$D.err" || { echo "record: exit $?"; tail "$D.err"; exit 1; }
"$BIN/xpu-report" -i "$D.data" --header --gpu-memory >"$D.header" 2>>"$D.err"
"$PY" "$TOP/tests/gpu/check_memory.py" gpt2 "$BIN" "$D.data" "$D.json" "$SRC" >"$D.check" 2>&1 || rc=1
cat "$D.check"

A=$RES/memattach
STOP=$A.stop
rm -f "$STOP"
"$PY" "$SRC" --until "$STOP" >"$A.out" 2>"$A.app.err" &
app=$!
for _ in $(seq 600); do grep -q '^ready' "$A.out" && break; sleep 0.1; done
reserved=$(sed -n 's/^ready //p' "$A.out")
"$BIN/xpu-record" -p $app -d 3 --gpu-memory --cupti-lib "$BIN/libxpu-cupti.so" -o "$A.data" \
	>"$A.rec.out" 2>"$A.err"
echo "xpu-record -p exit $?" >>"$A.err"
touch "$STOP"
wait $app
st=$?
{
	[ $st = 0 ] && echo "ok    the attached program's exit status: 0" ||
		echo "FAIL  the attached program's exit status: $st"
	grep -q '"steps"' "$A.out" && echo "ok    it ran to its end: $(grep -o '"steps": [0-9]*' "$A.out")" ||
		echo "FAIL  its output: $(tail -2 "$A.out")"
	"$BIN/xpu-report" -i "$A.data" --header --gpu-memory >"$A.header" 2>&1
	"$PY" "$TOP/tests/gpu/check_memory.py" attach "$BIN" "$A.data" "${reserved:-0}" 2>&1
} >"$A.check"
cat "$A.check"
grep -q FAIL "$A.check" && rc=1
exit $rc

#!/usr/bin/env bash
# xpu-record --gpu-memory on memory_torch.py (PyTorch holders of known
# sizes) on the GPU machine, as root, and xpu-report's memory views of it
# next to what torch itself printed, checked by check_memory.py
# ($OUT/memtorch.check); then memory_torch.py --oom under --trigger oom
# ($OUT/memoom.*). XPU_BIN, OUT as for tests/gpu/run.sh. Exit 0 passed, 1
# a check failed, 2 skipped.
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
"${PY}" "$TOP/tests/gpu/check_memory.py" torch "$BIN" "$D.data" "$D.json" "$TOP/tests/gpu/memory_torch.py" \
	>"$D.check" 2>&1; rc=$?
cat "$D.check"
# the out-of-memory moment: the window written for it holds the failure
# and the live set; the program's own error and exit status (3) unchanged
O=$RES/memoom
mkdir -p "$O"
"$BIN/xpu-record" --gpu-memory --flight-recorder=30 --trigger oom --cupti-lib "$BIN/libxpu-cupti.so" \
	-o "$O/f.data" -- "$PY" "$TOP/tests/gpu/memory_torch.py" --oom >"$O.out" 2>"$O.err"
st=$?
{
	[ $st = 3 ] && echo "ok    the program's exit status under --trigger oom: 3" ||
		echo "FAIL  the program's exit status under --trigger oom: $st, its own is 3"
	grep -q '^oom after [0-9]* GiB' "$O.out" && echo "ok    its output: $(head -1 "$O.out")" ||
		echo "FAIL  its output: $(head -3 "$O.out")"
	f=$(grep 'flight recorder: oom:' "$O.err" | head -1 | sed -E 's/.* written to //')
	if [ -n "$f" ] && [ -f "$f" ]; then
		echo "ok    $(grep 'flight recorder: oom:' "$O.err" | head -1 | sed -E 's/: [0-9.]+ s written to .*//')"
		"$BIN/xpu-report" -i "$f" --header --gpu-memory >"$O.header" 2>&1
		grep -q 'out of memory at' "$O.header" && echo "ok    $(grep 'out of memory at' "$O.header" | head -1)" ||
			echo "FAIL  the window's header names no out-of-memory"
		grep -q 'top holders at the out-of-memory failure' "$O.header" &&
			echo "ok    the live set at the failure: $(grep -A1 'top holders at the out-of-memory' "$O.header" | tail -1)" ||
			echo "FAIL  no live set at the failure"
	else
		echo "FAIL  --trigger oom wrote no window: $(tail -2 "$O.err" | tr '\n' ' ')"
	fi
} | tee -a "$D.check"
grep FAIL "$D.check" >/dev/null && rc=1
exit $rc

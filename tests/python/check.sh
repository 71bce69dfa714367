#!/usr/bin/env bash
# The interpreter walk on CPython versions Debian 12 does not ship (opt-in:
# `make python-check`; downloads ~60 MB once, scripts/python-interpreters.sh).
# Per version, into tests/python/results/python3.N.txt:
#  - chain: tests/workloads/py_demo.py (a recursion, a second thread, a
#    callback run by sorted()) recorded at -F 999; tests/tools/py_chain_check.py
#    counts the samples in its functions with the exact Python chain and line
#    numbers (the second thread's chain starts at its own pyd_worker_loop);
#  - attach: the same script recorded with -p for 1 s while it runs;
#  - launch: tests/workloads/py_fake_launch.py's fake CUDA launches
#    (libfake_cupti.so), walked in the process with their Python frames.
# Needs root (BPF) and `make tests-build`. Usage: tests/python/check.sh [3.13 3.14 3.15]
set -u
cd "$(dirname "$0")/../.."
TOP=$PWD
O=${O:-build}
RECORD=${XPU_BIN:-$TOP}/xpu-record
REPORT=${XPU_BIN:-$TOP}/xpu-report
CHECK=$TOP/tests/tools/py_chain_check.py
DEMO=$TOP/tests/workloads/py_demo.py
LIB=$TOP/$O/tests/workloads/libfake_cupti.so
T=$(mktemp -d /tmp/xpu-python-check.XXXXXX)
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.13 3.14 3.15)
rc=0
while read -r v run; do
	out=$TOP/tests/python/results/python$v.txt
	if [ "$run" = FAILED: ] || [ ! -x "$run" ]; then
		echo "python$v: could not get the interpreter: $run" | tee "$out"
		rc=1
		continue
	fi
	py=("$run" "python$v")
	{
		echo "# tests/python/check.sh on $(date -u +%Y-%m-%d), xpu-perf $(git -C "$TOP" rev-parse --short HEAD)"
		echo "interpreter: $("${py[@]}" -c 'import sys; print(sys.version.split()[0], sys.executable)')"
		"$RECORD" -v -o "$T/$v.data" -F 999 --no-gpu -- "${py[@]}" "$DEMO" 3 >"$T/$v.out" 2>"$T/$v.err"
		echo "record: rc $? $(grep -o 'CPython.*layout from [^,]*' "$T/$v.err" | head -1)"
		"$REPORT" -i "$T/$v.data" --folded >"$T/$v.folded" 2>/dev/null
		echo "chain: $(python3 "$CHECK" <"$T/$v.folded" 2>/dev/null | head -1)"
		python3 "$CHECK" <"$T/$v.folded" 2>/dev/null | sed -n '2,4p' | cut -c1-300 | sed 's/^/  /'
		echo "worker thread samples: $(grep -c 'py::pyd_worker_loop' "$T/$v.folded") stacks," \
		     "$(grep 'py::pyd_worker_loop' "$T/$v.folded" | grep -c 'py::pyd_main') with the main thread's frames"
		"$REPORT" -i "$T/$v.data" --folded --no-py-lines >"$T/$v-nl.folded" 2>/dev/null
		echo "chain --no-py-lines: $(python3 "$CHECK" --no-lines <"$T/$v-nl.folded" 2>/dev/null | head -1)"

		"${py[@]}" "$DEMO" 4 >"$T/$v.p.out" 2>&1 &
		pid=$!
		sleep 1
		"$RECORD" -o "$T/$v.p.data" -F 999 --no-gpu -p "$(pgrep -P $pid || echo $pid)" -d 1 \
			>/dev/null 2>"$T/$v.p.err"
		echo "attach -p: rc $?"
		wait $pid
		"$REPORT" -i "$T/$v.p.data" --folded >"$T/$v.p.folded" 2>/dev/null
		echo "attach chain: $(python3 "$CHECK" <"$T/$v.p.folded" 2>/dev/null | head -1)"

		if [ -f "$LIB" ]; then
			env -u XPU_CUPTI_MARKER "$RECORD" -F 99 -o "$T/$v.l.data" --cupti-lib "$LIB" -- \
				"${py[@]}" "$TOP/tests/workloads/py_fake_launch.py" 2000 >/dev/null 2>"$T/$v.l.err"
			echo "launch walk: rc $?"
			"$REPORT" -i "$T/$v.l.data" --header 2>/dev/null | grep 'cupti.launch_walk:' | sed 's/^#* */  /'
			"$REPORT" -i "$T/$v.l.data" --folded --gpu-only >"$T/$v.l.folded" 2>/dev/null
			echo "launch GPU stacks under py::train;py::launch: $(grep ';py::train:.*;py::launch:' "$T/$v.l.folded" | awk '{s+=$NF} END {print s+0}')," \
			     "under py::other: $(grep ';py::other:' "$T/$v.l.folded" | awk '{s+=$NF} END {print s+0}')," \
			     "all: $(awk '{s+=$NF} END {print s+0}' "$T/$v.l.folded")"
		else
			echo "launch walk: skipped ($LIB not built: make tests-build)"
		fi
	} >"$out" 2>&1
	cat "$out"
done < <(scripts/python-interpreters.sh "${versions[@]}" | sed 's/ FAILED:/ FAILED:/')
rm -rf "$T"
exit $rc

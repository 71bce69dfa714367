#!/usr/bin/env bash
# Off-CPU time of a Python program keeps its Python frames: the interpreter
# walk runs at the system call's return too (bpf/xpu_offcpu.bpf.h), so
# --off-cpu puts time.sleep's blocks under py::main -> py::nap with the line
# of the sleep, and --wall shows nap and crunch side by side (what
# --gpu-idle needs to charge a starved GPU to the Python function that
# blocked). Debian's python3.11.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
PY=$(ls /usr/bin/python3.1[0-3] 2>/dev/null | head -n 1)
[ -n "$PY" ] || skip "no CPython 3.10-3.13 in /usr/bin"
"$RECORD" -o "$T/run.data" -F 999 -- "$PY" "$XPU_TOP/tests/workloads/py_sleep.py" \
	>"$T/run.out" 2>"$T/run.err" || { cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/off" -i "$T/run.data" --off-cpu --folded
sleep_w=$(folded_sum 'hrtimer_nanosleep|clock_nanosleep' <"$T/off")
py_w=$(folded_sum 'py::main:[^;]*py_sleep.py:[0-9]+;py::nap:[^;]*py_sleep.py:9;.*nanosleep' <"$T/off")
note "off-CPU in nanosleep: $sleep_w samples, $py_w under py::main -> py::nap:9"
[ "$sleep_w" -ge 300 ] || fail "only $sleep_w off-CPU samples in nanosleep (25 x 20 ms expected)"
[ $((py_w * 100)) -ge $((sleep_w * 95)) ] ||
	fail "$py_w of $sleep_w sleep samples under py::main -> py::nap:9: $(sort -k2 -nr "$T/off" | head -2)"
report "$T/wall" -i "$T/run.data" --wall --folded --no-py-lines
grep -q 'py::nap:[^;:]*py_sleep.py;' "$T/wall" || fail "--wall --no-py-lines: no py::nap frame"
grep -q 'py::crunch:[^;:]*py_sleep.py' "$T/wall" || fail "--wall --no-py-lines: no py::crunch frame"
exit 0

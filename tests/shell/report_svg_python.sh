#!/usr/bin/env bash
# Python frames in --svg, from a real recording: jit_demo names its code
# "py::train_step:train.py" in its perf map, as CPython 3.12's perf
# trampolines are named (this machine's Python may be older than 3.12), and
# the frame must be drawn in the Python colour family, apart from the warm
# C frames: in the SVG's fill and in Chromium's screenshot of it. (The
# unwinder stops at the JIT code, which has no CFI: the frame is a root.)
. "$(dirname "$0")/lib/e2e.sh"
. "$XPU_TOP/tests/shell/lib/chromium.sh"
need_tools
JIT_DEMO=$XPU_BUILD/tests/workloads/jit_demo
[ -x "$JIT_DEMO" ] || fail "$JIT_DEMO not built: run make tests-build"
[ "$(uname -m)" = x86_64 ] || skip "jit_demo writes x86-64 code"
need_bpf
need_chromium

"$RECORD" -F 999 --no-gpu -o "$T/py.data" -- "$JIT_DEMO" 1 "py::train_step:train.py" \
	>"$T/py.out" 2>"$T/py.err" || { cat "$T/py.err" >&2; fail "xpu-record exited $?"; }
map=$(sed -n 's/^jit_demo: map //p' "$T/py.out")
report "$T/py.svg" -i "$T/py.data" --svg -
rm -f "$map"
python3 "$FLAMEGRAPH_PY" shape "$T/py.svg" >"$T/py.shape" || fail "cannot read the SVG"
grep -E 'py::train_step:train\.py$' "$T/py.shape" || fail "no py::train_step frame in the SVG"
awk '$NF == "py::train_step:train.py" && $4 != "python" { bad = 1 } END { exit bad }' "$T/py.shape" ||
	fail "py::train_step is not in the Python colour family"
# the rest (jit_demo's 30 ms in C under main, start-up: _start, the dynamic
# loader) is C code: warm. Which start-up frames a run has depends on where
# its few samples land (a single one is too narrow to draw), so jit_demo
# runs C code first: any of these will do
grep -Eq ' cpu +[0-9]+ .*  (_start|_dl_start|__libc_start_main|main|\[ld-linux[^]]*\])$' "$T/py.shape" ||
	fail "no warm CPU frame (_start, _dl_start, the loader): $(grep -v python "$T/py.shape" | head -n 5)"
chromium_png "$T/py.svg" "$T/py.png"
python3 "$FLAMEGRAPH_PY" png "$T/py.png" >"$T/py.png.txt" || fail "cannot read the screenshot"
cat "$T/py.png.txt"
[ "$(png_family "$T/py.png.txt" python)" -ge 5000 ] || fail "too few Python-coloured pixels in the screenshot"
[ "$(png_family "$T/py.png.txt" python)" -gt "$(png_family "$T/py.png.txt" cpu)" ] ||
	fail "more warm than Python pixels: the JIT frame holds nearly all samples"
exit 0

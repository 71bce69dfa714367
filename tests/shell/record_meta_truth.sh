#!/usr/bin/env bash
# The trace's metadata says what happened, not only what was asked:
# - GPU recording on (the default when libxpu-cupti.so is there) but no CUDA
#   process connected: "gpu: requested; no CUDA process seen", and no gpu
#   feature bit;
# - Python frames from perf maps asked for (--python-frames=perf-map: xpu-record
#   sets PYTHONPERFSUPPORT=1) but the interpreter wrote no perf map (CPython
#   < 3.12): said in the metadata and warned at record time; with 3.12+ the
#   frames are there;
# - the interpreter walk (the default): python_frames: walk, and the python
#   feature bit set when it found frames (CPython 3.10-3.13).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
[ -e "$XPU_BIN/libxpu-cupti.so" ] || skip "libxpu-cupti.so not built (no CUDA toolkit): GPU recording is off"

"$RECORD" -o "$T/c.data" -- "$CPU_DEMO" 1 >/dev/null 2>"$T/c.err" || fail "xpu-record: $(cat "$T/c.err")"
report "$T/c.header" -i "$T/c.data" --header
grep -q '^#   gpu: requested; no CUDA process seen$' "$T/c.header" ||
	fail "no CUDA process, yet: $(grep '^#   gpu:' "$T/c.header")"
grep -E '^# features:' "$T/c.header" | grep -qw gpu && fail "gpu feature bit set without GPU data"
note "no CUDA process: $(grep '^#   gpu:' "$T/c.header")"

command -v python3 >/dev/null || { note "no python3: the Python half is not run"; exit 0; }
minor=$(python3 -c 'import sys; print(sys.version_info[1] if sys.version_info[0] == 3 else 99)')
"$RECORD" -o "$T/p.data" --python-frames=perf-map -- python3 -c 'sum(range(3 * 10**6))' >/dev/null 2>"$T/p.err" ||
	fail "xpu-record python3: $(cat "$T/p.err")"
report "$T/p.header" -i "$T/p.data" --header
frames=$(sed -n 's/^#   python_frames: //p' "$T/p.header")
note "python3.$minor: python_frames: $frames"
if [ "$minor" -lt 12 ]; then
	[[ $frames == "requested (PYTHONPERFSUPPORT=1 set by xpu-record); no perf map was written"* ]] ||
		fail "python3.$minor cannot write perf maps, yet python_frames: $frames"
	grep -q "python3 wrote no perf map: Python frames need CPython 3.12" "$T/p.err" ||
		fail "no warning at record time: $(cat "$T/p.err")"
else
	[[ $frames == perf-map* ]] || fail "python3.$minor: python_frames: $frames"
fi

"$RECORD" -o "$T/w.data" -- python3 -c 'sum(range(3 * 10**6))' >/dev/null 2>"$T/w.err" ||
	fail "xpu-record python3 (walk): $(cat "$T/w.err")"
report "$T/w.header" -i "$T/w.data" --header
frames=$(sed -n 's/^#   python_frames: //p' "$T/w.header")
note "python3.$minor, default: python_frames: $frames"
[ "$frames" = walk ] || fail "python3.$minor, default: python_frames: $frames"
if [ "$minor" -ge 10 ] && [ "$minor" -le 13 ]; then
	grep -E '^# features:' "$T/w.header" | grep -qw python ||
		fail "python3.$minor: the walk found no Python frames (no python feature bit)"
else
	grep -E '^# features:' "$T/w.header" | grep -qw python &&
		fail "python3.$minor: python feature bit for a version the walk does not know"
fi
echo "ok"

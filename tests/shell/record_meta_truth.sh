#!/usr/bin/env bash
# The trace's metadata says what happened, not only what was asked:
# - GPU recording on (the default when libxpu-cupti.so is there) but no CUDA
#   process connected: "gpu: requested; no CUDA process seen", and no gpu
#   feature bit;
# - Python frames asked for (xpu-record sets PYTHONPERFSUPPORT=1) but the
#   interpreter wrote no perf map (CPython < 3.12): said in the metadata and
#   warned at record time; with 3.12+ the frames are there.
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
"$RECORD" -o "$T/p.data" -- python3 -c 'sum(range(3 * 10**6))' >/dev/null 2>"$T/p.err" ||
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
	[[ $frames == on* ]] || fail "python3.$minor: python_frames: $frames"
fi
echo "ok"

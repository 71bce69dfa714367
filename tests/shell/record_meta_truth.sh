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
# Without GPU data the header says so once, not how GPU recording was set
# up (issue 31 item 7: nvtx "on", launch_stacks "walk" on a CPU-only trace).
grep -Eq '^#   (nvtx|cupti_lib|launch_stacks|cupti\.[a-z_]*|gpu\.[a-z0-9_.]*):' "$T/c.header" &&
	fail "GPU setup lines without GPU data: $(grep -E '^#   (nvtx|cupti|launch|gpu\.)' "$T/c.header")"
[ "$(grep -c '^#   (no GPU data recorded: .*nvtx.* not shown)$' "$T/c.header")" -eq 1 ] ||
	fail "'no GPU data recorded' not said once: $(sed -n '/# metadata/,/# records/p' "$T/c.header")"
# The record-type table's LOST row is a count of loss counters: it says the
# events lost, as the lost events table does; SAMPLE is the samples written.
lost=$(sed -nE 's/^#   total +([0-9]+)$/\1/p' "$T/c.header")
grep -Eq "^#   LOST +[0-9]+   \(loss counters; events lost: $lost, below\)$" "$T/c.header" ||
	fail "LOST row: $(grep '^#   LOST' "$T/c.header") (events lost: $lost)"
samples=$(sed -nE "s/^# recorder's final counts: samples ([0-9]+),.*/\1/p" "$T/c.header")
[ "$samples" -gt 0 ] && grep -Eq "^#   SAMPLE +$samples\$" "$T/c.header" ||
	fail "SAMPLE row: $(grep '^#   SAMPLE' "$T/c.header"), recorder: $samples"

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

#!/usr/bin/env bash
# End to end: ranks and merged recordings, with real eBPF.
#  - one recording of a launcher (like torchrun) that starts two workers with
#    RANK=0 and RANK=1 in their environment and has none itself: --header
#    lists both ranks, --rank keeps exactly each rank's processes (a child
#    forked without exec has its parent's rank), --rank 0 + --rank 1 + the
#    launcher's own samples = everything;
#  - two recordings (RANK=0, RANK=1) merged with -i a -i b and with -i DIR:
#    folded totals are the sum of each alone, every stack starts with its
#    "[host:file rank R]" label with --input-frame, --rank 1 of the merge is the second alone;
#  - merges that must be refused or warned about: a copy whose META arch says
#    aarch64 (exit 11, one line), a directory without traces (exit 7), a
#    copy of another tool version (a warning, exit 0).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
EXIT_MERGE=11

# ---- one trace of a launcher with two ranks ---------------------------------
env -u RANK -u LOCAL_RANK -u WORLD_SIZE "$RECORD" -F 499 -o "$T/job.data" -- sh -c \
	"RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 CUDA_VISIBLE_DEVICES=0 '$CPU_DEMO' 1 --no-thread &
	 RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 CUDA_VISIBLE_DEVICES=1 '$CPU_DEMO' 1 --no-thread &
	 wait" >"$T/job.out" 2>"$T/job.err" || { cat "$T/job.err" >&2; fail "xpu-record of the launcher failed"; }
report "$T/job.header" -i "$T/job.data" --header
grep -q '^# ranks' "$T/job.header" || fail "--header has no ranks section"
for r in 0 1; do
	grep -Eq "^#  +[0-9]+ cpu_demo +$r +$r +2  $r( |$)" "$T/job.header" ||
		fail "--header does not list cpu_demo with rank $r, local rank $r, world 2, device $r"
done
grep -Eq '^#  +[0-9]+ sh ' "$T/job.header" && fail "--header gives the launcher (no RANK) a rank"
"$REPORT" -i "$T/job.data" --dump | grep -q '^PROC_ENV .* RANK=1' || fail "--dump shows no PROC_ENV with RANK=1"
"$REPORT" -i "$T/job.data" --dump | grep '^PROC_ENV' | grep -Eq 'PATH=|HOME=' &&
	fail "PROC_ENV holds variables other than the rank ones"

report "$T/job.all" -i "$T/job.data" --folded
report "$T/job.r0" -i "$T/job.data" --folded --rank 0
report "$T/job.r1" -i "$T/job.data" --folded --rank 1
report "$T/job.r01" -i "$T/job.data" --folded --rank 0,1
all=$(folded_sum <"$T/job.all"); r0=$(folded_sum <"$T/job.r0"); r1=$(folded_sum <"$T/job.r1")
# the launcher: the shell's process (its children's moments before their
# exec carry its name too, but belong to their rank's process)
shpid=$("$REPORT" -i "$T/job.data" --dump 2>/dev/null |
	sed -nE 's/^COMM .* pid=([0-9]+) tid=[0-9]+ comm=(sh|bash|dash) exec.*/\1/p' | head -n 1)
[ -n "$shpid" ] || fail "no exec of the launcher shell in --dump"
"$REPORT" -i "$T/job.data" --folded --pid "$shpid" >"$T/job.sh" 2>/dev/null || : >"$T/job.sh"
r01=$(folded_sum <"$T/job.r01"); launcher=$(folded_sum <"$T/job.sh")
note "launcher trace: all $all, rank 0 $r0, rank 1 $r1, both $r01, launcher $launcher"
[ "$r0" -gt 0 ] && [ "$r1" -gt 0 ] || fail "--rank 0 or --rank 1 gave an empty report"
[ $((r0 + r1)) -eq "$r01" ] || fail "--rank 0 ($r0) + --rank 1 ($r1) != --rank 0,1 ($r01)"
[ $((r01 + launcher)) -eq "$all" ] || fail "ranks ($r01) + launcher ($launcher) != all ($all)"
grep -q '^demo-child;' "$T/job.r1" || fail "--rank 1 lost the worker's forked child (inherits the rank)"
"$REPORT" -i "$T/job.data" --folded --rank 0 --pid "$shpid" >/dev/null 2>&1
[ $? -eq "$EXIT_NODATA" ] || fail "--rank 0 shows the launcher's process"
"$REPORT" -i "$T/job.data" --rank 7 --folded >/dev/null 2>&1
[ $? -eq "$EXIT_NODATA" ] || fail "--rank 7 (no such rank) should exit $EXIT_NODATA"
"$REPORT" -i "$T/job.data" --rank x --folded >/dev/null 2>&1
[ $? -eq "$EXIT_USAGE" ] || fail "--rank x should be a usage error"
# --device: no GPU work here, CPU samples unaffected
report "$T/job.dev" -i "$T/job.data" --folded --device 1
[ "$(folded_sum <"$T/job.dev")" -eq "$all" ] || fail "--device changed the CPU samples"

# ---- GPU work of two ranks on two devices (the fake CUPTI library) ----------
APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
if [ -x "$APP" ] && [ -f "$LIB" ]; then
	# 50 launches x 20 ms at 99 Hz: 99 samples of GPU time per rank
	XPU_FAKE_KERNEL_NS=20000000 env -u RANK "$RECORD" -F 99 -o "$T/gpu.data" --cupti-lib "$LIB" -- sh -c \
		"RANK=0 XPU_FAKE_DEVICE=0 '$APP' 50 0.3 & RANK=1 XPU_FAKE_DEVICE=1 '$APP' 50 0.3 & wait" \
		>"$T/gpu.out" 2>"$T/gpu.err" || { cat "$T/gpu.err" >&2; fail "xpu-record of the fake GPU job failed"; }
	report "$T/gpu.header" -i "$T/gpu.data" --header
	for d in 0 1; do
		grep -Eq "^#   $d +[0-9.]+[mu]?s +50 +1\.00s +0 +0ns$" "$T/gpu.header" ||
			{ grep -A4 '#   device' "$T/gpu.header" >&2; fail "--header: no device $d line with 50 kernels, 1.00s"; }
	done
	report "$T/gpu.all" -i "$T/gpu.data" --gpu-only --folded
	report "$T/gpu.d1" -i "$T/gpu.data" --gpu-only --folded --device 1
	report "$T/gpu.r0" -i "$T/gpu.data" --gpu-only --folded --rank 0
	report "$T/gpu.r1" -i "$T/gpu.data" --gpu-only --folded --rank 1
	g=$(folded_sum <"$T/gpu.all"); d1=$(folded_sum <"$T/gpu.d1")
	g0=$(folded_sum <"$T/gpu.r0"); g1=$(folded_sum <"$T/gpu.r1")
	note "fake GPU job: all $g, device 1 $d1, rank 0 $g0, rank 1 $g1"
	[ "$g" -eq 198 ] && [ "$d1" -eq 99 ] && [ "$g0" -eq 99 ] && [ "$g1" -eq 99 ] ||
		fail "GPU weights: all $g (want 198), --device 1 $d1, --rank 0 $g0, --rank 1 $g1 (want 99 each)"
	"$REPORT" -i "$T/gpu.data" --gpu-only --folded --device 5 >/dev/null 2>&1
	[ $? -eq "$EXIT_NODATA" ] || fail "--gpu-only --device 5 (no such device) should exit $EXIT_NODATA"
	report "$T/gpu.cpu" -i "$T/gpu.data" --cpu-only --folded
	report "$T/gpu.cpu.d1" -i "$T/gpu.data" --cpu-only --folded --device 1
	cmp -s "$T/gpu.cpu" "$T/gpu.cpu.d1" || fail "--device changed the CPU view"
else
	note "fake CUDA pieces not built: GPU part skipped"
fi

# ---- two recordings merged ---------------------------------------------------
mkdir -p "$T/dir"
RANK=0 "$RECORD" -F 499 -o "$T/dir/a.data" -- "$CPU_DEMO" 1 >/dev/null 2>"$T/a.err" || fail "recording a failed"
RANK=1 "$RECORD" -F 499 -o "$T/dir/b.data" -- "$CPU_DEMO" 1 >/dev/null 2>"$T/b.err" || fail "recording b failed"
report "$T/a" -i "$T/dir/a.data" --folded
report "$T/b" -i "$T/dir/b.data" --folded
report "$T/ab" -i "$T/dir/a.data" -i "$T/dir/b.data" --folded
report "$T/dirall" -i "$T/dir" --folded
report "$T/ab.label" -i "$T/dir/a.data" -i "$T/dir/b.data" --folded --input-frame
a=$(folded_sum <"$T/a"); b=$(folded_sum <"$T/b"); ab=$(folded_sum <"$T/ab")
note "merge: a $a, b $b, a+b $ab"
[ $((a + b)) -eq "$ab" ] || fail "merged total $ab != $a + $b"
cmp -s "$T/ab" "$T/dirall" || fail "-i DIR differs from -i a.data -i b.data"
folded_check_syntax <"$T/ab" || fail "merged folded output is malformed"
host=$(hostname)
grep -q '^\[' "$T/ab" && fail "a merged stack has a label without --input-frame"
grep -vEq "^\[$host:(a|b)\.data rank (0|1)\];" "$T/ab.label" && fail "--input-frame: a merged stack has no [host:file rank R] root"
[ "$(folded_sum "^\[$host:a\.data rank 0\];" <"$T/ab.label")" -eq "$a" ] || fail "label of a.data does not cover its samples"
[ "$(folded_sum "^\[$host:b\.data rank 1\];cpu_demo;" <"$T/ab.label")" -gt 0 ] || fail "no [host:b.data rank 1];cpu_demo stack"
report "$T/ab.r1" -i "$T/dir/a.data" -i "$T/dir/b.data" --folded --rank 1
[ "$(folded_sum <"$T/ab.r1")" -eq "$b" ] || fail "--rank 1 of the merge != b alone"
report "$T/ab.header" -i "$T/dir/a.data" -i "$T/dir/b.data" --header
grep -q '^# inputs: 2 recordings merged' "$T/ab.header" || fail "--header of a merge has no inputs section"
"$REPORT" -i "$T/dir/a.data" -i "$T/dir/b.data" --dump | grep -q '^# input 1: ' || fail "--dump of a merge does not name its inputs"
report "$T/ab.pprof" -i "$T/dir/a.data" -i "$T/dir/b.data" --stdio --input-frame
grep -q "\[$host:b.data rank 1\]" "$T/ab.pprof" || fail "--stdio of a merge has no label rows"

# forged copies: a later META record overrides the key (one stored chunk appended)
forge() {	# SRC DST KEY VALUE
	cp "$1" "$2"
	python3 - "$2" "$3" "$4" <<'EOF'
import struct, sys, zlib
path, key, val = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
body = key + b"\0" + val + b"\0"
size = 8 + len(body)
size += -size % 8
rec = struct.pack("<HHI", 1, 0, size) + body
rec += b"\0" * (size - len(rec))
hdr = struct.pack("<IIIIIII", 0x4b484358, 32, len(rec), len(rec), 1, 0, zlib.crc32(rec))
hdr += struct.pack("<I", zlib.crc32(hdr))
open(path, "ab").write(hdr + rec)
EOF
}
forge "$T/dir/b.data" "$T/arm.data" arch aarch64
"$REPORT" -i "$T/arm.data" --header | grep -q '^#   arch: aarch64' || fail "the forged chunk was not read"
"$REPORT" -i "$T/dir/a.data" -i "$T/arm.data" --folded >"$T/arm.out" 2>"$T/arm.err"
rc=$?
[ $rc -eq $EXIT_MERGE ] || fail "merging x86_64 with aarch64 exited $rc, expected $EXIT_MERGE"
[ "$(wc -l <"$T/arm.err")" -eq 1 ] && grep -q 'different architectures' "$T/arm.err" ||
	{ cat "$T/arm.err" >&2; fail "the architecture refusal is not one line naming the reason"; }
[ -s "$T/arm.out" ] && fail "a refused merge wrote output"
mkdir -p "$T/empty"
"$REPORT" -i "$T/empty" --folded >/dev/null 2>"$T/empty.err"
rc=$?
[ $rc -eq "$EXIT_INPUT" ] && [ "$(wc -l <"$T/empty.err")" -eq 1 ] && grep -q 'holds no \*.data trace' "$T/empty.err" ||
	fail "a directory without traces: exit $rc, $(cat "$T/empty.err")"
forge "$T/dir/b.data" "$T/old.data" tool_version 0.0.9
report "$T/old" -i "$T/dir/a.data" -i "$T/old.data" --folded
grep -q 'different xpu-record versions' "$T/old.err" || fail "no warning for different tool versions"
[ "$(folded_sum <"$T/old")" -eq "$ab" ] || fail "a merge with a version warning lost samples"
echo "ok"

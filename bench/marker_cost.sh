#!/usr/bin/env bash
# Prices what xpu-record adds to every CUDA launch on the CPU: the uprobe on
# xpu_cupti_marker and the stack capture its BPF program does. Runs
# bench/marker_loop (N marker calls, 8 frames deep, 4.5 KB of stack in use)
# without the recorder and under xpu-record with each stack mode, and prints
# the nanoseconds per call and the difference. Needs root; no GPU.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
BUILD=${XPU_BUILD:-$TOP/build}
N=${N:-200000}
LIB=$BUILD/tests/workloads/libmarker_test.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -f "$LIB" ] || { echo "missing $LIB: run make tests-build"; exit 2; }
cc -O2 -o "$TMP/marker_loop" "$TOP/bench/marker_loop.c" -ldl

base=$("$TMP/marker_loop" "$LIB" "$N" | awk '{print $2}')
printf '%-36s %10s %10s\n' mode ns/call added_ns
printf '%-36s %10.1f %10s\n' "no profiler" "$base" -
for cg in fp dwarf,2048 dwarf dwarf,32768; do
	ns=$("$BIN/xpu-record" -q -F 99 --call-graph "$cg" --cupti-lib "$LIB" -o "$TMP/t.data" -- \
		"$TMP/marker_loop" "$LIB" "$N" | awk '{print $2}')
	printf '%-36s %10.1f %10.1f\n' "xpu-record --call-graph $cg" "$ns" "$(awk -v a="$ns" -v b="$base" 'BEGIN {print a - b}')"
done

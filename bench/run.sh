#!/usr/bin/env bash
# Runs every benchmark of bench/README.md (`make bench`), or the ones named:
#   bench/run.sh [NAME...]      e.g. bench/run.sh overhead tui_speed
# Not part of `make check`. gpu_overhead needs the GPU machine: it is
# skipped, and said so, when nvidia-smi sees no GPU.
set -euo pipefail
cd "$(dirname "$0")"
BENCHMARKS=(overhead offcpu_overhead python_overhead trace_size report_speed report_real report_ab export_speed marker_cost tui_speed gpu_overhead gpu_report_speed gpu_trace_modes gpu_launch_walk attach_cost flight_recorder)
[ $# -gt 0 ] && BENCHMARKS=("$@")
for b in "${BENCHMARKS[@]}"; do
	[ -f "./$b.sh" ] || { echo "bench/run.sh: no benchmark $b (bench/$b.sh)" >&2; exit 2; }
	echo "== $b"
	if [[ $b == gpu_* ]] && ! nvidia-smi -L >/dev/null 2>&1; then
		echo "skipped: no GPU (nvidia-smi -L failed); run it on the GPU machine"
	else
		bash "./$b.sh"
	fi
	echo
done

# Shared helpers for bench/*.sh (sourced). Benchmarks measure xpu-perf and
# its reference (no profiler, perf) in the same run and print ratios; nothing
# is asserted and nothing is written into the repository.
set -euo pipefail

XPU_TOP=${XPU_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
XPU_BUILD=${XPU_BUILD:-$XPU_TOP/build}
XPU_BIN=${XPU_BIN:-$XPU_TOP}
RECORD=$XPU_BIN/xpu-record
REPORT=$XPU_BIN/xpu-report
CPU_DEMO=$XPU_BUILD/tests/workloads/cpu_demo
REPEAT=${REPEAT:-5}

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

bench_need() {
	[ -x "$RECORD" ] && [ -x "$REPORT" ] || die "xpu-record/xpu-report not built in $XPU_BIN: run make"
	[ -x "$CPU_DEMO" ] || die "$CPU_DEMO not built: run make tests-build"
	command -v perf >/dev/null || die "perf not found: install linux-perf (scripts/setup.sh)"
	[ "$(id -u)" -eq 0 ] || die "needs root to record (eBPF, perf events)"
}

W=$(mktemp -d /tmp/xpu-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

# wall CMD...: runs CMD (output discarded), prints its wall time in seconds.
wall() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>>"$W/stderr" || die "failed: $* (see $W/stderr)"
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
}

# median: of the numbers on stdin; "n/a" when there are none.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.3f\n", a / b }'; }

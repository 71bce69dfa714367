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
# A failed run is retried (up to 5 tries) and said on stderr: Debian's perf
# 6.1 aborts ("assertion failed at util/build-id.c:1010", stack smashing)
# when other eBPF programs (e.g. another xpu-record) are loaded meanwhile.
wall() {
	local t0 t1 try
	for try in 1 2 3 4 5; do
		t0=$(date +%s%N)
		if "$@" >/dev/null 2>>"$W/stderr"; then
			t1=$(date +%s%N)
			awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
			return 0
		fi
		echo "$(basename "$0"): run failed (try $try): $*: $(tail -n 1 "$W/stderr")" >&2
	done
	die "failed 5 times: $*"
}

# retry CMD...: runs CMD (output to $W/retry.out, stderr to $W/stderr) until
# it succeeds, at most 5 times, for the same reason as wall().
retry() {
	local try
	for try in 1 2 3 4 5; do
		"$@" >"$W/retry.out" 2>>"$W/stderr" && return 0
		echo "$(basename "$0"): run failed (try $try): $*: $(tail -n 1 "$W/stderr")" >&2
	done
	die "failed 5 times: $*"
}

# median: of the numbers on stdin; "n/a" when there are none.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.3f\n", a / b }'; }

# Shared helpers for tests/shell/e2e_*.sh and report_*.sh. Sourced, not run
# (the runner only runs tests/shell/*.sh). A test exits 0 (pass), 2 (skip:
# the last line says why; only for environment reasons) or 1 (fail).
set -u

XPU_TOP=${XPU_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
XPU_BUILD=${XPU_BUILD:-$XPU_TOP/build}
XPU_BIN=${XPU_BIN:-$XPU_TOP}
RECORD=$XPU_BIN/xpu-record
REPORT=$XPU_BIN/xpu-report
CPU_DEMO=$XPU_BUILD/tests/workloads/cpu_demo
GOLDEN_DIR=$XPU_TOP/tests/shell/golden

# Exit codes from common/exitcodes.h.
EXIT_USAGE=2 EXIT_INPUT=7 EXIT_CORRUPT=8 EXIT_VERSION=9 EXIT_NODATA=10

# Scratch dir per test, kept after the run for inspection.
T=$XPU_BUILD/tests/e2e/$(basename "$0" .sh)
rm -rf "$T" && mkdir -p "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 2; }
note() { echo "# $*"; }

need_tools() {
	local f
	for f in "$RECORD" "$REPORT"; do
		[ -x "$f" ] || fail "$f not built: run make"
	done
	[ -x "$CPU_DEMO" ] || fail "$CPU_DEMO not built: run make tests-build"
}

# eBPF recording needs root and a kernel with BTF: skip otherwise.
need_bpf() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_BPF + CAP_PERFMON) to record"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

# record_demo NAME [xpu-record options] -- [cpu_demo args]
# Records cpu_demo into $T/NAME.data; its stdout (pids) goes to $T/NAME.out,
# the recorder's stderr to $T/NAME.err. Fails unless the recorder exits 0 and
# prints its summary line with at least one sample.
record_demo() {
	local name=$1; shift
	local opts=() rc
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	"$RECORD" -o "$T/$name.data" "${opts[@]}" -- "$CPU_DEMO" "$@" \
		>"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/$name.err" >&2; fail "xpu-record exited $rc (log $T/$name.err)"; }
	[ -s "$T/$name.data" ] || fail "xpu-record wrote no $T/$name.data"
	grep -Eq '^xpu-record: [0-9]+ samples, [0-9]+ GPU records, [0-9]+ lost, [0-9.]+ [KM]B written to ' "$T/$name.err" ||
		{ cat "$T/$name.err" >&2; fail "xpu-record: no summary line"; }
	[ "$(summary_samples "$name")" -gt 0 ] || fail "xpu-record: 0 samples"
}

summary_samples() { sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$T/$1.err" | tail -n 1; }
summary_lost() { sed -nE 's/^xpu-record: [0-9]+ samples, [0-9]+ GPU records, ([0-9]+) lost,.*/\1/p' "$T/$1.err" | tail -n 1; }
demo_pid() { sed -nE "s/^cpu_demo: $2 ([0-9]+)$/\1/p" "$T/$1.out"; }	# NAME pid|"child pid"|"worker tid"

# report OUTFILE args...: runs xpu-report, stdout to OUTFILE, stderr to
# OUTFILE.err, and fails unless it exits 0.
report() {
	local out=$1 rc; shift
	"$REPORT" "$@" >"$out" 2>"$out.err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$out.err" >&2; fail "xpu-report $* exited $rc"; }
}

# ---- folded output arithmetic ---------------------------------------------
# A folded line is "frame;frame;... COUNT"; frames may contain spaces, the
# count is after the last one. Functions read a folded file on stdin.

# folded_sum [ERE]: total count of lines whose stack matches ERE.
folded_sum() {
	awk -v re="${1:-}" '{
		n = $NF; s = substr($0, 1, length($0) - length(n) - 1)
		if (re == "" || s ~ re) t += n
	} END { printf "%d\n", t }'
}

# folded_check_syntax: every line is "stack COUNT" with a positive integer.
folded_check_syntax() {
	awk 'NF < 2 || $NF !~ /^[0-9]+$/ || $NF == 0 { print "bad folded line " NR ": " $0; bad = 1 }
	     END { exit bad }'
}

# in_range VALUE LOW HIGH (decimals allowed)
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print 0; else printf "%.4f\n", a / b }'; }

# The chains cpu_demo runs (see tests/workloads/cpu_demo.c), root first.
CHAIN_A="main;demo_run;level1;level2;level3;level4;level5;level6;burn_a"
CHAIN_B="main;demo_run;level1;level2;level3;level4;level5;level6;burn_b"
CHAIN_W="worker_main;worker_l1;worker_l2;worker_l3;worker_l4;worker_l5;worker_l6;burn_worker"
CHAIN_C="main;spawn_child;child_main;child_l1;child_l2;child_l3;child_l4;child_l5;child_l6;burn_child"

# golden_compare NAME FILE: compares FILE with tests/shell/golden/NAME;
# UPDATE_GOLDEN=1 rewrites the golden file instead.
golden_compare() {
	local g=$GOLDEN_DIR/$1
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$GOLDEN_DIR" && cp "$2" "$g" && note "updated $g"
		return 0
	fi
	[ -f "$g" ] || fail "golden file $g missing: run UPDATE_GOLDEN=1 make check TESTS=$(basename "$0" .sh)"
	diff -u "$g" "$2" >&2 || fail "$1 differs from golden (UPDATE_GOLDEN=1 rewrites it if the change is intended)"
}

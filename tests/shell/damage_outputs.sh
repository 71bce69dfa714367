#!/usr/bin/env bash
# Every output over damaged traces, under ASan+UBSan (issue 31: 15 of 10,980
# damaged-trace runs crashed, all in --pprof, which no test ran). A bounded
# set, the same each run (tests/shell/damage_traces.py, fixed seeds): cuts,
# flipped bytes, chunk headers with a lying field and a right CRC, and chunks
# whose records were changed and stored raw with right CRCs (these reach the
# record parsers, the join and the outputs). Sources: gen_trace's CPU + GPU
# trace with syncs, gen_trace_mem's GPU memory records (also through the
# --gpu-memory views) and, with root, a same_stack recording (threads, two
# processes, off-CPU). Each damaged trace (and the intact one) goes through --folded, --stdio,
# --header, --dump, --svg, --pprof, --speedscope, --timeline, --wall,
# --gpu-idle, --sync-wait and --diff against the intact trace, with
# $O/asan/xpu-report. Fails on a sanitizer report, a signal, or an exit code
# other than 0, 8 (damaged) or 10 (nothing to report), or 7 (not a trace) and
# 9 (a newer format) where the damage hit the file header's first 16 bytes.
# DAMAGE_COUNT=N: N traces of each kind per source (default 10).
. "$(dirname "$0")/lib/e2e.sh"
. "$(dirname "$0")/golden/tui/lib.sh"
ASAN_REPORT=$XPU_BUILD/asan/xpu-report
[ -x "$ASAN_REPORT" ] || fail "$ASAN_REPORT not built: run make tests-build"
command -v zstd >/dev/null || skip "the zstd command is not installed (scripts/setup.sh)"
gen_need
COUNT=${DAMAGE_COUNT:-10}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

sources=()
tui_gen "$T/gen.data" -n 3000 --gpu --sync
sources+=(gen)
"$GEN_MEM" -o "$T/mem.data" >/dev/null || fail "gen_trace_mem failed"
sources+=(mem)
if [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ] && [ -x "$XPU_BUILD/tests/workloads/same_stack" ]; then
	"$RECORD" -F 999 --no-gpu -o "$T/threads.data" -- "$XPU_BUILD/tests/workloads/same_stack" 0.5 3 \
		>/dev/null 2>"$T/threads.err" || { cat "$T/threads.err" >&2; fail "xpu-record exited $?"; }
	sources+=(threads)
else
	note "no root or BTF: only gen_trace's trace"
fi

outputs=("--folded" "--stdio" "--header" "--dump" "--svg -" "--pprof -" "--speedscope -"
	 "--timeline -" "--wall --folded" "--gpu-idle --folded" "--sync-wait --stdio")
mem_outputs=("--gpu-memory --folded" "--gpu-memory --pprof -" "--gpu-memory=leak --stdio"
	     "--gpu-memory=alloc --svg -" "--gpu-memory --time 0.012 --speedscope -")
runs=0 exits=""
# ok_exit RC TRACE: an exit the damage in TRACE allows. A flip in the
# magic, the major version or the header size (the file header's first 16
# bytes) makes the file "not a trace" (7) or "a newer format" (9), as
# report_errors.sh wants; the recording's length varies from run to run,
# and with it where the fixed seed's flips land.
ok_exit() {
	case $1 in
	0 | "$EXIT_CORRUPT" | "$EXIT_NODATA") return 0 ;;
	"$EXIT_INPUT" | "$EXIT_VERSION") ! cmp -s -n 16 "$T/$src.data" "$2" ;;
	*) return 1 ;;
	esac
}
check() {	# name, the damaged trace, xpu-report args...
	local name=$1 trace=$2 rc; shift 2
	"$ASAN_REPORT" "$@" >/dev/null 2>"$T/err"
	rc=$?
	runs=$((runs + 1)) exits+=" $rc"
	if grep -Eq 'Sanitizer|runtime error:|AddressSanitizer|LeakSanitizer' "$T/err" || [ $rc -ge 128 ] ||
	   ! ok_exit $rc "$trace"; then
		head -n 30 "$T/err" >&2
		fail "$name: xpu-report $* exited $rc (kept in $T)"
	fi
}
for src in "${sources[@]}"; do
	python3 "$XPU_TOP/tests/shell/damage_traces.py" "$T/$src.data" "$T/$src.damaged" "$COUNT" 31 ||
		fail "damage_traces.py failed on $src"
	for d in "$T/$src.data" "$T/$src.damaged"/*.data; do	# the intact trace first
		all=("${outputs[@]}")
		[ "$src" = mem ] && all+=("${mem_outputs[@]}")
		for o in "${all[@]}"; do
			# shellcheck disable=SC2086
			check "$src/$(basename "$d")" "$d" -i "$d" $o
		done
		check "$src/$(basename "$d")" "$d" --diff "$T/$src.data" "$d" --stdio
	done
done
# the loop must reach the outputs, not stop at the reader every time
ok=$(echo "$exits" | tr ' ' '\n' | grep -c '^0$')
note "$runs runs over ${#sources[@]} sources, $ok exited 0"
[ "$ok" -gt $((runs / 10)) ] || fail "only $ok of $runs runs got through to an output: the damage is too coarse"
echo "ok: $runs runs under ASan+UBSan"

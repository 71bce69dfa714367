#!/usr/bin/env bash
# xpu-report's text outputs, byte for byte, on deterministic traces: the
# tests/tools/gen_trace.c traces (CPU, and CPU + GPU), gen_trace_mem's GPU
# memory trace (the --gpu-memory views) and every trace of the reader
# fuzz corpus (valid, truncated and damaged ones). Each case's stdout, stderr
# and exit code must equal tests/shell/golden/reports/<group>.txt; a refactor
# of the report must leave them unchanged. UPDATE_GOLDEN=1 rewrites the files
# (then read the diff: every change must be one you meant).
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
G=$XPU_TOP/tests/shell/golden/reports
CORPUS=$XPU_TOP/tests/fuzz/corpus/reader
mkdir -p "$G"

tui_gen "$T/cpu.data" -n 1000
tui_gen "$T/gpu.data" -n 1000 --gpu
tui_gen "$T/sync.data" -n 3000 --gpu --sync
[ -x "$GEN_MEM" ] || fail "$GEN_MEM not built: run make tests-build"
"$GEN_MEM" -o "$T/mem.data" >/dev/null || fail "gen_trace_mem failed"
# The date, the build folder and gen_trace's build-id differ between checkouts,
# and so does the size of gen_trace's MMAP record (it holds the path).
norm() {
	sed -e 's/^# recorded: .*/# recorded: DATE/' -e "s#$XPU_BUILD/#BUILD/#g" \
	    -e 's#build-id=[0-9a-f]* BUILD/tests/tools/gen_trace (chunk \([0-9]*\), [0-9]* bytes)#build-id=GEN BUILD/tests/tools/gen_trace (chunk \1, SIZE bytes)#'
}

# case GROUP FILE ARGS...: one block of the group's output.
case1() {
	local group=$1 file=$2 rc; shift 2
	(cd "$(dirname "$file")" && "$REPORT" -i "$(basename "$file")" "$@" \
		>"$T/out" 2>"$T/err" </dev/null)
	rc=$?
	{
		echo "### $(basename "$file") $* -> exit $rc"
		norm <"$T/out"
		echo "--- stderr"
		cat "$T/err"
	} >>"$T/$group.txt"
}

rm -f "$T"/*.txt
for f in cpu gpu; do
	# (no --dump here: it prints gen_trace's code addresses, which move with
	# every change to the format library it links; the corpus covers --dump)
	for args in "--folded" "--folded --no-comm" "--stdio" "--header" \
		    "--folded --cpu-only" "--folded --gpu-only" "--stdio --gpu-only" \
		    "--folded --comm tui-worker" "--folded --pid 200" "--folded --tid 101" \
		    "--folded --time 0.001,0.002" "--folded --no-kernel" "--stdio --pid 100,200" \
		    "--folded --gpu-idle" "--folded --sync-wait" \
		    "--stdio -g caller" "--stdio -g callee,5 --no-children" \
		    "--stdio --sort pid,sym --percent-limit 15" "--stdio --sort dso --no-children" \
		    "--stdio --sort device,stream,kernel" "--stdio --sort comm,kernel --percent-limit 3" \
		    "--folded --max-stack 3"; do
		# shellcheck disable=SC2086
		case1 "gen-$f" "$T/$f.data" $args
	done
done
# the GPU-idle and sync-wait views (issue 9) on a trace with sync calls
for args in "--folded --gpu-idle" "--folded --gpu-idle --idle-from-start" \
	    "--folded --gpu-idle --tid 101" "--folded --gpu-idle --time 0.2,0.4" \
	    "--stdio --gpu-idle" "--folded --sync-wait" "--stdio --sync-wait" \
	    "--folded --sync-wait --tid 101" "--header" "--header --idle-from-start"; do
	# shellcheck disable=SC2086
	case1 gen-sync "$T/sync.data" $args
done
# the GPU memory views (--gpu-memory) on gen_trace_mem's trace
for args in "--header" "--folded --gpu-memory" "--folded --gpu-memory=peak" \
	    "--folded --gpu-memory=alloc" "--folded --gpu-memory=leak" \
	    "--folded --gpu-memory --time 0.0125" "--folded --gpu-memory=peak --time 0.021,0.05" \
	    "--folded --gpu-memory --no-comm" "--folded --gpu-memory --pid 400" \
	    "--folded --gpu-memory --device 0" "--stdio --gpu-memory" \
	    "--stdio --gpu-memory=leak --no-children" "--header --gpu-memory=leak" \
	    "--header --gpu-memory --time 0.0125" "--folded"; do
	# shellcheck disable=SC2086
	case1 gen-mem "$T/mem.data" $args
done
for f in "$CORPUS"/*; do
	for args in "--folded" "--stdio" "--header" "--dump"; do
		# shellcheck disable=SC2086
		case1 corpus "$f" $args
	done
done

bad=0
for group in gen-cpu gen-gpu gen-sync gen-mem corpus; do
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$T/$group.txt" "$G/$group.txt"
		echo "updated $G/$group.txt"
	elif ! diff -u "$G/$group.txt" "$T/$group.txt" >"$T/$group.diff"; then
		echo "FAIL: $group differs from golden/reports/$group.txt:"
		head -n 40 "$T/$group.diff"
		bad=1
	else
		echo "ok: $group: $(grep -c '^### ' "$G/$group.txt") cases identical"
	fi
done
exit $bad

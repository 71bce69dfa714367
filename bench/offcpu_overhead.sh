#!/usr/bin/env bash
# Overhead of off-CPU recording on a context-switch-heavy program we did not
# write: `perf bench sched pipe` (two processes passing a token over pipes:
# two context switches per loop). Against no profiler, xpu-record without
# off-CPU recording (--no-off-cpu), and `perf record -e sched:sched_switch -g`
# (perf's way to see where threads block) in the same run. Runs are
# interleaved, REPEAT times each; the table gives min / median / max of the
# wall time and the median's ratio to no profiler.
. "$(dirname "$0")/lib.sh"
bench_need
LOOPS=${LOOPS:-100000}
WORK=(perf bench sched pipe -l "$LOOPS")

configs=(none xpu_nooff xpu perf_switch)
run_config() {	# CONFIG: one run; appends the wall seconds to $W/CONFIG.wall
	local cmd
	case $1 in
	none)        cmd=() ;;
	xpu_nooff)   cmd=("$RECORD" -q --no-off-cpu -o "$W/x.data" --) ;;
	xpu)         cmd=("$RECORD" -q -o "$W/x.data" --) ;;
	perf_switch) cmd=(perf record -q -e sched:sched_switch -g -o "$W/p.data" --) ;;
	esac
	: >"$W/stderr"
	wall "${cmd[@]}" "${WORK[@]}" >>"$W/$1.wall"
}

stats() {	# FILE: "min median max"
	local f=$1
	echo "$(sort -g "$f" | head -n 1) $(median <"$f") $(sort -g "$f" | tail -n 1)"
}

echo "offcpu_overhead: ${WORK[*]}, $REPEAT runs each, $(nproc) CPUs, perf $(perf version 2>/dev/null | awk '{print $3}')"
run_config none	# warm-up (page cache, BPF JIT)
: >"$W/none.wall"
for ((i = 0; i < REPEAT; i++)); do
	for c in "${configs[@]}"; do run_config "$c"; done
done

printf '%-40s %8s %8s %8s %8s\n' config "min s" "median s" "max s" "x none"
base=$(median <"$W/none.wall")
declare -A med
for c in "${configs[@]}"; do
	read -r lo mid hi < <(stats "$W/$c.wall")
	med[$c]=$mid
	case $c in
	none)        name="no profiler" ;;
	xpu_nooff)   name="xpu-record --no-off-cpu" ;;
	xpu)         name="xpu-record (off-CPU on, 100 us)" ;;
	perf_switch) name="perf record -e sched:sched_switch -g" ;;
	esac
	printf '%-40s %8s %8s %8s %8s\n' "$name" "$lo" "$mid" "$hi" "$(div "$mid" "$base")"
done
echo "off-CPU recording's own cost: $(div "${med[xpu]}" "${med[xpu_nooff]}") x xpu-record --no-off-cpu;" \
     "xpu-record / perf record -e sched:sched_switch -g: $(div "${med[xpu]}" "${med[perf_switch]}")   (goal: <= 1)"

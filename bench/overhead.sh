#!/usr/bin/env bash
# Overhead of xpu-record on a CPU-bound workload (cpu_demo --work N: one
# thread, fixed work, built without frame pointers) against no profiler and
# against `perf record --call-graph dwarf` at the same frequency. Runs are
# interleaved, REPEAT times each; the table gives medians and ratios.
#   wall: the whole command, profiler start-up and shut-down included
#   work: the workload's own time (what the profiled program feels)
. "$(dirname "$0")/lib.sh"
bench_need
ROUNDS=${ROUNDS:-4000}

configs=(none xpu99 xpu999 perf99 perf999)
run_config() {	# CONFIG: one run; appends wall and work seconds to $W/CONFIG.{wall,work}
	local cmd
	case $1 in
	none)    cmd=() ;;
	xpu99)   cmd=("$RECORD" -q -F 99 -o "$W/x.data" --) ;;
	xpu999)  cmd=("$RECORD" -q -F 999 -o "$W/x.data" --) ;;
	perf99)  cmd=(perf record -q -e cpu-clock -F 99 --call-graph dwarf -o "$W/p.data" --) ;;
	perf999) cmd=(perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$W/p.data" --) ;;
	esac
	: >"$W/stderr"
	wall "${cmd[@]}" "$CPU_DEMO" --work "$ROUNDS" >>"$W/$1.wall"
	sed -nE 's/^cpu_demo: work took ([0-9.]+) s$/\1/p' "$W/stderr" >>"$W/$1.work"
}

echo "overhead: cpu_demo --work $ROUNDS, $REPEAT runs each, $(nproc) CPUs, perf $(perf version 2>/dev/null | awk '{print $3}')"
run_config none	# warm-up (page cache, BPF JIT)
: >"$W/none.wall"; : >"$W/none.work"
for ((i = 0; i < REPEAT; i++)); do
	for c in "${configs[@]}"; do run_config "$c"; done
done

printf '%-26s %9s %9s %9s %9s\n' config "wall s" "x none" "work s" "x none"
base_wall=$(median <"$W/none.wall"); base_work=$(median <"$W/none.work")
declare -A mw
for c in "${configs[@]}"; do
	w=$(median <"$W/$c.wall"); k=$(median <"$W/$c.work"); mw[$c]=$w
	case $c in
	none) name="no profiler" ;;
	xpu*) name="xpu-record -F ${c#xpu}" ;;
	perf*) name="perf record -F ${c#perf} dwarf" ;;
	esac
	printf '%-26s %9s %9s %9s %9s\n' "$name" "$w" "$(div "$w" "$base_wall")" "$k" "$(div "$k" "$base_work")"
done
echo "xpu-record / perf record (wall): -F 99 $(div "${mw[xpu99]}" "${mw[perf99]}"), -F 999 $(div "${mw[xpu999]}" "${mw[perf999]}")   (goal: <= 1)"

#!/usr/bin/env bash
# Report speed: `xpu-report --folded` against `perf report --stdio` and
# `perf script` on recordings of the same workload at the same frequency and
# duration (so about the same sample count). REPEAT runs each, median.
. "$(dirname "$0")/lib.sh"
bench_need
SECONDS_RUN=${SECONDS_RUN:-5}
FREQ=${FREQ:-999}

"$RECORD" -F "$FREQ" -o "$W/x.data" -- "$CPU_DEMO" "$SECONDS_RUN" >/dev/null 2>"$W/x.err" ||
	die "xpu-record failed: $(tail -n 1 "$W/x.err")"
xs=$(sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$W/x.err")
retry perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf -o "$W/p.data" -- "$CPU_DEMO" "$SECONDS_RUN"
retry perf script -i "$W/p.data" -F tid
ps=$(wc -l <"$W/retry.out")

# Warm-up: page cache, perf's build-id cache.
"$REPORT" -i "$W/x.data" --folded >/dev/null
retry perf report -i "$W/p.data" --stdio
for ((i = 0; i < REPEAT; i++)); do
	wall "$REPORT" -i "$W/x.data" --folded >>"$W/xf"
	wall "$REPORT" -i "$W/x.data" --stdio >>"$W/xs"
	wall perf report -i "$W/p.data" --stdio >>"$W/pr"
	wall perf script -i "$W/p.data" >>"$W/pscr"
done
xf=$(median <"$W/xf"); xst=$(median <"$W/xs"); pr=$(median <"$W/pr"); pscr=$(median <"$W/pscr")

# The two recordings rarely hold the same number of samples (perf competes
# with the workload for the CPUs), so ratios are given raw and per sample.
echo "report speed: cpu_demo $SECONDS_RUN s at $FREQ Hz: xpu.data $xs samples, perf.data $ps samples; $REPEAT runs, median"
printf '%-24s %9s %12s %10s %14s\n' command seconds "us/sample" "x xpu" "x xpu/sample"
us() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.1f\n", t * 1e6 / n }'; }
xfu=$(us "$xf" "$xs")
row() { printf '%-24s %9.3f %12s %10s %14s\n' "$1" "$2" "$(us "$2" "$3")" "$(div "$2" "$xf")" "$(div "$(us "$2" "$3")" "$xfu")"; }
row "xpu-report --folded" "$xf" "$xs"
row "xpu-report --stdio" "$xst" "$xs"
row "perf report --stdio" "$pr" "$ps"
row "perf script" "$pscr" "$ps"
echo "perf report / xpu-report --folded: $(div "$pr" "$xf") raw, $(div "$(us "$pr" "$ps")" "$xfu") per sample; perf script: $(div "$pscr" "$xf") raw, $(div "$(us "$pscr" "$ps")" "$xfu") per sample   (goal: >= 10)"

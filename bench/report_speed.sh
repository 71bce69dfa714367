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
perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf -o "$W/p.data" -- "$CPU_DEMO" "$SECONDS_RUN" >/dev/null 2>"$W/p.err" ||
	die "perf record failed: $(tail -n 1 "$W/p.err")"
ps=$(perf script -i "$W/p.data" -F tid 2>/dev/null | wc -l)

# Warm-up: page cache, perf's build-id cache.
"$REPORT" -i "$W/x.data" --folded >/dev/null
perf report -i "$W/p.data" --stdio >/dev/null 2>&1
for ((i = 0; i < REPEAT; i++)); do
	wall "$REPORT" -i "$W/x.data" --folded >>"$W/xf"
	wall "$REPORT" -i "$W/x.data" --stdio >>"$W/xs"
	wall perf report -i "$W/p.data" --stdio >>"$W/pr"
	wall perf script -i "$W/p.data" >>"$W/pscr"
done
xf=$(median <"$W/xf"); xst=$(median <"$W/xs"); pr=$(median <"$W/pr"); pscr=$(median <"$W/pscr")

echo "report speed: cpu_demo $SECONDS_RUN s at $FREQ Hz: xpu.data $xs samples, perf.data $ps samples; $REPEAT runs, median"
printf '%-30s %10s %14s\n' command seconds "x xpu --folded"
printf '%-30s %10.3f %14s\n' "xpu-report --folded" "$xf" 1
printf '%-30s %10.3f %14s\n' "xpu-report --stdio" "$xst" "$(div "$xst" "$xf")"
printf '%-30s %10.3f %14s\n' "perf report --stdio" "$pr" "$(div "$pr" "$xf")"
printf '%-30s %10.3f %14s\n' "perf script" "$pscr" "$(div "$pscr" "$xf")"
echo "perf report / xpu-report --folded: $(div "$pr" "$xf"); perf script / xpu-report --folded: $(div "$pscr" "$xf")   (goal: >= 10)"

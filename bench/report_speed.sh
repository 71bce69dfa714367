#!/usr/bin/env bash
# Report speed: `xpu-report --folded` against `perf report --stdio` and
# `perf script` on recordings of the same workload at the same frequency and
# duration (so about the same sample count). REPEAT runs each, median.
# Then scaling: xpu-report on tests/tools/gen_trace.c traces of GEN_EVENTS/10 and
# GEN_EVENTS events (time and peak memory should grow linearly).
. "$(dirname "$0")/lib.sh"
bench_need
SECONDS_RUN=${SECONDS_RUN:-5}
FREQ=${FREQ:-999}
GEN_EVENTS=${GEN_EVENTS:-1000000}	# 0: skip the scaling part

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
	wall "$REPORT" -i "$W/x.data" --header >>"$W/xh"
	wall perf report -i "$W/p.data" --stdio >>"$W/pr"
	wall perf script -i "$W/p.data" >>"$W/pscr"
done
xf=$(median <"$W/xf"); xst=$(median <"$W/xs"); xh=$(median <"$W/xh"); pr=$(median <"$W/pr"); pscr=$(median <"$W/pscr")

# The two recordings rarely hold the same number of samples (perf competes
# with the workload for the CPUs), so ratios are given raw and per sample.
echo "report speed: cpu_demo $SECONDS_RUN s at $FREQ Hz: xpu.data $xs samples, perf.data $ps samples; $REPEAT runs, median"
printf '%-24s %9s %12s %10s %14s\n' command seconds "us/sample" "x xpu" "x xpu/sample"
us() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.1f\n", t * 1e6 / n }'; }
xfu=$(us "$xf" "$xs")
row() { printf '%-24s %9.3f %12s %10s %14s\n' "$1" "$2" "$(us "$2" "$3")" "$(div "$2" "$xf")" "$(div "$(us "$2" "$3")" "$xfu")"; }
row "xpu-report --folded" "$xf" "$xs"
row "xpu-report --stdio" "$xst" "$xs"
row "xpu-report --header" "$xh" "$xs"
row "perf report --stdio" "$pr" "$ps"
row "perf script" "$pscr" "$ps"
echo "perf report / xpu-report --folded: $(div "$pr" "$xf") raw, $(div "$(us "$pr" "$ps")" "$xfu") per sample; perf script: $(div "$pscr" "$xf") raw, $(div "$(us "$pscr" "$ps")" "$xfu") per sample   (goal: >= 10)"

# Scaling on synthetic traces (frame-pointer stacks, GPU records; no perf
# equivalent): seconds, microseconds and peak KB per event, median of REPEAT.
[ "$GEN_EVENTS" -gt 0 ] || exit 0
[ -x /usr/bin/time ] || die "needs GNU time for peak memory: install package time (scripts/setup.sh)"
GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$GEN" ] || die "$GEN not built: run make tests-build (it needs libcapstone-dev)"
echo "scaling: gen_trace --gpu, $REPEAT runs, median"
printf '%-12s %-22s %9s %10s %10s\n' events command seconds "us/event" "peak MB"
for n in $((GEN_EVENTS / 10)) "$GEN_EVENTS"; do
	"$GEN" -o "$W/g.data" -n "$n" --gpu >/dev/null || die "gen_trace failed"
	for o in --folded --header; do
		: >"$W/gt"; : >"$W/gm"
		for ((i = 0; i < REPEAT; i++)); do
			/usr/bin/time -o "$W/time" -f '%e %M' "$REPORT" -i "$W/g.data" "$o" \
				>/dev/null 2>>"$W/stderr" || die "xpu-report $o failed on $n events"
			read -r t m <"$W/time"
			echo "$t" >>"$W/gt"; echo "$m" >>"$W/gm"
		done
		t=$(median <"$W/gt"); m=$(median <"$W/gm")
		printf '%-12s %-22s %9.3f %10.3f %10.1f\n' "$n" "xpu-report $o" "$t" "$(awk -v t="$t" -v n="$n" 'BEGIN { print t * 1e6 / n }')" \
			"$(awk -v m="$m" 'BEGIN { print m / 1024 }')"
	done
done

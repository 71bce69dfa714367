#!/usr/bin/env bash
# Trace bytes per sample: xpu.data against perf.data (perf record
# --call-graph dwarf, its default 8 KB stack copy) for the same workload
# (cpu_demo: main thread, worker thread, forked child), frequency and duration.
. "$(dirname "$0")/lib.sh"
bench_need
SECONDS_RUN=${SECONDS_RUN:-4}
FREQ=${FREQ:-999}

"$RECORD" -F "$FREQ" -o "$W/x.data" -- "$CPU_DEMO" "$SECONDS_RUN" >/dev/null 2>"$W/x.err" ||
	die "xpu-record failed: $(tail -n 1 "$W/x.err")"
xs=$(sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$W/x.err")
xb=$(stat -c %s "$W/x.data")

retry perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf -o "$W/p.data" -- "$CPU_DEMO" "$SECONDS_RUN"
retry perf script -i "$W/p.data" -F tid
ps=$(wc -l <"$W/retry.out")
pb=$(stat -c %s "$W/p.data")

echo "trace size: cpu_demo $SECONDS_RUN s at $FREQ Hz"
printf '%-32s %10s %12s %14s\n' tool samples bytes bytes/sample
xps=$(div "$xb" "$xs"); pps=$(div "$pb" "$ps")
printf '%-32s %10d %12d %14.1f\n' "xpu-record (dwarf, default)" "$xs" "$xb" "$xps"
printf '%-32s %10d %12d %14.1f\n' "perf record --call-graph dwarf" "$ps" "$pb" "$pps"
echo "xpu.data / perf.data per sample: $(div "$xps" "$pps")   (goal: <= 0.05)"

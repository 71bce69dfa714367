#!/usr/bin/env bash
# What an always-on flight recorder costs a node (Documentation/
# design-fleet.md): real Debian programs we did not write,
#   xz     xz -9 -T1 compressing TEXT_MB (default 4) MB of generated text
#   python python3.11 bench/py_calls.py -n PY_ITERS (default 2500)
# run under no profiler, under xpu-record writing its whole trace, and under
# xpu-record --flight-recorder=SECS (default 30: only the last 30 s kept in
# memory, written once at the end), at -F FREQ (default 99, the default).
# REPEAT (default 5) interleaved runs of each. Printed per program:
#   the program's own wall time and its user+sys CPU time (GNU time around
#   its exec) under each recorder as a ratio to no profiler's median: min /
#   median / max (the CPU time is the steadier on a shared machine);
#   xpu-record's peak RSS (getrusage, its -v line: the BPF ring buffers'
#   pages included, mapped twice) and CPU time (user + system, all its
#   threads), medians;
#   the flight recorder's own memory: the ring's peak (compressed chunks)
#   and the state kept for the files (-v "bounded capture" line), medians.
REPEAT=${REPEAT:-5}
. "$(dirname "$0")/lib.sh"
TEXT_MB=${TEXT_MB:-4}
PY_ITERS=${PY_ITERS:-2500}
SECS=${SECS:-30}
FREQ=${FREQ:-99}
PROGS=${PROGS:-"xz python"}
PY=${PY:-/usr/bin/python3.11}
TIME=/usr/bin/time

[ -x "$RECORD" ] || die "xpu-record not built in $XPU_BIN: run make"
[ "$(id -u)" -eq 0 ] || die "needs root to record (eBPF, perf events)"
[ -x "$TIME" ] || die "$TIME not found: install the time package"
for t in xz "$PY"; do
	command -v "$t" >/dev/null || die "$t not found: install xz-utils, python3.11"
done

awk -v mb="$TEXT_MB" 'BEGIN {
	srand(1); split("the of and to in is for on that with as by profiler stack sample " \
	"frame kernel thread record trace buffer ring event time cpu gpu memory page map", w)
	while (n < mb * 1048576) { s = w[int(rand() * 30) + 1] (rand() < 0.1 ? ".\n" : " ")
		printf "%s", s; n += length(s) } }' >"$W/text"

prog_cmd() {	# PROG: sets P
	case $1 in
	xz)     P=(xz -9 -T1 -c "$W/text") ;;
	python) P=("$PY" "$XPU_TOP/bench/py_calls.py" -n "$PY_ITERS") ;;
	*)      die "unknown program $1 (PROGS: xz python)" ;;
	esac
}

# run PROG CONFIG: appends "work rss_mb cpu_s ring_kb state_kb prog_cpu" to $W/PROG.CONFIG
run() {
	local C=() line rss=0 cpu=0 ring=0 state=0
	prog_cmd "$1"
	rm -f "$W"/x.data*
	case $2 in
	none)   C=() ;;
	whole)  C=("$RECORD" -v -F "$FREQ" -o "$W/x.data" --) ;;
	flight) C=("$RECORD" -v -F "$FREQ" --flight-recorder="$SECS" -o "$W/x.data" --) ;;
	esac
	retry "${C[@]}" "$TIME" -f '%e %U %S' -o "$W/work" "${P[@]}"
	if [ ${#C[@]} -gt 0 ]; then
		line=$(grep 'debug: peak RSS' "$W/stderr" | tail -1)
		rss=$(sed -nE 's/.*peak RSS ([0-9.]+) MB.*/\1/p' <<<"$line")
		cpu=$(sed -nE 's/.*CPU time ([0-9.]+) s.*/\1/p' <<<"$line")
		line=$(grep 'debug: bounded capture' "$W/stderr" | tail -1 || true)
		ring=$(sed -nE 's/.*flight ring peak ([0-9.]+) KB.*/\1/p' <<<"$line")
		state=$(sed -nE 's/.*state of [0-9]+ records, ([0-9.]+) KB.*/\1/p' <<<"$line")
	fi
	: >"$W/stderr"
	read -r e u s <"$W/work"
	echo "$e ${rss:-0} ${cpu:-0} ${ring:-0} ${state:-0} $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" >>"$W/$1.$2"
}

col() { awk -v c="$1" '{ print $c }' "$2"; }
mmm() {	# COL FILE BASE: min/median/max of column COL over BASE's median
	local b m
	b=$(col "$1" "$3" | median)
	sort -g <(col "$1" "$2") | awk -v b="$b" '{ v[NR] = $1 / b } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f / %.3f / %.3f", v[1], m, v[NR] }'
}

echo "flight recorder cost: -F $FREQ, --flight-recorder=$SECS, $REPEAT interleaved runs, $(nproc) CPUs"
for p in $PROGS; do
	for r in $(seq "$REPEAT"); do
		for c in none whole flight; do
			run "$p" "$c"
		done
	done
	printf '%-7s alone: %.2f s, CPU %.2f s (medians)\n' "$p" "$(col 1 "$W/$p.none" | median)" \
		"$(col 6 "$W/$p.none" | median)"
	for c in whole flight; do
		printf '  %-7s ratio min/median/max: time %s, CPU %s; xpu-record peak RSS %s MB, CPU %s s' \
			"$c" "$(mmm 1 "$W/$p.$c" "$W/$p.none")" "$(mmm 6 "$W/$p.$c" "$W/$p.none")" \
			"$(col 2 "$W/$p.$c" | median)" "$(col 3 "$W/$p.$c" | median)"
		[ "$c" = flight ] && printf '; ring peak %s KB, state %s KB' \
			"$(col 4 "$W/$p.$c" | median)" "$(col 5 "$W/$p.$c" | median)"
		echo
	done
done

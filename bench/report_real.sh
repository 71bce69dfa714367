#!/usr/bin/env bash
# Report speed on real programs nobody here wrote: Debian's xz -9, zstd -19,
# python3.11 driving numpy, and gcc -O2 on a generated 7,800-line file, each
# recorded at the same frequency by xpu-record, `perf record --call-graph
# dwarf` and `perf record --call-graph fp`. Then, REPEAT interleaved rounds,
# each command's wall time and peak RSS (GNU time): `xpu-report --folded`
# and `--stdio` against `perf report --stdio` (dwarf and fp recordings) and
# `perf script` (dwarf). Per program: min / median / max seconds,
# microseconds per sample (median), peak MB (median), and the ratio of each
# per-sample cost to xpu-report --folded's. Then the shape of xpu-report's
# cost: `--folded --time ,HALF` (the first half of the recording unwound,
# the rest only read) timed in the same rounds gives the marginal cost per
# sample and the fixed start-up cost (time and peak RSS) of each recording.
#
#   bench/report_real.sh [PROGRAM...]     PROGRAM: xz zstd python gcc (default all)
#   KEEP=DIR     keep the recordings in DIR (NAME.xpu.data, NAME.dwarf.data, NAME.fp.data)
#   REUSE=DIR    time the recordings kept in DIR instead of recording
#   REF=DIR      also time DIR/xpu-report --folded (an earlier build), interleaved
#   SIZE=ci      programs about 10x shorter (tests/shell/report_real.sh, in make check)
#   FACTS=FILE   appends per program what the tools agree on, timing left out:
#                NAME xpu_samples header_samples folded_samples dwarf_samples fp_samples
#                xpu_top_dso xpu_top_pct perf_pct_of_that_dso
REPEAT=${REPEAT:-3}
. "$(dirname "$0")/lib.sh"
FREQ=${FREQ:-999}
PY=${PY:-/usr/bin/python3.11}
SIZE=${SIZE:-full}
case $SIZE in
full) LINES=200000 GEN_N=600 PY_SECONDS=10 ;;
ci) LINES=20000 GEN_N=60 PY_SECONDS=1 ;;
*) die "SIZE is full or ci" ;;
esac
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -gt 0 ] || PROGRAMS=(xz zstd python gcc)
[ -x /usr/bin/time ] || die "needs GNU time for peak memory: install package time (scripts/setup.sh)"
command -v perf >/dev/null || die "perf not found: install linux-perf (scripts/setup.sh)"
[ -x "$REPORT" ] || die "xpu-report not built in $XPU_BIN: run make"
D=${REUSE:-${KEEP:-$W}}
mkdir -p "$D"

# The programs' inputs: 8.5 MB of pseudo-random words (xz, zstd: about 10 s
# of CPU each), the generated C file (gcc: about 9 s).
inputs() {
	awk -v n="$LINES" 'BEGIN { srand(1); w = "alphabetagammadeltaepsilonzetaetathetaiotakappa"
		for (i = 0; i < n; i++) { l = ""
			for (j = 0; j < 4; j++) l = l sprintf("%s%d ", substr(w, int(rand() * 40) + 1, int(rand() * 6) + 2), int(rand() * 100000))
			print l } }' >"$W/in.txt"
	awk -v n="$GEN_N" -f "$XPU_TOP/bench/gen_source.awk" >"$W/gen.c"
}

# prog NAME: the command line of program NAME, in $CMD.
prog() {
	case $1 in
	xz) CMD=(xz -9 -T1 -c "$W/in.txt") ;;
	zstd) CMD=(zstd -19 -T1 -c "$W/in.txt") ;;
	python) CMD=(env OPENBLAS_NUM_THREADS=1 "$PY" "$XPU_TOP/bench/py_numpy.py" "$PY_SECONDS") ;;
	gcc) CMD=(gcc -O2 -c "$W/gen.c" -o "$W/gen.o") ;;
	*) die "unknown program $1 (xz zstd python gcc)" ;;
	esac
}

# perf_record MODE OUT CMD...: perf 6.1 sometimes aborts while writing the
# build-ids at the end of recording, or while reading them back in perf
# report (util/build-id.c:1010 assertion, "stack smashing detected"), now
# and then on a recording that is fine the next time. A recording counts
# when perf report reads it; after two failures it records with -B (no
# build-ids: perf report then finds the files by path, on this machine the
# same ones), and says so.
perf_record() {
	local mode=$1 out=$2 try
	shift 2
	for try in 1 2 3 4 5 6; do
		local b=()
		[ "$try" -gt 2 ] && b=(-B)
		if perf record -q "${b[@]}" -e cpu-clock -F "$FREQ" --call-graph "$mode" -o "$out" -- "$@" \
			>/dev/null 2>>"$W/stderr" && perf report -i "$out" --stdio >/dev/null 2>>"$W/stderr"; then
			[ ${#b[@]} -eq 0 ] || echo "note: $(basename "$out"): perf record -B (perf's build-id assertion)"
			return 0
		fi
		echo "$(basename "$0"): perf record or report failed (try $try): $(tail -n 1 "$W/stderr")" >&2
	done
	die "perf record --call-graph $mode failed 6 times"
}

if [ -z "${REUSE:-}" ]; then
	[ "$(id -u)" -eq 0 ] || die "needs root to record (eBPF, perf events)"
	[ -x "$RECORD" ] || die "xpu-record not built in $XPU_BIN: run make"
	if printf '%s\n' "${PROGRAMS[@]}" | grep -qx python; then
		"$PY" -c 'import numpy' 2>/dev/null ||
			die "$PY cannot import numpy: install python3-numpy (scripts/setup.sh)"
	fi
	inputs
	for p in "${PROGRAMS[@]}"; do
		prog "$p"
		"$RECORD" -F "$FREQ" --no-gpu --no-off-cpu -o "$D/$p.xpu.data" -- "${CMD[@]}" \
			>/dev/null 2>"$W/rec.err" || die "xpu-record $p failed: $(tail -n 1 "$W/rec.err")"
		sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$W/rec.err" >"$D/$p.xpu.samples"
		perf_record dwarf "$D/$p.dwarf.data" "${CMD[@]}"
		perf_record fp "$D/$p.fp.data" "${CMD[@]}"
	done
fi

# run NAME CMD...: one timed run of CMD, "seconds peak_kB" appended to $W/NAME.
run() {
	local name=$1 try
	shift
	for try in 1 2 3 4 5; do
		t0=$(date +%s%N)
		if /usr/bin/time -o "$W/time" -f '%M' "$@" >/dev/null 2>>"$W/stderr"; then
			# wall seconds to the millisecond (GNU time's %e has 10 ms steps,
			# as much as the marginal cost of 2,000 samples), peak KB
			echo "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(cat "$W/time")" >>"$W/$name"
			return 0
		fi
		echo "$(basename "$0"): run failed (try $try): $*: $(tail -n 1 "$W/stderr")" >&2
	done
	die "failed 5 times: $*"
}
# stats FILE COLUMN: "min median max" of a column.
stats() { awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'; }

echo "report_real: $FREQ Hz recordings, $REPEAT interleaved rounds after a warm-up; seconds min/median/max, us/sample and peak MB of the median"
for p in "${PROGRAMS[@]}"; do
	x=$D/$p.xpu.data; pd=$D/$p.dwarf.data; pf=$D/$p.fp.data
	xs=$("$REPORT" -i "$x" --header 2>/dev/null | awk '$1 == "#" && $2 == "SAMPLE" { print $3 }')
	ds=$(retry perf script -i "$pd" -F tid && wc -l <"$W/retry.out")
	fs=$(retry perf script -i "$pf" -F tid && wc -l <"$W/retry.out")
	if [ -n "${FACTS:-}" ]; then
		# the hottest module by self samples in xpu-report, and perf's share of it
		read -r top tpct < <("$REPORT" -i "$x" --stdio --no-children --sort dso 2>/dev/null |
			awk '$1 ~ /%$/ { sub("%", "", $1); print $3, $1; exit }')
		ppct=$(perf report -i "$pd" --stdio --no-children --sort dso -g none 2>/dev/null |
			awk -v d="$top" '$1 ~ /%$/ && $2 == d { sub("%", "", $1); print $1; exit }')
		hs=$("$REPORT" -i "$x" --header 2>/dev/null | awk '$1 == "#" && $2 == "SAMPLE" { print $3 }')
		fsum=$("$REPORT" -i "$x" --folded 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
		echo "$p $(cat "$D/$p.xpu.samples" 2>/dev/null || echo n/a) $hs $fsum $ds $fs $top $tpct ${ppct:-0}" >>"$FACTS"
	fi
	names=(xf xs pr pf ps)
	[ -z "${REF:-}" ] || names+=(rf)
	# the cost's shape: --folded of the recording's first half (--time),
	# whose samples are unwound and symbolized, the rest only read
	half=$("$REPORT" -i "$x" --header 2>/dev/null | awk '$2 == "duration" { printf "%.3f", $3 / 2 }')
	hn=$("$REPORT" -i "$x" --folded --time ",$half" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
	# warm-up: page cache, perf's build-id cache
	"$REPORT" -i "$x" --folded >/dev/null 2>&1
	perf report -i "$pd" --stdio >/dev/null 2>&1 || true
	perf report -i "$pf" --stdio >/dev/null 2>&1 || true
	rm -f "${names[@]/#/$W/}" "$W/xh"
	for ((i = 0; i < REPEAT; i++)); do
		run xf "$REPORT" -i "$x" --folded
		run xh "$REPORT" -i "$x" --folded --time ",$half"
		run xs "$REPORT" -i "$x" --stdio
		run pr perf report -i "$pd" --stdio
		run pf perf report -i "$pf" --stdio
		run ps perf script -i "$pd"
		[ -z "${REF:-}" ] || run rf "$REF/xpu-report" -i "$x" --folded
	done
	echo
	echo "$p: xpu.data $xs samples ($(du -k "$x" | cut -f1) kB), perf dwarf $ds ($(du -k "$pd" | cut -f1) kB), perf fp $fs ($(du -k "$pf" | cut -f1) kB)"
	printf '%-30s %7s %7s %7s %10s %9s %12s\n' command min median max "us/sample" "peak MB" "x xpu/sample"
	base=
	for n in "${names[@]}"; do
		case $n in
		xf) label="xpu-report --folded"; s=$xs ;;
		xs) label="xpu-report --stdio"; s=$xs ;;
		pr) label="perf report --stdio (dwarf)"; s=$ds ;;
		pf) label="perf report --stdio (fp)"; s=$fs ;;
		ps) label="perf script (dwarf)"; s=$ds ;;
		rf) label="REF xpu-report --folded"; s=$xs ;;
		esac
		read -r tmin tmed tmax < <(stats "$W/$n" 1)
		read -r _ mmed _ < <(stats "$W/$n" 2)
		us=$(awk -v t="$tmed" -v n="$s" 'BEGIN { printf "%.1f", n ? t * 1e6 / n : 0 }')
		[ -n "$base" ] || base=$us
		printf '%-30s %7.3f %7.3f %7.3f %10s %9.1f %12s\n' "$label" "$tmin" "$tmed" "$tmax" "$us" \
			"$(awk -v m="$mmed" 'BEGIN { print m / 1024 }')" "$(div "$us" "$base")"
	done
	read -r _ th _ < <(stats "$W/xh" 1)
	read -r _ tf _ < <(stats "$W/xf" 1)
	read -r _ mh _ < <(stats "$W/xh" 2)
	read -r _ mf _ < <(stats "$W/xf" 2)
	awk -v n1="$hn" -v n2="$xs" -v t1="$th" -v t2="$tf" -v m1="$mh" -v m2="$mf" -v h="$half" 'BEGIN {
		if (n2 <= n1) { print "shape: the first half has all the samples"; exit }
		us = (t2 - t1) * 1e6 / (n2 - n1); kb = (m2 - m1) / (n2 - n1)
		printf "shape of xpu-report --folded: first %.1f s (%d samples) %.3f s, whole (%d) %.3f s:\n", h, n1, t1, n2, t2
		printf "  marginal %.1f us and %.2f KB per sample, fixed start-up %.3f s and %.0f MB\n", us, kb, t2 - us * n2 / 1e6, (m2 - kb * n2) / 1024
	}'
done

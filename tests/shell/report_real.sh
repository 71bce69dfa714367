#!/usr/bin/env bash
# bench/report_real.sh at CI size (SIZE=ci, one round): Debian's xz -9 and,
# when python3.11 has numpy, python3.11 driving numpy, recorded by xpu-record
# and by perf (dwarf and fp), then every report the benchmark times. Only
# what does not depend on timing is checked: the benchmark runs to its
# table; xpu-report's --header and --folded count every sample xpu-record
# said it wrote; the two recorders, at the same frequency over the same
# work, took samples within a factor of 2 of each other; and the module
# xpu-report finds hottest by self samples has, in perf report's table, a
# share within 10 points of xpu-report's (the two recordings are two runs).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
command -v perf >/dev/null || skip "perf not installed (linux-perf, scripts/setup.sh)"
command -v xz >/dev/null || skip "xz not installed (xz-utils, scripts/setup.sh)"
[ -x /usr/bin/time ] || skip "GNU time not installed (time, scripts/setup.sh)"
progs=(xz)
if /usr/bin/python3.11 -c 'import numpy' 2>/dev/null; then
	progs+=(python)
else
	note "python3.11 with numpy not installed (python3-numpy, scripts/setup.sh): xz only"
fi
rm -f "$T/facts"
if ! SIZE=ci REPEAT=1 FACTS=$T/facts XPU_BIN=$XPU_BIN "$XPU_TOP/bench/report_real.sh" "${progs[@]}" \
	>"$T/bench.out" 2>"$T/bench.err"; then
	# perf 6.1 itself crashes now and then ("stack smashing detected" in
	# perf record or perf report, its build-id assertion), on some machines
	# every time: then there is no reference to compare with, but our side
	# is still checked on the same program
	grep -q 'perf record --call-graph [a-z]* failed 6 times' "$T/bench.err" ||
		{ cat "$T/bench.err" >&2; fail "bench/report_real.sh failed"; }
	note "perf crashed on every try ($(grep -m1 -o '\*\*\* [a-z ]* \*\*\*' "$T/bench.err")): xpu-record's side only"
	seq -f "line %.0f of report_real's input" 1 100000 >"$T/in"
	"$RECORD" -F 999 --no-gpu --no-off-cpu -o "$T/xz.data" -- xz -9 -T1 -c "$T/in" >/dev/null 2>"$T/rec.err" ||
		fail "xpu-record on xz exited $?"
	rec=$(sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$T/rec.err")
	report "$T/xz.folded" -i "$T/xz.data" --folded
	report "$T/xz.header" -i "$T/xz.data" --header
	[ "${rec:-0}" -gt 100 ] || fail "xz: only ${rec:-0} samples recorded"
	[ "$(folded_sum <"$T/xz.folded")" = "$rec" ] || fail "xz: --folded does not count the $rec samples"
	grep -Eq "^# +SAMPLE +$rec\b" "$T/xz.header" || fail "xz: --header does not count the $rec samples"
	report "$T/xz.dso" -i "$T/xz.data" --stdio --no-children --sort dso
	awk '$1 ~ /%$/ { sub("%", "", $1); exit !($3 ~ /^liblzma/ && $1 > 50) }' "$T/xz.dso" ||
		fail "xz: liblzma is not the hottest module with over half the samples: $(head -n 20 "$T/xz.dso")"
	echo ok
	exit 0
fi
for p in "${progs[@]}"; do
	grep -q "^$p: xpu.data [0-9]* samples" "$T/bench.out" || fail "no table for $p: $(cat "$T/bench.out")"
	for row in "xpu-report --folded" "perf report --stdio (dwarf)" "perf report --stdio (fp)"; do
		grep -qF "$row" "$T/bench.out" || fail "$p: no '$row' row"
	done
	read -r name rec hdr fsum dw fp top tpct ppct < <(awk -v p="$p" '$1 == p' "$T/facts") ||
		fail "no facts for $p"
	[ "$rec" -gt 100 ] || fail "$p: only $rec samples recorded"
	[ "$hdr" = "$rec" ] || fail "$p: --header counts $hdr samples, xpu-record wrote $rec"
	[ "$fsum" = "$rec" ] || fail "$p: --folded counts $fsum samples, xpu-record wrote $rec"
	for n in "$dw" "$fp"; do
		in_range "$(ratio "$n" "$rec")" 0.5 2 || fail "$p: perf took $n samples, xpu-record $rec"
	done
	awk -v a="$tpct" -v b="$ppct" 'BEGIN { d = a - b; exit !(d <= 10 && d >= -10) }' ||
		fail "$p: hottest module $top: $tpct% in xpu-report, $ppct% in perf report"
	note "$p: $rec samples (perf dwarf $dw, fp $fp); hottest module $top $tpct% (perf $ppct%)"
done
echo ok

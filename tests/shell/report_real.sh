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
SIZE=ci REPEAT=1 FACTS=$T/facts XPU_BIN=$XPU_BIN "$XPU_TOP/bench/report_real.sh" "${progs[@]}" \
	>"$T/bench.out" 2>"$T/bench.err" || { cat "$T/bench.err" >&2; fail "bench/report_real.sh failed"; }
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

#!/usr/bin/env bash
# xpu-report --diff OLD NEW on two real recordings of diff_demo (eBPF), the
# second with diff_slow made 3x slower: the self table (--no-children) puts
# diff_slow and diff_steady, whose share shrank, on top (sorted by the size
# of the change), diff_slow with a positive delta, diff_steady a negative
# one (by total); the default table is inclusive and says so; and
# by --diff-norm=diff_steady diff_slow on top with diff_steady at 0; each
# delta is the one each trace's own --folded counts give (the machine's timing
# is not: under load diff_steady once took 1.4x the samples in the second run);
# --folded is "stack OLD NEW" whose columns sum to each
# trace's own --folded total (--diff-norm=none) or both to NEW's (total);
# --svg is a differential flame graph, diff_slow red and diff_steady blue, that
# headless Chromium renders with red and blue on it. Plus the usage errors.
. "$(dirname "$0")/lib/e2e.sh"
. "$XPU_TOP/tests/shell/lib/chromium.sh"
need_tools
DEMO=$XPU_BUILD/tests/workloads/diff_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"
need_bpf
need_chromium

for f in 1 3; do
	"$RECORD" -F 999 --no-gpu -o "$T/f$f.data" -- "$DEMO" $f >"$T/f$f.out" 2>"$T/f$f.err" ||
		{ cat "$T/f$f.err" >&2; fail "xpu-record of diff_demo $f exited $?"; }
done
OLD=$T/f1.data NEW=$T/f3.data
report "$T/old.folded" -i "$OLD" --folded
report "$T/new.folded" -i "$NEW" --folded
# counts F: "SLOW STEADY TOTAL STEADY_SELF", diff_slow's self and
# diff_steady's total weight (what --diff-norm=diff_steady scales by), the
# whole trace's, diff_steady's self weight (its table row)
counts() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length(n) - 1); t += n
	       if (s ~ /;diff_slow$/) a += n; if (s ~ /;diff_steady(;|$)/) b += n
	       if (s ~ /;diff_steady$/) c += n }
	     END { print a + 0, b + 0, t + 0, c + 0 }' "$1"
}
read -r o_slow o_steady o_total o_sself <<<"$(counts "$T/old.folded")"
read -r n_slow n_steady n_total n_sself <<<"$(counts "$T/new.folded")"
note "diff_slow, diff_steady, total: old $o_slow $o_steady $o_total, new $n_slow $n_steady $n_total"
[ "$o_steady" -gt 0 ] && [ "$o_total" -gt 0 ] && [ "$n_total" -gt 0 ] || fail "traces without diff_steady samples"
# expect GOT WANT WHAT: the table's delta is WANT to its printed precision
expect() {
	awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; exit !(d < 0.02 && d > -0.02) }' ||
		fail "$3: delta $1, the traces' counts give $2"
}

# ---- the table
report "$T/table.children" --diff "$OLD" "$NEW"
grep -q '^# Rows: each function.s inclusive weight' "$T/table.children" || fail "the default table is not inclusive: $(head -5 "$T/table.children")"
report "$T/table" --diff "$OLD" "$NEW" --no-children
cat "$T/table"
top2=$(grep -E '^ +[0-9.]*%? +[-+][0-9.]+%' "$T/table" | head -n 2 | awk '{ print $NF }' | sort | tr '\n' ' ')
[ "$top2" = "diff_slow diff_steady " ] || fail "the two top rows (changed most) are not diff_slow and diff_steady: $top2"
d_slow=$(awk '$NF == "diff_slow" { print $(NF - 3) + 0; exit }' "$T/table")
d_steady=$(awk '$NF == "diff_steady" { print $(NF - 3) + 0; exit }' "$T/table")
note "by total: diff_slow $d_slow, diff_steady $d_steady"
in_range "$d_slow" 0.01 100 || fail "diff_slow: delta $d_slow, not positive"
in_range "$d_steady" -100 -0.01 || fail "diff_steady: delta $d_steady, not negative"
# per cent of each run's total: new share minus old share
expect "$d_slow" "$(awk -v a="$o_slow" -v t="$o_total" -v b="$n_slow" -v u="$n_total" \
	'BEGIN { printf "%.2f", 100 * (b / u - a / t) }')" "diff_slow by total"
expect "$d_steady" "$(awk -v a="$o_sself" -v t="$o_total" -v b="$n_sself" -v u="$n_total" \
	'BEGIN { printf "%.2f", 100 * (b / u - a / t) }')" "diff_steady by total"
grep -q '^# on-CPU samples: old [0-9]*, new [0-9]* samples$' "$T/table" || fail "no CPU section"
grep -q '^# GPU time' "$T/table" && fail "a GPU section for traces without GPU work"

report "$T/table.steady" --diff "$OLD" "$NEW" --diff-norm=diff_steady --no-children
d_slow=$(awk '$NF == "diff_slow" { print $(NF - 3) + 0; exit }' "$T/table.steady")
d_steady=$(awk '$NF == "diff_steady" { print $(NF - 3) + 0; exit }' "$T/table.steady")
note "by diff_steady: diff_slow $d_slow, diff_steady $d_steady"
head -n 12 "$T/table.steady"
grep -q 'normalised by the weight of diff_steady' "$T/table.steady" || fail "--diff-norm: the header does not say it"
in_range "$d_slow" 0.01 100 || fail "--diff-norm=diff_steady: diff_slow delta $d_slow, not positive"
# old scaled by the weights of diff_steady, per cent of the new total
expect "$d_slow" "$(awk -v a="$o_slow" -v s="$o_steady" -v b="$n_slow" -v r="$n_steady" -v u="$n_total" \
	'BEGIN { printf "%.2f", 100 * (b - a * r / s) / u }')" "--diff-norm=diff_steady: diff_slow"
expect "$d_steady" "$(awk -v a="$o_sself" -v s="$o_steady" -v b="$n_sself" -v r="$n_steady" -v u="$n_total" \
	'BEGIN { printf "%.2f", 100 * (b - a * r / s) / u }')" "--diff-norm=diff_steady: diff_steady"
[ "$(grep -m1 -E '^ +[0-9.]*%? +[-+][0-9.]+%' "$T/table.steady" | awk '{ print $NF }')" = diff_slow ] ||
	fail "--diff-norm=diff_steady: diff_slow is not on top"

# ---- difffolded
report "$T/diff.none" --diff "$OLD" "$NEW" --folded --diff-norm=none
report "$T/diff.total" --diff "$OLD" "$NEW" --folded
awk 'NF < 3 || $(NF - 1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/ { print "bad line " NR ": " $0; bad = 1 }
     END { exit bad }' "$T/diff.none" || fail "--diff --folded: not 'stack OLD NEW' lines"
cols() { awk '{ o += $(NF - 1); n += $NF } END { print o, n }' "$1"; }
want="$(folded_sum <"$T/old.folded") $(folded_sum <"$T/new.folded")"
note "difffolded (none): $(cols "$T/diff.none"); --folded totals: $want"
[ "$(cols "$T/diff.none")" = "$want" ] || fail "--diff-norm=none: the columns sum to $(cols "$T/diff.none"), the traces' --folded to $want"
grep -q ';diff_slow [0-9]* [0-9]*$' "$T/diff.none" || fail "no diff_slow line"
read -r o n <<<"$(cols "$T/diff.total")"
lines=$(wc -l <"$T/diff.total")
note "difffolded (total): $o $n over $lines lines"
[ "$n" = "$(folded_sum <"$T/new.folded")" ] || fail "--diff --folded: NEW's column is not its --folded total"
# OLD's weights are scaled, then counted as --folded counts (largest
# remainders): its column sums to NEW's total (1 for the doubles' last bits)
in_range "$o" "$((n - 1))" "$((n + 1))" || fail "--diff --folded: OLD's column ($o) is not scaled to NEW's total ($n)"
# GPU work weighs fractions of a sample: two gen_trace GPU traces of 1000
# and 3000 steps (scale ~1/3), OLD's column must still sum to NEW's total
# (scaling OLD's rounded counts gave 0.4 counted 1 times 3 = 3, and a
# column off NEW's total by its lines' rounding)
GEN=$XPU_BUILD/tests/tools/gen_trace
if [ -x "$GEN" ]; then
	"$GEN" -o "$T/g1.data" -n 1000 --gpu >/dev/null && "$GEN" -o "$T/g3.data" -n 3000 --gpu >/dev/null ||
		fail "gen_trace failed"
	report "$T/gdiff" --diff "$T/g1.data" "$T/g3.data" --folded
	read -r o n <<<"$(cols "$T/gdiff")"
	report "$T/g3.folded" -i "$T/g3.data" --folded
	[ "$n" = "$(folded_sum <"$T/g3.folded")" ] || fail "GPU --diff --folded: NEW's column $n, its --folded $(folded_sum <"$T/g3.folded")"
	in_range "$o" "$((n - 1))" "$((n + 1))" || fail "GPU --diff --folded: OLD's column $o, NEW's total $n"
	note "GPU difffolded (total): $o $n"
fi
report "$T/diff.nocomm" --diff "$OLD" "$NEW" --folded --no-comm
grep -q '^diff_demo;' "$T/diff.nocomm" && fail "--no-comm: stacks still start with the command"

# ---- the differential flame graph
report "$T/diff.svg" --diff "$OLD" "$NEW" --svg -
xmllint --noout "$T/diff.svg" || fail "--diff --svg: not well-formed XML"
python3 "$FLAMEGRAPH_PY" shape "$T/diff.svg" >"$T/diff.shape" || fail "--diff --svg: cannot read its frames"
grep -q 'Differential flame graph' "$T/diff.shape" || fail "--diff --svg: no title"
python3 - "$T/diff.svg" <<'PY' || fail "--diff --svg: colours (above)"
import re, sys
sys.path.insert(0, __import__("os").environ["XPU_TOP"] + "/tests/shell/lib")
import flamegraph as fg, xml.etree.ElementTree as ET
fr = {f["name"]: f for f in fg.frames(ET.parse(sys.argv[1]).getroot())}
for name, sign, col in (("diff_slow", "+", "red"), ("diff_steady", "-", "blue")):
    f = fr[name]
    r, g, b = map(int, re.findall(r"\d+", f["fill"]))
    assert f["delta"][0] == sign, (name, f["delta"])
    assert (r == 255 and g == b and g < 150) if col == "red" else (b == 255 and r == g and r < 150), (name, f["fill"])
    print(name, f["delta"], f["fill"])
PY
chromium_png "$T/diff.svg" "$T/diff.png"
python3 - "$T/diff.png" <<'PY' || fail "--diff --svg: the screenshot lacks red or blue (above)"
import os, sys
sys.path.insert(0, os.environ["XPU_TOP"] + "/tests/shell/lib")
import flamegraph as fg
w, h, rows = fg.png_pixels(sys.argv[1])
red = sum(1 for row in rows for r, g, b in row if r > 240 and g < 160 and b < 160)
blue = sum(1 for row in rows for r, g, b in row if b > 240 and r < 160 and g < 160)
print("%dx%d: %d red, %d blue pixels" % (w, h, red, blue))
assert (w, h) == (1200, 800) and red > 1500 and blue > 1500
PY

# ---- usage
"$REPORT" --diff "$OLD" "$NEW" --diff-norm=no_such_frame >/dev/null 2>"$T/err"
[ $? -eq $EXIT_NODATA ] || fail "--diff-norm=no_such_frame: not exit $EXIT_NODATA"
grep -q "no_such_frame: no such frame" "$T/err" || fail "--diff-norm: the error does not name the frame"
for args in "--diff $OLD" "--diff $OLD $NEW --dump" "--diff-norm=total -i $OLD" "-i $OLD --diff $OLD $NEW"; do
	# shellcheck disable=SC2086
	"$REPORT" $args >/dev/null 2>"$T/err"
	[ $? -eq $EXIT_USAGE ] || fail "xpu-report $args: not exit $EXIT_USAGE"
	note "$args: $(cat "$T/err")"
done
exit 0

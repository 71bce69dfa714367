#!/usr/bin/env bash
# Merged recordings (-i a -i b) of two gen_trace traces: each process keeps
# its comm as the first field of --folded and its own rows in --stdio (no
# input frame), every comm's weight is a's plus b's; --input-frame puts the
# input's label ([host:file], both traces are from one "host") before the
# comm in --folded and as [input] rows in the table, each label covering
# exactly its input's weight (rows per input and comm: 2 x 3 comms).
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
tui_gen "$T/a.data" -n 200
tui_gen "$T/b.data" -n 300 --gpu
fold() { "$REPORT" "$@" --folded 2>/dev/null || fail "--folded $* exited $?"; }
bycomm() { awk '{ n = $NF; split($0, f, ";"); s[f[1]] += n } END { for (c in s) print c, s[c] }' | sort; }
fold -i "$T/a.data" >"$T/a"
fold -i "$T/b.data" >"$T/b"
fold -i "$T/a.data" -i "$T/b.data" >"$T/ab"
fold -i "$T/a.data" -i "$T/b.data" --input-frame >"$T/ab.label"
cat "$T/a" "$T/b" | bycomm >"$T/want"
bycomm <"$T/ab" >"$T/got"
diff -u "$T/want" "$T/got" || fail "merged --folded: the comms' weights are not a's + b's (above)"
grep -q '^\[' "$T/ab" && fail "merged --folded without --input-frame has a label frame: $(grep -m1 '^\[' "$T/ab")"
for i in a b; do
	want=$(awk '{ s += $NF } END { print s }' "$T/$i")
	got=$(grep "^\[[^];]*:$i\.data\];" "$T/ab.label" | awk '{ s += $NF } END { print s + 0 }')
	[ "$want" = "$got" ] || fail "--input-frame: [..:$i.data] covers $got, $i.data alone $want"
done
grep -vq '^\[[^];]*:[ab]\.data\];tui-' "$T/ab.label" && fail "--input-frame: a line without [label];comm: $(grep -vm1 '^\[[^];]*:[ab]\.data\];tui-' "$T/ab.label")"
"$REPORT" -i "$T/a.data" -i "$T/b.data" --stdio >"$T/table" 2>/dev/null || fail "--stdio exited $?"
grep -q '\[input\]' "$T/table" && fail "merged --stdio without --input-frame has [input] rows"
"$REPORT" -i "$T/a.data" -i "$T/b.data" --stdio --input-frame >"$T/table.label" 2>/dev/null || fail "--stdio --input-frame exited $?"
[ "$(grep -c "\[input\] .*\[[^]]*:[ab]\.data\]" "$T/table.label")" -eq 6 ] || fail "--stdio --input-frame: not one [input] row per input and comm"
exit 0

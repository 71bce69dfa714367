#!/usr/bin/env bash
# The table's [module] row of unsymbolized code, on a recording of Debian's
# stripped /usr/bin/zstd (issue 33): the row says how many sampled
# addresses it holds and the hottest one, the same ones
# --unknown-addresses shows as rows of their own; a note under the table
# points at --unknown-addresses and at the debug package, zstd-dbgsym when
# dpkg knows /usr/bin/zstd and the report reads that file, the binary's
# -dbgsym package when the file came from elsewhere (--symfs).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
Z=/usr/bin/zstd
[ -x $Z ] || skip "zstd not installed (zstd, scripts/setup.sh)"
file -L $Z 2>/dev/null | grep -q 'not stripped' && skip "$Z has symbols here: no [zstd] row to check"
seq 1 300000 >"$T/in"
"$RECORD" -F 999 --no-gpu --no-off-cpu -o "$T/z.data" -- $Z -19 -q -c "$T/in" >/dev/null 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "xpu-record on zstd exited $?"; }

report "$T/table" -i "$T/z.data" --stdio --no-children -g none
row=$(grep -E '\[\.\] \[zstd\]' "$T/table") || fail "no [zstd] row: $(head -12 "$T/table")"
[[ $row =~ \[zstd\]\ +([0-9]+)\ addrs?,\ hottest\ zstd\+(0x[0-9a-f]+)$ ]] ||
	fail "the [zstd] row names no address count and hottest address: $row"
n=${BASH_REMATCH[1]} hot=${BASH_REMATCH[2]}

# the same addresses, each a row of its own: as many with self samples, and
# the hottest one has the most
report "$T/addrs" -i "$T/z.data" --stdio --no-children -g none --unknown-addresses --sort sym
awk '$3 == "[.]" && $4 ~ /^zstd\+0x/ && $2 > 0 { print $2, $4 }' "$T/addrs" >"$T/self"
[ "$(wc -l <"$T/self")" = "$n" ] ||
	fail "[zstd] says $n addresses, --unknown-addresses shows $(wc -l <"$T/self") with self samples"
max=$(sort -rn "$T/self" | head -1 | cut -d' ' -f1)
grep -qx "$max zstd+$hot" "$T/self" ||
	fail "[zstd] says hottest zstd+$hot, --unknown-addresses has $(sort -rn "$T/self" | head -1)"

# the note under the table
note=$(grep '^# \[zstd\]: ' "$T/table") || fail "no note on [zstd] under the table: $(tail -3 "$T/table")"
grep -q -- "--unknown-addresses" <<<"$note" || fail "the note does not name --unknown-addresses: $note"
grep -q "$n sampled addresses.* zstd+$hot " <<<"$note" || fail "the note's count or address differs: $note"
pkg=$(dpkg-query -S $Z 2>/dev/null | sed -n 's/^\([^:,]*\): .*/\1/p')
if [ -n "$pkg" ]; then
	grep -q "install $pkg-dbgsym (Debian: your distribution's debug-symbol archive, suite [a-z]*-debug)" <<<"$note" ||
		fail "dpkg says $Z is $pkg's, the note does not name $pkg-dbgsym: $note"
else
	note "dpkg does not know $Z: package name not checked"
fi
# read from elsewhere, no package is guessed
mkdir -p "$T/sfs/usr/bin" && cp $Z "$T/sfs/usr/bin/"
report "$T/sfs.table" -i "$T/z.data" --stdio --symfs "$T/sfs"
grep -q "^# \[zstd\]: .*install the binary's -dbgsym package" "$T/sfs.table" ||
	fail "--symfs: the note should name the binary's -dbgsym package: $(tail -1 "$T/sfs.table")"
# --sort dso has no symbol column and no note
report "$T/dso" -i "$T/z.data" --stdio --sort dso
grep -q 'addrs\|^# \[zstd\]' "$T/dso" && fail "--sort dso shows the [zstd] row's addresses"
exit 0

#!/usr/bin/env bash
# Unsymbolized code on a real stripped program nobody here wrote: Debian's xz,
# whose liblzma ships only its exported symbols (.dynsym). By default each
# module's unknown addresses are one "[module]" frame, a run of them in a
# stack is one frame (one box in a flame graph, not a tower per address),
# and the warning names every module with its reason; --unknown-addresses
# gives the per-address "module+0xOFFSET" frames back, same totals.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
XZ=$(command -v xz) || skip "xz not installed (xz-utils, scripts/setup.sh)"
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/empty-cache
head -c 3000000 /dev/urandom | od -An -tx1 >"$T/in.txt"
"$RECORD" -o "$T/xz.data" -F 499 -- "$XZ" -6 -T1 -c "$T/in.txt" >/dev/null 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "xpu-record xz failed"; }
report "$T/folded" -i "$T/xz.data" --folded
lzma=$(grep -o '\[liblzma[^];]*\]' "$T/folded" | sort -u)
[ -n "$lzma" ] || fail "no [liblzma...] frame: $(sort -k2 -nr "$T/folded" | head -3)"
[ "$(echo "$lzma" | wc -l)" -eq 1 ] || fail "several liblzma frame names: $lzma"
grep -Eq '\+0x[0-9a-f]+' "$T/folded" && fail "per-address frames without --unknown-addresses: $(grep -Em1 '\+0x' "$T/folded")"
grep -qF "lzma_code;$lzma" "$T/folded" ||
	fail "liblzma's exported lzma_code is not the caller of its unknown code"
# no stack holds two [liblzma...] frames in a row
grep -F "$lzma;$lzma" "$T/folded" && fail "a run of unknown liblzma frames was not merged"
w=$(grep 'stayed unsymbolized' "$T/folded.err")
for m in "${lzma:1:-1}" xz; do
	echo "$w" | grep -q "$m" || fail "the warning does not name $m: $w"
done
echo "$w" | grep -q 'only exported symbols (.dynsym' || fail "the warning does not say liblzma has only .dynsym: $w"
report "$T/addrs" -i "$T/xz.data" --folded --unknown-addresses
grep -Eq 'liblzma[^;]*\+0x[0-9a-f]+' "$T/addrs" || fail "--unknown-addresses gives no liblzma+0x frame"
[ "$(folded_sum <"$T/addrs")" -eq "$(folded_sum <"$T/folded")" ] || fail "--unknown-addresses changes the total"
note "$(wc -l <"$T/folded") folded lines grouped, $(wc -l <"$T/addrs") with --unknown-addresses"
exit 0

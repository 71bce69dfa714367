#!/usr/bin/env bash
# Compressed debug files (Debian's libc6-dbg: zlib, SHF_COMPRESSED) get a
# plain copy in the build-id cache ($XDG_CACHE_HOME/xpu-perf/.build-id/
# xx/rest.debug) the first time a report reads their DWARF, and later
# reports read that copy instead of inflating the sections again
# (report/symbols/debug_plain.c). The copy has the same build-id and no
# compressed DWARF section; every report, with or without it, and with
# XPU_NO_DEBUG_CACHE=1 (no copy written), is the same bytes.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
unset DEBUGINFOD_URLS
libc=$(ldd "$CPU_DEMO" | awk '/libc\.so/ { print $3 }')
id=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || skip "libc has no build-id"
sys=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -r "$sys" ] || skip "no debug file for libc ($sys): install libc6-dbg"
readelf -SW "$sys" 2>/dev/null | grep -E '\.debug_info' | grep -q ' C ' || skip "$sys is not compressed"

export XDG_CACHE_HOME=$T/cache
record_demo run -F 499 --no-gpu -- 1
report "$T/first" -i "$T/run.data" --stdio -v
copy=$T/cache/xpu-perf/.build-id/${id:0:2}/${id:2}.debug
grep -q "$libc: plain copy of its compressed DWARF in the build-id cache: ok" "$T/first.err" ||
	fail "no plain copy written for libc: $(grep -i 'plain\|libc' "$T/first.err" | head -n 3)"
[ -s "$copy" ] || fail "no $copy"
[ "$(readelf -n "$copy" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')" = "$id" ] ||
	fail "$copy has another build-id"
readelf -SW "$copy" 2>/dev/null | grep -E '\.debug_' | grep -q ' C ' && fail "$copy still has compressed DWARF"
ls "$T/cache/xpu-perf/.build-id/${id:0:2}/" | grep -q tmp && fail "a temporary file was left"

report "$T/second" -i "$T/run.data" --stdio -v
grep -q "$libc: .* from $copy" "$T/second.err" || fail "the second report did not read $copy"
grep -q "$libc: plain copy" "$T/second.err" && fail "the second report wrote the copy again"
diff -u "$T/first" "$T/second" >&2 || fail "the report differs once the copy is used"

XDG_CACHE_HOME=$T/nocache XPU_NO_DEBUG_CACHE=1 "$REPORT" -i "$T/run.data" --stdio >"$T/none" 2>/dev/null ||
	fail "XPU_NO_DEBUG_CACHE=1 report failed"
[ -e "$T/nocache" ] && find "$T/nocache" -name '*.debug' | grep -q . && fail "XPU_NO_DEBUG_CACHE=1 still wrote a copy"
diff -u "$T/first" "$T/none" >&2 || fail "the report differs without the copy"
note "libc's DWARF: $(stat -c %s "$sys") bytes compressed, $(stat -c %s "$copy") in the plain copy"
exit 0

#!/usr/bin/env bash
# A hole between two chunks (zeros, as a crash or a sparse copy leaves):
# the reader scans for the next chunk header in blocks, up to its bound
# (1 GiB after the damage, XPU_READER_RESYNC_MAX; Documentation/
# xpu-data-format.md, "Reader rules"). Within the bound the chunk after the
# hole is read; past it the scan stops, the rest counts as damage, and what
# came before is reported. The holes are sparse (no disk used); outcomes
# only, under timeout. No root: tests/tools/gen_trace writes the trace.
. "$(dirname "$0")/lib/e2e.sh"
GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
[ -x "$GEN" ] || fail "$GEN not built: run make tests-build"
command -v timeout >/dev/null || skip "timeout (coreutils) not found"
unset XPU_READER_RESYNC_MAX

"$GEN" -o "$T/t.data" -n 100000 2>/dev/null || fail "gen_trace failed"
mapfile -t chunks < <(LC_ALL=C grep -obUa XCHK "$T/t.data" | cut -d: -f1)
[ "${#chunks[@]}" -ge 2 ] || fail "expected at least 2 chunks, got ${#chunks[*]}"
second=${chunks[1]}
"$REPORT" -i "$T/t.data" --folded >"$T/full" 2>/dev/null || fail "report of the whole trace: exit $?"
head -c "$second" "$T/t.data" >"$T/first.data"
"$REPORT" -i "$T/first.data" --folded >"$T/first" 2>/dev/null || fail "report of the first chunk: exit $?"
full=$(folded_sum <"$T/full") first=$(folded_sum <"$T/first")
[ "$first" -gt 0 ] && [ "$first" -lt "$full" ] || fail "test bug: $first samples in the first chunk of $full"
note "${#chunks[@]} chunks, $full samples, $first in the first"

# holed NAME HOLE: the trace with HOLE zero bytes before its second chunk
holed() {
	head -c "$second" "$T/t.data" >"$T/$1.data"
	truncate -s $((second + $2)) "$T/$1.data"
	tail -c +$((second + 1)) "$T/t.data" >>"$T/$1.data"
	[ "$(du -k "$T/$1.data" | cut -f1)" -lt 65536 ] || note "$1: the file system did not keep the hole sparse"
}

# report NAME FILE: within 60 s, exit 8 (damaged), one warning naming the damage
report_holed() {
	local name=$1 rc; shift
	timeout 60 "$REPORT" -i "$T/$name.data" --folded >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -ne 124 ] || fail "$name: still reading after 60 s"
	[ $rc -eq "$EXIT_CORRUPT" ] || { cat "$T/$name.err" >&2; fail "$name: exit $rc, expected $EXIT_CORRUPT"; }
}

# 1. 512 MiB of hole, within the bound: every sample, the hole counted.
holed small $((512 << 20))
report_holed small
[ "$(folded_sum <"$T/small.out")" -eq "$full" ] ||
	fail "512 MiB hole: $(folded_sum <"$T/small.out") samples, expected all $full"
grep -q "1 chunk(s) skipped, $((512 << 20)) bytes not decoded (first: at offset $second: bad chunk header)" \
	"$T/small.err" || { cat "$T/small.err" >&2; fail "512 MiB hole: the damage is not counted"; }

# 2. 2 GiB of hole, past the bound: the scan stops, the rest is damage, the
# first chunk is reported.
holed big $((2 << 30))
size=$(stat -c %s "$T/big.data")
report_holed big
[ "$(folded_sum <"$T/big.out")" -eq "$first" ] ||
	fail "2 GiB hole: $(folded_sum <"$T/big.out") samples, expected the first chunk's $first"
grep -q "1 chunk(s) skipped, $((size - second)) bytes not decoded (first: at offset $second: no chunk header within the resync bound" \
	"$T/big.err" || { cat "$T/big.err" >&2; fail "2 GiB hole: the bound is not said"; }

# 3. The bound counts from the damaged header: a chunk 1 GiB after it is
# still found; XPU_READER_RESYNC_MAX=1048576 stops before the 512 MiB hole's end.
holed gib $((1 << 30))
report_holed gib
[ "$(folded_sum <"$T/gib.out")" -eq "$full" ] || fail "a chunk 1 GiB after the damage: not read"
XPU_READER_RESYNC_MAX=$((1 << 20)) report_holed small
[ "$(folded_sum <"$T/small.out")" -eq "$first" ] || fail "XPU_READER_RESYNC_MAX=1M: the scan went past its bound"
rm -f "$T"/*.data
exit 0

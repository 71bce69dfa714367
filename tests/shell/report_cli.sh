#!/usr/bin/env bash
# xpu-report end to end on traces written by the unwind test program (a
# self-sampled -fomit-frame-pointer call chain, see tests/unit/test_unwind.c):
# outputs, filters, warnings, and each bad-input class with its exit code.
set -u
R=$XPU_BIN/xpu-report
W=$XPU_BUILD/tests/unit/test_unwind
[ -x "$R" ] || { echo "xpu-report not built"; exit 1; }
[ -x "$W" ] || { echo "skip: $W not built"; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_rc() {	# want, command...
	local want=$1; shift
	"$@" >"$T/out" 2>"$T/err"; local rc=$?
	[ $rc -eq "$want" ] || { cat "$T/err"; fail "$* exited $rc, want $want"; }
}

"$W" --write-trace "$T/ok.data" 400 16384 5 || fail "writing the trace"
"$W" --write-trace "$T/empty.data" 0 || fail "writing the empty trace"

# folded: full chains from main, comm first, lost events warned about
expect_rc 0 "$R" -i "$T/ok.data" --folded
grep -q '^test_unwind;.*;main;rt_write_trace;rt_level_a;rt_level_b;rt_level_c;rt_leaf 300$' "$T/out" ||
	{ cat "$T/out"; fail "missing the main->rt_leaf chain"; }
grep -q ';main;rt_write_trace;rt_sort;qsort.*;rt_cmp;rt_leaf 100$' "$T/out" || fail "missing the qsort chain"
grep -q 'warning: 5 events were lost while recording (samples 5)' "$T/err" || fail "no lost-events warning"
[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; fail "unexpected stderr"; }
expect_rc 0 "$R" -i "$T/ok.data" --folded --no-comm
grep -q '^_start;' "$T/out" || fail "--no-comm still has the comm"

# stdio (also the default)
expect_rc 0 "$R" -i "$T/ok.data"
grep -q '100.00%   100.00%       400  test_unwind .* \[\.\] rt_leaf' "$T/out" || { cat "$T/out"; fail "stdio leaf row"; }
grep -q ' 75.00%     0.00%         0  test_unwind .* \[\.\] rt_level_b' "$T/out" || fail "stdio children row"

# header: lost and damage lines always present
expect_rc 0 "$R" -i "$T/ok.data" --header
for l in 'chunks skipped:  0' 'truncated:       no' 'samples                 5' 'sideband                0' 'SAMPLE                400'; do
	grep -qF "$l" "$T/out" || { cat "$T/out"; fail "header lacks '$l'"; }
done
expect_rc 0 "$R" -i "$T/ok.data" --dump
[ "$(grep -c '^SAMPLE ' "$T/out")" -eq 400 ] || fail "dump sample lines"
pid=$(sed -n 's/^COMM .* pid=\([0-9]*\) .*/\1/p' "$T/out" | head -n1)

# filters
expect_rc 0 "$R" -i "$T/ok.data" --folded --pid "$pid" --comm test_unwind --time 0,
expect_rc 10 "$R" -i "$T/ok.data" --folded --pid $((pid + 1))
grep -q 'none of the 400 samples' "$T/err" || fail "filter message"
expect_rc 10 "$R" -i "$T/ok.data" --folded --time 100,
expect_rc 2 "$R" -i "$T/ok.data" --tid x
expect_rc 2 "$R" -i "$T/ok.data" --time 5,1
expect_rc 2 "$R" -i "$T/ok.data" --bogus
expect_rc 2 "$R" -i "$T/ok.data" --folded --stdio

# bad inputs
expect_rc 7 "$R" -i "$T/missing.data"
grep -q 'cannot read .*missing.data' "$T/err" || fail "missing-file message"
expect_rc 7 "$R" -i /etc/passwd
expect_rc 10 "$R" -i "$T/empty.data" --folded
grep -q 'holds no samples' "$T/err" || fail "empty message"
cp "$T/ok.data" "$T/new.data"
printf '\x02\x00' | dd of="$T/new.data" bs=1 seek=8 conv=notrunc status=none
expect_rc 9 "$R" -i "$T/new.data"
grep -q 'upgrade xpu-report' "$T/err" || fail "version message"
head -c 40 "$T/ok.data" >"$T/short.data"
expect_rc 8 "$R" -i "$T/short.data"

# damage: output for what survives, a warning, exit 8
size=$(stat -c %s "$T/ok.data")
head -c $((size * 6 / 10)) "$T/ok.data" >"$T/trunc.data"
expect_rc 8 "$R" -i "$T/trunc.data" --folded
grep -q 'rt_leaf' "$T/out" || fail "truncated trace printed nothing"
grep -q 'is damaged: .*truncated tail' "$T/err" || { cat "$T/err"; fail "no damage warning"; }
cp "$T/ok.data" "$T/bad.data"
# Damage the payload of the chunk holding the file's middle, in the middle
# of that payload: exactly one chunk, never a chunk boundary (file header 64
# bytes; chunk header 32 bytes, comp_size at its offset 8).
pos=64
while :; do
	comp=$(od -An -t u4 -j $((pos + 8)) -N 4 "$T/ok.data" | tr -d ' ')
	[ $((pos + 32 + comp)) -gt $((size / 2)) ] && break
	pos=$((pos + 32 + comp))
done
printf 'XXXXXXXX' | dd of="$T/bad.data" bs=1 seek=$((pos + 32 + comp / 2)) conv=notrunc status=none
expect_rc 8 "$R" -i "$T/bad.data" --folded
grep -q 'rt_leaf' "$T/out" || fail "corrupted trace printed nothing"
grep -q '1 chunk(s) skipped' "$T/err" || { cat "$T/err"; fail "no skipped-chunk warning"; }
expect_rc 8 "$R" -i "$T/bad.data" --header
grep -q 'chunks skipped:  1' "$T/out" || fail "header damage count"
# truncation at many offsets never crashes: exit 8, or, where the cut falls
# exactly between two chunks (1 run in ~100 with these ~1.3 KB chunks), a
# whole trace without its FINISH, as a killed recorder leaves: exit 0 and
# that warning
for frac in 1 3 5 7 9 13 17 19; do
	head -c $((size * frac / 20)) "$T/ok.data" >"$T/t.data"
	"$R" -i "$T/t.data" --folded >/dev/null 2>"$T/t.err"; rc=$?
	[ $rc -eq 8 ] || { [ $rc -eq 0 ] && grep -q 'has no FINISH record' "$T/t.err"; } ||
		fail "truncated at $frac/20: exit $rc, want 8 (or 0 with no FINISH): $(cat "$T/t.err")"
done
echo "all report CLI checks passed"

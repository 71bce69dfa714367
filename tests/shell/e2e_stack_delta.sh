#!/usr/bin/env bash
# STACK_DELTA coding (format 1.4) on a real recording: cpu_demo (main
# thread, worker thread, forked child) recorded with xpu-record's default
# coding (XPU_STACK_PRUNE=cfi: pruned stack copies, not frames) is written
# again in full (tests/tools/recode --plain) and coded
# again offline; a recording made with XPU_STACK_DELTA=0 is coded offline.
# All hold the same records: --folded, --stdio and --dump must be the same
# bytes (--dump without its chunk numbers: the copies chunk differently).
# Then one chunk of the coded recording is damaged: the report loses that
# chunk's records only (references never cross a chunk).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
RECODE=$XPU_BUILD/tests/tools/recode
[ -x "$RECODE" ] || fail "$RECODE not built: run make tests-build"
command -v python3 >/dev/null || skip "SKIP: no python3 to damage a chunk"

# (words, not frames: xpu-record codes stack copies, not frames)
XPU_STACK_PRUNE=cfi record_demo coded -F 999 -- 2
XPU_STACK_DELTA=0 record_demo full -F 999 -- 2
"$RECODE" --plain "$T/coded.data" "$T/coded-plain.data" >"$T/recode1" || fail "recode --plain failed"
"$RECODE" "$T/coded-plain.data" "$T/coded-again.data" >"$T/recode2" || fail "recode failed"
"$RECODE" "$T/full.data" "$T/full-coded.data" >"$T/recode3" || fail "recode failed"
"$RECODE" --plain "$T/full.data" "$T/full-plain.data" >"$T/recode4" || fail "recode failed"
coded=$(sed -nE 's/^input: coded ([0-9]+)$/\1/p' "$T/recode1")
samples=$(summary_samples coded)
note "recorder's trace: $coded of its records coded, $samples samples"
[ "$coded" -gt $((samples / 2)) ] || fail "xpu-record coded $coded records for $samples samples"
[ "$(sed -nE 's/^input: coded ([0-9]+)$/\1/p' "$T/recode4")" -eq 0 ] ||
	fail "XPU_STACK_DELTA=0 still coded records"
raw_plain=$(sed -nE 's/^records [0-9]+ raw ([0-9]+) .*/\1/p' "$T/recode1")
raw_coded=$(sed -nE 's/^records [0-9]+ raw ([0-9]+) .*/\1/p' "$T/recode2")
note "bytes before compression: $raw_plain in full, $raw_coded coded"
[ $((raw_coded * 3)) -lt "$raw_plain" ] || fail "coding saved too little: $raw_coded of $raw_plain"

outputs() {	# FILE NAME: the report's outputs of FILE
	report "$T/$2.folded" -i "$1" --folded
	report "$T/$2.stdio" -i "$1" --stdio
	report "$T/$2.dump" -i "$1" --dump
	sed -i -E 's/\(chunk [0-9]+, /(/' "$T/$2.dump"
}
same() {	# A B: outputs of A and B are identical
	for o in folded stdio dump; do
		cmp -s "$T/$1.$o" "$T/$2.$o" ||
			fail "--$o of $1 and $2 differ: $(diff "$T/$1.$o" "$T/$2.$o" | head -n 5)"
	done
}
outputs "$T/coded.data" coded
outputs "$T/coded-plain.data" coded-plain
outputs "$T/coded-again.data" coded-again
outputs "$T/full.data" full
outputs "$T/full-coded.data" full-coded
same coded coded-plain
same coded coded-again
same full full-coded
[ "$(folded_sum <"$T/coded.folded")" -eq "$samples" ] || fail "the coded trace lost samples"

# Damage the payload of the second chunk of the recorder's trace (CRC fails).
python3 - "$T/coded.data" "$T/damaged.data" <<'PY' >"$T/damage" || fail "cannot damage the trace"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
pos, n = struct.unpack_from('<I', d, 12)[0], 0
while pos + 32 <= len(d):
    hs, cs = struct.unpack_from('<II', d, pos + 4)
    if n == 1:
        d[pos + hs + cs // 2] ^= 0x5a
        print(n)
    pos += hs + cs
    n += 1
open(sys.argv[2], 'wb').write(d)
PY
[ -s "$T/damage" ] || skip "SKIP: the recording has a single chunk"
"$REPORT" -i "$T/coded.data" --dump >"$T/all.dump" 2>/dev/null || fail "--dump failed"
"$REPORT" -i "$T/damaged.data" --dump >"$T/damaged.dump" 2>"$T/damaged.err"
rc=$?
[ $rc -eq 8 ] || fail "a damaged trace exits $rc, not 8"
# exactly the records of every chunk but chunk 1
grep -v '(chunk 1,' "$T/all.dump" | sed -E 's/\(chunk [0-9]+, /(/' >"$T/expect.dump"
sed -E 's/\(chunk [0-9]+, /(/' "$T/damaged.dump" >"$T/got.dump"
lost=$(grep -c '(chunk 1,' "$T/all.dump")
note "damaged chunk 1: $lost records lost, $(wc -l <"$T/got.dump") read"
cmp -s "$T/expect.dump" "$T/got.dump" ||
	fail "the damaged trace lost more than its chunk: $(diff "$T/expect.dump" "$T/got.dump" | head -n 5)"
echo "ok"

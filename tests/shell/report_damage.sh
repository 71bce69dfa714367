#!/usr/bin/env bash
# xpu-report on damaged real traces: cut at several offsets and with a
# corrupted chunk in the middle. It must never crash, must print what it can
# (the data before the damage, and after a corrupted chunk the data that
# follows), say so in one line on stderr, and exit with the corrupt code.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

record_demo run -F 999 -- 4
data=$T/run.data
size=$(stat -c %s "$data")
report "$T/full" -i "$data" --folded
full=$(folded_sum <"$T/full")

# Chunk starts: the chunk magic "XCHK" (format/xpu_format.h).
mapfile -t chunks < <(LC_ALL=C grep -obUa XCHK "$data" | cut -d: -f1)
note "$size bytes, ${#chunks[@]} chunks at ${chunks[*]}, $full samples"
[ "${#chunks[@]}" -ge 3 ] || fail "expected at least 3 chunks in a 4 s recording (the recorder flushes every second)"

# damaged NAME FILE: report FILE, expect exit 8 and one warning line; prints the total.
damaged() {
	local rc
	"$REPORT" -i "$2" --folded >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	[ $rc -lt 128 ] || fail "$1: xpu-report crashed (exit $rc)"
	[ $rc -eq "$EXIT_CORRUPT" ] || { cat "$T/$1.err" >&2; fail "$1: exit $rc, expected $EXIT_CORRUPT"; }
	grep -Eiq 'trunc|corrupt|damage|skipp' "$T/$1.err" || fail "$1: stderr does not say the trace is damaged"
	grep -Eiq 'sanitizer|segmentation|BUG:' "$T/$1.err" && fail "$1: crash text on stderr"
	folded_check_syntax <"$T/$1.out" || fail "$1: malformed folded output"
}

# Truncation: inside a chunk header and inside a payload, for every chunk
# after the first, and one byte short of the end. More data, more samples.
prev=0
cuts=()
for c in "${chunks[@]:1}"; do cuts+=($((c + 10)) $((c + 40))); done
cuts+=($((size - 1)))
for cut in "${cuts[@]}"; do
	head -c "$cut" "$data" >"$T/cut.data"
	damaged "cut_$cut" "$T/cut.data"
	n=$(folded_sum <"$T/cut_$cut.out")
	note "cut at $cut: $n samples"
	[ "$n" -ge "$prev" ] || fail "cut at $cut reports $n samples, an earlier cut reported $prev"
	[ "$n" -le "$full" ] || fail "cut at $cut reports $n samples, more than the whole trace ($full)"
	prev=$n
done
[ "$prev" -gt 0 ] || fail "a trace cut one byte short reports no samples"

# Corruption: flip payload bytes of a chunk that holds samples and has
# chunks with samples after it. Exactly that chunk's samples go missing:
# S(i) = samples before chunk i (from the cuts above).
S() { folded_sum <"$T/cut_$((chunks[$1] + 10)).out"; }
mid=
for ((k = 1; k + 1 < ${#chunks[@]}; k++)); do
	if [ "$(S $((k + 1)))" -gt "$(S $k)" ] && [ "$full" -gt "$(S $((k + 1)))" ]; then mid=$k; break; fi
done
[ -n "$mid" ] || fail "no chunk with samples both in it and after it: record longer"
before=$(S $mid); in_chunk=$(( $(S $((mid + 1))) - before ))
off=$((chunks[mid] + 32 + 16))
cp "$data" "$T/flip.data"
printf '\xde\xad\xbe\xef' | dd of="$T/flip.data" bs=1 seek="$off" conv=notrunc status=none
damaged flip "$T/flip.data"
flip=$(folded_sum <"$T/flip.out")
note "flipped chunk $mid at $off: $flip samples (before it: $before, in it: $in_chunk, whole: $full)"
[ "$flip" -eq $((full - in_chunk)) ] ||
	fail "a corrupted chunk of $in_chunk samples left $flip of $full samples, expected $((full - in_chunk))"

# A damaged header CRC also resynchronises on the next chunk.
cp "$data" "$T/hcrc.data"
# (invert the byte: writing a fixed 0xff left it unchanged when it was 0xff)
b=$(od -An -tu1 -j $((chunks[mid] + 8)) -N1 "$data" | tr -d ' ')
printf "\\$(printf '%03o' $((b ^ 255)))" |
	dd of="$T/hcrc.data" bs=1 seek=$((chunks[mid] + 8)) conv=notrunc status=none
cmp -s "$data" "$T/hcrc.data" && fail "hcrc: the byte did not change"
damaged hcrc "$T/hcrc.data"
[ "$(folded_sum <"$T/hcrc.out")" -gt "$before" ] || fail "data after a chunk with a bad header is missing"

# --header on a damaged trace shows the damage counts.
"$REPORT" -i "$T/flip.data" --header >"$T/flip.header" 2>/dev/null
grep -Eiq 'chunk|damage|skip' "$T/flip.header" || fail "--header does not show the damage"
echo "ok"

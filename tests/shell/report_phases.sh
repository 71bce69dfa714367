#!/usr/bin/env bash
# xpu-report -v ends with the phase timing table (issue 13: where a report's
# time goes): every phase, seconds, share, calls, us/sample; the top-level
# phases add up to no more than the total; nothing of it without -v.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
tui_gen "$T/gpu.data" -n 20000 --gpu
"$REPORT" -i "$T/gpu.data" --folded -v >/dev/null 2>"$T/v.err" || fail "xpu-report -v failed: $(cat "$T/v.err")"
grep -q '^# phase timing (-v), [0-9]* samples:$' "$T/v.err" || fail "no phase table: $(cat "$T/v.err")"
for ph in 'open' 'pass 1: records' 'pass 2: samples to stacks' 'waiting for decoded chunks' 'symbolizing new pcs' \
	  'GPU join, analyses' 'output' 'total'; do
	grep -q "^#   *$ph" "$T/v.err" || fail "phase table lacks '$ph'"
done
awk '/^#   (open|pass 1|pass 2|output) / { s += $(NF - 3) } /^#   total / { t = $NF }
     END { exit !(t > 0 && s <= t * 1.01) }' "$T/v.err" ||
	fail "top-level phases exceed the total: $(grep '^#   ' "$T/v.err")"
grep -q '^# resident memory at the end of each phase (-v), MB:$' "$T/v.err" ||
	fail "no memory table: $(cat "$T/v.err")"
for ph in 'open' 'pass 1: records' 'pass 2: samples to stacks' 'output'; do
	grep -Eq "^#   after $ph +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$T/v.err" || fail "memory table lacks '$ph'"
done
# the peak holds at least what is resident at the end
awk '/^#   after output / { exit !($NF + 0.2 >= $(NF - 2) + $(NF - 1) && $(NF - 2) > 0) }' "$T/v.err" ||
	fail "peak below the resident memory: $(grep '^#   after' "$T/v.err")"
calls=$(awk '/^#   pass 2: / { print $(NF - 1) }' "$T/v.err")
[ "$calls" = 1 ] || fail "pass 2 ran $calls times"
"$REPORT" -i "$T/gpu.data" --folded >/dev/null 2>"$T/q.err"
grep -q 'phase timing' "$T/q.err" && fail "phase table without -v"
# file-backed memory does not grow with the trace
tui_gen "$T/big.data" -n 3000000
size=$(stat -c %s "$T/big.data")
[ "$size" -gt 12000000 ] || fail "generated trace too small for the check: $size bytes"
"$REPORT" -i "$T/big.data" --folded -v >/dev/null 2>"$T/big.err" || fail "xpu-report -v failed: $(cat "$T/big.err")"
awk -v size="$size" '/^#   after pass 1: / { exit !($(NF - 1) * 1048576 < size / 3) }' "$T/big.err" ||
	fail "the trace's pages stayed resident ($size bytes): $(grep '^#   after' "$T/big.err")"
exit 0

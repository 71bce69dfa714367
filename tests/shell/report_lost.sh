#!/usr/bin/env bash
# Every LOST source this reader knows has its own line in --header and its
# own name in the warning every report prints for lost data; a source of a
# newer version counts as "other". (PC sampling's source 11 was shown as
# "other" until the loops ran to XPU_LOST_MAX.) CUDA processes that could
# not send GPU records (gpu-unconnected, 1.11) are processes, not events:
# their warning is their own, with their pids.
. "$(dirname "$0")/lib/e2e.sh"

GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$GEN" ] || skip "$GEN not built: make tests-build"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"

"$GEN" -o "$T/l.data" -n 200 --lost 11:5 --lost 99:2 --lost 12:1:300 --lost 12:1:301 >/dev/null ||
	fail "gen_trace"
report "$T/h.txt" -i "$T/l.data" --header
grep -Eq '^#   pc-samples +5$' "$T/h.txt" || fail "no pc-samples line: $(sed -n '/lost events/,/total/p' "$T/h.txt")"
grep -Eq '^#   other +2$' "$T/h.txt" || fail "source 99 not counted as other"
grep -Eq '^#   gpu-unconnected +2$' "$T/h.txt" || fail "no gpu-unconnected line"
grep -q '^#     pid 301: gpu-unconnected 1$' "$T/h.txt" || fail "no per-pid gpu-unconnected line"
grep -Eq '^#   total +9$' "$T/h.txt" || fail "total"
report "$T/f.txt" -i "$T/l.data" --folded
grep -q '^xpu-report: warning: 7 events were lost while recording (other 2, pc-samples 5); see --header$' \
	"$T/f.txt.err" || fail "warning: $(cat "$T/f.txt.err")"
grep -q '^xpu-report: warning: 2 CUDA processes could not send GPU records (pid 300 301): their GPU work is missing (lost: gpu-unconnected); see --header$' \
	"$T/f.txt.err" || fail "no gpu-unconnected warning: $(cat "$T/f.txt.err")"
echo "each known LOST source named, an unknown one counted as other"

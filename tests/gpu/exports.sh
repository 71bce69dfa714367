#!/usr/bin/env bash
# GPU machine (issue 10): a PyTorch recording exported to every output, with
# the checks that need no tool beyond python3: run after tests/gpu/run.sh,
# on its torch_demo trace.  tests/gpu/exports.sh [TRACE]
#   --folded      the reference totals
#   --svg         an SVG document with GPU kernel frames in it
#   --pprof       gzip'd protobuf; gpu_time/nanoseconds present (strings table)
#   --speedscope  JSON: one profile per thread + GPU profiles, weights add up
#                 to --folded's (samples) within rounding
#   --timeline    Perfetto protobuf: size, per-event cost, under Perfetto
#                 UI's practical limit
# Writes $OUT/exports.txt (sizes, seconds, checks) and keeps the small
# exports (gzip'd) beside it; exit 1 on a failed check.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
TR=${1:-$RES/torch.data}
PY=${PYTHON:-python3}
[ -s "$TR" ] || { echo "skip: no trace $TR (run tests/gpu/run.sh first)"; exit 2; }
fail=0
bad() { echo "FAIL  $*"; fail=1; }
ok() { echo "ok    $*"; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" 2>>"$RES/exports.err"; local rc=$?; t1=$(date +%s.%N);
	 echo "$rc $(echo "$t1 - $t0" | bc 2>/dev/null || $PY -c "print(round($t1 - $t0, 3))")"; }
{
echo "# $(basename "$TR"): $(ls -l "$TR" | awk '{ printf "%.1f MB", $5 / 1e6 }')"
for o in folded svg pprof speedscope timeline; do
	case $o in
	folded) read -r rc s < <(secs sh -c "'$BIN/xpu-report' -i '$TR' --folded > '$RES/exp.folded'") ;;
	*) read -r rc s < <(secs "$BIN/xpu-report" -i "$TR" --$o "$RES/exp.$o") ;;
	esac
	f=$RES/exp.$o
	printf '%-11s exit %s  %8s s  %10s bytes\n' "--$o" "$rc" "$s" "$(stat -c %s "$f" 2>/dev/null || echo -)"
	[ "$rc" = 0 ] || bad "--$o exited $rc"
done
total=$(awk '{ s += $NF } END { print s }' "$RES/exp.folded")
gpu=$(grep -c 'GPU_Kernel' "$RES/exp.folded")
[ "$gpu" -gt 0 ] && ok "--folded: $total samples, $gpu stacks with a GPU kernel" || bad "--folded has no GPU kernel"
$PY - "$RES/exp.svg" <<'PY' && ok "--svg: well-formed, GPU kernel frames present" || bad "--svg check"
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]); s = open(sys.argv[1]).read()
assert t.getroot().tag.endswith('svg') and 'GPU_Kernel' in s
PY
$PY - "$RES/exp.pprof" <<'PY' && ok "--pprof: gzip'd, gpu_time/nanoseconds and device labels in its strings" || bad "--pprof check"
import gzip, sys
b = gzip.open(sys.argv[1]).read()
assert b'gpu_time' in b and b'nanoseconds' in b and b'device' in b
PY
$PY - "$RES/exp.speedscope" "$total" <<'PY' && ok "--speedscope: profiles and weights add up" || bad "--speedscope check"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['$schema'].startswith('https://www.speedscope.app/')
names = [p['name'] for p in d['profiles']]
assert any('GPU' in n or 'gpu' in n for n in names), names
print(f"      {len(d['profiles'])} profiles, {len(d['shared']['frames'])} frames")
PY
sz=$(stat -c %s "$RES/exp.timeline" 2>/dev/null || echo 0)
[ "$sz" -gt 1000 ] && [ "$sz" -lt 500000000 ] && ok "--timeline: $sz bytes (Perfetto UI loads traces of hundreds of MB)" ||
	bad "--timeline size $sz"
cp "$RES/exp.pprof" "$RES/torch.pb.gz" 2>/dev/null	# gzip'd already
for o in svg speedscope timeline; do	# kept in tests/gpu/results when small
	sz=$(stat -c %s "$RES/exp.$o" 2>/dev/null || echo 0)
	[ "$sz" -lt 8000000 ] && gzip -9c "$RES/exp.$o" > "$RES/torch.$o.gz"
done
} 2>&1 | tee "$RES/exports.txt"
grep -q '^FAIL' "$RES/exports.txt" && exit 1
exit 0

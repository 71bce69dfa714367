#!/usr/bin/env bash
# GPU machine, as root: Python frames of DataLoader fork workers from their
# first instruction (issue 13; tests/shell/e2e_python_start.sh on the CPU
# side). Records tests/gpu/dataloader_demo.py (two fork workers computing in
# Python) with $XPU_BIN's xpu-record and, with REF=DIR, an earlier build's
# in the same run, and prints per build the workers' samples and how many
# carry Python frames; fails when under 99.5% of them do (the new build only).
#   tests/gpu/dataloader.sh [ROUNDS]       (default 3)
# Output: $OUT/dataloader.check when OUT is set (the device's result folder).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
PY=${PYTHON:-python3}
REF=${REF:-}
ROUNDS=${1:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0

one() {	# LABEL DIR: records, prints "LABEL workers N with-python M"
	local label=$1 dir=$2
	"$dir/xpu-record" -q -F 999 --cupti-lib "$dir/libxpu-cupti.so" -o "$W/d.data" -- \
		"$PY" "$TOP/tests/gpu/dataloader_demo.py" 32 >"$W/d.out" 2>"$W/d.err" ||
		{ echo "FAIL  $label: xpu-record failed: $(tail -n 2 "$W/d.err")"; return 1; }
	grep -q "^dataloader_demo: done" "$W/d.out" || { echo "FAIL  $label: the demo did not finish"; return 1; }
	local pids
	pids=$(sed -n 's/^dataloader_demo: worker //p' "$W/d.out" | paste -sd,)
	[ -n "$pids" ] || { echo "FAIL  $label: no worker pids"; return 1; }
	"$BIN/xpu-report" -i "$W/d.data" --folded --cpu-only --pid "$pids" 2>/dev/null |
		awk -v l="$label" '{ n += $NF; if ($0 ~ /py::/) p += $NF; if ($0 ~ /py::dl_make_item/) d += $NF }
			END { printf "%-4s workers %5d samples, %5d with Python frames (%.1f%%), %5d in dl_make_item\n",
			      l, n, p, n ? 100 * p / n : 0, d }'
}

{
	echo "# tests/gpu/dataloader.sh: $ROUNDS rounds, DataLoader(num_workers=2, fork), 32 steps, -F 999"
	for r in $(seq "$ROUNDS"); do
		one new "$BIN" || fail=1
		[ -n "$REF" ] && { one ref "$REF" || true; }
	done
} | tee "$W/check"
awk '$1 == "new" { n += $3; p += $5 } END { exit !(n > 0 && p / n >= 0.995) }' "$W/check" ||
	{ echo "FAIL  under 99.5% of the workers' samples have Python frames"; fail=1; }
[ -n "${OUT:-}" ] && cp "$W/check" "$OUT/dataloader.check"
[ "$fail" = 0 ] && echo "ok    the workers' samples have Python frames from their start"
exit "$fail"

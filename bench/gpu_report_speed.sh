#!/usr/bin/env bash
# GPU machine (issue 13): how long xpu-report takes on a real PyTorch
# recording. Records bench/gpt2_train.py (HuggingFace GPT-2, 6 layers, 20
# training steps) at -F 999, then, in interleaved rounds, times --folded,
# --stdio, --pprof and --timeline (wall and peak RSS of each, min/median/max)
# and prints -v's phase table once. Then the cost's shape: a second,
# longer recording (LONG_STEPS, default 80 training steps) timed with
# --folded in the same interleaved rounds gives the marginal cost per
# sample (the difference of the medians over the difference of the sample
# counts) and the fixed start-up cost (what is left of the short one);
# the same for peak RSS. With REF=DIR (a directory holding an earlier
# build's xpu-report), its --folded on the short recording is timed in the
# same rounds too, and both outputs compared. Prints a table;
# $OUT/report_speed.txt keeps it. With WORDS=1 the 20-step run is also
# recorded with format 1.5's stack words (XPU_STACK_PRUNE=cfi, which the
# report unwinds) and its --folded timed in the same rounds.
#   [REF=DIR] [WORDS=1] bench/gpu_report_speed.sh [ROUNDS]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
OUT=${OUT:-${XPU_BUILD:-$TOP/build}/bench-gpu}
PY=${PYTHON:-python3}
ROUNDS=${1:-3}
mkdir -p "$OUT"
$PY -c 'import torch, transformers, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	{ echo "skip: needs PyTorch with CUDA and transformers"; exit 2; }
T=$OUT/gpt2.data L=$OUT/gpt2-long.data
"$BIN/xpu-record" -F 999 -o "$T" -- $PY "$TOP/bench/gpt2_train.py" 20 >"$OUT/gpt2.out" 2>"$OUT/gpt2.err" ||
	{ cat "$OUT/gpt2.err"; echo "xpu-record failed"; exit 1; }
# WORDS=1: the same run recorded with format 1.5's stack words
# (XPU_STACK_PRUNE=cfi), which the report unwinds, against the frames
# xpu-record writes by default (1.6)
if [ "${WORDS:-0}" = 1 ]; then
	XPU_STACK_PRUNE=cfi "$BIN/xpu-record" -F 999 -o "$OUT/gpt2-words.data" -- $PY "$TOP/bench/gpt2_train.py" 20 \
		>"$OUT/gpt2-words.out" 2>"$OUT/gpt2-words.err" ||
		{ cat "$OUT/gpt2-words.err"; echo "xpu-record (words) failed"; exit 1; }
fi
"$BIN/xpu-record" -F 999 -o "$L" -- $PY "$TOP/bench/gpt2_train.py" "${LONG_STEPS:-80}" \
	>"$OUT/gpt2-long.out" 2>"$OUT/gpt2-long.err" ||
	{ cat "$OUT/gpt2-long.err"; echo "xpu-record failed"; exit 1; }
# one run: wall seconds and peak RSS (MB) of a command, from rusage
measure() {
	$PY - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.monotonic() - t
m = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{w:.3f} {m:.0f} {r.returncode}")
PY
}
declare -A wall rss
outs=(folded stdio pprof timeline)
for r in $(seq "$ROUNDS"); do
	for o in "${outs[@]}"; do
		case $o in
		folded|stdio) set -- "$BIN/xpu-report" -i "$T" --$o ;;
		*) set -- "$BIN/xpu-report" -i "$T" --$o "$OUT/gpt2.$o" ;;
		esac
		read -r w m rc < <(measure "$@")
		[ "$rc" = 0 ] || echo "note: --$o exited $rc"
		wall[$o]="${wall[$o]:-} $w" rss[$o]="${rss[$o]:-} $m"
	done
	read -r w m rc < <(measure "$BIN/xpu-report" -i "$L" --folded)
	wall[long]="${wall[long]:-} $w" rss[long]="${rss[long]:-} $m"
	if [ -n "${REF:-}" ]; then
		read -r w m rc < <(measure "$REF/xpu-report" -i "$T" --folded)
		wall[ref]="${wall[ref]:-} $w" rss[ref]="${rss[ref]:-} $m"
	fi
	if [ "${WORDS:-0}" = 1 ]; then
		read -r w m rc < <(measure "$BIN/xpu-report" -i "$OUT/gpt2-words.data" --folded)
		wall[words]="${wall[words]:-} $w" rss[words]="${rss[words]:-} $m"
	fi
done
stats() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
{
	echo "# xpu-report on a GPT-2 (6 layers, 20 steps) recording, $ROUNDS interleaved rounds"
	"$BIN/xpu-report" -i "$T" --header 2>/dev/null | grep -E '^#   (SAMPLE|GPU_KERNEL|GPU_CORR|GPU_API) |^# file|bytes'
	ls -l "$T" | awk '{ printf "# trace: %.1f MB\n", $5 / 1e6 }'
	printf '%-10s  %-26s  %-20s\n' output "wall s min/median/max" "peak RSS MB min/med/max"
	for o in "${outs[@]}"; do
		printf '%-10s  %-26s  %-20s\n' "--$o" "$(echo "${wall[$o]}" | stats)" "$(echo "${rss[$o]}" | stats)"
	done
	printf '%-10s  %-26s  %-20s\n' "--folded, ${LONG_STEPS:-80} steps" "$(echo "${wall[long]}" | stats)" "$(echo "${rss[long]}" | stats)"
	if [ "${WORDS:-0}" = 1 ]; then
		printf '%-10s  %-26s  %-20s\n' "--folded, 1.5 words" "$(echo "${wall[words]}" | stats)" "$(echo "${rss[words]}" | stats)"
		echo "# words recording: $("$BIN/xpu-report" -i "$OUT/gpt2-words.data" --header 2>/dev/null |
			awk '$2 == "SAMPLE" || $2 == "GPU_CORR" { printf "%s %s, ", $2, $3 }')$(ls -l "$OUT/gpt2-words.data" |
			awk '{ printf "%.1f MB", $5 / 1e6 }') (this recording: $(ls -l "$T" | awk '{ printf "%.1f MB", $5 / 1e6 }'))"
	fi
	if [ -n "${REF:-}" ]; then
		printf '%-10s  %-26s  %-20s\n' "REF --folded" "$(echo "${wall[ref]}" | stats)" "$(echo "${rss[ref]}" | stats)"
		"$BIN/xpu-report" -i "$T" --folded >"$OUT/this.folded" 2>/dev/null
		"$REF/xpu-report" -i "$T" --folded >"$OUT/ref.folded" 2>/dev/null
		if cmp -s "$OUT/this.folded" "$OUT/ref.folded"; then
			echo "# REF ($REF/xpu-report): the same --folded output"
		else
			echo "# REF ($REF/xpu-report): --folded output differs"
		fi
	fi
	# samples of each recording (CPU samples + off-CPU + GPU correlation stacks: every stack unwound)
	ns=$("$BIN/xpu-report" -i "$T" --header 2>/dev/null | awk '$2 ~ /^(SAMPLE|OFFCPU|GPU_CORR)$/ { n += $3 } END { print n + 0 }')
	nl=$("$BIN/xpu-report" -i "$L" --header 2>/dev/null | awk '$2 ~ /^(SAMPLE|OFFCPU|GPU_CORR)$/ { n += $3 } END { print n + 0 }')
	med() { echo "$1" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	awk -v ns="$ns" -v nl="$nl" -v ts="$(med "${wall[folded]}")" -v tl="$(med "${wall[long]}")" \
	    -v ms="$(med "${rss[folded]}")" -v ml="$(med "${rss[long]}")" 'BEGIN {
		if (nl <= ns) { print "# shape: the long recording has no more stacks than the short one"; exit }
		t = (tl - ts) / (nl - ns); m = (ml - ms) / (nl - ns)
		printf "# shape of --folded: %d and %d stacks unwound; marginal %.1f us and %.1f KB per stack,\n", ns, nl, t * 1e6, m * 1024
		printf "#   fixed start-up %.3f s and %.0f MB (the short recording less its stacks at the marginal cost)\n", ts - t * ns, ms - m * ns
	}'
	echo
	"$BIN/xpu-report" -i "$T" --folded -v 2>&1 >/dev/null | grep '^#'
} | tee "$OUT/report_speed.txt"

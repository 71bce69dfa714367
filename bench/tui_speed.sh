#!/usr/bin/env bash
# TUI speed on a big trace made by tests/tools/gen_trace.c (default 10 million
# events: CPU samples with 4-7 frame stacks, GPU launches with correlation
# records, kernels and copies):
#   open    process start -> first screen (session passes + tree build), from
#           the TUI's own XPU_TUI_KEYLOG "ready" line, and the wall time of
#           `xpu-report --stdio` on the same trace for comparison
#   keys    per-key time from getch() to the refreshed screen, for a scripted
#           session in tmux: moves, expand, expand-all, search as you type, n,
#           invert and view switches (each a tree rebuild), zoom, filters,
#           header, annotate
# Goals (issue 4): open < 2 s, every key < 50 ms. Nothing is asserted.
# Usage: bench/tui_speed.sh [EVENTS]   (XPU_BIN, XPU_BUILD as for make bench)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
XPU_BUILD=${XPU_BUILD:-$TOP/build}
XPU_BIN=${XPU_BIN:-$TOP}
REPORT=$XPU_BIN/xpu-report
EVENTS=${1:-10000000}
W=$(mktemp -d /tmp/xpu-tui-speed.XXXXXX)
SOCK=xpu-tui-speed-$$
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$W"' EXIT
die() { echo "tui_speed: $*" >&2; exit 1; }

command -v tmux >/dev/null || die "needs tmux (scripts/setup.sh installs it)"
[ -x "$REPORT" ] || die "$REPORT not built: run make"
GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$GEN" ] || die "$GEN not built: run make tests-build (it needs libcapstone-dev)"
"$GEN" -o "$W/big.data" -n "$EVENTS" --gpu >/dev/null || die "gen_trace failed"
size=$(stat -c %s "$W/big.data")

# Reference: the text report on the same trace (same session passes).
t0=$(date +%s.%N)
"$REPORT" -i "$W/big.data" --stdio >/dev/null 2>&1 || die "xpu-report --stdio failed"
t1=$(date +%s.%N)
stdio_s=$(echo "$t1 - $t0" | awk '{ printf "%.2f", $1 - $3 }')

tmux -L "$SOCK" new-session -d -x 80 -y 24 -s t -c "$W" \
	"env TERM=screen LANG=C.UTF-8 XPU_TUI_KEYLOG=$W/keys.log $REPORT -i big.data 2>/dev/null; sleep 600"
keys_done() { [ -f "$W/keys.log" ] && wc -l <"$W/keys.log" || echo 0; }
wait_lines() {	# n: wait until the log has n lines (each key logs one)
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(keys_done)" -ge "$1" ] && return 0
		sleep 0.05
	done
	die "the TUI stopped answering (log: $(tail -n 2 "$W/keys.log" 2>/dev/null))"
}
wait_lines 1
send() {	# keys... : one key at a time, each waited for
	local k
	for k in "$@"; do
		if [ "$k" = PROMPT ]; then	# the next key opens a prompt: it is
			prompt=1		# logged when the prompt ends
			continue
		fi
		if [ -n "${prompt:-}" ]; then
			prompt=
			tmux -L "$SOCK" send-keys -t t "$k"
			sleep 0.05
			continue
		fi
		n=$(keys_done)
		tmux -L "$SOCK" send-keys -t t "$k"
		wait_lines $((n + 1))
	done
}
send Down Down Down Up Enter Down Enter Down Enter
send E End Home E
send PROMPT / t u i _ d e m o _ m Enter n n N
send i i v v v
send Down z Z
send PROMPT p 1 0 0 Enter x PROMPT c t u i - w o r k e r Enter x
send H G q
send PROMPT / m a t m u l Enter a q
send Q

ready=$(awk '$1 == "ready" { print $2 }' "$W/keys.log")
echo "tui speed: $EVENTS events, $((size / 1048576)) MiB trace; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '  %-44s %10s\n' "open: process start -> first screen" "$(awk -v r="$ready" 'BEGIN { printf "%.2f s", r / 1000 }')"
printf '  %-44s %10s\n' "xpu-report --stdio, same trace (reference)" "$stdio_s s"
awk '$1 == "key" { print $3 }' "$W/keys.log" | sort -n >"$W/ms"
n=$(wc -l <"$W/ms")
printf '  %-44s %10d\n' "keys answered (prompt edits included)" "$n"
printf '  %-44s %8.2f ms\n' "median key" "$(sed -n "$(((n + 1) / 2))p" "$W/ms")"
printf '  %-44s %8.2f ms\n' "95th percentile key" "$(sed -n "$(((n * 95 + 99) / 100))p" "$W/ms")"
printf '  %-44s %8.2f ms\n' "slowest key" "$(tail -n 1 "$W/ms")"
echo "  slowest five: $(awk '$1 == "key" { print $3, $2 }' "$W/keys.log" | sort -rn | head -5 | awk '{ printf "%s %s ms; ", $2, $1 }')"
echo "goals: open < 2 s, every key < 50 ms"

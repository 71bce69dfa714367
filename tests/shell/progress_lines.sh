#!/usr/bin/env bash
# Progress lines: on a terminal (script(1) gives the commands a pty), a
# report slower than the delay shows "pass N: ..." and erases it; xpu-record
# says what its end-of-run work is doing, xpu-archive which file it packs.
# Not on a pipe or a file, and not with XPU_NO_PROGRESS=1.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
command -v script >/dev/null || skip "script(1) not found (bsdutils): no pty to test on"
GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$GEN" ] || skip "gen_trace not built (needs capstone)"
"$GEN" -o "$T/big.data" -n 200000 >/dev/null || fail "gen_trace failed"
on_tty() { script -qec "$1" /dev/null </dev/null; }

# XPU_PROGRESS_DELAY_MS=0: the line from the first redraw on
XPU_PROGRESS_DELAY_MS=0 on_tty "'$REPORT' -i '$T/big.data' --folded >'$T/f1'" >"$T/tty1" ||
	fail "xpu-report on a pty failed: $(cat "$T/tty1")"
grep -aq 'xpu-report: pass 2: resolving stacks' "$T/tty1" || fail "no pass 2 progress line: $(od -c "$T/tty1" | head)"
tail -c 4 "$T/tty1" | od -An -c | tr -d ' ' | grep -q '^\\r033\[K$' || fail "the progress line is not erased at the end"
"$REPORT" -i "$T/big.data" --folded >"$T/f2" 2>"$T/err2" || fail "xpu-report failed"
cmp -s "$T/f1" "$T/f2" || fail "the folded output differs with progress lines"
[ -s "$T/err2" ] && fail "progress text on a non-terminal stderr: $(head -c 200 "$T/err2")"
XPU_NO_PROGRESS=1 XPU_PROGRESS_DELAY_MS=0 on_tty "'$REPORT' -i '$T/big.data' --folded >/dev/null" >"$T/tty3"
grep -aq 'pass 2' "$T/tty3" && fail "XPU_NO_PROGRESS=1 still shows progress"
# the default one-second delay: a quick report shows nothing
"$GEN" -o "$T/small.data" -n 1000 >/dev/null
on_tty "'$REPORT' -i '$T/small.data' --folded >/dev/null" >"$T/tty4"
grep -aq 'pass' "$T/tty4" && fail "a quick report shows a progress line: $(cat "$T/tty4")"

if [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	on_tty "'$RECORD' -q -o '$T/rec.data' -F 999 -- dd if=/dev/zero of=/dev/null bs=1M count=4000" >"$T/tty5" || fail "xpu-record on a pty failed"
	for step in 'draining the ring buffers' 'writing kernel symbols' 'closing the trace'; do
		grep -aq "xpu-record: $step" "$T/tty5" || fail "xpu-record does not say '$step': $(od -c "$T/tty5" | head)"
	done
	on_tty "'$XPU_BIN/xpu-archive' -q -i '$T/rec.data'" >"$T/tty6" || fail "xpu-archive on a pty failed"
	grep -aq 'xpu-archive: archiving file [0-9]* of [0-9]*: ' "$T/tty6" || fail "xpu-archive names no file: $(cat "$T/tty6")"
fi
exit 0

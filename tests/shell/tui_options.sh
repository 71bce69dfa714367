#!/usr/bin/env bash
# The TUI takes the options it can: -g callee opens the bottom-up (inverted)
# tree, as perf's callee order; -g caller and the default open top-down;
# --max-stack shortens the stacks it shows.
. "$(dirname "$0")/golden/tui/lib.sh"
tui_need
tui_gen "$T/t.data" -n 2000
tui_start "LANG=C.UTF-8 $REPORT -i t.data -g callee"
tui_screen | head -2 | grep -q 'bottom-up' || fail "-g callee did not open bottom-up: $(tui_screen | head -3)"
tui_keys q
tui_wait "TUI-EXITED=0" || fail "q did not exit 0"
tui_start "LANG=C.UTF-8 $REPORT -i t.data -g caller"
tui_screen | head -2 | grep -q 'top-down' || fail "-g caller did not open top-down: $(tui_screen | head -3)"
tui_keys q
tui_wait "TUI-EXITED=0" || fail "q did not exit 0"
# --max-stack 1: every root of the top-down tree is a leaf function
tui_start "LANG=C.UTF-8 $REPORT -i t.data --max-stack 1"
tui_keys E
tui_screen >"$T/max.txt"
grep -q 'tui_demo_matmul' "$T/max.txt" || fail "--max-stack 1: no leaf at the root: $(cat "$T/max.txt")"
grep -q ' main$\| main ' "$T/max.txt" && fail "--max-stack 1 still shows main: $(cat "$T/max.txt")"
tui_keys q
tui_wait "TUI-EXITED=0" || fail "q did not exit 0"
exit 0

#!/usr/bin/env bash
# The TUI at 80x24 over a deterministic trace (tests/tools/gen_trace.c, CPU + GPU):
# every screen after a scripted key sequence equals the saved one in
# tests/shell/golden/tui/. Covers the first screen, expand, expand-all,
# bottom-up, view switching (GPU-idle included), incremental search + n, zoom, filters, help,
# header, annotate (source lines, named call targets), ASCII glyphs and resize.
. "$(dirname "$0")/golden/tui/lib.sh"
tui_need
tui_gen "$T/t.data" -n 3000 --gpu
# The recording date, and rip-relative offsets in annotate: gen_trace's data
# moves whenever the code of libxpu.a it links grows or shrinks.
TUI_NORMALIZE='s/^# recorded: .*/# recorded: DATE/;s/\[rip + 0x[0-9a-f]*\]/[rip + OFF]/g'
R="NO_COLOR=1 LANG=C.UTF-8 $REPORT -i t.data"

tui_start "$R"
tui_check start
tui_keys Enter Down Enter Down Enter
tui_check expand
tui_keys E
tui_check expand_all
tui_keys E
tui_keys i
tui_check inverted
tui_keys v
tui_check view_gpu
tui_keys v
tui_check view_cpu
# the GPU-idle view has weight (gen_trace's device idles between kernels); the
# sync-wait view has none and is skipped: the next v is the default view again
tui_keys v
tui_check view_gpu_idle
tui_keys v i
tui_keys / m a t
tui_check search_incremental
tui_keys Enter n
tui_check search_next
tui_keys Left z
tui_check zoom
tui_keys Z
tui_check zoom_back
tui_keys c tui-worker Enter
tui_check filter_comm
tui_keys x p 200 Enter
tui_check filter_pid
tui_keys x h
tui_check help
tui_keys q H
tui_check header
tui_keys G
tui_check header_end
# H on the header screen does not stack a second one: one q is back at the tree
tui_keys H q
tui_wait "Children" || fail "H on the header screen stacked another: $(tui_screen)"
# annotate the hottest leaf: search it, then a
tui_keys / t u i _ d e m o _ m a t m u l Enter a
tui_check annotate
tui_keys q
# calls name their targets: "call 0x... <tui_demo_forward>"
tui_keys / t u i _ d e m o _ s t e p Enter a
tui_check annotate_calls
tui_keys q
tui_keys q
tui_wait "TUI-EXITED=0" || fail "q on the main screen did not exit 0: $(tui_screen)"

# plain ASCII glyphs when the locale is not UTF-8
tui_start "NO_COLOR=1 LANG=C LC_ALL=C $REPORT -i t.data"
tui_keys Enter
tui_check ascii

# resize: the screen is redrawn at the new size
tmx resize-window -t t -x 60 -y 12 2>/dev/null || tmx resize-pane -t t -x 60 -y 12
sleep 0.5	# the pane shows the old cells until the TUI has redrawn
tui_check resized_small
tmx resize-window -t t -x 100 -y 30 2>/dev/null || tmx resize-pane -t t -x 100 -y 30
sleep 0.5
tui_check resized_large
tui_keys q
tui_wait "TUI-EXITED=0" || fail "q did not exit 0 after resizing"
echo "all screens match"

#!/usr/bin/env bash
# Annotate's source lines come from files the ELF names (DWARF line table),
# so from the trace: they are opened like every other file a trace names
# (report/files/path.c). A program built here from its own copy of
# tests/tools/gen_trace.c, whose source is then replaced by a FIFO (annotate must
# come up, without the text, instead of hanging), by a private copy (mode
# 0600: not shown), and by a world-readable one (shown: the check is real).
. "$(dirname "$0")/golden/tui/lib.sh"
tui_need
mkdir -p "$T/src"
cp "$XPU_TOP/tests/tools/gen_trace.c" "$T/src/gen_trace.c"
cc -O2 -g -I"$XPU_TOP" -o "$T/gen" "$T/src/gen_trace.c" "$XPU_BUILD/libxpu.a" \
	-lcapstone -lelf -lzstd -lz -lpthread || fail "cannot build $T/src/gen_trace.c"
"$T/gen" -o "$T/t.data" -n 2000 >/dev/null || fail "gen_trace failed"
LINE='acc += (unsigned long)(i * j) ^ tui_sink;'

# annotate NAME: the annotate screen of tui_demo_matmul into $T/NAME.txt
annotate() {
	tui_start "NO_COLOR=1 LANG=C.UTF-8 $REPORT -i t.data"
	tui_keys / t u i _ d e m o _ m a t m u l Enter a
	tui_wait "Annotate: tui_demo_matmul" ||
		fail "$1: no annotate screen after 10 s (hung opening the source?): $(tui_screen)"
	tui_wait "gen_trace.c:55" || fail "$1: no source line numbers: $(tui_screen)"
	tui_screen >"$T/$1.txt"
	tui_keys q q
	tui_wait "TUI-EXITED=0" || fail "$1: q q did not exit 0"
}

annotate readable
grep -qF "$LINE" "$T/readable.txt" || fail "readable source: its text is not shown"

rm "$T/src/gen_trace.c" && mkfifo "$T/src/gen_trace.c"
annotate fifo
grep -qF "$LINE" "$T/fifo.txt" && fail "fifo: text from a FIFO?"

rm "$T/src/gen_trace.c" && cp "$XPU_TOP/tests/tools/gen_trace.c" "$T/src/gen_trace.c"
chmod 600 "$T/src/gen_trace.c"
annotate private
grep -qF "$LINE" "$T/private.txt" && fail "private: a private file named by the ELF was shown"
echo "annotate: readable source shown; FIFO and private source not opened"

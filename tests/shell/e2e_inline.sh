#!/usr/bin/env bash
# End to end, inlined functions and source lines: record inline_demo (built
# -O2 -g; its hot loop is run_steps <- step <- mix, the last two inlined) with
# eBPF and check that
#  - the folded stacks end in "run_steps;step (inlined);mix (inlined)" for
#    the samples in mix's code, with no file:line in them;
#  - the --stdio table gives each of those frames the line the source marks
#    (tests/workloads/inline_demo.c, "LINE:name" comments): mix its own hot
#    line, step and run_steps the line of their call, demo_loop its call;
#  - --no-inline leaves no "(inlined)" frame and the same total, the samples
#    in run_steps, at a line of its loop's code (the line table's line), its
#    caller still at its call; --no-srcline leaves no Source:Line column.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
DEMO=$XPU_BUILD/tests/workloads/inline_demo
SRC=$XPU_TOP/tests/workloads/inline_demo.c
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"

# line_of NAME: the source lines marked "LINE:NAME", space-separated
line_of() { grep -n "LINE:$1 " "$SRC" | cut -d: -f1 | tr '\n' ' '; }

"$RECORD" -F 999 -o "$T/run.data" -- "$DEMO" 2 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/folded" -i "$T/run.data" --folded
folded_check_syntax <"$T/folded" || fail "malformed folded output"
total=$(folded_sum <"$T/folded")
inl=$(folded_sum ';main;demo_loop;run_steps;step \(inlined\);mix \(inlined\)$' <"$T/folded")
note "samples: $total, $inl of them in mix inlined into step inlined into run_steps"
[ "$total" -ge 500 ] || skip "only $total samples: machine too busy"
in_range "$(ratio "$inl" "$total")" 0.30 1 || fail "$inl of $total samples have the inlined chain"
grep -q 'inline_demo\.c:' "$T/folded" && fail "--folded holds file:line (it must not split frames)"

# the table: each frame's heaviest line
report "$T/stdio" -i "$T/run.data" --stdio
grep -q '^# Children .*Symbol  *Source:Line$' "$T/stdio" || fail "no Source:Line column"
# row_line SYMBOL [TABLE]: the line number in SYMBOL's row ("[.] SYMBOL
# inline_demo.c:N") of TABLE ($T/stdio)
row_line() {
	awk -v s="[.] $1" 'index($0, s) { rest = substr($0, index($0, s) + length(s))
		if (rest ~ /^ +inline_demo\.c:[0-9]+$/) { sub(/.*:/, "", rest); print rest; exit } }' \
		"${2:-$T/stdio}"
}
check_line() {	# SYMBOL MARKER
	local got want
	got=$(row_line "$1")
	want=$(line_of "$2")
	note "$1: inline_demo.c:${got:-none} (marked: $want)"
	[ -n "$got" ] && [[ " $want " == *" $got "* ]] ||
		fail "$1 is at inline_demo.c:${got:-none}, expected one of: $want"
}
check_line "mix (inlined)" mix
check_line "step (inlined)" step
check_line run_steps run_steps
check_line demo_loop demo_loop

# --pprof: one location per sampled pc, the inlined frames as its lines
if command -v go >/dev/null && "$REPORT" --help | grep -q -- '--pprof'; then
	export HOME=$T GOCACHE=$T/gocache
	report "$T/pprof.err" -i "$T/run.data" --pprof "$T/p.pb.gz"
	go tool pprof -symbolize=none -raw "$T/p.pb.gz" >"$T/raw" 2>&1 || fail "go tool pprof -raw: $(tail -3 "$T/raw")"
	# "N: 0xADDR M=1 mix inline_demo.c:L" then "step ..." then "run_steps ..." lines
	nloc=$(awk 'function end() { n += a == "mix" && b == "step" && c == "run_steps" }
		    /^ +[0-9]+: 0x/ { end(); a = $4; b = c = ""; k = 1; next }
		    k == 1 { b = $1; k = 2; next } k == 2 { c = $1; k = 3; next } { k = 0 }
		    END { end(); print n + 0 }' "$T/raw")
	note "pprof: $nloc locations of mix inlined into step inlined into run_steps"
	[ "$nloc" -ge 2 ] || fail "pprof has $nloc locations mix+step+run_steps: $(sed -n '/^Locations/,$p' "$T/raw" | head -30)"
	grep -Eq '^ +[0-9]+: 0x0 M=[0-9]+ mix' "$T/raw" && fail "pprof: mix's location has no address"
	(cd "$XPU_TOP" && go tool pprof -symbolize=none -list '^mix$' "$T/p.pb.gz") >"$T/list" 2>&1 ||
		fail "go tool pprof -list mix: $(tail -3 "$T/list")"
	for l in $(line_of mix); do
		grep -Eq "^ +[1-9][0-9]* +[0-9]+ +$l:" "$T/list" && hit=1
	done
	[ -n "${hit:-}" ] || fail "-list mix has no count on its marked lines ($(line_of mix)): $(cat "$T/list")"
fi
# --no-inline: the same samples, none in an inlined frame
report "$T/noinl" -i "$T/run.data" --folded --no-inline
grep -q '(inlined)' "$T/noinl" && fail "--no-inline still shows inlined frames"
[ "$(folded_sum <"$T/noinl")" -eq "$total" ] || fail "--no-inline changed the sample count"
[ "$(folded_sum ';run_steps$' <"$T/noinl")" -ge "$inl" ] ||
	fail "--no-inline: mix's samples are not run_steps' own"
report "$T/noinl.stdio" -i "$T/run.data" --stdio --no-inline
grep -q '(inlined)' "$T/noinl.stdio" && fail "--no-inline --stdio shows inlined frames"
# without inline levels a pc in inlined code is at its function's own line
# that called it (unit/test_srcline checks that on one pc): all of run_steps'
# samples, in its loop or in mix inlined there, are at the loop's line. The
# line table's line (mix's, when its samples outweighed the loop's) made this
# depend on the CPU's timing before.
got=$(row_line run_steps "$T/noinl.stdio")
note "--no-inline: run_steps at inline_demo.c:${got:-none} (its loop: $(line_of run_steps))"
[ "$got" = "$(line_of run_steps | tr -d ' ')" ] ||
	fail "--no-inline: run_steps is at inline_demo.c:${got:-none}, not its loop's line"
[ "$(row_line demo_loop "$T/noinl.stdio")" = "$(line_of demo_loop | tr -d ' ')" ] ||
	fail "--no-inline: demo_loop is not at its call of run_steps"

# --no-srcline: the frames stay, the lines go
report "$T/nosrc" -i "$T/run.data" --stdio --no-srcline
grep -q 'Source:Line\|inline_demo\.c:' "$T/nosrc" && fail "--no-srcline still shows source lines"
grep -q '\[\.\] mix (inlined)$' "$T/nosrc" || fail "--no-srcline lost the inlined frames"

echo "ok"

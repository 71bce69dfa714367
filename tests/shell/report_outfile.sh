#!/usr/bin/env bash
# The FILE argument of the outputs that write a file (--svg FILE, --pprof
# FILE, --speedscope FILE, --timeline FILE; output.h takes_file): FILE and -
# give the same bytes, a bad FILE is one line and exit 6 before the trace is
# read, a failed report leaves neither a partial file nor a temporary one
# and keeps an existing FILE as it was, links and directories are refused,
# devices (/dev/null, /dev/full) are written in place, the old `> FILE`
# habit gets a usage error that says what to do.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
tui_gen "$T/t.data" -n 500 --gpu
expect_rc() {	# want, command...
	local want=$1; shift
	"$@" >"$T/out" 2>"$T/err"; local rc=$?
	[ $rc -eq "$want" ] || { cat "$T/err"; fail "$* exited $rc, want $want"; }
}
leftovers() {	# dir: hidden temporary files left there
	find "$1" -maxdepth 1 -name '.*.??????' | grep -q . && fail "temporary file left in $1: $(ls -a "$1")"
	return 0
}

outs=(svg speedscope)
"$REPORT" --help | grep -q -- '--pprof FILE' && outs+=(pprof)
"$REPORT" --help | grep -q -- '--timeline FILE' && outs+=(timeline)
for o in "${outs[@]}"; do
	mkdir -p "$T/$o"
	expect_rc 0 "$REPORT" -i "$T/t.data" --"$o" "$T/$o/file"
	[ -s "$T/$o/file" ] || fail "--$o FILE: empty file"
	[ ! -s "$T/out" ] || fail "--$o FILE wrote to standard output too"
	expect_rc 0 "$REPORT" -i "$T/t.data" --"$o" -
	cmp -s "$T/out" "$T/$o/file" || fail "--$o -: not the bytes of --$o FILE"
	leftovers "$T/$o"
	# the mode an ordinary new file gets
	[ "$(umask 022; rm -f "$T/$o/m"; "$REPORT" -i "$T/t.data" --"$o" "$T/$o/m" 2>/dev/null &&
		stat -c %a "$T/$o/m")" = 644 ] || fail "--$o FILE: mode is not 0666 less the umask"

	# the old habit
	expect_rc 2 "$REPORT" -i "$T/t.data" --"$o"
	grep -q -- "--$o needs the FILE to write (- for standard output)" "$T/err" ||
		fail "--$o without FILE: $(cat "$T/err")"
	expect_rc 2 "$REPORT" -i "$T/t.data" --"$o" --cpu-only
	grep -q 'FILE looks like an option' "$T/err" || fail "--$o --cpu-only: $(cat "$T/err")"
	[ ! -e "$T/--cpu-only" ] && [ ! -e ./--cpu-only ] || fail "--$o --cpu-only wrote a file"

	# unwritable: one line, exit 6, the fix
	expect_rc 6 "$REPORT" -i "$T/t.data" --"$o" "$T/missing/dir/x"
	grep -q "cannot write $T/missing/dir/x: No such file or directory: choose a writable path" \
		"$T/err" || fail "--$o into a missing directory: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "--$o: more than one line: $(cat "$T/err")"
	expect_rc 6 "$REPORT" -i "$T/t.data" --"$o" "$T/$o"
	grep -q "it is a directory" "$T/err" || fail "--$o DIR: $(cat "$T/err")"
	echo keep >"$T/$o/target"
	ln -sf target "$T/$o/link"
	expect_rc 6 "$REPORT" -i "$T/t.data" --"$o" "$T/$o/link"
	grep -q "symbolic link" "$T/err" || fail "--$o LINK: $(cat "$T/err")"
	[ "$(cat "$T/$o/target")" = keep ] && [ -L "$T/$o/link" ] || fail "--$o wrote through a link"
	if [ "$(id -u)" -ne 0 ]; then	# root writes anywhere
		mkdir -p "$T/$o/ro" && chmod 555 "$T/$o/ro"
		expect_rc 6 "$REPORT" -i "$T/t.data" --"$o" "$T/$o/ro/x"
	fi
	# a bad FILE fails before the trace is read: a missing trace is reported
	# first only because opening it is the cheap part
	expect_rc 7 "$REPORT" -i "$T/none.data" --"$o" "$T/$o/y"
	[ ! -e "$T/$o/y" ] || fail "--$o: a file for a missing trace"
	leftovers "$T/$o"

	# a report that fails keeps the existing file and leaves no temporary one
	echo previous >"$T/$o/file"
	expect_rc 10 "$REPORT" -i "$T/t.data" --"$o" "$T/$o/file" --pid 99999
	[ "$(cat "$T/$o/file")" = previous ] || fail "--$o: a failed report changed FILE"
	leftovers "$T/$o"

	# devices are written in place
	expect_rc 0 "$REPORT" -i "$T/t.data" --"$o" /dev/null
	[ -c /dev/null ] || fail "--$o replaced /dev/null"
	if [ -c /dev/full ]; then
		expect_rc 6 "$REPORT" -i "$T/t.data" --"$o" /dev/full
		grep -q 'writing /dev/full failed: No space left on device' "$T/err" ||
			fail "--$o /dev/full: $(cat "$T/err")"
	fi
done
# the other outputs take no FILE
expect_rc 2 "$REPORT" -i "$T/t.data" --folded "$T/x"
grep -q "unexpected argument" "$T/err" || fail "--folded FILE: $(cat "$T/err")"
echo "ok: ${outs[*]}"

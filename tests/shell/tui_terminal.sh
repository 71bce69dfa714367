#!/usr/bin/env bash
# The TUI never leaves the terminal broken: killed by SIGTERM, SIGSEGV or
# Ctrl-C (SIGINT) it leaves curses mode first (endwin), so the shell gets
# back canonical mode with echo, the normal screen (not the alternate one)
# and a visible cursor, and it dies of the same signal. Also: without a
# terminal, --tui refuses with a one-line error (exit 2) and the default
# output is the text table.
. "$(dirname "$0")/golden/tui/lib.sh"
tui_need
tui_gen "$T/t.data" -n 2000

# A shell in the pane runs the TUI; after it ends, the shell prints its exit
# status and the terminal modes that curses changes.
check_restore() {	# how-to-kill (TERM | SEGV | INT), expected status
	local how=$1 want=$2 pid out i
	tmx kill-server 2>/dev/null
	NSTART=$((NSTART + 1))
	SOCK=xpu-tui-$$-$NSTART
	tmx new-session -d -x 80 -y 24 -s t -c "$T" "env PS1='$ ' TERM=screen bash --norc --noprofile"
	# runner: its INT trap keeps it alive when Ctrl-C kills the TUI
	cat >"$T/run.sh" <<-EOS
	trap 'echo runner-got-int' INT
	sh -c 'echo \$\$ > pid; exec env LANG=C.UTF-8 "$REPORT" -i t.data'
	echo "RC=\$?"
	echo "MODES: \$(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo|isig|icrnl)' | sort | tr '\\n' ' ')"
	EOS
	tui_keys "bash run.sh" Enter
	tui_wait "samples" || fail "$how: the TUI did not start: $(tui_screen)"
	[ "$(tmx display -p -t t '#{alternate_on}')" = 1 ] || fail "$how: TUI not on the alternate screen"
	pid=$(cat "$T/pid")
	case $how in
	INT) tui_keys C-c ;;
	*) kill -s "$how" "$pid" ;;
	esac
	tui_wait "MODES:" || fail "$how: the shell did not come back: $(tui_screen)"
	out=$(tui_screen)
	echo "$out" | grep -q "^RC=$want$" || fail "$how: exit status is not $want: $out"
	echo "$out" | grep -q "^MODES: echo icanon icrnl isig *$" ||
		fail "$how: terminal modes not restored: $(echo "$out" | grep MODES:)"
	[ "$(tmx display -p -t t '#{alternate_on}')" = 0 ] ||
		fail "$how: pane left on the alternate screen"
	[ "$(tmx display -p -t t '#{cursor_flag}')" = 1 ] || fail "$how: cursor left hidden"
	echo "ok $how: status $want, modes restored, normal screen, cursor visible"
}

check_restore TERM 143
check_restore SEGV 139
check_restore INT 130

# No terminal: the default is the text table; --tui refuses clearly.
"$REPORT" -i "$T/t.data" </dev/null >"$T/default.out" 2>"$T/default.err" ||
	fail "default output on a pipe failed: $(cat "$T/default.err")"
grep -q '^# Children' "$T/default.out" || grep -q 'Children' "$T/default.out" ||
	fail "default output on a pipe is not the --stdio table: $(head -3 "$T/default.out")"
"$REPORT" --tui -i "$T/t.data" </dev/null >"$T/tui.out" 2>"$T/tui.err"
rc=$?
[ $rc -eq 2 ] || fail "--tui without a terminal exited $rc, expected 2"
[ "$(wc -l <"$T/tui.err")" -eq 1 ] && grep -q "needs a terminal" "$T/tui.err" ||
	fail "--tui without a terminal: expected one line naming the problem: $(cat "$T/tui.err")"
"$REPORT" --tui --stdio -i "$T/t.data" </dev/null >/dev/null 2>"$T/both.err"
[ $? -eq 2 ] || fail "--tui --stdio should be a usage error"
echo "ok no-terminal paths"

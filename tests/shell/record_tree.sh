#!/usr/bin/env bash
# The launched command's whole process tree, not only the command: -d ends
# every process of it (SIGTERM, SIGKILL where ignored) before xpu-record
# returns, also children that were orphaned or started their own session;
# leftovers at the command's exit are named in a warning; --kill-on-exit ends
# what is left when xpu-record exits, even by SIGKILL; without it a killed
# recorder leaves the tree running (the documented default).
set -u
REC=$XPU_BIN/xpu-record CHECK=$XPU_BUILD/tests/record_check
[ "$(id -u)" -eq 0 ] || { echo "needs root for eBPF"; exit 2; }
command -v setsid >/dev/null || { echo "needs setsid (util-linux)"; exit 2; }
T=$(mktemp -d)
cleanup() { cat "$T"/*.pids 2>/dev/null | xargs -r kill -9 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }
alive() {	# PID: running (a zombie is not)
	local s
	s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ -n "$s" ] && [ "${s:0:1}" != Z ]
}
valid() {	# FILE FINISH-COUNT
	"$CHECK" "$1" >"$T/sum" || fail "record_check $1"
	[ "$(val chunks_bad "$T/sum")" -eq 0 ] || fail "$1: damaged chunks"
	[ "$(val FINISH "$T/sum")" -eq "$2" ] || fail "$1: FINISH count, want $2"
}
# The command: a shell writing its pid and those of three descendants that a
# SIGTERM to it alone leaves behind: a child, an orphaned grandchild (its
# parent exited), a child in its own session. Then it waits.
TREE='echo $$ >"$1"; sleep 300 & echo $! >>"$1"; (sleep 300 & echo $! >>"$1");
setsid sleep 300 & echo $! >>"$1"; wait'
started() {	# PIDS-FILE: until all four pids are written
	for _ in $(seq 100); do [ "$(wc -l 2>/dev/null <"$1")" = 4 ] && return; sleep 0.1; done
	fail "the command never started: $(cat "$T/err" 2>/dev/null)"
}
none_alive() {	# PIDS-FILE WHAT
	for p in $(cat "$1"); do alive "$p" && fail "$2: pid $p still runs ($(cat /proc/$p/comm))"; done
	return 0
}
all_alive() {	# PIDS-FILE WHAT
	for p in $(cat "$1"); do alive "$p" || fail "$2: pid $p is gone"; done
	return 0
}

# -d: the whole tree ends before xpu-record returns; exit 0; the trace is whole.
"$REC" -q -d 1 -o "$T/d.data" -- sh -c "$TREE" sh "$T/d.pids" 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 0 ] || fail "-d -> exit $rc"
started "$T/d.pids"
none_alive "$T/d.pids" "-d 1"
valid "$T/d.data" 1
echo "-d: $(wc -l <"$T/d.pids") processes ended"

# -d on a tree that ignores SIGTERM: SIGKILL follows, still exit 0.
"$REC" -q -d 1 -o "$T/i.data" -- sh -c "trap '' TERM; $TREE" sh "$T/i.pids" 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 0 ] || fail "-d, SIGTERM ignored -> exit $rc"
started "$T/i.pids"
none_alive "$T/i.pids" "-d 1, SIGTERM ignored"
valid "$T/i.data" 1

# The command exits and leaves children: without --kill-on-exit they run on
# and the warning names them; with it, they end before xpu-record returns.
"$REC" -q -o "$T/w.data" -- sh -c "$TREE" sh "$T/w.pids" 2>"$T/err" &
rec=$!
started "$T/w.pids"
kill -TERM "$(head -n1 "$T/w.pids")"	# the command alone, as if it ended
wait $rec
cat "$T/err"
grep -q "3 processes of the command still run" "$T/err" || fail "no warning about the leftovers"
tail -n3 "$T/w.pids" >"$T/left.pids"
all_alive "$T/left.pids" "leftovers without --kill-on-exit"
for p in $(cat "$T/left.pids"); do grep -qw "$p" "$T/err" || fail "the warning does not name $p"; done
valid "$T/w.data" 1
kill -9 $(cat "$T/w.pids") 2>/dev/null

"$REC" -q --kill-on-exit -o "$T/e.data" -- sh -c "$TREE" sh "$T/e.pids" 2>"$T/err" &
rec=$!
started "$T/e.pids"
kill -TERM "$(head -n1 "$T/e.pids")"
wait $rec
cat "$T/err"
none_alive "$T/e.pids" "--kill-on-exit, command exited"
valid "$T/e.data" 1

# SIGKILL of the recorder, default: the tree runs on, unrecorded.
"$REC" -q -o "$T/n.data" -- sh -c "$TREE" sh "$T/n.pids" 2>"$T/err" &
rec=$!
started "$T/n.pids"
kill -9 $rec
wait $rec 2>/dev/null
sleep 0.5	# a watchdog, if there were one, would be at work by now
all_alive "$T/n.pids" "SIGKILL of xpu-record without --kill-on-exit"
valid "$T/n.data" 0
kill -9 $(cat "$T/n.pids") 2>/dev/null

# SIGKILL of the recorder with --kill-on-exit: the whole tree ends soon after.
"$REC" -q --kill-on-exit -o "$T/k.data" -- sh -c "$TREE" sh "$T/k.pids" 2>"$T/err" &
rec=$!
started "$T/k.pids"
kill -9 $rec
wait $rec 2>/dev/null
for _ in $(seq 100); do
	left=0
	for p in $(cat "$T/k.pids"); do alive "$p" && left=1; done
	[ $left -eq 0 ] && break
	sleep 0.1
done
cat "$T/err"
none_alive "$T/k.pids" "10 s after SIGKILL of xpu-record --kill-on-exit"
grep -q "ending the 4 processes left of the command (--kill-on-exit)" "$T/err" ||
	fail "the watchdog did not say what it did"
valid "$T/k.data" 0
echo "tree ok"

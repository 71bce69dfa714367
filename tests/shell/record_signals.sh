#!/usr/bin/env bash
# Ending a recording any way leaves a readable trace: SIGINT to the
# recorder (forwarded to the command, exit 128+2), SIGKILL of the recorder
# (flushed every second, no FINISH), a command dying of SIGSEGV (exit 139),
# and -d (the command gets SIGTERM, exit 0).
set -u
REC=$XPU_BIN/xpu-record W=$XPU_BUILD/tests/workloads CHECK=$XPU_BUILD/tests/record_check
[ "$(id -u)" -eq 0 ] || { echo "needs root for eBPF"; exit 2; }
T=$(mktemp -d)
cleanup() { [ -s "$T/out" ] && kill -9 "$(awk '/^ready/{print $2}' "$T/out")" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }
wait_ready() {	# until the target printed "ready" (setup may be slow on a busy machine)
	for _ in $(seq 100); do grep -q '^ready' "$T/out" 2>/dev/null && return; sleep 0.1; done
	fail "target never started"
}
valid() {	# FILE: no damage, some samples
	"$CHECK" "$1" >"$T/sum" || fail "record_check $1"
	[ "$(val chunks_bad "$T/sum")" -eq 0 ] || fail "$1: damaged chunks"
	[ "$(val SAMPLE "$T/sum")" -gt 0 ] || fail "$1: no samples"
}

# SIGINT mid-run: forwarded, command dies of it, file finished. A
# non-interactive shell starts background jobs with SIGINT ignored, and the
# command inherits that as it would without xpu-record (record_launch.sh):
# start it with SIGINT at its default, as from a terminal.
start=$SECONDS
env --default-signal=INT "$REC" -o "$T/int.data" -- "$W/record_target" 20 >"$T/out" 2>"$T/err" &
rec=$!
wait_ready
sleep 1
kill -INT $rec
wait $rec
rc=$?
echo "SIGINT: exit $rc after $((SECONDS - start)) s: $(cat "$T/err")"
[ $rc -eq 130 ] || fail "SIGINT -> exit $rc, want 130"
[ $((SECONDS - start)) -lt 10 ] || fail "SIGINT did not stop the recording"
valid "$T/int.data"
[ "$(val FINISH "$T/sum")" -eq 1 ] || fail "SIGINT: no FINISH"
[ "$(val exit_status "$T/sum")" -eq 2 ] || fail "SIGINT: exit status record"

# SIGKILL of the recorder: what was flushed is readable.
"$REC" -o "$T/kill.data" -- "$W/record_target" 20 >"$T/out" 2>/dev/null &
rec=$!
wait_ready
sleep 2.5
kill -KILL $rec
wait $rec 2>/dev/null
valid "$T/kill.data"
echo "SIGKILL: $(val SAMPLE "$T/sum") samples readable"
[ "$(val FINISH "$T/sum")" -eq 0 ] || fail "SIGKILL: FINISH present"
kill -9 "$(awk '/^ready/{print $2}' "$T/out")" 2>/dev/null
: >"$T/out"

# Command crashes: exit 139, trace complete.
"$REC" -q -o "$T/segv.data" -- "$W/record_target" 0.5 crash >/dev/null 2>&1
rc=$?
[ $rc -eq 139 ] || fail "SIGSEGV -> exit $rc, want 139"
valid "$T/segv.data"
[ "$(val FINISH "$T/sum")" -eq 1 ] || fail "SIGSEGV: no FINISH"

# -d: stops after the duration, the command gets SIGTERM, exit 0.
start=$SECONDS
"$REC" -q -d 1 -o "$T/dur.data" -- "$W/record_target" 30 >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] || fail "-d -> exit $rc"
[ $((SECONDS - start)) -lt 8 ] || fail "-d 1 took $((SECONDS - start)) s"
valid "$T/dur.data"
[ "$(val FINISH "$T/sum")" -eq 1 ] || fail "-d: no FINISH"
echo "signals ok"

#!/usr/bin/env bash
# The GPU records socket is open to every uid (a command may change its
# own, record_gpu_uid.sh), so the recorder checks who connects: a process
# outside the recorded tree that has the socket's path (here read from the
# command's environment, as root or the command's user could) is closed
# before anything it sends is written, and counted in a warning; a process
# of the tree in the same recording is accepted.
. "$(dirname "$0")/lib/e2e.sh"

CHECK=$XPU_BUILD/tests/record_check
MARKER=$XPU_BUILD/tests/workloads/libmarker_test.so
[ -x "$CHECK" ] && [ -f "$MARKER" ] || skip "test pieces not built: make tests-build"
need_tools
need_bpf
command -v python3 >/dev/null || skip "no python3 for the socket clients"

# client.py KEY: one framed META record "cupti.KEY" = "1" over the socket,
# then waits (at most 3 s) for the recorder's ready byte or its close.
cat >"$T/client.py" <<'PY'
import os, select, socket, struct, sys
def rec(t, body):
    body += b"\0" * (-len(body) % 8)
    return struct.pack("<HHI", t, 0, 8 + len(body)) + body
meta = rec(1, b"cupti." + sys.argv[2].encode() + b"\0" + b"1\0")
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(struct.pack("<II", 0x314e4843, len(meta)) + meta)
    select.select([s], [], [], 3)
    print(sys.argv[2], "got", s.recv(1))
except OSError as e:
    print(sys.argv[2], "closed:", e)
s.close()
PY
# the command: writes the socket's path, waits for the outsider, then
# connects from inside the tree
cat >"$T/cmd.sh" <<'SH'
echo "$XPU_CUPTI_SOCKET" >"$1/path"
for i in $(seq 100); do [ -e "$1/outsider.done" ] && break; sleep 0.05; done
python3 "$1/client.py" "$XPU_CUPTI_SOCKET" insider
SH
rm -f "$T/path" "$T/outsider.done"
"$RECORD" --cupti-lib "$MARKER" -o "$T/p.data" -- bash "$T/cmd.sh" "$T" >"$T/cmd.out" 2>"$T/p.err" &
rec=$!
for i in $(seq 100); do [ -s "$T/path" ] && break; sleep 0.05; done
[ -s "$T/path" ] || { kill $rec; fail "the command did not start"; }
sock=$(cat "$T/path")
python3 "$T/client.py" "$sock" outsider >"$T/outsider.out" 2>&1
touch "$T/outsider.done"
wait $rec || { cat "$T/p.err" >&2; fail "xpu-record exited $?"; }
cat "$T/outsider.out" "$T/cmd.out" "$T/p.err"

"$CHECK" "$T/p.data" >"$T/sum"
grep -q '^meta.cupti.insider 1$' "$T/sum" || fail "the tree's client was not accepted"
grep -q 'cupti.outsider' "$T/sum" && fail "the outsider's record is in the trace"
grep -q "^outsider got b'R'" "$T/outsider.out" && fail "the outsider was told it may go on"
grep -q '^xpu-record: warning: 1 connections to the GPU records socket came from processes outside the recorded command and were refused' \
	"$T/p.err" || fail "no warning of the refused connection"
[ ! -e "$sock" ] && [ ! -e "$(dirname "$sock")" ] || fail "the socket or its directory was left"
echo "a peer outside the tree refused and counted, one inside accepted"

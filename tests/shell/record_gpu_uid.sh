#!/usr/bin/env bash
# A CUDA process that runs as another user than xpu-record (sudo xpu-record
# -- sudo -u USER python3 train.py, setpriv, su): its library must reach the
# GPU records socket (record/gpu/channel.c: an unguessable name in a 0711
# directory, the socket 0666, each peer checked against the recorded
# process tree), and its records must arrive. Before, the socket's 0700
# directory refused it: only the app's stderr said "Permission denied",
# xpu-record said "0 lost" and the GPU view was empty. With -p, a process
# of another user is reached the same way: its socket's directory stays
# root's (it was given to the process's uid, who could then remove the
# socket under every other client).
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
DRV=$XPU_BUILD/tests/workloads/fake_cuda/libcuda.so.1
CHECK=$XPU_BUILD/tests/record_check
[ -x "$APP" ] && [ -f "$LIB" ] && [ -f "$DRV" ] && [ -x "$CHECK" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $CHECK): make tests-build"
need_tools
need_bpf
command -v setpriv >/dev/null || skip "no setpriv (util-linux) to change the uid"
id nobody >/dev/null 2>&1 || skip "no user nobody"
group=$(id -gn nobody)
# nobody must reach the workload and the library
setpriv --reuid=nobody --regid="$group" --clear-groups test -x "$APP" -a -r "$LIB" ||
	skip "user nobody cannot read $APP or $LIB (a private home?)"
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }

"$RECORD" --cupti-lib "$LIB" -o "$T/u.data" -- \
	setpriv --reuid=nobody --regid="$group" --clear-groups "$APP" 20 0.1 2>"$T/u.err" ||
	{ cat "$T/u.err" >&2; fail "xpu-record exited $?"; }
cat "$T/u.err"
grep -q 'cannot connect' "$T/u.err" && fail "the library as nobody could not connect"
"$CHECK" "$T/u.data" >"$T/sum"
for k in GPU_KERNEL GPU_API GPU_CORR; do
	[ "$(val $k "$T/sum")" -eq 20 ] || fail "as nobody: $k $(val $k "$T/sum"), want 20"
done
[ "$(val lost.5 "$T/sum")" -eq 0 ] || fail "as nobody: channel losses"
grep -q '^meta.cupti.library libfake_cupti$' "$T/sum" || fail "as nobody: the library's META missing"
report "$T/h.txt" -i "$T/u.data" --header
grep -Eq '^#   kernels +20: by id 20 ' "$T/h.txt" || fail "as nobody: $(grep '#   kernels' "$T/h.txt")"

echo "a CUDA process as nobody sent its 20 kernels"

# -p on a CUDA process of nobody's (the fake libcuda.so.1: record_attach.sh)
STOP=$T/stop
rm -f "$STOP"
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 \
	setpriv --reuid=nobody --regid="$group" --clear-groups "$APP" 1 0.05 >"$T/app.out" 2>"$T/app.err" &
app=$!
trap 'touch "$STOP"; sleep 0.2; kill -9 $app 2>/dev/null' EXIT
sleep 0.3
kill -0 $app 2>/dev/null || { cat "$T/app.err" >&2; fail "fake_cuda_app as nobody did not start"; }
"$RECORD" -p $app -d 1.5 -o "$T/p.data" --cupti-lib "$LIB" 2>"$T/p.err" &
rec=$!
# the recorder's listening socket (/proc/net/unix by its fd's inode)
sock=
for i in $(seq 40); do
	sleep 0.05
	inodes=$(ls -l /proc/$rec/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
	sock=$(awk -v ino=" $inodes" '$8 ~ /xpu-record\./ && index(ino, " " $7 " ") { print $8 }' /proc/net/unix | sort -u | head -1)
	[ -n "$sock" ] && sleep 0.5 && break
done
[ -n "$sock" ] || fail "-p: no listening socket of the recorder found"
owner=$(stat -c %u "$(dirname "$sock")")
wait $rec || { cat "$T/p.err" >&2; fail "-p as nobody: xpu-record exited $?"; }
cat "$T/p.err"
[ "$owner" -eq 0 ] || fail "-p: the socket's directory was given to uid $owner"
report "$T/p.h" -i "$T/p.data" --header
grep -Eq '^#   kernels +[1-9][0-9]*: by id [0-9]+ \(100\.0%\)' "$T/p.h" ||
	fail "-p as nobody: $(grep '#   kernels' "$T/p.h")"
echo "-p on a process of nobody's: its kernels arrive, the socket stays root's"

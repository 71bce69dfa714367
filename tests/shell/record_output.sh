#!/usr/bin/env bash
# xpu-record's output file, run as root (Documentation/xpu-record.md, "Output
# file"): -o never writes through a symbolic link or into a device, never
# opens, truncates or chmods an existing file (it becomes FILE.old), a failed
# start leaves FILE and FILE.old as they were, a sudo user gets the trace,
# xpu-report says whose file it cannot read, and a full disk keeps every
# complete chunk readable with the loss counted under its own cause while the
# command runs on and its exit status is returned.
set -u
REC=$XPU_BIN/xpu-record REP=$XPU_BIN/xpu-report
W=$XPU_BUILD/tests/workloads CHECK=$XPU_BUILD/tests/record_check
[ "$(id -u)" -eq 0 ] || { echo "needs root for eBPF, mknod and mount"; exit 2; }
T=$(mktemp -d)
cleanup() { mountpoint -q "$T/full" 2>/dev/null && umount "$T/full"; rm -rf "$T"; }
trap cleanup EXIT
chmod 755 "$T"
fail() { echo "FAIL: $*"; exit 1; }
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }
mode() { stat -c %a "$1"; }
owner() { stat -c %u:%g "$1"; }
leftovers() { ls -A "$1" | grep -E '^\..*\.[A-Za-z0-9]{6}$'; }	# our hidden temp files

# refused CODE PATTERN -o PATH: exit CODE, one stderr line naming PATH.
refused() {
	local code=$1 pat=$2 path=$3 rc
	"$REC" -q -o "$path" -- true >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq "$code" ] || fail "-o $path -> exit $rc, want $code: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "-o $path -> not one line: $(cat "$T/err")"
	grep -qF -- "$path" "$T/err" || fail "-o $path: error does not name the path: $(cat "$T/err")"
	grep -q -- "$pat" "$T/err" || fail "-o $path: '$(cat "$T/err")' lacks '$pat'"
	echo "ok: exit $code: $(cat "$T/err")"
}

# A symbolic link (planted by another user, to a root-owned file): refused,
# neither the link nor its target changes.
D=$T/link && mkdir "$D"
echo "root's file" >"$D/target" && chmod 644 "$D/target"
ln -s "$D/target" "$D/x.data"
refused 6 "symbolic link" "$D/x.data"
[ "$(cat "$D/target")" = "root's file" ] || fail "symlink: target overwritten"
[ "$(mode "$D/target")" = 644 ] || fail "symlink: target mode now $(mode "$D/target")"
[ -L "$D/x.data" ] || fail "symlink: the link was replaced"
[ -e "$D/x.data.old" ] && fail "symlink: moved to .old"
[ -z "$(leftovers "$D")" ] || fail "symlink: temp file left: $(leftovers "$D")"

# A character device (a copy of /dev/null): refused, mode unchanged.
D=$T/dev && mkdir "$D"
mknod "$D/null" c 1 3 && chmod 666 "$D/null"
refused 6 "character device, not a regular file" "$D/null"
[ -c "$D/null" ] || fail "device: no longer a character device"
[ "$(mode "$D/null")" = 666 ] || fail "device: mode now $(mode "$D/null")"
[ -z "$(leftovers "$D")" ] || fail "device: temp file left"
refused 6 "directory, not a regular file" "$D"

# Another user's file: not opened; it becomes x.data.old as it was (owner,
# mode, content); x.data is a new root-owned 0600 file.
D=$T/other && mkdir "$D"
echo "nobody's data" >"$D/x.data" && chown 65534:65534 "$D/x.data" && chmod 644 "$D/x.data"
ino=$(stat -c %i "$D/x.data")
"$REC" -q -o "$D/x.data" -- true 2>"$T/err" || fail "other user's file: $(cat "$T/err")"
[ "$(cat "$D/x.data.old")" = "nobody's data" ] || fail "other user's file: content not kept in .old"
[ "$(owner "$D/x.data.old"):$(mode "$D/x.data.old")" = 65534:65534:644 ] ||
	fail "other user's file: .old is $(owner "$D/x.data.old") mode $(mode "$D/x.data.old")"
[ "$(stat -c %i "$D/x.data.old")" = "$ino" ] || fail "other user's file: .old is not the old inode"
[ "$(owner "$D/x.data"):$(mode "$D/x.data")" = 0:0:600 ] ||
	fail "new trace is $(owner "$D/x.data") mode $(mode "$D/x.data")"
"$CHECK" "$D/x.data" >/dev/null || fail "new trace unreadable"

# Recording again: the last trace becomes x.data.old (the one before is gone).
sum=$(md5sum <"$D/x.data")
"$REC" -q -o "$D/x.data" -- true 2>"$T/err" || fail "second recording: $(cat "$T/err")"
[ "$(md5sum <"$D/x.data.old")" = "$sum" ] || fail "x.data did not become x.data.old"
"$CHECK" "$D/x.data" >/dev/null || fail "second trace unreadable"
[ -z "$(leftovers "$D")" ] || fail "temp file left: $(leftovers "$D")"
echo "ok: an existing x.data becomes x.data.old"

# A failed start (BPF refused) leaves x.data and x.data.old as they were.
sum_old=$(md5sum <"$D/x.data.old") sum=$(md5sum <"$D/x.data")
"$W/deny_bpf" "$REC" -q -o "$D/x.data" -- true >/dev/null 2>&1 && fail "deny_bpf: recorded"
[ "$(md5sum <"$D/x.data")" = "$sum" ] && [ "$(md5sum <"$D/x.data.old")" = "$sum_old" ] ||
	fail "a failed start changed x.data or x.data.old"
[ -z "$(leftovers "$D")" ] || fail "failed start: temp file left: $(leftovers "$D")"
echo "ok: a failed start changes nothing"

# Under sudo the trace belongs to the user who ran sudo, still 0600.
D=$T/sudo && mkdir "$D"
SUDO_UID=65534 SUDO_GID=65534 "$REC" -q -o "$D/x.data" -- true 2>"$T/err" ||
	fail "sudo: $(cat "$T/err")"
[ "$(owner "$D/x.data"):$(mode "$D/x.data")" = 65534:65534:600 ] ||
	fail "sudo: trace is $(owner "$D/x.data") mode $(mode "$D/x.data"), want 65534:65534 600"
setpriv --reuid=65534 --regid=65534 --clear-groups "$REP" -i "$D/x.data" --header >/dev/null 2>"$T/err" ||
	fail "sudo: the user cannot read the trace: $(cat "$T/err")"
echo "ok: SUDO_UID/SUDO_GID own the trace"

# xpu-report on a root-owned 0600 trace: exit 3, whose file and what to do.
chmod 755 "$T/other"
setpriv --reuid=65534 --regid=65534 --clear-groups "$REP" -i "$T/other/x.data" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 3 ] || fail "report of root's trace -> exit $rc, want 3: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "report: not one line: $(cat "$T/err")"
grep -q "cannot read $T/other/x.data: owned by root, mode 0600: run xpu-report with sudo, or \`sudo chown .* $T/other/x.data\`" "$T/err" ||
	fail "report: unhelpful permission error: $(cat "$T/err")"
echo "ok: exit 3: $(cat "$T/err")"

# Disk full: a 64 KiB tmpfs. The command runs to its end and its exit status
# (7) is returned; one error line names the cause and the loss; no chunk is
# partial; the loss is in the trace as "output", not as a full ring buffer.
mkdir "$T/full"
mount -t tmpfs -o size=64k,mode=755 none "$T/full" || { echo "cannot mount a tmpfs"; exit 2; }
# Room for the first one-second chunk; once it is written, the rest of the
# tmpfs is filled, so the disk is full however few samples a loaded machine
# gives the workload (a fixed filler left room for all of them once).
"$REC" -F 999 -o "$T/full/x.data" -- "$W/record_target" 4 exit:7 >"$T/out" 2>"$T/err" &
rec=$!
for _ in $(seq 300); do
	[ "$(stat -c %s "$T/full/x.data" 2>/dev/null || echo 0)" -gt 64 ] && break
	sleep 0.01
done
head -c 1M /dev/zero >"$T/full/filler" 2>/dev/null
wait $rec
rc=$?
echo "disk full: exit $rc: $(cat "$T/err")"
[ $rc -eq 7 ] || fail "disk full: exit $rc, want the command's 7"
grep -q '^cpu ' "$T/out" || fail "disk full: the command did not run to its end"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "disk full: not one line"
grep -q "writing $T/full/x.data failed: No space left on device: [0-9]* samples and [0-9]* other records were not written (lost: output)" "$T/err" ||
	fail "disk full: wrong message"
grep -q "ring buffer" "$T/err" && fail "disk full: blamed on the ring buffer"
"$CHECK" "$T/full/x.data" >"$T/sum" || fail "disk full: record_check"
[ "$(val chunks_bad "$T/sum")" -eq 0 ] || fail "disk full: damaged chunks"
[ "$(val file_truncated "$T/sum")" -eq 0 ] || fail "disk full: partial chunk at the end"
[ "$(val SAMPLE "$T/sum")" -gt 0 ] || fail "disk full: no sample readable"
[ "$(val FINISH "$T/sum")" -eq 1 ] || fail "disk full: no FINISH"
[ "$(val lost.7 "$T/sum")" -gt 0 ] || fail "disk full: no lost count for the output"
[ "$(val lost.1 "$T/sum")" -eq 0 ] || fail "disk full: counted as ring buffer losses"
[ "$(val exit_status "$T/sum")" -eq $((7 << 8)) ] || fail "disk full: exit status record"
"$REP" -i "$T/full/x.data" --header >"$T/hdr" 2>"$T/rep.err" || fail "disk full: report exit $?: $(cat "$T/rep.err")"
grep -Eq '^#   output +[1-9]' "$T/hdr" || fail "disk full: report shows no output loss"
grep -q "truncated: *no" "$T/hdr" || fail "disk full: report says truncated"
echo "ok: disk full: $(val chunks_ok "$T/sum") chunks, $(val SAMPLE "$T/sum") samples readable, $(val lost.7 "$T/sum") records lost (output)"
echo "output ok"

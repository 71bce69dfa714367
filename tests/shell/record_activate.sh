#!/usr/bin/env bash
# xpu-record --activate /2s (Documentation/xpu-record.md "Bounded capture"):
# the recording starts at the next multiple of 2 s of the wall clock, so
# that every node of a job records the same seconds. cpu_demo runs from
# before it: no sample of the trace is older than the boundary (the first
# sample's wall-clock time, from the file header's realtime/monotonic pair,
# is at or after it, and within a second of it); --activate @UNIX_SECONDS
# names the same kind of instant; a passed or malformed instant is a usage
# error.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

# first_sample_wall FILE: wall-clock ns of the first SAMPLE
first_sample_wall() {
	local mono
	mono=$("$REPORT" -i "$1" --dump 2>/dev/null | awk '$1=="SAMPLE"{split($2,a,"="); print a[2]}' | sort -n | head -1)
	[ -n "$mono" ] || fail "$1: no samples"
	python3 -c "import struct,sys; rt,mo=struct.unpack_from('<QQ',open(sys.argv[1],'rb').read(64),24); print(rt+int(sys.argv[2])-mo)" "$1" "$mono"
}

check() {	# NAME: the trace $T/NAME.data, recorder stderr $T/NAME.err
	local b wall
	b=$(sed -nE 's/^xpu-record: --activate: recording from ([0-9]+)\.([0-9]{9}) .*/\1\2/p' "$T/$1.err")
	[ -n "$b" ] || { cat "$T/$1.err" >&2; fail "$1: no 'recording from' line"; }
	wall=$(first_sample_wall "$T/$1.data")
	note "$1: boundary $b, first sample $wall (+$(( (wall - b) / 1000000 )) ms)" >&2
	[ "$wall" -ge "$b" ] || fail "$1: a sample $(( (b - wall) / 1000000 )) ms before --activate's instant"
	[ $((wall - b)) -lt 1000000000 ] || fail "$1: the first sample is $(( (wall - b) / 1000000 )) ms after the instant"
	echo "$b"
}

record_demo per --activate /2s -- 3
b=$(check per | tail -1)
[ $((b % 2000000000)) -eq 0 ] || fail "/2s: $b is not a multiple of 2 s"
# the recording began before the boundary: there was something to leave out
rt=$(python3 -c "import struct; print(struct.unpack_from('<Q',open('$T/per.data','rb').read(64),24)[0])")
[ "$rt" -lt "$b" ] || fail "the trace began at $rt, after the boundary $b"

at=$(( $(date +%s) + 2 ))
record_demo at --activate "@$at" -- 3
b=$(check at | tail -1)
[ "$b" -eq $((at * 1000000000)) ] || fail "@$at: recording from $b"

"$RECORD" --activate @1000 -- true 2>"$T/err1"; rc=$?
[ $rc -eq $EXIT_USAGE ] && grep -q 'has passed' "$T/err1" || fail "a passed instant: exit $rc: $(cat "$T/err1")"
"$RECORD" --activate /x -- true 2>"$T/err2"; rc=$?
[ $rc -eq $EXIT_USAGE ] || fail "--activate /x: exit $rc: $(cat "$T/err2")"
note "ok: recording from the boundary on"

#!/usr/bin/env bash
# A recorded program that puts a FIFO (or a /dev/zero) where a file it
# mapped was must not hang xpu-record (issue 31): tests/workloads/fifo_swap
# maps a copy of the fake libtorch_cpu.so, which the recorder reads for its
# autograd probes through /proc/PID/root, and renames a FIFO over it; the
# recorder once blocked in open() of it in the side-band thread, and no
# SIGTERM, -d or end of the program ended the recording. Each run must end
# (under timeout: 124 or 137 is a hang) with the documented exit status and
# a complete trace (FINISH, --header):
#  - -d 1 (exit 0), the program's own exit (its status, 0), SIGTERM to the
#    recorder (forwarded: 128+15);
#  - a character device (1,5: /dev/zero) renamed over the file instead;
#  - a perf map of zeros (no line end), under and over the size cap: the
#    recorder's memory stays small;
#  - -p -d 1 on a program that bind-mounted the FIFO over the file in its
#    own mount namespace (its maps still name the file, so -p's scan of
#    them reads it).
. "$(dirname "$0")/lib/e2e.sh"
SWAP=$XPU_BUILD/tests/workloads/fifo_swap
TORCH=$XPU_BUILD/tests/workloads/fake_torch/libtorch_cpu.so
CHECK=$XPU_BUILD/tests/record_check
[ -x "$SWAP" ] && [ -f "$TORCH" ] && [ -x "$CHECK" ] ||
	skip "fifo_swap, the fake libtorch_cpu.so or record_check not built: make tests-build"
need_tools
need_bpf
HANG=120	# seconds: far past any normal end; only a hang reaches it

val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }

# check NAME RC WANT: the run's exit status and a complete trace
check() {
	local name=$1 rc=$2 want=$3
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] ||
		{ cat "$T/$name.err" >&2; fail "$name: xpu-record hung (killed by timeout after $HANG s)"; }
	[ "$rc" -eq "$want" ] || { cat "$T/$name.err" >&2; fail "$name: exit $rc, want $want"; }
	"$CHECK" "$T/$name.data" >"$T/$name.sum" || fail "$name: record_check failed"
	[ "$(val chunks_bad "$T/$name.sum")" -eq 0 ] || fail "$name: damaged chunks"
	[ "$(val FINISH "$T/$name.sum")" -eq 1 ] || fail "$name: no FINISH record"
	report "$T/$name.header" -i "$T/$name.data" --header
	report "$T/$name.dump" -i "$T/$name.data" --dump
	grep -q '^MMAP .*/libtorch_cpu\.so' "$T/$name.dump" || fail "$name: no MMAP of libtorch_cpu.so"
	note "$name: exit $rc, $(val SAMPLE "$T/$name.sum") samples"
}

# lib NAME: a fresh copy of the fake library, in a directory of its own
lib() {
	mkdir -p "$T/$1.dir"
	cp "$TORCH" "$T/$1.dir/libtorch_cpu.so"
	echo "$T/$1.dir/libtorch_cpu.so"
}

# -d: the program runs on; the recording ends after 1 s
timeout -s KILL $HANG "$RECORD" -d 1 -o "$T/dur.data" -- "$SWAP" "$(lib dur)" 60 \
	>"$T/dur.out" 2>"$T/dur.err"
check dur $? 0
grep -q '^swapped' "$T/dur.out" || fail "dur: the program did not swap the file"

# the program's own exit ends it
timeout -s KILL $HANG "$RECORD" -o "$T/exit.data" -- "$SWAP" "$(lib exit)" 1 \
	>"$T/exit.out" 2>"$T/exit.err"
check exit $? 0

# SIGTERM to the recorder: forwarded to the program, which dies of it
timeout -s KILL $HANG "$RECORD" -o "$T/term.data" -- "$SWAP" "$(lib term)" 60 \
	>"$T/term.out" 2>"$T/term.err" &
rec=$!
for _ in $(seq 100); do grep -q '^swapped' "$T/term.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^swapped' "$T/term.out" || fail "term: the program did not swap the file"
sleep 0.5	# the side band reads the mapping (every 20 ms)
kill -TERM $rec
wait $rec
check term $? 143

# a character device (/dev/zero's numbers) in its place
timeout -s KILL $HANG "$RECORD" -d 1 -o "$T/zero.data" -- "$SWAP" "$(lib zero)" 60 zero \
	>"$T/zero.out" 2>"$T/zero.err"
check zero $? 0

# a perf map of 512 MiB of zeros, one line with no end (its program's own,
# /tmp/perf-PID.map): read in 64 KiB pieces and skipped, not taken whole
# into memory; and one over the size cap (1 GiB) is not read at all
for size in $((512 << 20)) $(((1 << 30) + 1)); do
	timeout -s KILL $HANG "$RECORD" -v -o "$T/map.data" -- "$SWAP" "$TORCH" 1 "map:$size" \
		>"$T/map.out" 2>"$T/map.err"
	rc=$?
	mpid=$(awk '/^map/ { print $2 }' "$T/map.out")
	[ -n "$mpid" ] && rm -f "/tmp/perf-$mpid.map"
	check map $rc 0
	grep -q '^PERF_MAP' "$T/map.dump" && fail "map $size: PERF_MAP records from a map of zeros"
	rss=$(sed -nE 's/.*peak RSS ([0-9]+)\.[0-9] MB.*/\1/p' "$T/map.err")
	note "map of $size bytes: peak RSS $rss MB"
	[ -n "$rss" ] && [ "$rss" -lt 256 ] || fail "map $size: peak RSS ${rss:-?} MB: the map was read whole"
done

# -p: a FIFO bind-mounted over the mapped file in the program's own mount
# namespace; /proc/PID/maps still names the file
if unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private "$SWAP" "$(lib pid)" 60 bind >"$T/pid.out" 2>&1 &
	prog=$!
	trap 'kill $prog 2>/dev/null' EXIT
	for _ in $(seq 100); do grep -q '^swapped' "$T/pid.out" 2>/dev/null && break; sleep 0.1; done
	pid=$(awk '/^swapped/ { print $2 }' "$T/pid.out")
	[ -n "$pid" ] || fail "-p: the program did not swap the file: $(cat "$T/pid.out")"
	[ -p "/proc/$pid/root$T/pid.dir/libtorch_cpu.so" ] || fail "-p: no FIFO at the path in its namespace"
	grep -q "$T/pid.dir/libtorch_cpu.so\$" "/proc/$pid/maps" || fail "-p: its maps do not name the file"
	timeout -s KILL $HANG "$RECORD" -p "$pid" -d 1 -o "$T/pid.data" >"$T/pid.rec" 2>"$T/pid.err"
	check pid $? 0
	kill $prog 2>/dev/null
else
	note "-p case skipped: no mount namespaces (unshare -m)"
fi
exit 0

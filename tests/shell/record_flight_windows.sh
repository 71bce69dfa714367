#!/usr/bin/env bash
# Flight-recorder windows do not overlap (Documentation/xpu-record.md
# "Bounded capture"): one thread spins 4 s at 99 Hz under
# --flight-recorder=3 (under sh, which waits for it: an off-CPU block from
# the start to the end), with a SIGUSR2 at 1.2 s, one at 2.2 s and a storm
# of 8 from 2.8 s. Each window starts where the last one ended, so
#  - no (time, tid) sample is in two files, and the files' samples add up
#    to at most the run's (99 a second of their span);
#  - -i DIR gives that total too;
#  - each file's --header gives its own window as its duration (the end
#    window's is not stretched back to the start by sh's off-CPU block) and
#    the recording's span on a line of its own.
# Then a copy of a window in the folder (files that share chunks, as the
# overlapping windows of an older xpu-record did): -i DIR reads the shared
# chunks once, and --header counts what it skipped.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
[ -x "$APP" ] || skip "fake_cuda_app not built: make tests-build"
need_tools
need_bpf

D=$T/fr && mkdir -p "$D"
"$RECORD" -F 99 --no-gpu --flight-recorder=3 -o "$D/w.data" -- sh -c "'$APP' 0 4; true" \
	>"$T/rec.out" 2>"$T/rec.err" &
rec=$!
sleep 1.2; kill -USR2 $rec
sleep 1.0; kill -USR2 $rec
sleep 0.6
for i in 1 2 3 4 5 6 7 8; do kill -USR2 $rec; sleep 0.05; done
wait $rec || { cat "$T/rec.err" >&2; fail "xpu-record exited $?"; }
ls "$D" >"$T/files"
n=$(wc -l <"$T/files")
[ "$n" -ge 4 ] || { cat "$T/rec.err" >&2; fail "$n windows written, want 4 or more"; }

: >"$T/samples"
total=0
for f in $(cat "$T/files"); do
	"$REPORT" -i "$D/$f" --dump 2>/dev/null |
		awk '$1=="SAMPLE"{split($2,t,"="); split($4,d,"="); print t[2], d[2]}' >"$T/$f.samples"
	cat "$T/$f.samples" >>"$T/samples"
	report "$T/$f.folded" -i "$D/$f" --folded
	k=$(folded_sum <"$T/$f.folded")
	total=$((total + k))
	report "$T/$f.header" -i "$D/$f" --header
	dur=$(sed -nE 's/^#   duration +([0-9.]+) s   \(this file.s window\)$/\1/p' "$T/$f.header")
	recd=$(sed -nE 's/^#   recording +([0-9.]+) s .*/\1/p' "$T/$f.header")
	[ -n "$dur" ] && [ -n "$recd" ] ||
		{ grep duration -A1 "$T/$f.header" >&2; fail "$f: no window duration and recording lines"; }
	# the window holds its samples, and is at most the 3 s kept (not
	# stretched back to sh's off-CPU block, which began at the start)
	set -- $(sort -n "$T/$f.samples" | sed -n '1p;$p' | cut -d' ' -f1)
	span=$(awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	in_range "$dur" "$(awk -v s="$span" 'BEGIN { print s - 0.02 }')" 3.02 ||
		fail "$f: duration $dur s, its samples span $span s, 3 s kept"
	awk -v d="$dur" -v r="$recd" 'BEGIN { exit !(r + 0.001 >= d) }' ||
		fail "$f: the recording ($recd s) shorter than its window ($dur s)"
	note "$f: $k samples, window $dur s, recording $recd s"
done
dups=$(sort "$T/samples" | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "$dups samples (time, tid) are in two windows: $(sort "$T/samples" | uniq -d | head -3)"
set -- $(cut -d' ' -f1 "$T/samples" | sort -n | sed -n '1p;$p')
most=$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) / 1e9 * 99 + 3 }')
[ "$total" -le "$most" ] || fail "the windows hold $total samples, the run had at most $most"
[ "$total" -gt 0 ] || fail "the windows hold no sample"

report "$T/dir.folded" -i "$D" --folded
k=$(folded_sum <"$T/dir.folded")
[ "$k" -eq "$total" ] || fail "-i DIR: $k samples, the windows hold $total"
report "$T/dir.header" -i "$D" --header
grep -q '^#   read before: 0 chunks, 0 records' "$T/dir.header" ||
	fail "-i DIR skipped records of windows that do not overlap: $(grep 'read before' "$T/dir.header")"

# a copy of the SIGUSR2 window: one recording's files that share chunks
first=$(head -1 "$T/files")
cp "$D/$first" "$D/copy.data"
report "$T/copy.folded" -i "$D" --folded
k=$(folded_sum <"$T/copy.folded")
[ "$k" -eq "$total" ] || fail "-i DIR with a copy of $first: $k samples, want $total (read once)"
report "$T/copy.header" -i "$D" --header
grep -Eq '^#   read before: [1-9][0-9]* chunks, [1-9][0-9]* records' "$T/copy.header" ||
	fail "-i DIR with a copy: $(grep 'read before' "$T/copy.header")"
note "ok: $n windows, $total samples of at most $most, none twice; $(grep 'read before' "$T/copy.header")"

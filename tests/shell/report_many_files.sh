#!/usr/bin/env bash
# xpu-report -i DIR over the files of one long rotated recording: a
# gen_trace trace (CPU + GPU) split by tests/tools/recode --split into 1,100
# files of one recording (META recording_id, the state repeated at the start
# of each, its own FINISH), as xpu-record --switch-output=1s writes in 18
# minutes. -i DIR reads them as one recording (it refused more than 1,024
# inputs: "Argument list too long", exit 7), and gives what the trace alone
# gives (--folded, the recorder's counts). A file of the directory that is
# empty, cut inside its file header or no trace at all is left out with one
# warning naming it, counted in --header, and the others are reported (exit
# 8, as for a damaged file; it failed the whole directory, nothing printed);
# a file named with -i FILE is not left out. Distinct recordings are merged
# up to 1,024 (their pids are told apart by 10 bits): 1,025 is one line,
# exit 11.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
RECODE=$XPU_BUILD/tests/tools/recode
[ -x "$RECODE" ] || fail "$RECODE not built: run make tests-build"
# the 2,000 small files on tmpfs where there is one: recode fsyncs each
D=$T
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	D=$(mktemp -d /dev/shm/xpu-many-files.XXXXXX) || fail "mktemp"
	trap 'rm -rf "$D"' EXIT
fi

tui_gen "$T/one.data" -n 3000 --gpu
mkdir "$D/rot"
"$RECODE" --split 1100 "$T/one.data" "$D/rot/x.data" >"$T/split.out" || fail "recode --split failed"
[ "$(ls "$D/rot" | wc -l)" -eq 1100 ] || fail "recode --split wrote $(ls "$D/rot" | wc -l) files, want 1100"

"$REPORT" -i "$T/one.data" --folded 2>/dev/null | sort >"$T/one.folded"
"$REPORT" -i "$D/rot" --folded 2>"$T/rot.err" >"$T/rot.folded.raw"
rc=$?
[ $rc -eq 0 ] || fail "-i DIR of 1100 files: exit $rc: $(head -3 "$T/rot.err")"
sort "$T/rot.folded.raw" >"$T/rot.folded"
[ -s "$T/one.folded" ] || fail "the trace alone gives no --folded"
diff -u "$T/one.folded" "$T/rot.folded" >&2 || fail "-i DIR of 1100 files: not the trace's --folded (above)"
"$REPORT" -i "$D/rot" --header >"$T/rot.header" 2>&1 || fail "-i DIR --header failed: $(tail -2 "$T/rot.header")"
grep -q '^# inputs: 1100 files of one recording' "$T/rot.header" ||
	fail "-i DIR --header: $(grep '^# inputs' "$T/rot.header")"
want=$("$REPORT" -i "$T/one.data" --header 2>/dev/null | grep "^# recorder's final counts")
got=$(grep "^# recorder's final counts" "$T/rot.header")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "-i DIR: '$got', the trace: '$want'"
echo "ok: 1100 files of one recording read as the trace ($(awk '{s+=$NF} END {print s}' "$T/rot.folded") samples)"

# one empty file, one cut inside its header (the first one: its name sorts
# first), one that is no trace: left out, each named once
: >"$D/rot/x.data.0000000000000000"
head -c 40 "$D/rot/x.data.0000000000000001" >"$D/rot/x.data.9999999999999999"
echo "not a trace" >"$D/rot/notes.data"
"$REPORT" -i "$D/rot" --folded 2>"$T/bad.err" | sort >"$T/bad.folded"
rc=${PIPESTATUS[0]}
[ $rc -eq 8 ] || fail "-i DIR with bad files: exit $rc, want 8 (damaged input, the rest reported): $(head -3 "$T/bad.err")"
diff -u "$T/one.folded" "$T/bad.folded" >&2 || fail "-i DIR with bad files: not the good files' --folded (above)"
for f in x.data.0000000000000000 x.data.9999999999999999 notes.data; do
	[ "$(grep -c "$D/rot/$f is .*: left out" "$T/bad.err")" -eq 1 ] ||
		fail "$f: not one warning naming it: $(cat "$T/bad.err")"
done
grep -q "x.data.0000000000000000 is empty or cut inside its file header" "$T/bad.err" || fail "the empty file's reason: $(cat "$T/bad.err")"
grep -q "notes.data is not an xpu.data trace" "$T/bad.err" || fail "notes.data's reason: $(cat "$T/bad.err")"
"$REPORT" -i "$D/rot" --header >"$T/bad.header" 2>/dev/null
grep -q '^# inputs: 1100 files of one recording' "$T/bad.header" || fail "--header with bad files: $(grep '^# inputs' "$T/bad.header")"
grep -q '^#   3 files left out:$' "$T/bad.header" || fail "--header does not count the 3 files left out: $(sed -n '/^# inputs/,$p' "$T/bad.header" | tail -5)"
grep -q "^#     $D/rot/x.data.9999999999999999: empty or cut inside its file header$" "$T/bad.header" ||
	fail "--header does not name the truncated file"
# named alone, a bad file is still an error
"$REPORT" -i "$D/rot/x.data.0000000000000000" --folded >/dev/null 2>"$T/one.err"
rc=$?
[ $rc -eq 8 ] && grep -q "truncated inside its file header" "$T/one.err" || fail "-i EMPTYFILE: exit $rc: $(cat "$T/one.err")"
echo "ok: 3 bad files left out, each named once, counted in --header"

# distinct recordings (gen_trace's carry no recording_id: each file is its
# own): 1024 merge, 1025 do not
tui_gen "$D/small.data" -n 50
mkdir "$D/nodes"
for i in $(seq -w 1 1024); do ln "$D/small.data" "$D/nodes/n$i.data" || fail "ln"; done
"$REPORT" -i "$D/nodes" --header >"$T/nodes.header" 2>"$T/nodes.err" ||
	fail "-i DIR of 1024 recordings: exit $?: $(head -3 "$T/nodes.err")"
grep -q '^# inputs: 1024 recordings merged' "$T/nodes.header" || fail "1024 recordings: $(grep '^# inputs' "$T/nodes.header")"
cp "$D/small.data" "$D/nodes/n1025.data"
"$REPORT" -i "$D/nodes" --folded >/dev/null 2>"$T/nodes.err"
rc=$?
[ $rc -eq 11 ] && [ "$(wc -l <"$T/nodes.err")" -eq 1 ] &&
	grep -q "n1025.data: more than 1024 recordings to merge" "$T/nodes.err" ||
	fail "1025 recordings: exit $rc: $(cat "$T/nodes.err")"
echo "ok: 1024 recordings merged, 1025: $(cat "$T/nodes.err")"
exit 0

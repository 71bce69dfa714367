#!/usr/bin/env bash
# Bounded capture under sudo, beside other recordings' files
# (Documentation/xpu-record.md "Bounded capture"):
#  - the files of --switch-output and of --flight-recorder are given to the
#    sudo user (SUDO_UID/SUDO_GID; here 65534, as xpu-record runs as root
#    under sudo), mode 0600, as the plain -o file is;
#  - rotation renames and removes (--switch-max-files) only files this
#    recording created: another recording's trace at the -o path, and one
#    named like a rotated file of ours, are still there, unchanged, after a
#    run that wrote 5 files and kept 2 (the -o path's was renamed into the
#    series, and would have been removed); the current file is then written
#    under a name of its own, said once.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
MAKE_TRACE=$XPU_BUILD/tests/make_trace
[ -x "$MAKE_TRACE" ] || fail "$MAKE_TRACE not built: run make tests-build"

owner() { stat -c '%u:%g %a' "$1"; }

D=$T/rot && mkdir -p "$D"
"$MAKE_TRACE" -o "$D/x.data" /other/recording >/dev/null || fail "make_trace"
cp "$D/x.data" "$D/x.data.0000000000000001"
sum=$(md5sum <"$D/x.data")
SUDO_UID=65534 SUDO_GID=65534 "$RECORD" --switch-output=0.3s --switch-max-files=2 -o "$D/x.data" \
	-- "$CPU_DEMO" 1.6 >"$T/rec.out" 2>"$T/rec.err" || { cat "$T/rec.err" >&2; fail "xpu-record exited $?"; }
cat "$T/rec.err"
[ "$(md5sum <"$D/x.data" 2>/dev/null)" = "$sum" ] ||
	fail "the other recording's $D/x.data was renamed or changed: $(ls -l "$D")"
[ "$(md5sum <"$D/x.data.0000000000000001")" = "$sum" ] ||
	fail "the other recording's x.data.0000000000000001 was removed or changed: $(ls -l "$D")"
grep -Eq '^xpu-record: [0-9]+ files written \(2 kept by --switch-max-files\)' "$T/rec.err" ||
	fail "not 2 files kept: $(cat "$T/rec.err")"
[ "$(grep -c "x.data is not this recording's" "$T/rec.err")" -eq 1 ] ||
	fail "not one line about the file at the -o path: $(cat "$T/rec.err")"
ls -A "$D" | grep -Ev '^x\.data(\.0000000000000001)?$' >"$T/ours"
[ "$(wc -l <"$T/ours")" -eq 2 ] || fail "$D holds $(ls -A "$D" | tr '\n' ' '), want x.data, x.data.0000000000000001 and 2 of ours"
for f in $(cat "$T/ours"); do
	[[ "$f" =~ ^x\.data\.[0-9]{16}$ ]] || fail "$f: not a FILE.<timestamp> name"
	[ "$(owner "$D/$f")" = "65534:65534 600" ] || fail "$f: $(owner "$D/$f"), want the sudo user's 65534:65534 600"
	"$REPORT" -i "$D/$f" --header >"$T/$f.header" 2>&1 || fail "$f: --header failed"
	grep -q 'finished cleanly: yes' "$T/$f.header" || fail "$f: no FINISH"
done
note "ok: switch-output: $(cat "$T/ours" | tr '\n' ' ')owned by 65534, the other recording's 2 files untouched"

# two recorders with one -o at once: each renames and removes only its own
# files (one of them writes its current file under a name of its own)
C=$T/two && mkdir -p "$C"
for i in 1 2; do
	"$RECORD" --switch-output=0.3s --switch-max-files=2 -o "$C/z.data" -- "$CPU_DEMO" 1.6 \
		>"$T/two$i.out" 2>"$T/two$i.err" &
done
wait %1 || fail "the first of two recorders exited $?: $(cat "$T/two1.err")"
wait %2 || fail "the second of two recorders exited $?: $(cat "$T/two2.err")"
for i in 1 2; do
	grep -Eq '^xpu-record: [0-9]+ files written \(2 kept by --switch-max-files\)' "$T/two$i.err" ||
		fail "recorder $i: $(cat "$T/two$i.err")"
done
[ "$(ls -A "$C" | wc -l)" -eq 4 ] || fail "two recorders, 2 kept each: $C holds $(ls -A "$C" | tr '\n' ' ')"
for f in "$C"/*; do
	"$REPORT" -i "$f" --dump 2>/dev/null | sed -nE 's/.*recording_id[^0-9]*([0-9]+-[0-9]+).*/\1/p' | head -1
done | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ' >"$T/two.ids"
[ "$(cat "$T/two.ids")" = "2 2 " ] || fail "two recorders: files per recording_id: $(cat "$T/two.ids")"
note "ok: two recorders with one -o: 2 files of each kept"

# a free -o path: the current file is written there (perf's way), then renamed
E=$T/free && mkdir -p "$E"
SUDO_UID=65534 SUDO_GID=65534 "$RECORD" --switch-output=0.3s -o "$E/y.data" -- "$CPU_DEMO" 0.8 \
	>"$T/free.out" 2>"$T/free.err" || { cat "$T/free.err" >&2; fail "xpu-record exited $?"; }
grep -q "is not this recording's" "$T/free.err" && fail "a free -o path: $(cat "$T/free.err")"
[ -e "$E/y.data" ] && fail "the last file was not renamed from $E/y.data"
for f in "$E"/*; do
	[ "$(owner "$f")" = "65534:65534 600" ] || fail "$f: $(owner "$f"), want 65534:65534 600"
done

F=$T/fr && mkdir -p "$F"
SUDO_UID=65534 SUDO_GID=65534 "$RECORD" --flight-recorder=1 -o "$F/f.data" -- "$CPU_DEMO" 1 \
	>"$T/fr.out" 2>"$T/fr.err" || { cat "$T/fr.err" >&2; fail "xpu-record --flight-recorder exited $?"; }
ls -A "$F" >"$T/fr.files"
[ "$(wc -l <"$T/fr.files")" -eq 1 ] || fail "$F holds $(cat "$T/fr.files"), want 1 window"
f=$F/$(cat "$T/fr.files")
[ "$(owner "$f")" = "65534:65534 600" ] || fail "$f: $(owner "$f"), want 65534:65534 600"
"$REPORT" -i "$f" --header 2>&1 | grep -q 'finished cleanly: yes' || fail "$f: no FINISH"
note "ok: flight-recorder window owned by 65534"
exit 0

#!/usr/bin/env bash
# Reports on another machine, through xpu-archive: record a copy of cpu_demo,
# archive, delete the binary, report: the folded output must be identical to
# the one made while the binary was there, with the files read from the
# archive (also libc's). Then: no archive (frames unsymbolized, the warning
# says why), a damaged, a truncated and a foreign archive (warnings, no
# crash), -o, and xpu-archive's own errors.
. "$(dirname "$0")/lib/e2e.sh"
ARCHIVE=$XPU_BIN/xpu-archive
need_tools
need_bpf
[ -x "$ARCHIVE" ] || fail "$ARCHIVE not built: run make"
unset DEBUGINFOD_URLS
export TMPDIR=$T/tmp XDG_CACHE_HOME=$T/empty-cache
mkdir -p "$T/bin" "$TMPDIR"
cp "$CPU_DEMO" "$T/bin/cpu_demo"

"$RECORD" -o "$T/run.data" -F 499 -- "$T/bin/cpu_demo" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/before" -i "$T/run.data" --folded -v
grep -q 'burn_a' "$T/before" || fail "the local report has no burn_a: nothing to compare"

"$ARCHIVE" -i "$T/run.data" 2>"$T/archive.err" || { cat "$T/archive.err" >&2; fail "xpu-archive failed"; }
cat "$T/archive.err"
grep -Eq '^xpu-archive: [0-9]+ files, .* written to .*/run.data.archive$' "$T/archive.err" ||
	fail "xpu-archive: no summary line"
[ -s "$T/run.data.archive" ] || fail "no run.data.archive"
[ "$(stat -c %a "$T/run.data.archive")" = 600 ] || fail "archive mode is not 0600"
[ -z "$(find "$T" -maxdepth 1 -name '.run.data.archive.*')" ] || fail "temporary file left behind"
# -o writes elsewhere: same content (the format has no timestamps)
"$ARCHIVE" -q -i "$T/run.data" -o "$T/x.archive" 2>"$T/o1.err" || fail "xpu-archive -o: exit $?"
[ ! -s "$T/o1.err" ] || fail "xpu-archive -q printed: $(cat "$T/o1.err")"
cmp -s "$T/x.archive" "$T/run.data.archive" || fail "-o wrote a different archive"

# Another machine: the binary gone and, in a private mount namespace, an
# empty /usr/lib/debug (libc's symbols here come from its debug file, which
# the archive must then carry too).
rm "$T/bin/cpu_demo"
if [ -d /usr/lib/debug ] && unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$@"' sh \
		"$REPORT" -i "$T/run.data" --folded -v >"$T/after" 2>"$T/after.err" ||
		{ cat "$T/after.err" >&2; fail "xpu-report with /usr/lib/debug hidden failed"; }
	if grep -q 'libc.so.6: symbols from /usr/lib/debug' "$T/before.err"; then
		grep -q 'libc.so.6: symbols from .*/[0-9]*-.*\.debug' "$T/after.err" ||
			fail "libc's debug file was not read from the archive"
	fi
else
	note "no unshare -m or no /usr/lib/debug: /usr/lib/debug stays visible"
	report "$T/after" -i "$T/run.data" --folded -v
fi
diff -u "$T/before" "$T/after" >&2 || fail "the report from the archive differs from the local one"
grep -q 'bin/cpu_demo: using .*(archive)' "$T/after.err" || fail "cpu_demo was not read from the archive"
grep -q 'libc.so.6: using .*(archive)' "$T/after.err" || fail "libc was not read from the archive"
[ -z "$(ls -A "$TMPDIR")" ] || fail "extracted files left in $TMPDIR: $(ls "$TMPDIR")"
note "identical folded output from the archive ($(wc -l <"$T/after") lines)"

# Without the archive: the frames stay unsymbolized and the report says why.
mv "$T/run.data.archive" "$T/saved.archive"
report "$T/none" -i "$T/run.data" --folded
grep -q 'burn_a' "$T/none" && fail "symbols without the binary or the archive?"
grep -Eq 'stayed unsymbolized: .*file not found.*cpu_demo' "$T/none.err" ||
	{ cat "$T/none.err" >&2; fail "no warning naming the missing file"; }

# Archiving where the binary is gone: it is named. Unwinding stops at it, so
# only stacks with a libc leaf still reach libc: exit 0 with "1 skipped" when
# some did, else 5 (nothing the trace uses is here).
mkdir -p "$T/other"
cp "$T/run.data" "$T/other/copy.data"
"$ARCHIVE" -i "$T/other/copy.data" 2>"$T/o.err"; rc=$?
case $rc in
0) grep -q ', 1 skipped, written to' "$T/o.err" || fail "xpu-archive: the summary does not count the missing file"
   rm "$T/other/copy.data.archive" ;;
5) ;;
*) cat "$T/o.err" >&2; fail "archiving with the binary gone: exit $rc" ;;
esac
grep -Eq 'files were not archived .*file not found: 1 \(cpu_demo\).* Run xpu-archive where the trace was recorded' \
	"$T/o.err" || { cat "$T/o.err" >&2; fail "xpu-archive does not name the missing file"; }
[ $rc -eq 0 ] || grep -q 'run xpu-archive on the machine where' "$T/o.err" ||
	fail "no hint to archive on the recording machine"
[ ! -e "$T/other/copy.data.archive" ] && [ -z "$(find "$T/other" -name '.copy.data.archive.*')" ] ||
	fail "a failed xpu-archive left a file"

# A damaged entry: one flipped byte in the first entry's data.
cp "$T/saved.archive" "$T/run.data.archive"
printf '\xff' | dd of="$T/run.data.archive" bs=1 seek=400 conv=notrunc status=none
"$REPORT" -i "$T/run.data" --folded >"$T/damaged" 2>"$T/damaged.err"
rc=$?
[ $rc -eq 0 ] || fail "damaged archive: exit $rc"
grep -q 'is damaged (checksum or size mismatch): not used' "$T/damaged.err" ||
	{ cat "$T/damaged.err" >&2; fail "damaged archive: no warning"; }
grep -Eiq 'sanitizer|segmentation|BUG:' "$T/damaged.err" && fail "damaged archive: crash text"

# Truncated: the entries before the cut are used, the cut is reported.
head -c $(($(stat -c %s "$T/saved.archive") - 1000)) "$T/saved.archive" >"$T/run.data.archive"
"$REPORT" -i "$T/run.data" --folded >"$T/trunc" 2>"$T/trunc.err" || fail "truncated archive: exit $?"
grep -q 'archive is damaged: truncated' "$T/trunc.err" || { cat "$T/trunc.err" >&2; fail "truncated archive: no warning"; }
[ -s "$T/trunc" ] || fail "truncated archive: no report"

# Not an archive at all.
head -c 5000 /dev/urandom >"$T/run.data.archive"
"$REPORT" -i "$T/run.data" --folded >"$T/foreign" 2>"$T/foreign.err" || fail "foreign archive: exit $?"
grep -q 'is not an xpu-archive file' "$T/foreign.err" || fail "foreign archive: no warning"
rm "$T/run.data.archive"

# xpu-archive's errors: one line, distinct exit codes.
"$ARCHIVE" -i "$T/no-such.data" 2>"$T/e1.err"; rc=$?
[ $rc -eq $EXIT_INPUT ] || fail "missing trace: exit $rc, expected $EXIT_INPUT"
[ "$(wc -l <"$T/e1.err")" -eq 1 ] || fail "missing trace: more than one line"
"$ARCHIVE" --bogus 2>/dev/null; rc=$?
[ $rc -eq $EXIT_USAGE ] || fail "bad option: exit $rc, expected $EXIT_USAGE"
"$ARCHIVE" -i "$T/run.data" -l 99 2>/dev/null; rc=$?
[ $rc -eq $EXIT_USAGE ] || fail "bad level: exit $rc, expected $EXIT_USAGE"
exit 0

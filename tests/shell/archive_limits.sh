#!/usr/bin/env bash
# TRACE.archive entries that state more than they should (decompression
# bombs, tests/tools/craft_archive.py): xpu-report refuses them in one line
# before writing a byte, and leaves nothing in its TMPDIR (a private one
# here, checked empty after each report); an entry whose data runs past its
# stated size is damaged. The limits (Documentation/xpu-report.md,
# ENVIRONMENT): XPU_ARCHIVE_MAX_RATIO times the archive's size,
# XPU_ARCHIVE_MAX_SIZE, and the extraction directory's free space less a
# margin. Then a report killed by SIGPIPE while it holds extracted files
# removes them too. No root: the trace is tests/shell/make_trace.c's.
. "$(dirname "$0")/lib/e2e.sh"
ARCHIVE=$XPU_BIN/xpu-archive
MAKE_TRACE=$XPU_BUILD/tests/make_trace
CRAFT=$XPU_TOP/tests/tools/craft_archive.py
for f in "$REPORT" "$ARCHIVE"; do [ -x "$f" ] || fail "$f not built: run make"; done
[ -x "$MAKE_TRACE" ] && [ -x "$CPU_DEMO" ] || fail "test helpers not built: run make tests-build"
command -v python3 >/dev/null || skip "python3 not found (crafts the archives)"
command -v timeout >/dev/null || skip "timeout (coreutils) not found"
unset DEBUGINFOD_URLS XPU_ARCHIVE_MAX_RATIO XPU_ARCHIVE_MAX_SIZE
export XDG_CACHE_HOME=$T/empty-cache TMPDIR=$T/tmp
mkdir -p "$T/bin" "$TMPDIR"

# report NAME ARGS...: xpu-report on t.data within 60 s, exit 0; then TMPDIR is empty
report_ok() {
	local name=$1 rc; shift
	timeout 60 "$REPORT" -i "$T/t.data" --folded "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -ne 124 ] || fail "$name: xpu-report still running after 60 s"
	[ $rc -eq 0 ] || { cat "$T/$name.err" >&2; fail "$name: exit $rc"; }
	[ -z "$(ls -A "$TMPDIR")" ] || fail "$name: left in TMPDIR: $(ls -AR "$TMPDIR" | head -5)"
}

# A trace of app (a copy of cpu_demo) and its archive; then app is gone, so
# the report takes it from the archive.
cp "$CPU_DEMO" "$T/bin/app"
"$MAKE_TRACE" -o "$T/t.data" "$T/bin/app=$T/bin/app" || fail "make_trace"
"$ARCHIVE" -q -i "$T/t.data" || fail "xpu-archive: exit $?"
mv "$T/t.data.archive" "$T/good.archive"
rm "$T/bin/app"
cp "$T/good.archive" "$T/t.data.archive"
report_ok good -v
grep -q '^hostile;main 10$' "$T/good.out" && grep -q 'app: using .*(archive)' "$T/good.err" ||
	{ cat "$T/good.err" >&2; fail "the good archive is not used"; }

# 1. A bomb: 2 KB that state and hold 64 MiB (right CRCs), past 1000 times
# the archive's size: refused, one line, nothing written.
python3 "$CRAFT" --from "$T/good.archive" -o "$T/t.data.archive" --stated $((64 << 20)) \
	--stream $((64 << 20)) || fail "craft_archive.py failed"
note "bomb: $(stat -c %s "$T/t.data.archive") bytes stating 64 MiB"
report_ok bomb
grep -q "t.data.archive: the copy of $T/bin/app states 67.1 MB uncompressed, past the limit of .* (1000 times the archive's size, at most 17.2 GB): not extracted; raise XPU_ARCHIVE_MAX_RATIO or XPU_ARCHIVE_MAX_SIZE" \
	"$T/bomb.err" || { cat "$T/bomb.err" >&2; fail "bomb: no line naming the limit"; }
[ "$(grep -c 'the copy of' "$T/bomb.err")" -eq 1 ] || fail "bomb: more than one line about it"
grep -q '^hostile;main 10$' "$T/bomb.out" && fail "bomb: symbols from the bomb?"

# The issue's case: 98 KB stating 3 GiB: refused at once.
python3 "$CRAFT" --from "$T/good.archive" -o "$T/t.data.archive" --stated $((3 << 30)) \
	--stream $((3 << 30)) || fail "craft_archive.py failed"
report_ok bomb3g
grep -q 'states 3.2 GB uncompressed, past the limit' "$T/bomb3g.err" || fail "3 GiB bomb: not refused"

# The limits are overridable: a ratio of 100000 lets the 64 MiB one through
# (its zeros are no ELF file), XPU_ARCHIVE_MAX_SIZE=1M stops it again.
python3 "$CRAFT" --from "$T/good.archive" -o "$T/t.data.archive" --stated $((64 << 20)) \
	--stream $((64 << 20)) || fail "craft_archive.py failed"
XPU_ARCHIVE_MAX_RATIO=100000 report_ok ratio
grep -q 'past the limit' "$T/ratio.err" && fail "XPU_ARCHIVE_MAX_RATIO=100000: still refused"
XPU_ARCHIVE_MAX_RATIO=100000 XPU_ARCHIVE_MAX_SIZE=1M report_ok maxsize
grep -q 'past the limit of 1.0 MB (100000 times the archive.s size, at most 1.0 MB)' "$T/maxsize.err" ||
	{ cat "$T/maxsize.err" >&2; fail "XPU_ARCHIVE_MAX_SIZE=1M: not refused"; }

# 2. Data running past the stated size: 1 MiB stated, 64 MiB in the stream:
# damaged, and nothing is kept.
python3 "$CRAFT" --from "$T/good.archive" -o "$T/t.data.archive" --stated $((1 << 20)) \
	--stream $((64 << 20)) || fail "craft_archive.py failed"
report_ok longer
grep -q "the copy of $T/bin/app is damaged (checksum or size mismatch): not used" "$T/longer.err" ||
	{ cat "$T/longer.err" >&2; fail "a stream longer than stated is not damaged"; }

# 3. No room: a stated size within the limits (raised) but past the free
# space of TMPDIR: refused before extraction.
python3 "$CRAFT" --from "$T/good.archive" -o "$T/t.data.archive" --stated $((1 << 60)) \
	--stream 4096 || fail "craft_archive.py failed"
XPU_ARCHIVE_MAX_RATIO=$((1 << 62)) XPU_ARCHIVE_MAX_SIZE=$((1 << 62)) report_ok nospace
grep -q "the copy of $T/bin/app needs 1152921504.6 GB and $TMPDIR/xpu-report\.[A-Za-z0-9]* has .* free (67.1 MB kept free): not extracted; set TMPDIR" \
	"$T/nospace.err" || { cat "$T/nospace.err" >&2; fail "no room: not refused"; }

# 4. Killed by SIGPIPE (`xpu-report | head`) after extracting: the files go too.
cp "$T/good.archive" "$T/t.data.archive"
python3 - "$REPORT" "$T/t.data" >"$T/pipe.rc" <<'EOF' || fail "python3 failed"
import os, subprocess, sys
r, w = os.pipe()
os.close(r)     # the reader is gone before the first write
p = subprocess.run([sys.argv[1], "-i", sys.argv[2], "--folded"], stdout=w,
                   stderr=subprocess.DEVNULL, timeout=60)
print(p.returncode)
EOF
note "report into a closed pipe: exit $(cat "$T/pipe.rc")"
[ "$(cat "$T/pipe.rc")" = -13 ] || note "(not killed by SIGPIPE: the check below proves less)"
[ -z "$(ls -A "$TMPDIR")" ] || fail "killed by SIGPIPE: left in TMPDIR: $(ls -AR "$TMPDIR" | head -5)"
exit 0

#!/usr/bin/env bash
# xpu-archive writes TRACE.archive through a temporary file nobody can name
# in advance: what someone left at the name it once used, TRACE.archive.tmp,
# neither blocks it nor is written through, truncated or renamed:
#  - a symbolic link there to a file of someone else's (once exit 6, "cannot
#    write ...tmp: Too many levels of symbolic links": any user who can write
#    beside the trace stopped every archive of it);
#  - a regular file there (once truncated, filled and renamed over OUT);
# and a finished or failed run leaves no temporary file beside OUT.
# No root: the trace is tests/shell/make_trace.c's.
. "$(dirname "$0")/lib/e2e.sh"
ARCHIVE=$XPU_BIN/xpu-archive
MAKE_TRACE=$XPU_BUILD/tests/make_trace
[ -x "$ARCHIVE" ] || fail "$ARCHIVE not built: run make"
[ -x "$MAKE_TRACE" ] && [ -x "$CPU_DEMO" ] || fail "test helpers not built: run make tests-build"
unset DEBUGINFOD_URLS
mkdir -p "$T/bin" "$T/out"
cp "$CPU_DEMO" "$T/bin/app"
"$MAKE_TRACE" -o "$T/out/t.data" "$T/bin/app=$T/bin/app" || fail "make_trace"

# temporaries DIR: what xpu-archive may have left in DIR besides the plants
temporaries() { ls -A "$1" | grep -Ev '^(t\.data|t\.data\.archive|t\.data\.archive\.tmp)$'; }

# 1. A symbolic link at the old temporary name, to a file it must not touch.
echo "victim's own content" >"$T/victim"
ln -s "$T/victim" "$T/out/t.data.archive.tmp"
"$ARCHIVE" -q -i "$T/out/t.data" 2>"$T/link.err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/link.err" >&2; fail "a link at t.data.archive.tmp blocks xpu-archive (exit $rc)"; }
[ -f "$T/out/t.data.archive" ] && [ ! -L "$T/out/t.data.archive" ] || fail "no archive written"
[ "$(stat -c %a "$T/out/t.data.archive")" = 600 ] || fail "archive mode is not 0600"
[ "$(cat "$T/victim")" = "victim's own content" ] || fail "written through the planted link"
[ "$(readlink "$T/out/t.data.archive.tmp")" = "$T/victim" ] || fail "the planted link was touched"
[ -z "$(temporaries "$T/out")" ] || fail "left beside the archive: $(temporaries "$T/out")"
cp "$T/out/t.data.archive" "$T/good.archive"

# 2. A regular file at the old temporary name: left as it is.
rm "$T/out/t.data.archive.tmp" "$T/out/t.data.archive"
echo "someone's file" >"$T/out/t.data.archive.tmp"
"$ARCHIVE" -q -i "$T/out/t.data" 2>"$T/file.err" ||
	{ cat "$T/file.err" >&2; fail "a file at t.data.archive.tmp blocks xpu-archive"; }
[ "$(cat "$T/out/t.data.archive.tmp")" = "someone's file" ] || fail "the planted file was used"
cmp -s "$T/out/t.data.archive" "$T/good.archive" || fail "the archive differs from the first one"
[ -z "$(temporaries "$T/out")" ] || fail "left beside the archive: $(temporaries "$T/out")"

# 3. A run that archives nothing (the binary gone) fails and leaves nothing.
rm "$T/out/t.data.archive" "$T/bin/app"
"$ARCHIVE" -q -i "$T/out/t.data" 2>"$T/none.err" && fail "archiving a trace of no file succeeded"
[ ! -e "$T/out/t.data.archive" ] || fail "a failed run left an archive"
[ -z "$(temporaries "$T/out")" ] || fail "a failed run left: $(temporaries "$T/out")"
exit 0

#!/usr/bin/env bash
# --symfs DIR (perf's meaning): the recorded binary moved under DIR with its
# path, then stored as DIR/.build-id/xx/rest: the folded output must be the
# one made with the binary in place, with the file found through symfs.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/empty-cache
mkdir -p "$T/bin"
cp "$CPU_DEMO" "$T/bin/cpu_demo"

"$RECORD" -o "$T/run.data" -F 499 -- "$T/bin/cpu_demo" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/before" -i "$T/run.data" --folded
grep -q 'burn_a' "$T/before" || fail "the local report has no burn_a: nothing to compare"
id=$(readelf -n "$T/bin/cpu_demo" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "cpu_demo has no build-id"

# DIR + recorded path
mkdir -p "$T/symfs$T/bin"
mv "$T/bin/cpu_demo" "$T/symfs$T/bin/cpu_demo"
report "$T/path" -i "$T/run.data" --folded --symfs "$T/symfs" -v
diff -u "$T/before" "$T/path" >&2 || fail "--symfs DIR/PATH: the report differs"
grep -q "bin/cpu_demo: using $T/symfs$T/bin/cpu_demo (symfs)" "$T/path.err" ||
	fail "--symfs DIR/PATH: cpu_demo not found through symfs"

# DIR/.build-id/xx/rest
mkdir -p "$T/symfs2/.build-id/${id:0:2}"
mv "$T/symfs$T/bin/cpu_demo" "$T/symfs2/.build-id/${id:0:2}/${id:2}"
report "$T/bid" -i "$T/run.data" --folded --symfs "$T/symfs2" -v
diff -u "$T/before" "$T/bid" >&2 || fail "--symfs DIR/.build-id: the report differs"
grep -q "(symfs)" "$T/bid.err" || fail "--symfs DIR/.build-id: not found through symfs"

# A symfs without the file: unsymbolized, said so.
report "$T/empty" -i "$T/run.data" --folded --symfs "$T/symfs"
grep -q 'burn_a' "$T/empty" && fail "symbols from an empty symfs?"
grep -q 'stayed unsymbolized: .*file not found' "$T/empty.err" || fail "no unsymbolized warning"

# Not a directory: a one-line usage error.
"$REPORT" -i "$T/run.data" --folded --symfs "$T/run.data" >/dev/null 2>"$T/bad.err"; rc=$?
[ $rc -eq $EXIT_USAGE ] || fail "--symfs FILE: exit $rc, expected $EXIT_USAGE"
grep -q 'not a directory' "$T/bad.err" || fail "--symfs FILE: no clear error"
exit 0

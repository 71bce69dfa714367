#!/usr/bin/env bash
# xpu-record --buildid-cache fills $XDG_CACHE_HOME/xpu-perf/.build-id/xx/rest
# with the mapped files; with the binary gone the report reads them from
# there and its folded output is the one made with the binary in place.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/cache
mkdir -p "$T/bin"
cp "$CPU_DEMO" "$T/bin/cpu_demo"
id=$(readelf -n "$T/bin/cpu_demo" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "cpu_demo has no build-id"

"$RECORD" --buildid-cache -o "$T/run.data" -F 499 -- "$T/bin/cpu_demo" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record --buildid-cache failed"; }
cat "$T/run.err"
grep -Eq "^xpu-record: build-id cache $T/cache/xpu-perf: [1-9][0-9]* files copied, 0 already there" "$T/run.err" ||
	fail "no build-id cache summary"
cached=$T/cache/xpu-perf/.build-id/${id:0:2}/${id:2}
cmp -s "$cached" "$T/bin/cpu_demo" || fail "$cached is not a copy of cpu_demo"
report "$T/before" -i "$T/run.data" --folded
grep -q 'burn_a' "$T/before" || fail "the local report has no burn_a: nothing to compare"

rm "$T/bin/cpu_demo"
report "$T/after" -i "$T/run.data" --folded -v
diff -u "$T/before" "$T/after" >&2 || fail "the report from the build-id cache differs"
grep -q "bin/cpu_demo: using $cached (build-id cache)" "$T/after.err" ||
	fail "cpu_demo not read from the build-id cache"

# A second recording finds the files there already.
cp "$CPU_DEMO" "$T/bin/cpu_demo"
"$RECORD" --buildid-cache -o "$T/run2.data" -- "$T/bin/cpu_demo" 0.3 >/dev/null 2>"$T/run2.err" ||
	fail "second recording failed"
grep -Eq "build-id cache .*: 0 files copied, [1-9][0-9]* already there" "$T/run2.err" ||
	{ cat "$T/run2.err" >&2; fail "second recording copied again"; }
[ -z "$(find "$T/cache" -name '*.tmp.*')" ] || fail "temporary files left in the cache"
exit 0

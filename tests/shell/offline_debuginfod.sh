#!/usr/bin/env bash
# debuginfod, last in the lookup chain: a local server (Debian's debuginfod
# package, `debuginfod -F DIR`) serves cpu_demo by build-id; with the binary
# gone from its recorded path the report fetches it and prints the folded
# output made with the binary in place. Skips when no server can run here.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
command -v debuginfod >/dev/null || skip "debuginfod not installed (scripts/setup.sh installs it)"
command -v curl >/dev/null || skip "curl not installed (scripts/setup.sh installs it)"
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/empty-cache
mkdir -p "$T/bin" "$T/srv"
cp "$CPU_DEMO" "$T/bin/cpu_demo"
id=$(readelf -n "$T/bin/cpu_demo" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "cpu_demo has no build-id"

"$RECORD" -o "$T/run.data" -F 499 -- "$T/bin/cpu_demo" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/before" -i "$T/run.data" --folded
DEBUGINFOD_URLS=http://127.0.0.1:1 "$REPORT" -v -i "$T/run.data" --header 2>&1 >/dev/null |
	grep -q 'built without libdebuginfod' &&
	skip "xpu-report was built without libdebuginfod (static build, or libdebuginfod-dev missing)"
grep -q 'burn_a' "$T/before" || fail "the local report has no burn_a"
mv "$T/bin/cpu_demo" "$T/srv/served_demo"

port=$((20000 + RANDOM % 20000))
debuginfod -F -p "$port" -d "$T/db.sqlite" -t 0 -g 0 "$T/srv" >"$T/debuginfod.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
url=http://127.0.0.1:$port
for i in $(seq 1 100); do
	curl -sf -o /dev/null "$url/buildid/$id/executable" && break
	kill -0 $server 2>/dev/null || skip "debuginfod exited: $(tail -n 1 "$T/debuginfod.log")"
	sleep 0.2
done
curl -sf -o /dev/null "$url/buildid/$id/executable" ||
	skip "debuginfod on port $port does not serve cpu_demo after 20 s: $(tail -n 1 "$T/debuginfod.log")"

DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/client-cache report "$T/after" -i "$T/run.data" --folded -v
diff -u "$T/before" "$T/after" >&2 || fail "the report through debuginfod differs"
grep -q "bin/cpu_demo: using $T/client-cache/.* (debuginfod)" "$T/after.err" ||
	{ cat "$T/after.err" >&2; fail "cpu_demo not fetched through debuginfod"; }

# Without DEBUGINFOD_URLS nothing is asked.
report "$T/off" -i "$T/run.data" --folded
grep -q 'burn_a' "$T/off" && fail "symbols without DEBUGINFOD_URLS?"
exit 0

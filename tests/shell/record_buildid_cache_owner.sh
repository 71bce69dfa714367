#!/usr/bin/env bash
# xpu-record --buildid-cache, run by root into a cache that is another
# user's (sudo -E, a CI home: XDG_CACHE_HOME or HOME of theirs): the cache
# is theirs, made with their file-system identity, and holds nothing they
# could not read. A home of user nobody, with no .cache yet:
#  - .cache, xpu-perf, .build-id, xx and every copy belong to nobody (they
#    were root's, so the user's next runs could not write their own cache);
#  - a binary of mode 0700 (root's) is not copied: its copy would have
#    been nobody's to read (it was copied, mode 0644);
#  - the same file, mode 0755, is copied, mode 0644: never wider than the
#    source, and world-readable only because the source is.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
unset DEBUGINFOD_URLS
uid=$(id -u nobody 2>/dev/null) || skip "no user nobody"
mkdir -p "$T/home" "$T/bin"
chown nobody "$T/home"
export XDG_CACHE_HOME=$T/home/.cache
cp "$CPU_DEMO" "$T/bin/private_demo"
chmod 700 "$T/bin/private_demo"
cp "$CPU_DEMO" "$T/bin/public_demo"
chmod 755 "$T/bin/public_demo"
id=$(readelf -n "$CPU_DEMO" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "cpu_demo has no build-id"
entry=$XDG_CACHE_HOME/xpu-perf/.build-id/${id:0:2}/${id:2}

"$RECORD" --buildid-cache -v -o "$T/private.data" -- "$T/bin/private_demo" 0.2 \
	>/dev/null 2>"$T/private.err" || { cat "$T/private.err" >&2; fail "xpu-record exited $?"; }
grep 'build-id cache' "$T/private.err"
[ ! -e "$entry" ] || fail "a mode 0700 file of root's was copied into nobody's cache ($(stat -c '%a %U' "$entry"))"
grep -q "private_demo: uid $uid, the cache's owner, cannot read it (mode 700): not copied" \
	"$T/private.err" || fail "no line saying why private_demo was not copied"
grep -Eq "build-id cache .*: [1-9][0-9]* files copied, .*, 1 not readable by uid $uid \(the cache's owner\)$" \
	"$T/private.err" || fail "the summary does not count the file left out"

"$RECORD" --buildid-cache -o "$T/public.data" -- "$T/bin/public_demo" 0.2 \
	>/dev/null 2>"$T/public.err" || { cat "$T/public.err" >&2; fail "xpu-record exited $?"; }
cmp -s "$entry" "$CPU_DEMO" || fail "public_demo not copied"
[ "$(stat -c %a "$entry")" = 644 ] || fail "the copy of a 0755 file has mode $(stat -c %a "$entry")"

others=$(find "$XDG_CACHE_HOME" ! -user nobody)
[ -z "$others" ] || fail "in nobody's cache, not nobody's: $(echo "$others" | head -3)"
[ -z "$(find "$XDG_CACHE_HOME" -type f -perm -o=w)" ] || fail "world-writable files in the cache"
exit 0

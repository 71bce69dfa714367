#!/usr/bin/env bash
# xpu-record --buildid-cache never follows a symbolic link inside the cache
# ($XDG_CACHE_HOME/xpu-perf and below): under sudo -E, in a CI home or in a
# shared cache someone else can plant one, and root would write the traced
# binary wherever it points. Each case plants a link to a directory (or a
# file) outside the cache, records cpu_demo, and checks that nothing was
# written there:
#  - xpu-perf itself, .build-id, and the build-id's xx directory, links to
#    directories outside: the copy is refused with a warning naming the link;
#  - the entry itself (xx/rest), a link to a file outside: the file is left
#    as it was and the link replaced by the copy (a link there once counted
#    as "already there", through the file it pointed at).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
unset DEBUGINFOD_URLS
mkdir -p "$T/bin"
cp "$CPU_DEMO" "$T/bin/cpu_demo"
id=$(readelf -n "$T/bin/cpu_demo" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "cpu_demo has no build-id"
xx=${id:0:2} rest=${id:2}

# run NAME: records cpu_demo with XDG_CACHE_HOME=$T/NAME
run() {
	XDG_CACHE_HOME=$T/$1 "$RECORD" --buildid-cache -o "$T/$1.data" -- "$T/bin/cpu_demo" 0.2 \
		>/dev/null 2>"$T/$1.err" || { cat "$T/$1.err" >&2; fail "$1: xpu-record exited $?"; }
}
# empty DIR NAME: nothing was written into DIR
empty() {
	[ -z "$(ls -A "$1")" ] ||
		{ cat "$T/$2.err" >&2; fail "$2: written through the planted link: $(ls -A "$1" | head -3)"; }
}

for where in top bid xx; do
	mkdir -p "$T/$where.outside"
	case $where in
	top) mkdir -p "$T/$where"
	     ln -s "$T/$where.outside" "$T/$where/xpu-perf"; link=$T/$where/xpu-perf ;;
	bid) mkdir -p "$T/$where/xpu-perf"
	     ln -s "$T/$where.outside" "$T/$where/xpu-perf/.build-id"; link=$T/$where/xpu-perf/.build-id ;;
	xx)  mkdir -p "$T/$where/xpu-perf/.build-id"
	     ln -s "$T/$where.outside" "$T/$where/xpu-perf/.build-id/$xx"
	     link=$T/$where/xpu-perf/.build-id/$xx ;;
	esac
	run $where
	empty "$T/$where.outside" $where
	[ -L "$link" ] || fail "$where: the planted link was removed"
	grep -q "build-id cache: .*symbolic link" "$T/$where.err" ||
		{ cat "$T/$where.err" >&2; fail "$where: no warning about the link"; }
done

# The entry itself a link to a file outside (and one to a missing file).
mkdir -p "$T/entry/xpu-perf/.build-id/$xx" "$T/entry.outside"
echo "someone's file" >"$T/entry.outside/victim"
ln -s "$T/entry.outside/victim" "$T/entry/xpu-perf/.build-id/$xx/$rest"
run entry
[ "$(cat "$T/entry.outside/victim")" = "someone's file" ] || fail "entry: written through the link"
[ -f "$T/entry/xpu-perf/.build-id/$xx/$rest" ] && [ ! -L "$T/entry/xpu-perf/.build-id/$xx/$rest" ] &&
	cmp -s "$T/entry/xpu-perf/.build-id/$xx/$rest" "$T/bin/cpu_demo" ||
	{ cat "$T/entry.err" >&2; fail "entry: the link was taken for the copy"; }
rm "$T/entry/xpu-perf/.build-id/$xx/$rest"
ln -s "$T/entry.outside/new" "$T/entry/xpu-perf/.build-id/$xx/$rest"
run entry
[ "$(ls -A "$T/entry.outside")" = victim ] || fail "entry: a file made through a dangling link"
cmp -s "$T/entry/xpu-perf/.build-id/$xx/$rest" "$T/bin/cpu_demo" || fail "entry: no copy in place"
[ -z "$(find "$T" -name '*.tmp.*')" ] || fail "temporary files left"
exit 0

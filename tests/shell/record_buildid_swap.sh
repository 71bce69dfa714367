#!/usr/bin/env bash
# xpu-record --buildid-cache runs as root on files a traced program names:
# the attack of tests/workloads/buildid_swap. It maps N small ELF files
# (mode 0700, a build-id each), then swaps each, over and over, with a
# symbolic link to a file of root's (mode 0600, a secret marker inside) by
# renameat2(RENAME_EXCHANGE), while the recorder fills the cache. A cache
# that checks the build-id by the path and copies by the path again (and
# follows links) copied the secret, world-readable (once 28 copies of
# /etc/shadow out of 100 files). Checked, in both ways a recording ends:
#  - the command exits and a child of it swaps on (the mapping process is
#    gone: the files are opened by their paths);
#  - -p -d 1 on the swapping program (alive: its mapped files themselves,
#    /proc/PID/map_files, which every file must be copied from);
# the secret is never in the cache, and no copy of a file that is not
# world-readable is readable by anyone but the cache's owner.
. "$(dirname "$0")/lib/e2e.sh"
SWAP=$XPU_BUILD/tests/workloads/buildid_swap
[ -x "$SWAP" ] || fail "$SWAP not built: run make tests-build"
need_tools
need_bpf
unset DEBUGINFOD_URLS
N=100
HANG=120
marker="XPU-SECRET-$$-$RANDOM$RANDOM"
echo "$marker" >"$T/secret"
chmod 600 "$T/secret"
swapper=
trap '[ -n "$swapper" ] && kill $swapper 2>/dev/null' EXIT

# check NAME: the cache $T/NAME.cache after a recording of $T/NAME.out's files
check() {
	local name=$1 cache=$T/$1.cache/xpu-perf bad=0 n=0 f
	[ -d "$cache/.build-id" ] || { cat "$T/$name.err" >&2; fail "$name: no cache made"; }
	if grep -rlF "$marker" "$cache" >"$T/$name.leak"; then
		fail "$name: the secret was copied into the cache: $(wc -l <"$T/$name.leak") copies, $(head -1 "$T/$name.leak")"
	fi
	while read -r _ path id; do
		f=$cache/.build-id/${id:0:2}/${id:2}
		[ -e "$f" ] || continue
		n=$((n + 1))
		if [ "$(stat -c %a "$f")" != 600 ]; then
			echo "$name: $f (of $path, mode 0700) has mode $(stat -c %a "$f")" >&2
			bad=$((bad + 1))
		fi
		readelf -n "$f" 2>/dev/null | grep -q "Build ID: $id" ||
			{ echo "$name: $f is not the file with build-id $id" >&2; bad=$((bad + 1)); }
	done < <(grep '^lib ' "$T/$name.out")
	[ $bad -eq 0 ] || fail "$name: $bad bad copies of the swapped files"
	note "$name: $n of $N swapped files copied: $(grep 'build-id cache' "$T/$name.err")"
	copied=$n
}

# 1. The command exits at once; its child swaps for 20 s meanwhile.
XDG_CACHE_HOME=$T/exit.cache timeout -s KILL $HANG "$RECORD" --buildid-cache -o "$T/exit.data" -- \
	"$SWAP" "$T/exit" $N "$T/secret" 20 fork >"$T/exit.out" 2>"$T/exit.err"
rc=$?
swapper=$(awk '/^swapping/ { print $2 }' "$T/exit.out")
[ $rc -eq 0 ] || { cat "$T/exit.err" >&2; fail "exit: xpu-record exited $rc"; }
[ -n "$swapper" ] && kill -0 "$swapper" 2>/dev/null ||
	fail "exit: the swapping child ended before the cache was filled"
check exit
kill "$swapper"
swapper=

# 2. -p on the program while it swaps: the mapped files are reached through
# /proc/PID/map_files, so every one of them is copied, and only them.
"$SWAP" "$T/pid" $N "$T/secret" 60 >"$T/pid.out" 2>&1 &
swapper=$!
for _ in $(seq 100); do grep -q '^swapping' "$T/pid.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^swapping' "$T/pid.out" || fail "-p: the program did not start swapping: $(cat "$T/pid.out")"
XDG_CACHE_HOME=$T/pid.cache timeout -s KILL $HANG "$RECORD" --buildid-cache -p $swapper -d 1 \
	-o "$T/pid.data" >/dev/null 2>"$T/pid.err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/pid.err" >&2; fail "-p: xpu-record exited $rc"; }
kill -0 $swapper 2>/dev/null || fail "-p: the program ended before the cache was filled"
check pid
[ "$copied" -eq $N ] || fail "-p: $copied of the $N mapped files copied, not all (map_files unused?)"
exit 0

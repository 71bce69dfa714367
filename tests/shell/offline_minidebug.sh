#!/usr/bin/env bash
# MiniDebugInfo: a binary stripped the way Fedora/RHEL ship them, with the
# static function symbols in an xz-compressed ELF in .gnu_debugdata (same
# build-id), is symbolized from that section: the report names burn_a and
# level1..6 and no longer calls the file stripped. A .gnu_debugdata that is
# not xz, or not an ELF inside, is ignored: .dynsym names only, no crash.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
for t in objcopy strip nm xz readelf; do
	command -v $t >/dev/null || skip "$t not found (binutils, xz-utils: scripts/setup.sh)"
done
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/empty-cache
mkdir -p "$T/bin" "$T/work"
cp "$CPU_DEMO" "$T/bin/cpu_demo"
"$RECORD" -o "$T/run.data" -F 499 -- "$T/bin/cpu_demo" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/before" -i "$T/run.data" --folded

# gdb's recipe (tests/tools/make_minidebug.sh); prog.bad: stripped only
W=$T/work
"$XPU_TOP/tests/tools/make_minidebug.sh" "$CPU_DEMO" "$W/prog" || fail "make_minidebug.sh failed"
strip --strip-all -R .comment -R .gnu_debuglink -o "$W/prog.bad" "$CPU_DEMO"
readelf -SW "$W/prog" | grep -q '\.gnu_debugdata' || fail "objcopy did not add .gnu_debugdata"
readelf -SW "$W/prog" | grep -q ' \.symtab ' && fail "the binary still has .symtab"
[ "$(readelf -n "$W/prog" | grep 'Build ID')" = "$(readelf -n "$CPU_DEMO" | grep 'Build ID')" ] ||
	fail "stripping changed the build-id"

cp "$W/prog" "$T/bin/cpu_demo"
report "$T/mini" -i "$T/run.data" --folded
for f in burn_a level1 level6; do
	grep -q "$f" "$T/mini" || fail "no $f from MiniDebugInfo: $(sort -k2 -nr "$T/mini" | head -3)"
done
grep -q 'stayed unsymbolized: .*cpu_demo' "$T/mini.err" &&
	fail "cpu_demo still reported unsymbolized: $(cat "$T/mini.err")"
[ "$(folded_sum 'burn_a' <"$T/mini")" -eq "$(folded_sum 'burn_a' <"$T/before")" ] ||
	fail "burn_a: $(folded_sum 'burn_a' <"$T/mini") samples from MiniDebugInfo, $(folded_sum 'burn_a' <"$T/before") with the full symbols"

# garbage in .gnu_debugdata: not xz; then xz of something that is not an ELF
head -c 4096 /dev/urandom >"$W/junk"
for bad in junk notelf; do
	if [ $bad = notelf ]; then
		head -c 4096 /dev/urandom | xz >"$W/junk"
	fi
	objcopy --add-section .gnu_debugdata="$W/junk" "$W/prog.bad" "$T/bin/cpu_demo"
	report "$T/$bad" -i "$T/run.data" --folded
	grep -q burn_a "$T/$bad" && fail "$bad .gnu_debugdata gave symbols?"
	grep -Eq 'stayed unsymbolized: .*\(1 file: cpu_demo\)' "$T/$bad.err" ||
		fail "$bad .gnu_debugdata: no unsymbolized warning for cpu_demo: $(cat "$T/$bad.err")"
	[ "$(folded_sum <"$T/$bad")" -eq "$(folded_sum <"$T/before")" ] || fail "$bad: sample counts differ"
done
exit 0

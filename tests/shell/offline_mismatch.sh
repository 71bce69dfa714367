#!/usr/bin/env bash
# A binary replaced by a rebuilt one with another build-id must never be used
# to symbolize: its frames stay [module] (module+offset with
# --unknown-addresses), the report warns "build-id
# mismatch", and xpu-archive refuses to archive it. Then the original,
# stripped: the report says "stripped".
. "$(dirname "$0")/lib/e2e.sh"
ARCHIVE=$XPU_BIN/xpu-archive
need_tools
need_bpf
command -v gcc >/dev/null || skip "gcc not found: cannot rebuild cpu_demo"
command -v strip >/dev/null && command -v readelf >/dev/null ||
	skip "strip/readelf not found (binutils): cannot make the stripped and rebuilt binaries"
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/empty-cache
mkdir -p "$T/bin"
cp "$CPU_DEMO" "$T/bin/cpu_demo"

"$RECORD" -o "$T/run.data" -F 499 -- "$T/bin/cpu_demo" 1 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
report "$T/before" -i "$T/run.data" --folded
grep -q 'burn_a' "$T/before" || fail "the local report has no burn_a"

# The same code with another build-id: every symbol would still "fit".
gcc -O2 -g -fomit-frame-pointer -pthread -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567 \
	-o "$T/bin/cpu_demo" "$XPU_TOP/tests/workloads/cpu_demo.c" -lm || fail "rebuilding cpu_demo failed"
readelf -n "$T/bin/cpu_demo" | grep -q 'Build ID: 0123456789abcdef' || fail "rebuilt binary has the wrong build-id"

report "$T/after" -i "$T/run.data" --folded
grep -Eq 'burn_a|burn_b|level[1-6]' "$T/after" && fail "symbols from a binary with another build-id"
grep -Eq '(^|;)\[cpu_demo\](;|$| )' "$T/after" || fail "cpu_demo frames are not one [cpu_demo]"
grep -Eq '(^|;)cpu_demo\+0x[0-9a-f]+' "$T/after" && fail "--unknown-addresses is not the default"
report "$T/addrs" -i "$T/run.data" --folded --unknown-addresses
grep -Eq '(^|;)cpu_demo\+0x[0-9a-f]+' "$T/addrs" || fail "--unknown-addresses: cpu_demo frames are not module+offset"
[ "$(folded_sum <"$T/addrs")" -eq "$(folded_sum <"$T/after")" ] || fail "--unknown-addresses changes the total"
grep -q 'bin/cpu_demo: build-id mismatch' "$T/after.err" || { cat "$T/after.err" >&2; fail "no mismatch warning"; }
grep -Eq 'stayed unsymbolized: .*[0-9]+ build-id mismatch \(1 file: cpu_demo\)' "$T/after.err" ||
	fail "the unsymbolized summary does not give the mismatch"
[ "$(folded_sum <"$T/after")" -eq "$(folded_sum <"$T/before")" ] || fail "sample counts differ"

# Other files (ld.so) may still be archived: exit 0 with "1 skipped", else 5.
"$ARCHIVE" -i "$T/run.data" 2>"$T/archive.err"; rc=$?
case $rc in
0) grep -q ', 1 skipped, written to' "$T/archive.err" || fail "xpu-archive: the summary does not count the missing file" ;;
5) ;;
*) cat "$T/archive.err" >&2; fail "xpu-archive with a mismatched binary: exit $rc" ;;
esac
grep -q 'not archived (-v lists them): build-id mismatch: 1 (cpu_demo)' "$T/archive.err" ||
	fail "xpu-archive does not say the build-id differs"

# The original binary, stripped: same build-id, so it is used, but it names
# nothing: "stripped". (The stacks are the frames xpu-record wrote, format
# 1.6: they need no file at report time; a recording of words would be
# unwound through the stripped file's .eh_frame.)
cp "$CPU_DEMO" "$T/bin/cpu_demo"
strip "$T/bin/cpu_demo"
report "$T/stripped" -i "$T/run.data" --folded
grep -Eq 'burn_a|level[1-6]' "$T/stripped" && fail "symbols from a stripped binary?"
grep -Eq 'stayed unsymbolized: [0-9]+ stripped \(no symbols\) \(1 file: cpu_demo\)' "$T/stripped.err" ||
	{ cat "$T/stripped.err" >&2; fail "the unsymbolized summary does not say stripped"; }
grep -Eq '__libc_start_call_main;\[cpu_demo\]( |;)' "$T/stripped" ||
	fail "stripped cpu_demo frames are not one [cpu_demo] frame"
report "$T/stripped-addrs" -i "$T/run.data" --folded --unknown-addresses
grep -Eq '(cpu_demo\+0x[0-9a-f]+;){5}' "$T/stripped-addrs" ||
	fail "no frames through the stripped binary"
exit 0

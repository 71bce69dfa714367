#!/usr/bin/env bash
# Makefile.config caches its library probes in $(O)/config.mk. A required
# library found missing must not be cached: after installing it, `make` must
# work without deleting the build folder by hand.
set -u
cd "$XPU_TOP"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make -s O="$T" BPFTOOL=/nonexistent/bpftool version >"$T/out" 2>&1 && fail "make without bpftool succeeded"
grep -q "No bpftool" "$T/out" || fail "no message naming bpftool: $(cat "$T/out")"
[ ! -e "$T/config.mk" ] || fail "a failed probe was cached in config.mk"
make -s O="$T" version >"$T/out" 2>&1 || fail "make after the fix still fails: $(cat "$T/out")"
grep -q "^xpu-perf " "$T/out" || fail "make version printed: $(cat "$T/out")"
[ -e "$T/config.mk" ] || fail "a good probe set was not cached"
# An optional one too: a protoc-c that is not there is probed again.
rm -f "$T/config.mk"
make -s O="$T" PPROF_PROTO=/nonexistent/profile.proto version >"$T/out" 2>&1 ||
	fail "make without an optional library failed: $(cat "$T/out")"
grep -q "building without --pprof" "$T/out" || fail "no warning naming --pprof: $(cat "$T/out")"
[ ! -e "$T/config.mk" ] || fail "a missing optional library was cached in config.mk"
make -s O="$T" version >"$T/out" 2>&1 || fail "make after installing it failed"
grep -q "PROTOBUF_C" "$T/out" || fail "--pprof not built after the optional library came: $(cat "$T/out")"
echo "ok: a missing required or optional library is probed again on the next make"

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
echo "ok: a missing required library is probed again on the next make"

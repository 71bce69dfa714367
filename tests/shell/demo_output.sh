#!/usr/bin/env bash
# `make demo` on a machine without a GPU: its table shows the hot functions
# of cpu_demo (burn_a, burn_b, the worker's and the child's) on the first
# screen, not only the callers with 0% self, and it points at nothing the
# user does not have (flamegraph.pl is not packaged by Debian).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && skip "a GPU is present: the demo records the GPU demo"
cd "$XPU_TOP"
MAKELEVEL=1 O=$(realpath --relative-to="$XPU_TOP" "$XPU_BUILD") XPU_BUILD=$XPU_BUILD XPU_BIN=$XPU_BIN \
	bash scripts/demo.sh >"$T/demo.out" 2>&1 || fail "demo failed: $(tail -n 3 "$T/demo.out")"
head -n 24 "$T/demo.out" >"$T/screen"
for f in burn_a burn_b burn_worker burn_child; do
	grep -Eq "\[\.\] $f( +cpu_demo\.c:[0-9]+)?\$" "$T/screen" || fail "$f is not on the demo's first screen: $(cat "$T/screen")"
done
grep -q flamegraph.pl "$T/demo.out" && fail "the demo points at flamegraph.pl"
svg=$(sed -nE 's/^demo: flame graph: ([^ ]+) .*/\1/p' "$T/demo.out")
[ -n "$svg" ] && [ -s "$svg" ] || fail "the demo wrote no flame graph: $(tail -n 3 "$T/demo.out")"
grep -q '<title>burn_a (' "$svg" || fail "the demo's flame graph has no burn_a box"
echo "ok: the first screen shows burn_a, burn_b, burn_worker, burn_child"

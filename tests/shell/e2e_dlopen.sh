#!/usr/bin/env bash
# A process whose mappings grow while it runs (dlopen_demo: spins between
# dlopen()s of system libraries): xpu-report adds the new modules to the
# process's Dwfl rather than rebuilding it (-v: "times new mappings were
# added"), both unwinders still agree on every stack (XPU_UNWIND_CHECK=1),
# and the spinning function reaches main in every sample.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
DEMO=$XPU_BUILD/tests/workloads/dlopen_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"
"$RECORD" -o "$T/run.data" -F 999 -- "$DEMO" >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
loaded=$(sed -nE 's/^dlopen_demo: ([0-9]+) libraries loaded$/\1/p' "$T/run.out")
[ "${loaded:-0}" -ge 3 ] || skip "only ${loaded:-0} of dlopen_demo's libraries exist here"
XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/run.data" --folded -v >"$T/folded" 2>"$T/v.err" ||
	fail "xpu-report -v with XPU_UNWIND_CHECK failed: $(tail -3 "$T/v.err")"
grows=$(sed -nE 's/.*unwind: ([0-9]+) times new mappings were added.*/\1/p' "$T/v.err")
note "$loaded libraries loaded; $grows additions to the Dwfl; $(grep -o '[0-9]* Dwfl builds' "$T/v.err")"
[ "${grows:-0}" -ge 1 ] || fail "no mappings were added to a Dwfl: $(grep 'unwind:' "$T/v.err")"
spin=$(folded_sum 'spin_between' <"$T/folded")
full=$(folded_sum 'main;spin_between' <"$T/folded")
[ "$spin" -ge 200 ] || fail "only $spin samples in spin_between"
[ $((full * 100)) -ge $((spin * 99)) ] || fail "$full of $spin spin_between samples under main"
exit 0

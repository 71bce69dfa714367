#!/usr/bin/env bash
# A process whose mappings grow while it runs (dlopen_demo: spins between
# dlopen()s of system libraries): xpu-report adds the new modules to the
# process's Dwfl rather than rebuilding it (-v: "times new mappings
# added"), both unwinders still agree on every stack (XPU_UNWIND_CHECK=1),
# and the spinning function reaches main in every sample. Without the
# check, a recording the fast path unwinds whole builds no process Dwfl:
# each file's CFI is read once (-v: "CFI of N files").
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
DEMO=$XPU_BUILD/tests/workloads/dlopen_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"
# (the words the report unwinds, not the frames xpu-record writes by default)
XPU_STACK_PRUNE=cfi "$RECORD" -o "$T/run.data" -F 999 -- "$DEMO" >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record failed"; }
loaded=$(sed -nE 's/^dlopen_demo: ([0-9]+) libraries loaded$/\1/p' "$T/run.out")
[ "${loaded:-0}" -ge 3 ] || skip "only ${loaded:-0} of dlopen_demo's libraries exist here"
XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/run.data" --folded -v >"$T/folded" 2>"$T/v.err" ||
	fail "xpu-report -v with XPU_UNWIND_CHECK failed: $(tail -3 "$T/v.err")"
grows=$(sed -nE 's/.*unwind: libdwfl.s process Dwfls: [0-9]+ builds, ([0-9]+) times new mappings.*/\1/p' "$T/v.err")
note "$loaded libraries loaded; $grows additions to the Dwfl; $(grep -o '[0-9]* builds' "$T/v.err")"
[ "${grows:-0}" -ge 1 ] || fail "no mappings were added to a Dwfl: $(grep 'unwind:' "$T/v.err")"
XPU_UNWIND_CHECK=0 "$REPORT" -i "$T/run.data" --folded -v >"$T/fast" 2>"$T/fast.err" ||
	fail "xpu-report -v failed: $(tail -3 "$T/fast.err")"
cmp -s "$T/folded" "$T/fast" || fail "--folded differs with XPU_UNWIND_CHECK=1"
read -r slow files builds <<<"$(sed -nE 's/.*unwind: [0-9]+ stacks, ([0-9]+) by libdwfl, [0-9]+ checked; CFI of ([0-9]+) files.*/\1 \2/p' "$T/fast.err") \
$(sed -nE 's/.*process Dwfls: ([0-9]+) builds.*/\1/p' "$T/fast.err")"
note "without the check: $slow stacks by libdwfl, CFI of $files files, $builds process Dwfl builds"
[ "${files:-0}" -ge 2 ] || fail "CFI of ${files:-?} files: not even the program's and libc's"
[ "$slow" = 0 ] && [ "$builds" != 0 ] && fail "$builds process Dwfls built for no libdwfl unwind"
spin=$(folded_sum 'spin_between' <"$T/folded")
full=$(folded_sum 'main;spin_between' <"$T/folded")
note "spin_between: $spin samples, $full under main"
[ "$spin" -ge 200 ] || fail "only $spin samples in spin_between"
[ $((full * 100)) -ge $((spin * 99)) ] || fail "$full of $spin spin_between samples under main"
exit 0

#!/usr/bin/env bash
# End to end, Python frames from a process's first milliseconds
# (tests/workloads/py_fork.py under Debian's python3.11 or another CPython
# 3.10-3.13 in /usr/bin):
# - the interpreter's own start: the exec of a recorded process wakes the
#   recorder (BPF sched_process_exec), which reads the new image's mappings
#   at once; before, they waited for its next poll (20 ms: 16 of 217
#   samples of the main process ran Python code without Python frames);
# - forked children computing from their first instruction: the BPF side
#   gives a child its parent's walk at the fork (before: the first 20 ms
#   of each child, 4.6% of their samples, had none);
# - a child that execs a native program (cpu_demo) loses the inherited walk
#   at its exec: none of cpu_demo's samples gets Python frames;
# - a launcher linked to libpython (Fedora's and the Docker images'
#   python3): the library is mapped by ld.so after the exec, so the reader
#   polls every millisecond for 100 ms after it sees such a launcher
#   (before: 9-18 of 215 samples of the main process without Python frames;
#   1-2 now).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

py=
for p in /usr/bin/python3.1[0-3]; do
	[ -x "$p" ] && [ ! -L "$p" ] && { py=$p; break; }
done
[ -n "$py" ] || skip "no CPython 3.10-3.13 in /usr/bin"

"$RECORD" -o "$T/f.data" -F 999 --no-gpu -- "$py" "$XPU_TOP/tests/workloads/py_fork.py" \
	"$CPU_DEMO" 0.5 >"$T/f.out" 2>"$T/f.err" || { cat "$T/f.err" >&2; fail "xpu-record failed"; }
grep -q "^py_fork: done" "$T/f.out" || fail "the workload did not finish: $(cat "$T/f.out")"
main=$(sed -n 's/^py_fork: pid //p' "$T/f.out")
kids=$(sed -n 's/^py_fork: children //p' "$T/f.out")
[ -n "$main" ] && [ -n "$kids" ] || fail "no pids in the workload's output: $(cat "$T/f.out")"

report "$T/main.folded" -i "$T/f.data" --folded --pid "$main"
report "$T/kids.folded" -i "$T/f.data" --folded --pid "$kids"
report "$T/all.folded" -i "$T/f.data" --folded
# check_start NAME FOLDED: at most 3% of the process's samples are in the
# eval loop without Python frames (its native frame shows only where no
# Python frame replaced it)
check_start() {
	local name=$1 total bare
	total=$(folded_sum '' <"$2")
	bare=$(folded_sum '_PyEval_EvalFrameDefault' <"$2")
	note "$name: $bare of $total samples in the eval loop without Python frames"
	[ "$total" -ge 100 ] || skip "only $total samples of the $name: machine too busy"
	in_range "$(ratio "$bare" "$total")" 0 0.03 ||
		fail "$name: $bare of $total samples in the eval loop have no Python frames (its start)"
}
check_start "main process" "$T/main.folded"

total=$(folded_sum '' <"$T/kids.folded")
withpy=$(folded_sum 'py::' <"$T/kids.folded")
note "forked children: $withpy of $total samples with Python frames"
[ "$total" -ge 300 ] || skip "only $total samples of the children: machine too busy"
in_range "$(ratio "$withpy" "$total")" 0.985 1 ||
	fail "forked children: only $withpy of $total samples have Python frames"
[ "$(folded_sum 'py::pyf_child' <"$T/kids.folded")" -gt 0 ] || fail "no py::pyf_child frame in the children"

native=$(folded_sum 'demo_run' <"$T/all.folded")
mixed=$(grep 'demo_run' "$T/all.folded" | folded_sum 'py::')
note "exec'd native child: $native samples in cpu_demo's code, $mixed with Python frames"
[ "$native" -ge 100 ] || skip "only $native samples of cpu_demo: machine too busy"
[ "$mixed" -eq 0 ] || fail "$mixed samples of the exec'd cpu_demo carry its parent's Python frames"

# the launcher, built here against Debian's libpython3.11 (package libpython3.11)
lib=$(ls /usr/lib/*-linux-gnu/libpython3.1[0-3].so.1.0 2>/dev/null | head -n 1)
if [ -z "$lib" ]; then
	note "no libpython3.1x.so.1.0: the launcher case is not checked (apt-get install libpython3.11)"
	exit 0
fi
ver=$(basename "$lib" | sed -E 's/^lib(python3\.[0-9]+)\.so.*/\1/')
mkdir -p "$T/launcher"
printf 'int Py_BytesMain(int, char **);\nint main(int c, char **v) { return Py_BytesMain(c, v); }\n' >"$T/launcher/l.c"
cc -O2 -o "$T/launcher/$ver" "$T/launcher/l.c" "$lib" || fail "cannot build a $ver launcher"
"$RECORD" -o "$T/l.data" -F 999 --no-gpu -- "$T/launcher/$ver" "$XPU_TOP/tests/workloads/py_fork.py" \
	"$CPU_DEMO" 0.3 >"$T/l.out" 2>"$T/l.err" || { cat "$T/l.err" >&2; fail "xpu-record failed (launcher)"; }
main=$(sed -n 's/^py_fork: pid //p' "$T/l.out")
[ -n "$main" ] || fail "no pid in the launcher run's output: $(cat "$T/l.out")"
report "$T/l.folded" -i "$T/l.data" --folded --pid "$main"
check_start "process under a launcher linked to $(basename "$lib")" "$T/l.folded"
exit 0

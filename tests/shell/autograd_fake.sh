#!/usr/bin/env bash
# End to end, PyTorch's backward pass under the forward code that caused it
# (Documentation/design-autograd.md), on fake libraries: xpu-record probes
# the fake libtorch_cpu.so (tests/workloads/libfake_torch.c: libtorch's
# function names, its Node layout) that python3.11 maps, and
# tests/workloads/py_fake_autograd.py runs 200 training steps: a forward
# pass makes nodes from linear() twice, attention() once and bad_op() once
# (a node whose layout does not check), the backward pass runs them on a
# native thread, each burning 0.5 ms of CPU and launching a 1 ms fake kernel from inside
# Engine::evaluate_function. Checks:
#  - the trace's AUTOGRAD records: a NODE for each good node, with its
#    Python frames, and an EVAL for every node run, the bad ones with the
#    unknown sequence number;
#  - the GPU flame graph: backward kernels under py::linear twice as much
#    as under py::attention, each through "[autograd backward]" and
#    evaluate_function; the bad node's kernels under no forward code (not
#    under the node run before it); the header's autograd line;
#  - the backward thread's CPU samples in each node (0.5 ms of CPU) moved
#    the same way;
#  - -p on a loop already running, without GPU: the probes go on the
#    library mapped before, the CPU side moves, --header has the line; a
#    second loop on the same library, not recorded, hits no uprobe;
#  - --no-autograd: no AUTOGRAD record, the backward thread's own stacks.
. "$(dirname "$0")/lib/e2e.sh"
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
TORCH=$XPU_BUILD/tests/workloads/fake_torch/libtorch_cpu.so
[ -f "$LIB" ] && [ -f "$TORCH" ] || skip "fake libraries not built ($LIB, $TORCH): make tests-build"
need_tools
need_bpf
PY=$(command -v python3.11 || true)
[ -n "$PY" ] || skip "no python3.11 for the fake training loop"
STEPS=200
export XPU_FAKE_TORCH=$TORCH XPU_FAKE_KERNEL_NS=1000000	# 1 ms a kernel: 1 sample at 999 Hz

# rec NAME OPTIONS...: the loop recorded into $T/NAME.data
rec() {
	local name=$1
	shift
	"$RECORD" -F 999 "$@" -o "$T/$name.data" --cupti-lib "$LIB" -- \
		"$PY" "$XPU_TOP/tests/workloads/py_fake_autograd.py" $STEPS >"$T/$name.out" 2>"$T/$name.err" ||
		{ cat "$T/$name.err" >&2; fail "$name: xpu-record failed"; }
	grep -q 'py_fake_autograd: done' "$T/$name.out" || fail "$name: the loop did not finish"
	report "$T/$name.folded" -i "$T/$name.data" --folded --gpu-only --no-py-lines
	report "$T/$name.header" -i "$T/$name.data" --header
	report "$T/$name.dump" -i "$T/$name.data" --dump
}

rec on
nodes=$(grep -c '^AUTOGRAD .* kind=node ' "$T/on.dump")
evals=$(grep -c '^AUTOGRAD .* kind=eval ' "$T/on.dump")
unknown=$(grep -c '^AUTOGRAD .* kind=eval seq=18446744073709551615 ' "$T/on.dump")
note "records: $nodes NODE, $evals EVAL ($unknown of nodes whose layout did not check)"
# the probes go on when python3.11 maps the library, a few steps in at most
[ "$nodes" -ge $((STEPS * 3 * 9 / 10)) ] && [ "$nodes" -le $((STEPS * 3)) ] ||
	fail "$nodes NODE records for $((STEPS * 3)) good nodes"
[ "$unknown" -ge $((STEPS * 9 / 10)) ] && [ "$unknown" -le $STEPS ] ||
	fail "$unknown EVAL records of bad nodes for $STEPS"
# (the two probes go on a moment apart: one step's nodes may be seen made
# but not run)
[ "$evals" -ge $((nodes + unknown - 4)) ] || fail "$evals EVAL records for $nodes + $unknown nodes"
# every NODE with its forward op's Python frames right before it
with_py=$(awk '$1 == "AUTOGRAD" && / kind=node / && prev ~ /^PY_STACK/ { n++ } { prev = $0 } END { print n + 0 }' "$T/on.dump")
[ "$with_py" -eq "$nodes" ] || fail "$with_py of $nodes NODE records right after a PY_STACK"
grep -q "^#   autograd: $nodes nodes made ($nodes with Python frames)" "$T/on.header" ||
	{ grep autograd "$T/on.header" >&2; fail "no autograd line with $nodes nodes in --header"; }

lin=$(folded_sum 'py::linear:[^;]*;\[autograd backward\];torch::autograd::Engine::evaluate_function' <"$T/on.folded")
att=$(folded_sum 'py::attention:[^;]*;\[autograd backward\];torch::autograd::Engine::evaluate_function' <"$T/on.folded")
bad=$(folded_sum 'py::bad_op' <"$T/on.folded")
native=$(folded_sum '^python3[.0-9]*;clone3?;.*Engine::evaluate_function' <"$T/on.folded")
total=$(folded_sum '' <"$T/on.folded")
note "GPU samples: $lin under linear(), $att under attention(), $native under the backward thread's own stack, $bad under bad_op(), of $total"
[ "$att" -ge $((STEPS * 3 / 4)) ] || fail "only $att samples of attention()'s backward kernels"
in_range "$(ratio "$lin" "$att")" 1.8 2.2 || fail "linear()/attention() backward GPU time $lin/$att, not 2"
[ "$bad" -eq 0 ] || fail "$bad samples under bad_op(), whose node was not recorded"
# the bad node's kernels (and those before the probes) keep their own stack
in_range "$(ratio "$native" "$att")" 0.8 1.3 || fail "$native samples of the bad node's kernels for $att of attention()'s"
[ $((lin + att + native)) -eq "$total" ] || fail "$((total - lin - att - native)) samples elsewhere"

# the backward thread's CPU time in each node (0.5 ms, fake_burn) moves too
report "$T/on.cpu" -i "$T/on.data" --folded --cpu-only --no-py-lines
clin=$(folded_sum 'py::linear:[^;]*;\[autograd backward\];torch::autograd::Engine::evaluate_function[^;]*;fake_burn' <"$T/on.cpu")
catt=$(folded_sum 'py::attention:[^;]*;\[autograd backward\];torch::autograd::Engine::evaluate_function[^;]*;fake_burn' <"$T/on.cpu")
cbad=$(folded_sum '^python3[.0-9]*;clone3?;.*Engine::evaluate_function[^;]*;fake_burn' <"$T/on.cpu")
note "CPU samples in the nodes: $clin under linear(), $catt under attention(), $cbad under the thread's own stack"
[ "$catt" -ge 40 ] || fail "only $catt CPU samples of attention()'s backward under its forward code"
in_range "$(ratio "$clin" "$catt")" 1.5 2.6 || fail "linear()/attention() backward CPU time $clin/$catt, not 2"
in_range "$(ratio "$cbad" "$catt")" 0.6 1.6 || fail "$cbad CPU samples of the bad node for $catt of attention()'s"
grep -Eq "^#   autograd: .*; [1-9][0-9]* CPU stacks of backward threads moved too" "$T/on.header" ||
	fail "--header does not count the CPU stacks moved"

# -p on a loop already running (no recorder to connect to: CPU samples
# only): the probes go on the libtorch_cpu.so it mapped before we came
# (and a second loop on the same library, not recorded, running all along:
# the probes go on the recorded process only; a process that hit a uprobe
# has an [uprobes] mapping). The recording lasts until the loop exits, so its
# samples are the CPU time of the steps it saw (~1000 x 0.5 ms in
# attention()'s node), not what a wall-clock window of a busy machine gave.
CUDA_INJECTION64_PATH=$LIB XPU_FAKE_NO_GPU=1 "$PY" "$XPU_TOP/tests/workloads/py_fake_autograd.py" 1000 \
	>"$T/p.out" 2>&1 &
pid=$!
CUDA_INJECTION64_PATH=$LIB XPU_FAKE_NO_GPU=1 "$PY" "$XPU_TOP/tests/workloads/py_fake_autograd.py" 1000000 \
	>"$T/other.out" 2>&1 &
other=$!
trap 'kill $pid $other 2>/dev/null' EXIT
# attach once both have mapped the library (they sleep 0.3 s, then train)
for _ in $(seq 200); do
	grep -qF "$TORCH" "/proc/$pid/maps" 2>/dev/null && grep -qF "$TORCH" "/proc/$other/maps" 2>/dev/null && break
	sleep 0.05
done
grep -qF "$TORCH" "/proc/$pid/maps" || fail "-p: the loop did not map $TORCH in 10 s: $(tail -2 "$T/p.out")"
"$RECORD" -F 999 -p "$pid" -o "$T/p.data" >"$T/p.rec" 2>&1 &
rec=$!
hit=	# the uprobe mapping, seen while the loop runs
for _ in $(seq 400); do
	grep -q '\[uprobes\]' "/proc/$pid/maps" 2>/dev/null && { hit=1; break; }
	sleep 0.05
done
wait $rec || { cat "$T/p.rec" >&2; fail "-p: xpu-record failed"; }
wait "$pid" || fail "-p: the loop failed: $(tail -2 "$T/p.out")"
[ -n "$hit" ] || fail "-p: the recorded loop hit no uprobe"
grep -q '\[uprobes\]' "/proc/$other/maps" && fail "-p: a loop not recorded hit the uprobes too"
kill "$other" && wait "$other" 2>/dev/null
report "$T/p.cpu" -i "$T/p.data" --folded --cpu-only --no-py-lines
report "$T/p.header" -i "$T/p.data" --header
plin=$(folded_sum 'py::linear:[^;]*;\[autograd backward\];torch::autograd::Engine::evaluate_function[^;]*;fake_burn' <"$T/p.cpu")
patt=$(folded_sum 'py::attention:[^;]*;\[autograd backward\];torch::autograd::Engine::evaluate_function[^;]*;fake_burn' <"$T/p.cpu")
note "-p: CPU samples in the nodes: $plin under linear(), $patt under attention()"
[ "$patt" -ge 50 ] || fail "-p: only $patt CPU samples of attention()'s backward under its forward code"
in_range "$(ratio "$plin" "$patt")" 1.5 2.6 || fail "-p: linear()/attention() backward CPU time $plin/$patt, not 2"
grep -q '^# pytorch:' "$T/p.header" && grep -q '^#   autograd: [1-9]' "$T/p.header" ||
	fail "-p: no autograd line in the header of a trace without GPU work"

rec off --no-autograd
grep -q '^AUTOGRAD' "$T/off.dump" && fail "--no-autograd: AUTOGRAD records"
grep -q 'autograd backward' "$T/off.folded" && fail "--no-autograd: stacks under forward code"
off=$(folded_sum 'Engine::evaluate_function' <"$T/off.folded")
[ "$off" -ge $((STEPS * 3)) ] || fail "--no-autograd: only $off samples under evaluate_function"
exit 0

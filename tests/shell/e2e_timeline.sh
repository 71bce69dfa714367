#!/usr/bin/env bash
# End to end, --timeline on a real recording (eBPF, CPU only): offcpu_demo at
# 999 Hz, with off-CPU records. The file, decoded by protoc and checked by
# timeline_check.py (sequence, interning, tracks, BEGIN/END pairing), has
#  - a thread track per recorded thread, named by its comm, in its process;
#  - one callstack sample per SAMPLE record, whose stacks sum to --folded
#    --cpu-only line for line;
#  - one off-CPU slice per OFFCPU record (the "short blocks" ones too), named by
#    reason, the main thread's pipe and futex blocks as long as the workload
#    measured them (5%);
#  - no GPU track; and under --cpu-only the same samples;
# then on a GPU-less CUDA recording (fake_cuda_app, below): launches, their
# stacks, kernels, flows and NVTX ranges.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
"$REPORT" --help | grep -q -- '--timeline FILE' || skip "xpu-report built without libprotobuf-c: no --timeline"
command -v protoc >/dev/null || skip "protoc not installed (protobuf-compiler, scripts/setup.sh)"
DEMO=$XPU_BUILD/tests/workloads/offcpu_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"
PROTO_DIR=$XPU_TOP/report/output

"$RECORD" -F 999 -o "$T/run.data" -- "$DEMO" >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err"; fail "xpu-record exited $?"; }
report "$T/dump" -i "$T/run.data" --dump
report "$T/cpu.folded" -i "$T/run.data" --folded --cpu-only --no-comm
report "$T/tl.out" -i "$T/run.data" --timeline "$T/run.pftrace"
[ ! -s "$T/tl.out" ] || fail "--timeline FILE wrote to stdout"
protoc --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" \
	<"$T/run.pftrace" >"$T/run.txt" || fail "protoc cannot decode the timeline"
python3 "$XPU_TOP/tests/shell/timeline_check.py" <"$T/run.txt" >"$T/run.json" ||
	fail "timeline: $(cat "$T/run.json")"
main=$(sed -nE 's/^offcpu_demo: wall offcpu_demo ([0-9]+) .*/\1/p' "$T/run.out")
python3 - "$T/run.json" "$T/dump" "$T/cpu.folded" "$T/run.out" "$main" <<'PY' || fail "--timeline (above)"
import json, re, sys
s = json.load(open(sys.argv[1]))
recs = [l.split() for l in open(sys.argv[2]) if l.strip()]
kv = lambda r: dict(f.split("=", 1) for f in r[1:] if "=" in f)
def eq(what, got, want):
    if got != want:
        sys.exit(f"{what}: timeline {got}, want {want}")
eq("samples", s["samples"], sum(1 for r in recs if r[0] == "SAMPLE"))
folded = {}
for l in open(sys.argv[3]):
    stack, n = l.rsplit(" ", 1)
    folded[stack] = int(n)
eq("sample stacks", s["folded"], folded)
tids = {(int(kv(r)["pid"]), int(kv(r)["tid"])) for r in recs if r[0] in ("SAMPLE", "OFFCPU")}
eq("thread tracks", {(t[0], t[1]) for t in s["threads"]}, tids)
main = sys.argv[5]
names = {t[1]: t[2] for t in s["threads"]}
eq("main thread name", names.get(int(main)), "offcpu_demo")
off = [r for r in recs if r[0] == "OFFCPU"]
eq("off-CPU slices", sum(n for _, n in s["names_by_kind"]["offcpu"]), len(off))
eq("off-CPU ns", s["offcpu_arg_ns"], sum(int(kv(r)["off"]) for r in off))
eq("GPU slices", s["gpu_slices"], 0)
measured = dict(re.findall(r"^offcpu_demo: (block_\w+) ([0-9]+)$", open(sys.argv[4]).read(), re.M))
ns = s["offcpu_ns"]
for block, reason in (("block_pipe", "pipe"), ("block_futex", "futex")):
    got = sum(v for k, v in ns.items()
              if k.startswith(f"offcpu_demo/offcpu_demo/off-CPU|") and reason in k.split("|")[1])
    want = int(measured[block])
    print(f"# {block}: timeline {got} ns, measured {want} ns")
    if abs(got - want) > 0.05 * want:
        # what the slices were, for the next time (seen once under load)
        for k, v in sorted(ns.items()):
            print(f"#   off-CPU slices {k}: {v} ns", file=sys.stderr)
        sys.exit(f"{block}: the {reason} slices last {got} ns, the workload measured {want}")
PY
report "$T/cpu.out" -i "$T/run.data" --timeline "$T/cpu.pftrace" --cpu-only
cmp -s "$T/cpu.pftrace" "$T/run.pftrace" || fail "--cpu-only differs on a CPU-only trace"
# GPU-less CUDA: fake_cuda_app with libfake_cupti.so (the real channel
# client and launch marker, fake kernels of a known length that all start
# at their launch: they overlap on their stream, so the timeline needs one
# lane per launch in flight). Every launch is a cudaLaunchKernel slice with
# the app's launch path as its stack and a flow to its kernel, a 20 ms
# "fake_kernel(int)" slice; the app's NVTX ranges are on its thread.
APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
if [ -x "$APP" ] && [ -f "$LIB" ]; then
	XPU_FAKE_KERNEL_NS=20000000 "$RECORD" -F 99 -o "$T/fake.data" --cupti-lib "$LIB" -- \
		"$APP" 20 0.3 nvtx >"$T/fake.out" 2>"$T/fake.err" ||
		{ cat "$T/fake.err"; fail "xpu-record (fake CUDA) exited $?"; }
	report "$T/fake.tl" -i "$T/fake.data" --timeline "$T/fake.pftrace"
	grep -q "end early" "$T/fake.tl.err" && fail "fake CUDA: slices were cut: $(cat "$T/fake.tl.err")"
	protoc --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" \
		<"$T/fake.pftrace" >"$T/fake.txt" || fail "protoc cannot decode the fake CUDA timeline"
	python3 "$XPU_TOP/tests/shell/timeline_check.py" <"$T/fake.txt" >"$T/fake.json" ||
		fail "fake CUDA timeline: $(cat "$T/fake.json")"
	python3 - "$T/fake.json" <<'PY' || fail "fake CUDA --timeline (above)"
import json, sys
s = json.load(open(sys.argv[1]))
def eq(what, got, want):
    if got != want:
        sys.exit(f"{what}: timeline {got}, want {want}")
eq("API slices", s["names_by_kind"]["api"], [["cudaLaunchKernel", 20]])
# the [nvtx] frame of the range around the launch is in the stack, as in --folded
eq("launch stacks", s["api_stack_tails"], {"[nvtx]step;app_launch;cudaLaunchKernel": 20})
eq("kernel slices", s["names_by_kind"]["gpu"], [["fake_kernel(int)", 20]])
eq("kernel lengths", set(s["gpu_ns"]), {20000000})
eq("flows", s["flows"], 20)
eq("NVTX ranges", s["names_by_kind"]["nvtx"], [["phase", 1], ["step", 20]])
PY
else
	note "fake CUDA pieces not built: GPU part skipped"
fi
echo "ok: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["samples"], "samples,", d["packets"], "packets")' "$T/run.json")"

#!/usr/bin/env bash
# --timeline on gen_trace's synthetic CPU + GPU traces, decoded by an
# independent reader, Debian's protoc (Google's C++ protobuf parser) with our
# perfetto_trace.proto, and checked by timeline_check.py (sequence, interning
# order, track references, BEGIN/END pairing per track, flow pairing) against
# what --dump and --folded say of the same trace: one thread track per
# (pid, tid, comm), a CUDA API slice per GPU_API record with its launch stack,
# a flow per GPU record whose (pid, correlation id) has an API record, a slice
# per kernel / memcpy / sync with the kernels' demangled names, one callstack
# sample per SAMPLE whose stacks sum to --folded --cpu-only; views and
# filters. PERFETTO_PROTO=path/to/perfetto_trace.proto (Perfetto's merged
# proto) also decodes the file with Perfetto's full schema and requires the
# same text: our field numbers are Perfetto's.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
"$REPORT" --help | grep -q -- '--timeline FILE' || skip "xpu-report built without libprotobuf-c: no --timeline"
command -v protoc >/dev/null || skip "protoc not installed (protobuf-compiler, scripts/setup.sh)"
PROTO_DIR=$XPU_TOP/report/output
CHECK=$XPU_TOP/tests/shell/timeline_check.py

decode() {	# pftrace, out.txt
	protoc --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" \
		<"$1" >"$2" || fail "protoc cannot decode $1"
	if [ -n "${PERFETTO_PROTO:-}" ]; then
		protoc --decode=perfetto.protos.Trace -I "$(dirname "$PERFETTO_PROTO")" "$PERFETTO_PROTO" \
			<"$1" >"$2.full" || fail "Perfetto's proto cannot decode $1"
		cmp -s "$2" "$2.full" || fail "our proto and Perfetto's decode $1 differently"
	fi
}
timeline() {	# trace, name, report args...: $T/name.json
	local in=$1 name=$2; shift 2
	"$REPORT" -i "$in" --timeline "$T/$name.pftrace" "$@" 2>"$T/$name.err" ||
		fail "--timeline $* exited $?: $(cat "$T/$name.err")"
	decode "$T/$name.pftrace" "$T/$name.txt"
	python3 "$CHECK" <"$T/$name.txt" >"$T/$name.json" || fail "--timeline $*: $(cat "$T/$name.json")"
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/$1.json" "$2"; }

for gen in "--gpu" "--gpu --sync"; do
	# shellcheck disable=SC2086
	tui_gen "$T/t.data" -n 1500 $gen
	"$REPORT" -i "$T/t.data" --dump >"$T/dump" 2>/dev/null || fail "--dump"
	"$REPORT" -i "$T/t.data" --folded --cpu-only --no-comm >"$T/cpu.folded" 2>/dev/null
	"$REPORT" -i "$T/t.data" --folded --gpu-only --no-comm >"$T/gpu.folded" 2>/dev/null
	timeline "$T/t.data" all
	python3 - "$T/all.json" "$T/dump" "$T/cpu.folded" "$T/gpu.folded" <<'PY' || fail "--timeline ($gen): (above)"
import json, re, sys
from collections import Counter
s = json.load(open(sys.argv[1]))
recs = [l.split() for l in open(sys.argv[2])]
def kv(r):
    return dict(f.split("=", 1) for f in r[1:] if "=" in f)
count = Counter(r[0] for r in recs if r)
apis = {(kv(r)["pid"], kv(r)["corr"]) for r in recs if r and r[0] == "GPU_API"}
work = [r for r in recs if r and r[0] in ("GPU_KERNEL", "GPU_MEMCPY", "GPU_MEMSET", "GPU_SYNC")]
comms = {(int(kv(r)["pid"]), int(kv(r)["tid"]), kv(r)["comm"]) for r in recs if r and r[0] == "COMM"}
def eq(what, got, want):
    if got != want:
        sys.exit(f"{what}: timeline {got}, want {want}")
eq("API slices", s["api_slices"], count["GPU_API"])
eq("API slices with a launch stack", s["api_with_stack"], count["GPU_API"])
eq("flows", s["flows"], sum(1 for r in work if (kv(r)["pid"], kv(r)["corr"]) in apis))
eq("GPU slices", s["gpu_slices"], count["GPU_KERNEL"] + count["GPU_MEMCPY"] + count["GPU_MEMSET"])
eq("sync slices", sum(n for _, n in s["names_by_kind"]["sync"]), count["GPU_SYNC"])
eq("samples", s["samples"], count["SAMPLE"])
eq("thread tracks", {tuple(t) for t in s["threads"]}, comms)
folded = {}
for l in open(sys.argv[3]):
    stack, n = l.rsplit(" ", 1)
    folded[stack] = int(n)
eq("sample stacks", s["folded"], folded)
kernels = Counter()
for l in open(sys.argv[4]):
    stack, n = l.rsplit(" ", 1)
    m = re.search(r"\[GPU_Kernel\](.*)$", stack)
    if m:
        kernels[m.group(1)] += 1
tl_kernels = {n for n, _ in s["names_by_kind"]["gpu"] if not re.match(r"(Memcpy|Memset)", n)}
eq("kernel names", tl_kernels, set(kernels))
eq("memcpy args", s["memcpy_args_ok"], True)
eq("API names", [n for n, _ in s["names_by_kind"]["api"]], ["cudaLaunchKernel"] +
   (["cudaStreamSynchronize"] if count["GPU_SYNC"] else []))
PY
done

# views and filters
timeline "$T/t.data" cpu --cpu-only
[ "$(field cpu gpu_slices)" = 0 ] && [ "$(field cpu flows)" = 0 ] || fail "--cpu-only: GPU slices"
[ "$(field cpu samples)" = "$(field all samples)" ] || fail "--cpu-only: samples"
[ "$(field cpu api_slices)" = "$(field all api_slices)" ] || fail "--cpu-only: the CUDA calls are CPU side"
timeline "$T/t.data" gpu --gpu-only
[ "$(field gpu samples)" = 0 ] || fail "--gpu-only: samples"
[ "$(field gpu gpu_slices)" = "$(field all gpu_slices)" ] || fail "--gpu-only: GPU slices"
[ "$(field gpu flows)" = "$(field all flows)" ] || fail "--gpu-only: flows"
timeline "$T/t.data" child --pid 200
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert {t[0] for t in s["threads"]} == {200}, s["threads"]; assert s["api_slices"] == 0 and s["gpu_slices"] == 0' \
	"$T/child.json" || fail "--pid 200: other processes"
want=$("$REPORT" -i "$T/t.data" --folded --cpu-only --time 0.5,1.5 2>/dev/null | awk '{n += $NF} END {print n}')
timeline "$T/t.data" time --time 0.5,1.5
[ "$(field time samples)" = "$want" ] || fail "--time: $(field time samples) samples, --folded says $want"
"$REPORT" -i "$T/t.data" --timeline "$T/x.pftrace" --gpu-idle >/dev/null 2>"$T/err" && fail "--gpu-idle accepted"
grep -q -- "--timeline shows GPU gaps" "$T/err" || fail "--gpu-idle: $(cat "$T/err")"
[ ! -e "$T/x.pftrace" ] || fail "--gpu-idle left a file"
echo "ok: $(field all packets) packets, $(field all samples) samples, $(field all flows) flows"

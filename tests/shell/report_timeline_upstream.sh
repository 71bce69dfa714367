#!/usr/bin/env bash
# --timeline decoded with Perfetto's own merged trace proto, pinned in
# tests/data/perfetto/ (v58.2; README there), by protoc, and its tracks,
# slices and flows counted against what --header says of the same trace
# (issue 33): GPU-less CUDA recordings of fake_cuda_app with libfake_cupti.so
# (launches + NVTX ranges; CUDA graph replays) and gen_trace's synthetic
# CPU + GPU trace. Checked, by timeline_check.py and here:
#  - one kernel/memcpy/memset slice per record the header counts, one CUDA
#    sync slice per sync, one CUDA API slice per API record, one flow per
#    piece of GPU work the header joined to its API call by id (both ends
#    carry the flow id);
#  - one NVTX slice per range the header counts (push/pop), by name;
#  - one "graph N" slice per graph launch on its stream's track, holding the
#    kernels it replayed: as many as the header's "replayed work";
#  - one off-CPU slice per OFFCPU record the header counts;
#  - every mapping of a file with a build-id carries it (InternedData
#    build_ids), the same bytes --dump prints for that file.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
"$REPORT" --help | grep -q -- '--timeline FILE' || skip "xpu-report built without libprotobuf-c: no --timeline"
command -v protoc >/dev/null || skip "protoc not installed (protobuf-compiler, scripts/setup.sh)"
PD=$XPU_TOP/tests/data/perfetto
[ -f "$PD/perfetto_trace.proto" ] || fail "$PD/perfetto_trace.proto missing"
[ "$(stat -c %s "$PD/perfetto_trace.proto")" -lt 1048576 ] || fail "the pinned proto is over 1 MB"
grep -q 'v58.2' "$PD/README.md" || fail "$PD/README.md names no pinned version"
CHECK=$XPU_TOP/tests/shell/timeline_check.py

timeline() {	# data, name: $T/name.json, $T/name.header, $T/name.dump
	report "$T/$2.header" -i "$1" --header
	report "$T/$2.dump" -i "$1" --dump
	report "$T/$2.out" -i "$1" --timeline "$T/$2.pftrace"
	protoc --decode=perfetto.protos.Trace -I "$PD" "$PD/perfetto_trace.proto" \
		<"$T/$2.pftrace" >"$T/$2.txt" 2>"$T/$2.perr" ||
		fail "$2: Perfetto's v58.2 proto cannot decode the timeline: $(cat "$T/$2.perr")"
	python3 "$CHECK" <"$T/$2.txt" >"$T/$2.json" || fail "$2: $(cat "$T/$2.json")"
}
compare() {	# name
	python3 - "$T/$1.json" "$T/$1.header" "$T/$1.dump" <<'PY' || fail "$1: (above)"
import json, re, sys
s = json.load(open(sys.argv[1]))
h = open(sys.argv[2]).read()
dump = open(sys.argv[3]).read()
def eq(what, got, want):
    if got != want:
        sys.exit(f"{what}: timeline {got}, --header {want}")
def hnum(pat, default=0):
    m = re.search(pat, h, re.M)
    return int(m.group(1)) if m else default
rec = lambda t: hnum(rf"^#\s+{t}\s+([0-9]+)")
kernels = hnum(r"^#\s+kernels\s+([0-9]+):")
memcpy = hnum(r"^#\s+memcpy\s+([0-9]+):")
memset = hnum(r"^#\s+memset\s+([0-9]+):")
eq("kernel + memcpy + memset slices", s["gpu_slices"], kernels + memcpy + memset)
eq("CUDA API slices", s["api_slices"], rec("GPU_API"))
sync = hnum(r"^#\s+sync\s+([0-9]+):")
eq("CUDA sync slices", sum(n for _, n in s["names_by_kind"]["sync"]), sync)
eq("flows (GPU work joined to its API call by id)", s["flows"],
   sum(int(m) for m in re.findall(r": by id ([0-9]+)", h)))
eq("off-CPU slices", sum(n for _, n in s["names_by_kind"]["offcpu"]), rec("OFFCPU"))
nvtx = hnum(r"^#\s+push/pop ([0-9]+),")
eq("NVTX slices", sum(n for _, n in s["names_by_kind"]["nvtx"]), nvtx)
want = {}
for m in re.finditer(r"^#\s+\S+\s+([0-9]+)\s+\S+\s+\S+\s+(\S+)$", h.split("NVTX ranges")[-1] if nvtx else "", re.M):
    want[m.group(2)] = int(m.group(1))
if nvtx:
    eq("NVTX ranges by name", dict(s["names_by_kind"]["nvtx"]), want)
replayed = hnum(r"replayed work: ([0-9]+) records")
eq("graph replayed work", s["graph_work"], replayed)
eq("kernels inside graph slices", s["graph_work_nested"], replayed)
launches = len({(m.group(1), m.group(2)) for m in
                re.finditer(r"^GPU_(?:KERNEL|MEMCPY|MEMSET) .* pid=([0-9]+) corr=([0-9]+) .*graph=[1-9]", dump, re.M)})
eq("graph slices (one per launch and stream)", s["graph_slices"], launches)
bids = {}
for m in re.finditer(r"^MMAP .*build-id=([0-9a-f]+) (\S+)", dump, re.M):
    bids.setdefault(m.group(2).rsplit("/", 1)[-1], m.group(1))
for mod, b in s["mapping_build_ids"].items():
    eq(f"{mod}'s build-id", b, bids.get(mod))
with_bid = [m for m in bids if any(m == k for k in s["mapping_build_ids"])]
print(f"# {s['gpu_slices']} GPU slices, {s['api_slices']} API, {s['flows']} flows, "
      f"{s['graph_slices']} graph launches, {nvtx} NVTX, {len(s['mapping_build_ids'])} of "
      f"{s['mappings']} mappings with a build-id")
sys.exit(0 if s["mapping_build_ids"] or not s["mappings"] else "no mapping has a build-id")
PY
}

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
if [ -x "$APP" ] && [ -f "$LIB" ] && [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	for mode in nvtx graph; do
		XPU_FAKE_KERNEL_NS=2000000 "$RECORD" -F 99 -o "$T/$mode.data" --cupti-lib "$LIB" -- \
			"$APP" 6 0.05 $mode >"$T/$mode.rec.out" 2>"$T/$mode.rec.err" ||
			{ cat "$T/$mode.rec.err" >&2; fail "xpu-record (fake CUDA, $mode) exited $?"; }
		timeline "$T/$mode.data" "$mode"
		compare "$mode"
	done
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["graph_slices"] != 6)' \
		"$T/graph.json" || fail "graph: not one graph slice per each of the 6 launches"
	grep -q '^#   push/pop [1-9]' "$T/nvtx.header" || fail "nvtx: the recording holds no NVTX range"
else
	note "fake CUDA pieces not built or no eBPF here: recordings skipped"
fi
# gen_trace's synthetic CPU + GPU trace (memcpy, sync, no NVTX)
GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$GEN" ] || fail "$GEN not built: run make tests-build"
for g in "--gpu" "--gpu --sync"; do
	# shellcheck disable=SC2086
	"$GEN" -o "$T/gen.data" -n 1500 $g >/dev/null 2>&1 || fail "gen_trace $g failed"
	timeline "$T/gen.data" gen
	compare gen
done
exit 0

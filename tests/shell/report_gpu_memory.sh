#!/usr/bin/env bash
# --gpu-memory on gen_trace_mem's trace (tests/tools/gen_trace_mem.c: its
# comment gives the history, every number below follows from it):
#  - --header's memory section: the peaks and when, fragmentation, the
#    attach baseline, the OOM, the top holders, unknown and double frees,
#    the record with a bad op skipped;
#  - the views: the default opens at the OOM for the process that had one,
#    =peak, =alloc, =leak, --time T, a window; folded lines by stack;
#  - go tool pprof reads the heap profile (inuse_space, inuse_objects,
#    alloc_space);
#  - --timeline: the allocated counter's highest value is the peak, its
#    last the leak; large allocations carry their stacks;
#  - every output's total agrees (outputs_agree.py); the TUI says bytes;
#  - usage errors and a trace without memory records.
. "$(dirname "$0")/lib/e2e.sh"
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
[ -x "$GEN_MEM" ] || fail "$GEN_MEM not built: run make tests-build"
"$GEN_MEM" -o "$T/mem.data" >/dev/null || fail "gen_trace_mem failed"
MIB=1048576

report "$T/h" -i "$T/mem.data" --header
for want in \
	'#   pid 300 device 0 (PyTorch blocks; reserved: its CUDA-level segments):' \
	'#     peak allocated 224 MiB (234881024 bytes) at 0.012000 s' \
	'#     peak reserved  384 MiB (402653184 bytes) at 0.011000 s' \
	'#     fragmentation at the peak: 160 MiB (reserved 384 MiB - allocated 224 MiB)' \
	'#     allocations 8 (232 MiB), live at the end 8.00 MiB in 1 block' \
	'#     before the attach: 1.00 GiB in use on the device at 0.000000 s (no stack known)' \
	'#     out of memory at 0.025000 s: 40.0 GiB asked, in mem_demo_grow' \
	'#     top holders at the out-of-memory failure:' \
	'#   pid 400 device 1 (CUDA-level):' \
	'#     peak allocated 154 MiB (161480704 bytes) at 0.006000 s' \
	'#   frees of unknown pointers: 2 (PyTorch 1, CUDA-level 1)' \
	'#   double frees: 1 (PyTorch 1, CUDA-level 0)' \
	'#   memory records skipped for values out of range: 1'; do
	grep -qxF -- "$want" "$T/h" || fail "--header lacks '$want': $(grep -A30 '^# gpu memory' "$T/h")"
done
grep -Eq '^#        94\.1%    128 MiB      4 blocks  mem_demo_load_weights$' "$T/h" ||
	fail "the top holder at the OOM is not the weights: $(grep -A4 'top holders at the out' "$T/h")"
report "$T/hl" -i "$T/mem.data" --header --gpu-memory=leak
grep -q '^#       100\.0%   8\.00 MiB      1 block   mem_demo_leak  (age 0\.025000 s)$' "$T/hl" ||
	fail "--gpu-memory=leak --header does not name the leak with its age: $(grep -A3 'top holders' "$T/hl")"

# sum of the folded lines of PROCESS whose stack matches RE
fsum() { awk -v re="$2" -v p="^$1;" '$0 ~ p && $0 ~ re { s += $NF } END { print s + 0 }' "$3"; }
views() {	# name, args...
	local n=$1; shift
	report "$T/$n.folded" -i "$T/mem.data" --folded "$@"
}
views default --gpu-memory
views peak --gpu-memory=peak
views alloc --gpu-memory=alloc
views leak --gpu-memory=leak
views at --gpu-memory --time 0.0125
views window --gpu-memory=peak --time 0.021,0.05
expect() {	# view, process, stack re, bytes
	local got
	got=$(fsum "$2" "$3" "$T/$1.folded")
	[ "$got" = "$4" ] || fail "--gpu-memory $1: $2 $3 holds $got bytes, want $4: $(cat "$T/$1.folded")"
}
grep -q '^mem-demo;\[GPU memory dev0\];main;mem_demo_main;mem_demo_load_weights ' "$T/peak.folded" ||
	fail "no device root frame and stack: $(cat "$T/peak.folded")"
# at the OOM (25 ms): the weights and the leak; pid 400 at its peak
expect default mem-demo 'load_weights' $((128 * MIB))
expect default mem-demo 'mem_demo_leak' $((8 * MIB))
expect default mem-demo 'mem_demo_temp' 0
expect default cuda-demo 'cudaMalloc [0-9]+$' $((100 * MIB))
expect default cuda-demo 'cudaMallocAsync' $((50 * MIB))
# the peak (12 ms): weights, forward, the temporary
expect peak mem-demo 'mem_demo_temp' $((64 * MIB))
expect peak mem-demo 'mem_demo_forward' $((32 * MIB))
expect peak mem-demo '' $((224 * MIB))
# churn: the two forward blocks and the temporary counted once each
expect alloc mem-demo '' $((232 * MIB))
expect alloc cuda-demo '' $((154 * MIB))
# the end: the leak and the pinned buffer
expect leak mem-demo '' $((8 * MIB))
expect leak cuda-demo 'cudaMallocHost' $((4 * MIB))
expect leak cuda-demo 'cudaMalloc [0-9]+$' 0
# 12.5 ms: the temporary is still live, the pool block freed at 8
expect at mem-demo 'mem_demo_temp' $((64 * MIB))
expect at cuda-demo 'cudaMallocAsync' 0
# from 21 ms: the weights and the leak are live at the window's start
expect window mem-demo '' $((136 * MIB))
report "$T/nocomm" -i "$T/mem.data" --folded --gpu-memory=peak --no-comm
grep -q '^\[GPU memory dev0\];main;' "$T/nocomm" || fail "--no-comm: the device is not the root"
report "$T/stdio" -i "$T/mem.data" --stdio --gpu-memory=peak
grep -q '^# Total: 396361728 bytes (378 MiB) in 10 blocks, GPU memory$' "$T/stdio" ||
	fail "--stdio's total: $(head -3 "$T/stdio")"
report "$T/svg" -i "$T/mem.data" --svg - --gpu-memory=peak
grep -q '<title>mem_demo_temp (67108864 bytes, 64.0 MiB, ' "$T/svg" || fail "the SVG's tooltips do not say bytes"
grep -q ' bytes\[^()\]' "$T/svg" || fail "the SVG's script does not read bytes"

if command -v go >/dev/null && "$REPORT" --help | grep -q -- '--pprof'; then
	export HOME=$T GOCACHE=$T/gocache
	report "$T/p" -i "$T/mem.data" --gpu-memory=peak --pprof "$T/m.pb.gz"
	go tool pprof -symbolize=none -top "$T/m.pb.gz" >"$T/top" 2>"$T/top.err" ||
		fail "go tool pprof -top: $(cat "$T/top.err")"
	grep -q '^Type: inuse_space$' "$T/top" || fail "pprof: not a heap profile: $(head -5 "$T/top")"
	grep -Eq '^ +128MB .* mem_demo_load_weights$' "$T/top" || fail "pprof -top: $(cat "$T/top")"
	go tool pprof -symbolize=none -sample_index=inuse_objects -top "$T/m.pb.gz" >"$T/topo" 2>&1
	grep -Eq '^ +4 .* mem_demo_load_weights$' "$T/topo" || fail "pprof inuse_objects: $(cat "$T/topo")"
	report "$T/p" -i "$T/mem.data" --gpu-memory=alloc --pprof "$T/a.pb.gz"
	go tool pprof -symbolize=none -top "$T/a.pb.gz" >"$T/topa" 2>&1
	grep -q '^Type: alloc_space$' "$T/topa" || fail "pprof =alloc: $(head -5 "$T/topa")"
else
	note "no go or no --pprof: the heap profile is not read back"
fi

if command -v protoc >/dev/null && "$REPORT" --help | grep -q -- '--timeline'; then
	PD=$XPU_TOP/tests/data/perfetto
	report "$T/t" -i "$T/mem.data" --timeline "$T/m.pftrace"
	protoc --decode=perfetto.protos.Trace -I "$PD" "$PD/perfetto_trace.proto" <"$T/m.pftrace" \
		>"$T/m.txt" || fail "Perfetto's proto cannot decode the memory timeline"
	python3 "$XPU_TOP/tests/shell/timeline_check.py" <"$T/m.txt" >"$T/m.json" || fail "$(cat "$T/m.json")"
	python3 - "$T/m.json" <<'PY' || fail "timeline (above)"
import json, sys
s = json.load(open(sys.argv[1]))
M = 1 << 20
want = {"mem-demo/GPU 0 memory: allocated (PyTorch)": (224 * M, 8 * M),
        "mem-demo/GPU 0 memory: reserved (PyTorch segments)": (384 * M, 256 * M),
        "cuda-demo/GPU 1 memory: CUDA device": (150 * M, 0),
        "cuda-demo/GPU 1 memory: CUDA pinned": (4 * M, 4 * M)}
for track, (hi, last) in want.items():
    got = (s["counter_max"].get(track), s["counter_last"].get(track))
    if got != (hi, last):
        sys.exit(f"{track}: highest, last {got}, want {(hi, last)}")
big = [b for b, stack in s["mem_slices"] if stack.endswith("mem_demo_temp")]
if big != [64 * M]:
    sys.exit(f"large allocations: {s['mem_slices']}")
PY
else
	note "no protoc or no --timeline: the memory tracks are not decoded"
fi

python3 "$XPU_TOP/tests/shell/outputs_agree.py" "$REPORT" "$T/mem.data" mem --gpu-memory \
	--gpu-memory=alloc --gpu-memory=leak "--gpu-memory --time 0.0125" \
	"--gpu-memory=peak --time 0.021,0.05" >"$T/agree" || { cat "$T/agree"; fail "outputs disagree"; }

# the TUI: the memory view, in bytes
if command -v tmux >/dev/null && "$REPORT" --help | grep -q -- '--tui'; then
	SOCK=xpu-mem-$$
	tmx new-session -d -x 100 -y 24 -s t -c "$T" \
		"env TERM=screen $REPORT -i mem.data --gpu-memory=peak; sleep 600"
	tui_wait "396361728 bytes" || { tmx kill-server; fail "TUI: no bytes in the title"; }
	tui_screen >"$T/tui"
	tmx kill-server
	grep -q '^ Children     Self    Bytes  Symbol' "$T/tui" || fail "TUI: $(cat "$T/tui")"
	grep -q '59\.26%.*234881024.*\[GPU memory dev0\]' "$T/tui" || fail "TUI: $(cat "$T/tui")"
else
	note "no tmux or no --tui: the TUI's memory view is not looked at"
fi

# usage errors, and a trace without memory records
"$REPORT" -i "$T/mem.data" --folded --time 0.01 >/dev/null 2>"$T/e1"
[ $? -eq "$EXIT_USAGE" ] && grep -q 'one moment goes with --gpu-memory' "$T/e1" || fail "--time T alone: $(cat "$T/e1")"
"$REPORT" -i "$T/mem.data" --folded --gpu-memory=biggest >/dev/null 2>"$T/e2"
[ $? -eq "$EXIT_USAGE" ] || fail "--gpu-memory=biggest accepted"
"$REPORT" -i "$T/mem.data" --folded --gpu-memory=leak --time 0.01 >/dev/null 2>"$T/e3"
[ $? -eq "$EXIT_USAGE" ] || fail "--gpu-memory=leak --time T accepted"
tui_gen "$T/cpu.data" -n 500
"$REPORT" -i "$T/cpu.data" --folded --gpu-memory >/dev/null 2>"$T/e4"
[ $? -eq "$EXIT_NODATA" ] && grep -q 'holds no GPU memory records' "$T/e4" || fail "no memory records: $(cat "$T/e4")"
echo "ok"

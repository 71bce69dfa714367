#!/usr/bin/env bash
# CUDA graph capture sites (issue 12), GPU-less: xpu-record runs
# fake_cuda_app "graph" with libfake_cupti.so, whose graph calls go through
# the real cupti/activity/graphs.c and the real marker uprobe. The app captures 3
# kernel launches in graph_capture_site, adds a 4th node in graph_build_site
# outside any launch, instantiates (clones) and replays the graph from
# graph_replay_site. Each replayed kernel must be under its launch with
# --graph-attribution=launch, under its capture site with capture, and under
# both (launch; [graph replay]; capture) by default, with the same weights.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
need_tools
need_bpf

# 25 launches x 4 kernels x 10 ms at 100 Hz: one sample per kernel
LAUNCHES=25 FREQ=100
XPU_FAKE_KERNEL_NS=10000000 "$RECORD" -v -F $FREQ -o "$T/graph.data" --cupti-lib "$LIB" -- \
	"$APP" $LAUNCHES 0.1 graph >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err" >&2; fail "xpu-record exited $?"; }
# with a CUDA process, stacks are no longer coded (record/drain.c: drain__plain)
grep -q 'a CUDA process connected: stacks are no longer coded' "$T/record.err" ||
	fail "xpu-record did not stop coding stacks for a CUDA process"
# ... but still writes the frames of their CFI unwinding (flags bits 2, 3
# and 4, no regs), or prunes the words with it (bits 2 and 3)
report "$T/dump" -i "$T/graph.data" --dump
n=$(grep -c '^GPU_CORR' "$T/dump")
c=$(grep '^GPU_CORR' "$T/dump" | grep -Ec '(regs=17 stack=[0-9]+ flags=0x[0-9a-f]*[cdef]|uips=[1-9][0-9]* regs=0 stack=0 flags=0x[13579bdf][cdef]) ')
[ "$n" -gt 0 ] && [ "$c" -ge $((n * 9 / 10)) ] ||
	fail "only $c of $n correlation records' stacks unwound or pruned with the CFI reads"

for m in both capture launch; do
	report "$T/$m.folded" -i "$T/graph.data" --folded --gpu-only --graph-attribution=$m
	folded_check_syntax <"$T/$m.folded" || fail "$m.folded is not valid folded output"
	[ "$(folded_sum <"$T/$m.folded")" -eq 100 ] ||
		{ cat "$T/$m.folded" >&2; fail "--graph-attribution=$m: GPU total is not 100 samples"; }
done
report "$T/default.folded" -i "$T/graph.data" --folded --gpu-only
cmp -s "$T/default.folded" "$T/both.folded" || fail "the default is not --graph-attribution=both"

K='\[GPU_Kernel\]fake_kernel\(int\)$'
CAP=';main;app_graph;graph_capture_site;cudaLaunchKernel'
BUILD=';main;app_graph;graph_build_site;\[graph node\]'
LAUNCH=';main;app_graph;graph_replay_site;cudaGraphLaunch'
expect() {	# file, regex, weight
	local got
	got=$(folded_sum "$2" <"$T/$1.folded")
	[ "$got" -eq "$3" ] || { cat "$T/$1.folded" >&2; fail "$1: weight $got under '$2', want $3"; }
}
expect launch "$LAUNCH;$K" 100
expect capture "$CAP;\[graph replay\];$K" 75
expect capture "$BUILD;\[graph replay\];$K" 25
# both: the capture stack whole, from its own root (_start ...), after the frame
expect both "$LAUNCH;\[graph replay\];([^;]+;)*${CAP#;};$K" 75
expect both "$LAUNCH;\[graph replay\];([^;]+;)*${BUILD#;};$K" 25
grep -q '\[graph ' "$T/launch.folded" && fail "--graph-attribution=launch shows graph frames"
grep -q 'xpu_graphs__node\|xpu_cupti_marker\|unknown' "$T/both.folded" &&
	fail "library frames or unknown sites: $(cat "$T/both.folded")"

report "$T/header.txt" -i "$T/graph.data" --header
grep -Eq '^#   graph nodes: 4 created, 4 cloned; replayed work: 100 records, 1000\.000 ms$' \
	"$T/header.txt" && grep -Eq '^#   graph attribution: both; capture site found for 100 records \(100\.0% of replayed time\)$' \
	"$T/header.txt" || { sed -n '/# gpu:/,$p' "$T/header.txt" >&2; fail "header lacks the graph lines"; }
report "$T/dump.txt" -i "$T/graph.data" --dump
[ "$(grep -c '^GPU_GRAPH_NODE .*flags=0x1 ' "$T/dump.txt")" -eq 4 ] &&
	[ "$(grep -c '^GPU_CORR .*domain=4' "$T/dump.txt")" -eq 1 ] ||
	{ grep 'GRAPH\|domain=4' "$T/dump.txt" >&2; fail "--dump: expected 4 clones and 1 graph-node stack"; }

"$REPORT" -i "$T/graph.data" --folded --graph-attribution=sideways >/dev/null 2>"$T/bad.err"
[ $? -eq 2 ] && grep -q "bad --graph-attribution 'sideways'" "$T/bad.err" ||
	fail "a bad mode: want exit 2 and a clear error, got: $(cat "$T/bad.err")"

# A trace without graph node records (recorded before 1.4, or CUPTI without
# graph callbacks): the launch stacks, as before, and the header says why.
XPU_FAKE_NO_GRAPH_NODES=1 XPU_FAKE_KERNEL_NS=10000000 "$RECORD" -F $FREQ -o "$T/old.data" \
	--cupti-lib "$LIB" -- "$APP" $LAUNCHES 0.1 graph >"$T/old.out" 2>"$T/old.err" ||
	{ cat "$T/old.err" >&2; fail "xpu-record exited $? (no graph nodes)"; }
report "$T/old.folded" -i "$T/old.data" --folded --gpu-only
expect old "$LAUNCH;$K" 100
report "$T/old.header" -i "$T/old.data" --header
grep -q '^#   graph attribution: launch (the trace has no graph node records' "$T/old.header" ||
	{ sed -n '/# gpu:/,$p' "$T/old.header" >&2; fail "header does not say why replays keep their launch stack"; }
note "replayed kernels: 75 under graph_capture_site, 25 under graph_build_site, 100 under graph_replay_site"
exit 0

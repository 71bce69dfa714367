#!/usr/bin/env bash
# The launch walk end to end, without a GPU (cupti/walk/walk_probe.c,
# record/unwind/launch_rules.c, common/unwind_table.c): fake_cuda_app launches 3,000
# times through libfake_cupti.so, whose launches enter the walk as the real
# library's callback does. By default (--launch-stacks=walk) xpu-record hands
# the process a rule table and fills it from the marker stacks it unwinds:
#  - walk+: the walks (probe and marker both run) reach their end once the
#    rules are in, never on stale code or a read outside the copy, and each
#    dumped walk equals the marker's stack of the same launch (frame count
#    and the first four pcs);
#  - the default: each complete walk is sent as the launch's GPU_CORR
#    record (frames, no marker), the marker runs where a walk could not:
#    every launch has one stack, and the report's GPU flame graph is the
#    same, byte for byte, as --launch-stacks=marker's, though most walks
#    were only checked against the thread's memo and two call paths start
#    at the same stack pointer (FAKE_TWO_SITES);
#  - launches from Python code (py_fake_launch.py, ctypes): the walk reads
#    the Python frames in the process too, and the GPU flame graph is byte
#    for byte the marker's (whose Python frames come from the BPF walk);
#  - launches from a dozen depths (FAKE_DEPTHS), more call paths than the
#    memo keeps: walked again, the flame graph byte for byte the marker's;
#  - two CUDA processes: --header lists each one's walk counts;
#  - launches from a coroutine's heap stack (FAKE_COROUTINE): never walked
#    (not the thread's stack: reads there could fault), all by the marker,
#    and the same flame graph as --launch-stacks=marker's;
#  - a miss's marker call asks the recorder to wake now (the domain's
#    urgent bit), and the record's domain is written without it;
#  - --call-graph fp: the marker for every launch, and the header says so;
#  - XPU_CUPTI_MARKER=walk with --launch-stacks=marker (no table): the
#    library says so and keeps the marker.
. "$(dirname "$0")/lib/e2e.sh"
APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
[ "$(uname -m)" = x86_64 ] || skip "the walk probe's entry is x86-64 only"
need_tools
need_bpf
N=3000
# two call paths whose launches start at the same stack pointer: the walk's
# memo (a thread's last walks, checked word by word) must tell them apart
export FAKE_TWO_SITES=1 FAKE_LAUNCH_GAP_US=200 XPU_FAKE_KERNEL_NS=100000	# 0.3 s of GPU time: 30 samples at 99 Hz

# run NAME MARKER_MODE [ENV...]: records fake_cuda_app into $T/NAME.data;
# MARKER_MODE "-": XPU_CUPTI_MARKER as xpu-record sets it; $REC_OPTS: options
run() {
	local name=$1 mode=$2
	shift 2
	[ "$mode" = - ] || set -- "$@" XPU_CUPTI_MARKER="$mode"
	env -u XPU_CUPTI_MARKER "$@" XPU_CUPTI_UNW_DUMP="$T/$name.dump" \
		"$RECORD" -v -F 99 ${REC_OPTS:-} -o "$T/$name.data" --cupti-lib "$LIB" -- "$APP" $N 0.1 \
		>"$T/$name.out" 2>"$T/$name.err" || { cat "$T/$name.err" >&2; fail "$name: xpu-record failed"; }
	"$REPORT" -i "$T/$name.data" --dump 2>/dev/null | grep '^GPU_CORR' >"$T/$name.corr"
}
# probe NAME: "walks ends misses stale outside" from the library's line
probe() {
	sed -nE 's/^xpu-cupti walk probe: pid [0-9]+: ([0-9]+) walks, ([0-9]+) to their end .*, ([0-9]+) met a pc not in the table, ([0-9]+) stale code, ([0-9]+) a read outside.*/\1 \2 \3 \4 \5/p' "$T/$1.err"
}

run both walk+
read -r walks ends misses stale outside < <(probe both)
[ -n "${outside:-}" ] || { cat "$T/both.err" >&2; fail "walk+: no walk probe line"; }
note "walk+: $walks walks, $ends to their end, $misses misses; $(grep 'launch rules' "$T/both.err")"
[ "$walks" -eq $N ] || fail "walk+: $walks walks for $N launches"
[ "$stale" -eq 0 ] && [ "$outside" -eq 0 ] || fail "walk+: $stale stale, $outside outside"
[ $((ends + misses)) -eq $N ] || fail "walk+: $ends + $misses is not $N"
[ "$ends" -ge $((N / 2)) ] || fail "walk+: only $ends of $N walks reached their end"
grep -Eq 'launch rules: 1 tables, [1-9][0-9]* rules' "$T/both.err" || fail "walk+: no rules in the table"
[ "$(wc -l <"$T/both.corr")" -eq $N ] || fail "walk+: $(wc -l <"$T/both.corr") marker stacks, want $N"
awk 'NR == FNR { if ($3 == "miss") next; c = $2; sub(":", "", $4); n[c] = $4; f[c] = $5 " " $6 " " $7 " " $8; next }
     { for (i = 1; i <= NF; i++) {
	if ($i ~ /^corr=/) { split($i, a, "="); c = a[2] }
	if ($i ~ /^uips=/) { split($i, b, "="); u = b[2] } }
       if (!(c in n)) next
       s = ""; for (i = 1; i <= NF; i++) if ($i ~ /^u[0-3]=/) { split($i, d, "=0x"); s = s (s ? " " : "") d[2] }
       tot++; if (n[c] == u && f[c] == s) same++
       else print "corr " c ": walk " n[c] " [" f[c] "], marker " u " [" s "]" }
     END { printf "%d %d\n", tot, same }' "$T/both.dump" "$T/both.corr" >"$T/compare"
read -r tot same < <(tail -n 1 "$T/compare")
note "walk+: $same of $tot dumped walks equal the marker's stack"
[ "$tot" -gt 0 ] && [ "$same" -eq "$tot" ] || { cat "$T/compare" >&2; fail "walks differ from the marker's stacks"; }

run walk -
read -r walks ends misses stale outside < <(probe walk)
[ -n "${outside:-}" ] || { cat "$T/walk.err" >&2; fail "walk: no walk probe line"; }
note "walk: $walks walks, $ends to their end, $misses misses"
[ "$walks" -eq $N ] || fail "walk: $walks walks for $N launches"
[ "$ends" -gt 0 ] || fail "walk: no walk reached its end"
[ "$(wc -l <"$T/walk.corr")" -eq $N ] || fail "walk: $(wc -l <"$T/walk.corr") stacks for $N launches"
[ "$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^corr=/) print $i }' "$T/walk.corr" | sort -u | wc -l)" -eq $N ] ||
	fail "walk: a launch with two stacks, or one with none"
# a miss calls the marker with XPU_MARKER_URGENT in its domain (wake the
# recorder now); the record has the domain without it
grep -v ' domain=1 ' "$T/walk.corr" | head -3 | grep . && fail "walk: a GPU_CORR whose domain is not 1"
grep -q 'launch_stacks: walk' <("$REPORT" -i "$T/walk.data" --header 2>/dev/null) ||
	fail "walk: the trace's header does not name the walk"
REC_OPTS=--launch-stacks=marker run marker -
grep -q 'walk probe' "$T/marker.err" && fail "--launch-stacks=marker: the walk ran"
"$REPORT" -i "$T/walk.data" --folded --gpu-only >"$T/walk.folded" 2>/dev/null || fail "report of walk failed"
"$REPORT" -i "$T/marker.data" --folded --gpu-only >"$T/marker.folded" 2>/dev/null || fail "report of marker failed"
[ -s "$T/walk.folded" ] || fail "walk: an empty GPU flame graph"
grep -q ';app_launch_twin;' "$T/marker.folded" && grep -q ';app_launch;' "$T/marker.folded" ||
	fail "marker: not both launch paths in the GPU flame graph"
memo=$(sed -nE 's/.* ([0-9]+) checked against a memo instead.*/\1/p' "$T/walk.err")
note "walk: $memo of $ends complete walks checked against a memo"
[ "${memo:-0}" -gt 0 ] || fail "walk: the memo never served"
cmp -s "$T/walk.folded" "$T/marker.folded" ||
	{ diff "$T/marker.folded" "$T/walk.folded" | head >&2; fail "walk: other GPU stacks than the marker's"; }

# Python frames: launches from Python code (ctypes), walked in the process,
# Python frames and all (cupti/walk/walk_python.c): the same GPU flame graph as
# the marker's, whose Python frames the BPF walk reads
PY=$(command -v python3.11 || true)
if [ -n "$PY" ]; then
	# pyrec NAME OPTIONS...: py_fake_launch.py recorded into $T/py.NAME.data
	# (no -v: the walk's counts come from the trace, stderr stays quiet)
	pyrec() {
		local name=$1
		shift
		env -u XPU_CUPTI_MARKER "$RECORD" -F 99 "$@" -o "$T/py.$name.data" --cupti-lib "$LIB" -- \
			"$PY" "$XPU_TOP/tests/workloads/py_fake_launch.py" 2000 \
			>"$T/py.$name.out" 2>"$T/py.$name.err" || { cat "$T/py.$name.err" >&2; fail "python $name: xpu-record failed"; }
		"$REPORT" -i "$T/py.$name.data" --folded --gpu-only >"$T/py.$name.folded" 2>/dev/null ||
			fail "python $name: report failed"
		"$REPORT" -i "$T/py.$name.data" --header >"$T/py.$name.header" 2>/dev/null
	}
	pyrec on --launch-stacks=marker
	pyrec walk
	walked=$(grep 'cupti.launch_walk:' "$T/py.walk.header")
	pys=$(echo "$walked" | sed -nE 's/.* ([0-9]+) Python stacks .*/\1/p')
	note "python: $walked"
	grep -q 'walk probe' "$T/py.walk.err" && fail "python: the walk's counts on stderr without -v"
	[ "${pys:-0}" -gt 1000 ] || fail "python: only ${pys:-0} launches walked with their Python frames"
	grep -q ';py::train:.*;py::launch:' "$T/py.on.folded" && grep -q ';py::other:' "$T/py.on.folded" ||
		{ cat "$T/py.on.folded" >&2; fail "python: the marker's flame graph lacks the Python frames"; }
	cmp -s "$T/py.on.folded" "$T/py.walk.folded" ||
		{ diff "$T/py.on.folded" "$T/py.walk.folded" | head >&2; fail "python: other GPU stacks than the marker's"; }
	# no Python frames recorded: the walk takes native frames only, as the
	# marker's stacks have them, and does not wait for a layout
	pyrec off-on --launch-stacks=marker --python-frames=off
	pyrec off-walk --python-frames=off
	walked=$(grep 'cupti.launch_walk:' "$T/py.off-walk.header")
	ends=$(echo "$walked" | sed -nE 's/.* ([0-9]+) walks, ([0-9]+) to their end.*/\2/p')
	note "python, --python-frames=off: $walked"
	[ "${ends:-0}" -gt 1000 ] || fail "python off: only ${ends:-0} launches walked"
	echo "$walked" | grep -q ' 0 Python stacks' || fail "python off: Python frames walked"
	grep -q 'py::' "$T/py.off-on.folded" && fail "python off: Python frames in the marker's stacks"
	cmp -s "$T/py.off-on.folded" "$T/py.off-walk.folded" ||
		{ diff "$T/py.off-on.folded" "$T/py.off-walk.folded" | head >&2; fail "python off: other GPU stacks than the marker's"; }
else
	note "no python3.11: the Python part skipped"
fi

# launches from a dozen depths sharing their upper frames (FAKE_DEPTHS):
# more call paths than a thread keeps memos (8), so walks come from
# starts the memo does not hold and are walked again, and the flame graph
# stays the marker's byte for byte
FAKE_DEPTHS=1 run depths -
FAKE_DEPTHS=1 REC_OPTS=--launch-stacks=marker run depths-marker -
read -r walks ends misses stale outside < <(probe depths)
note "depths: $walks walks, $ends to their end"
[ "${ends:-0}" -gt $((N * 9 / 10)) ] || fail "depths: only ${ends:-0} of $N launches walked"
[ "$(wc -l <"$T/depths.corr")" -eq $N ] || fail "depths: $(wc -l <"$T/depths.corr") stacks for $N launches"
"$REPORT" -i "$T/depths.data" --folded --gpu-only >"$T/depths.folded" 2>/dev/null || fail "report of depths failed"
"$REPORT" -i "$T/depths-marker.data" --folded --gpu-only >"$T/depths-marker.folded" 2>/dev/null ||
	fail "report of depths-marker failed"
grep -Eq ';app_step;(app_deep;){11}app_launch;' "$T/depths.folded" ||
	fail "depths: the deepest path not in the GPU flame graph"
cmp -s "$T/depths.folded" "$T/depths-marker.folded" ||
	{ diff "$T/depths-marker.folded" "$T/depths.folded" | head >&2; fail "depths: other GPU stacks than the marker's"; }

# two CUDA processes: each one's walk counts in the header, with its pid
env -u XPU_CUPTI_MARKER "$RECORD" -F 99 -o "$T/two.data" --cupti-lib "$LIB" -- \
	bash -c "'$APP' 300 0 & '$APP' 300 0; wait" >"$T/two.out" 2>"$T/two.err" ||
	{ cat "$T/two.err" >&2; fail "two processes: xpu-record failed"; }
"$REPORT" -i "$T/two.data" --header 2>/dev/null | grep 'cupti.launch_walk: pid [0-9]*: 300 walks' >"$T/two.walks"
[ "$(sed -E 's/.*pid ([0-9]+):.*/\1/' "$T/two.walks" | sort -u | wc -l)" -eq 2 ] ||
	{ cat "$T/two.walks" >&2; fail "two processes: not both processes' walk counts in the header"; }

# a coroutine's stack: the marker for every launch, the same stacks
FAKE_COROUTINE=1 run co -
FAKE_COROUTINE=1 REC_OPTS=--launch-stacks=marker run co-marker -
read -r walks ends misses stale outside < <(probe co)
note "coroutine: $walks walks, $ends to their end, $outside not on the thread's stack"
[ "${outside:-0}" -eq $N ] && [ "$ends" -eq 0 ] || fail "coroutine: walks on a heap stack ($ends ended)"
[ "$(wc -l <"$T/co.corr")" -eq $N ] || fail "coroutine: $(wc -l <"$T/co.corr") stacks for $N launches"
"$REPORT" -i "$T/co.data" --folded --gpu-only >"$T/co.folded" 2>/dev/null || fail "report of co failed"
"$REPORT" -i "$T/co-marker.data" --folded --gpu-only >"$T/co-marker.folded" 2>/dev/null ||
	fail "report of co-marker failed"
grep -q ';app_step;app_launch;' "$T/co.folded" || fail "coroutine: app_launch not in the GPU flame graph"
cmp -s "$T/co.folded" "$T/co-marker.folded" ||
	{ diff "$T/co-marker.folded" "$T/co.folded" | head >&2; fail "coroutine: other GPU stacks than the marker's"; }

# frame-pointer stacks: the recorder unwinds nothing to learn rules from,
# so the marker takes every launch, and the trace says why
REC_OPTS="--call-graph fp" run fp -
grep -q 'launch_stacks: marker (--call-graph fp' <("$REPORT" -i "$T/fp.data" --header 2>/dev/null) ||
	fail "fp: the header does not say the marker took the launches"
grep -q 'walk probe' "$T/fp.err" && fail "fp: the walk ran"
[ "$(wc -l <"$T/fp.corr")" -eq $N ] || fail "fp: $(wc -l <"$T/fp.corr") stacks for $N launches"

REC_OPTS=--launch-stacks=marker run norules walk
grep -q 'no rule table from xpu-record' "$T/norules.err" || fail "no rules: the library did not say so"
[ "$(wc -l <"$T/norules.corr")" -eq $N ] || fail "no rules: the marker did not stay"
exit 0

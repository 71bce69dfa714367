#!/usr/bin/env bash
# GPU overhead benchmark (issues 3, 13), for the GPU machine, as root:
#   bench/gpu_overhead.sh            REPEAT=5 rounds, MODES="launch gpu"
# Runs bench/gpu_loop.py launch-bound (120k tiny kernels), GPU-bound
# (600 8192^3 bf16 matmuls) and, with MODES=gpt2 (not in the default
# MODES; needs transformers), 40 training steps of HuggingFace GPT-2 (a
# real model's mix of launches and GPU work) and, with MODES=decode, a
# GPT-2 serving loop (512 tokens, one at a time, with the KV cache),
# REPEAT rounds, each round
# running every row once in turn (interleaved), and prints per row the loop
# time's min/median/max, its median's ratio to no profiler and to the
# floor, and the cost per unit over no profiler (us/unit: per kernel
# launch in launch and gpu modes, per training step in gpt2, per token in
# decode); then the same table of the
# launching thread's CPU time in the loop (time.thread_time(): what the
# launch path costs the thread that launches, without what a noisy host
# steals; other threads' work is not in it). Rows, one layer each:
#   none            no profiler
#   floor           torch.profiler with CUDA activity only (no stacks): the
#                   CUPTI cost any CUPTI-based tool pays
#   sampling        xpu-record --no-gpu: CPU sampling at FREQ only
#   activity        + CUPTI activity (XPU_CUPTI_APIS= : no API callbacks)
#   callbacks       + API callbacks and API records, marker off
#                   (XPU_CUPTI_MARKER=off): everything but the uprobe
#   fp              + the marker uprobe, frame-pointer PCs instead of the
#                   stack copy (--call-graph fp; PyTorch's own libraries have
#                   no frame pointers, so its stacks are short: cost only)
#   d16k, d32k      the marker with its stack copy capped at 16 or 32 KiB
#                   (--call-graph dwarf,N; not in the default TOOLS)
#   marker          + the marker uprobe and its stack copy per launch
#                   (--launch-stacks=marker)
#   noautograd      the default with --no-autograd: without the uprobes on
#                   PyTorch's autograd nodes (not in the default TOOLS)
#   xpu (default)   the default: each launch's stack walked in the process
#                   (--launch-stacks=walk, cupti/walk/walk_probe.c: common/
#                   unwind_simple.c over the rules xpu-record hands each
#                   CUDA process; the marker where a walk cannot)
#   unw, unwx       with UNW_LIB=libunwind.so.8 (not in the default TOOLS): a
#                   probe, not a capture path (cupti/walk/unw_probe.c): unw is the
#                   callbacks plus libunwind's cached unw_backtrace() in the
#                   launching thread at each marked call instead of the
#                   marker (what an in-process unwinder costs; no launch
#                   stacks), unwx both the walk and the marker
#   walkx           (not in the default TOOLS) the walk and the marker
#                   both at each launch (XPU_CUPTI_MARKER=walk+), the
#                   stacks left to the marker
#   pcsamp          the default with --gpu-pc-sampling (PC_PERIOD=N: 2^N
#                   cycles; default CUPTI's): GPU PC sampling's own cost is
#                   pcsamp - xpu (not in the default TOOLS: TOOLS="none floor
#                   xpu pcsamp" MODES="launch gpu gpt2" measures it)
#   mem             the default with --gpu-memory: CUPTI's memory records
#                   and PyTorch's allocator probes (USDT, a stack at each
#                   block's allocation and a record at its free); its own
#                   cost is mem - xpu (not in the default TOOLS: TOOLS="none
#                   xpu mem" MODES="gpt2 decode" measures it, and prints
#                   the trace bytes per memory record)
#   py perf-map     the default with --python-frames=perf-map
#   torch+stack     torch.profiler(with_stack=True) + export_stacks
#   ref             with REF=DIR (an earlier build's xpu-record and
#                   libxpu-cupti.so): the xpu row of that build, in the
#                   same rounds (added to TOOLS after xpu)
# A layer's own cost per launch is the difference of two rows' medians.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${XPU_BIN:-$TOP}
PY=${PYTHON:-python3}
REPEAT=${REPEAT:-5}
FREQ=${FREQ:-99}
MODES=${MODES:-launch gpu}
TOOLS=${TOOLS:-none floor sampling activity callbacks fp marker xpu perfmap torch}
REF=${REF:-}
[ -n "$REF" ] && TOOLS=${TOOLS/xpu/xpu ref}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XPU_CUPTI_VERBOSE=1	# the library's walk counts on stderr (collected below)

stats() { sort -g | awk '{a[NR]=$1} END {m = (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; print a[1], m, a[NR]}'; }

run_one() {	# mode tool -> appends "loop kernels" to $TMP/mode.tool
	local mode=$1 tool=$2 out=$TMP/out
	local rec=("$BIN/xpu-record" -q -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" -o "$TMP/x.data" --)
	local loop=("$PY" "$TOP/bench/gpu_loop.py" "$mode")
	case $tool in
	none)	"${loop[@]}" ;;
	floor)	"${loop[@]}" --profiler-cuda ;;
	sampling) "$BIN/xpu-record" -q -F "$FREQ" --no-gpu -o "$TMP/x.data" -- "${loop[@]}" ;;
	activity) XPU_CUPTI_APIS= "${rec[@]}" "${loop[@]}" ;;
	callbacks) XPU_CUPTI_MARKER=off "${rec[@]}" "${loop[@]}" ;;
	fp)	"$BIN/xpu-record" -q -F "$FREQ" --call-graph fp --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/x.data" -- "${loop[@]}" ;;
	d16k|d32k) "$BIN/xpu-record" -q -F "$FREQ" --call-graph "dwarf,$((${tool//[!0-9]/} * 1024))" \
			--cupti-lib "$BIN/libxpu-cupti.so" -o "$TMP/x.data" -- "${loop[@]}" ;;
	xpu)	"$BIN/xpu-record" -q -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/$mode.data" -- "${loop[@]}" ;;
	ref)	"$REF/xpu-record" -q -F "$FREQ" --cupti-lib "$REF/libxpu-cupti.so" \
			-o "$TMP/x.data" -- "${loop[@]}" ;;
	unw)	XPU_CUPTI_MARKER="unw:$UNW_LIB" "${rec[@]}" "${loop[@]}" ;;
	unwx)	XPU_CUPTI_MARKER="unw+:$UNW_LIB" "${rec[@]}" "${loop[@]}" ;;
	noautograd) "$BIN/xpu-record" -q -F "$FREQ" --no-autograd --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/x.data" -- "${loop[@]}" ;;
	marker)	"$BIN/xpu-record" -q -F "$FREQ" --launch-stacks=marker --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/x.data" -- "${loop[@]}" ;;
	walkx)	XPU_CUPTI_MARKER=walk+ "${rec[@]}" "${loop[@]}" ;;
	pcsamp)	"$BIN/xpu-record" -q -F "$FREQ" --gpu-pc-sampling${PC_PERIOD:+=$PC_PERIOD} \
			--cupti-lib "$BIN/libxpu-cupti.so" -o "$TMP/x.data" -- "${loop[@]}" ;;
	mem)	"$BIN/xpu-record" -q -F "$FREQ" --gpu-memory --cupti-lib "$BIN/libxpu-cupti.so" \
			-o "$TMP/$mode.mem.data" -- "${loop[@]}" ;;
	perfmap) "$BIN/xpu-record" -q -F "$FREQ" --python-frames=perf-map \
			--cupti-lib "$BIN/libxpu-cupti.so" -o "$TMP/x.data" -- "${loop[@]}" ;;
	torch)	"${loop[@]}" --profiler ;;
	esac > "$out" 2>&1
	grep -h "unw probe\|walk probe" "$out" | sed "s/^/$tool: /" >> "$TMP/experiment" 2>/dev/null
	awk '/^LOOP/ {print $2, $3, $4; f = 1} END {exit !f}' "$out" >> "$TMP/$mode.$tool" ||
		{ echo "run failed: $mode $tool"; tail -5 "$out"; return 1; }
}

for mode in $MODES; do
	for ((i = 0; i < REPEAT; i++)); do
		for tool in $TOOLS; do
			run_one "$mode" "$tool" || exit 1
		done
	done
done

[ -f "$TMP/experiment" ] && sort "$TMP/experiment" | uniq -c | sort -rn | head -5
# table COLUMN WHAT: per mode and row, min/median/max of the runs' COLUMN
# (1: loop time, 3: the launching thread's CPU time in the loop)
table() {
	local col=$1
	echo "gpu_loop.py, $REPEAT interleaved rounds, xpu-record -F $FREQ; $2 in s"
	printf '%-7s %-13s %8s %8s %8s %8s %9s %11s\n' mode row min median max x_none x_floor us/unit
	for mode in $MODES; do
		read -r _ base _ < <(awk -v c="$col" '{print $c}' "$TMP/$mode.none" | stats)
		read -r _ floor _ < <(awk -v c="$col" '{print $c}' "$TMP/$mode.floor" | stats)
		kernels=$(awk '{print $2; exit}' "$TMP/$mode.none")
		for tool in $TOOLS; do
			read -r lo med hi < <(awk -v c="$col" '{print $c}' "$TMP/$mode.$tool" | stats)
			awk -v m="$mode" -v n="$tool" -v lo="$lo" -v med="$med" -v hi="$hi" -v b="$base" \
				-v f="$floor" -v k="$kernels" 'BEGIN {
				printf "%-7s %-13s %8.3f %8.3f %8.3f %8.3f %9.3f %11.2f\n", m, n, lo, med, hi,
					med / b, med / f, (med - b) * 1e6 / k }'
		done
	done
}
table 1 "loop time"
# the thread's CPU time leaves out what a noisy host stole from it (and
# the work of other threads: CUPTI's buffers, our flush thread)
table 3 "the launching thread's CPU time in the loop"
for mode in $MODES; do
	if [ -f "$TMP/$mode.data" ]; then
		"$BIN/xpu-report" -i "$TMP/$mode.data" --header > "$TMP/$mode.hdr" 2>/dev/null
		gpu=$(awk '/^#   GPU_(KERNEL|MEMCPY|MEMSET|SYNC|API|CORR)/ {n += $3} END {print n+0}' "$TMP/$mode.hdr")
		bytes=$(stat -c %s "$TMP/$mode.data")
		awk -v m="$mode" -v b="$bytes" -v g="$gpu" 'BEGIN {printf "%-7s trace %d bytes, %d GPU records (kernel+copy+set+sync+api+corr), %.1f bytes/GPU record (CPU samples included)\n", m, b, g, b / (g + 1)}'
	fi
done
# --gpu-memory's trace cost: the bytes its run's trace has over the
# default's (the same loop, the last round of each), per memory record
for mode in $MODES; do
	[ -f "$TMP/$mode.data" ] && [ -f "$TMP/$mode.mem.data" ] || continue
	"$BIN/xpu-report" -i "$TMP/$mode.mem.data" --header > "$TMP/$mode.mhdr" 2>/dev/null
	nmem=$(awk '/^#   GPU_(MEMORY|MEMPOOL|BLOCK|MEM_STATE|OOM) / {n += $3} END {print n+0}' "$TMP/$mode.mhdr")
	b0=$(stat -c %s "$TMP/$mode.data") b1=$(stat -c %s "$TMP/$mode.mem.data")
	awk -v m="$mode" -v b0="$b0" -v b1="$b1" -v n="$nmem" 'BEGIN {printf "%-7s --gpu-memory: %d memory records, trace %d bytes vs %d without, %.1f bytes per memory record\n", m, n, b1, b0, (b1 - b0) / (n ? n : 1)}'
done

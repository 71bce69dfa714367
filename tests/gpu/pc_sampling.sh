#!/usr/bin/env bash
# GPU PC sampling on the GPU machine (issue 35), run by tests/gpu/run.sh or
# alone (as root; XPU_BIN and OUT as for run.sh):
#   - pcsamp_demo.cu (nvcc -lineinfo): xpu-record --gpu-pc-sampling; the
#     split of two_loops' GPU time between its memory loop's line and its
#     compute loop's line within 10 points of the cudaEvent split of the
#     same loops run alone; the dominant stall of each loop the expected
#     kind; the GPU total unchanged by the split; the [sass] lines against
#     nvdisasm -g (check_pcsamp.py); xpu-report --annotate two_loops with
#     the toolkit's nvdisasm: SASS text, its samples adding up;
#   - pcsamp_perturb.cu (memory-latency-, bandwidth- and compute-bound
#     kernels): their unprofiled cudaEvent times are the truth that the
#     duty-cycled recording's unsampled launches must give (within 10%), a
#     kernel the sampling slowed flagged (PC_PERTURB=0 leaves it out);
#   (the short programs with --gpu-pc-duty=off: sampled from their start)
#   - the same recording without --gpu-pc-sampling and with it refused
#     (XPU_CUPTI_PC_SAMPLING=bad): the kernels whole, one line why;
#   - a torch.compile'd Triton kernel (when PyTorch with CUDA and Triton are
#     importable): [sass] frames with lines of its generated source.
#   - training steps of HuggingFace GPT-2 (bench/gpt2_train.py 10): >= 90% of
#     the kernel samples from a py:: line down to [sass] and [stall], backward
#     kernels among them, the total kept (PC_TRAIN=0 leaves it out);
#   - CUDA graphs (graph_demo.cu) and an attach (xpu-record -p on a running
#     pcsamp_demo): >= 90% of the kernel samples split, the total kept.
# Every step has a timeout. Prints "ok"/"FAIL"/"note" lines; exit 0 all
# passed, 1 a check failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
FREQ=${FREQ:-999}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_BIN=$(dirname "$NVCC")
PY=${PYTHON:-python3}
PERIOD=${PC_PERIOD:-}		# --gpu-pc-sampling=PERIOD; empty: CUPTI's default
T=${PC_TIMEOUT:-300}
mkdir -p "$RES"
fail=0
bad() { echo "FAIL  $*"; fail=1; }

for f in xpu-record xpu-report libxpu-cupti.so; do
	[ -e "$BIN/$f" ] || { echo "missing $BIN/$f"; exit 2; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU (nvidia-smi -L failed)"; exit 2; }

timeout 300 "$NVCC" -O2 -lineinfo -arch=sm_90 -o "$RES/pcsamp_demo" "$TOP/tests/gpu/pcsamp_demo.cu" \
	> "$RES/nvcc_pcsamp.log" 2>&1 || { cat "$RES/nvcc_pcsamp.log"; echo "FAIL  nvcc pcsamp_demo.cu"; exit 1; }
# the cubins, for nvdisasm's line mapping
rm -rf "$RES/pcsamp_cubins" && mkdir -p "$RES/pcsamp_cubins"
if [ -x "$CUDA_BIN/cuobjdump" ] && [ -x "$CUDA_BIN/nvdisasm" ]; then
	(cd "$RES/pcsamp_cubins" && timeout 60 "$CUDA_BIN/cuobjdump" -xelf all "$RES/pcsamp_demo" >/dev/null 2>&1)
	export NVDISASM=$CUDA_BIN/nvdisasm
else
	echo "note  no cuobjdump/nvdisasm beside $NVCC: the [sass] lines are not checked against nvdisasm"
fi

views() {	# name: the folded views and the header
	local name=$1
	timeout "$T" "$BIN/xpu-report" -i "$RES/$name.data" --folded --gpu-only > "$RES/$name.gpu.folded" \
		2> "$RES/$name.report.err"
	timeout "$T" "$BIN/xpu-report" -i "$RES/$name.data" --folded --gpu-only --no-pc-sampling \
		> "$RES/$name.plain.folded" 2>> "$RES/$name.report.err"
	timeout "$T" "$BIN/xpu-report" -i "$RES/$name.data" --header > "$RES/$name.header" \
		2>> "$RES/$name.report.err"
}

echo "== pcsamp_demo with --gpu-pc-sampling${PERIOD:+=$PERIOD}"
if timeout "$T" "$BIN/xpu-record" -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" \
	--gpu-pc-sampling${PERIOD:+=$PERIOD} --gpu-pc-duty=off -o "$RES/pcsamp.data" -- "$RES/pcsamp_demo" 100 \
	> "$RES/pcsamp.out" 2> "$RES/pcsamp.err"; then
	views pcsamp
	grep 'pc sampl' "$RES/pcsamp.header" | sed 's/^/      /'
	if grep -q '^#   pc sampling: on' "$RES/pcsamp.header"; then
		$PY "$TOP/tests/gpu/check_pcsamp.py" "$RES/pcsamp" "$TOP/tests/gpu/pcsamp_demo.cu" \
			"$RES/pcsamp_cubins" | tee "$RES/pcsamp.check"
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
	else
		bad "PC sampling did not run: $(grep 'pc sampling' "$RES/pcsamp.header"; grep 'PC sampling' "$RES/pcsamp.err")"
	fi
else
	bad "xpu-record --gpu-pc-sampling on pcsamp_demo failed or timed out (see $RES/pcsamp.err)"
fi

echo "== what PC sampling does to kernels: pcsamp_perturb against its unprofiled time"
# Ground truth: the program's own cudaEvent medians with no profiler. Under
# --gpu-pc-sampling (its first 500 ms left unsampled, the default) --header must give each
# kernel's unsampled mean within 10% of that truth, and flag a kernel whose
# recorded times the sampling inflated (the program's own times over 1.2x
# the truth); the Start/Stop cost is printed.
if [ "${PC_PERTURB:-1}" != 0 ] && timeout 300 "$NVCC" -O2 -lineinfo -arch=sm_90 -o "$RES/pcsamp_perturb" \
	"$TOP/tests/gpu/pcsamp_perturb.cu" -L"$CUDA_BIN/../lib64" -L"$CUDA_BIN/../extras/CUPTI/lib64" \
	-lcupti -lcuda > "$RES/nvcc_perturb.log" 2>&1; then
	PARGS="--reps 24 --iters 6400"
	export LD_LIBRARY_PATH=$CUDA_BIN/../lib64:$CUDA_BIN/../extras/CUPTI/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	timeout "$T" "$RES/pcsamp_perturb" $PARGS > "$RES/perturb.none" 2>&1 ||
		bad "pcsamp_perturb unprofiled failed: $(tail -2 "$RES/perturb.none")"
	if timeout "$T" "$BIN/xpu-record" -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" \
		--gpu-pc-sampling${PERIOD:+=$PERIOD} -o "$RES/perturb.data" -- "$RES/pcsamp_perturb" $PARGS \
		> "$RES/perturb.out" 2> "$RES/perturb.err"; then
		timeout "$T" "$BIN/xpu-report" -i "$RES/perturb.data" --header > "$RES/perturb.header" \
			2> "$RES/perturb.report.err"
		grep -A12 'pc sampling perturbation' "$RES/perturb.header" | grep -v 'pc samples pid\|lines:' |
			sed 's/^/      /'
		$PY - "$RES/perturb.none" "$RES/perturb.out" "$RES/perturb.header" <<'PYEOF' | tee "$RES/perturb.check"
import re, sys
def times(p):
    return {l.split()[1]: float(l.split()[2]) for l in open(p) if l.startswith("KERNEL ")}
truth, seen = times(sys.argv[1]), times(sys.argv[2])
hdr = open(sys.argv[3]).read()
fail = 0
def say(ok, msg):
    global fail
    print(("ok    " if ok else "FAIL  ") + msg)
    fail |= not ok
m = re.search(r"pc sampling perturbation: (\d+) sampling ranges", hdr)
say(bool(m) and int(m.group(1)) >= 1, "sampling ranges: %s" % (m.group(1) if m else "none"))
for k in ("gather", "stream", "compute"):
    r = re.search(r"#     pid \d+ %s\([^\n]*: sampled ([\d.]+) ms mean \((\d+) launches\), "
                  r"unsampled ([\d.]+) ms \((\d+)\): ([^\n]*)" % k, hdr)
    if not r or k not in truth:
        say(False, "%s: no perturbation line or no unprofiled time" % k)
        continue
    s_ms, n_s, u_ms, n_u, verdict = float(r[1]), int(r[2]), float(r[3]), int(r[4]), r[5]
    t = truth[k]
    infl = seen.get(k, 0) / t if t else 0
    say(n_s >= 3 and n_u >= 3, "%s: %d sampled, %d unsampled launches" % (k, n_s, n_u))
    say(abs(u_ms / t - 1) <= 0.10, "%s: unsampled %.3f ms vs unprofiled %.3f ms (%.3fx)" %
        (k, u_ms, t, u_ms / t))
    print("note  %s: sampled %.3f ms (%.3fx the unprofiled); the program saw %.3fx; report: %s" %
          (k, s_ms, s_ms / t, infl, verdict))
    if s_ms / t > 1.2 and s_ms / u_ms > 1.2:
        say("GPU time from the unsampled" in verdict, "%s: slowed by sampling, and flagged" % k)
sys.exit(fail)
PYEOF
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
		"$BIN/xpu-report" -i "$RES/perturb.data" --dump 2>/dev/null | grep -m1 'cupti.pc_duty' | sed 's/^/      /'
	else
		bad "xpu-record --gpu-pc-sampling on pcsamp_perturb failed or timed out (see $RES/perturb.err)"
	fi
else
	[ "${PC_PERTURB:-1}" = 0 ] || bad "nvcc pcsamp_perturb.cu: $(tail -3 "$RES/nvcc_perturb.log")"
fi

echo "== annotate two_loops: its samples per SASS instruction (nvdisasm) and per line"
if [ -s "$RES/pcsamp.data" ]; then
	CUDA_HOME=$(dirname "$CUDA_BIN") timeout "$T" "$BIN/xpu-report" -i "$RES/pcsamp.data" \
		--annotate two_loops > "$RES/pcsamp.annotate" 2> "$RES/pcsamp.annotate.err"
	head -3 "$RES/pcsamp.annotate" | sed 's/^/      /'
	# the samples per instruction add up to the summary's total
	tot=$(sed -nE '2s/^([0-9]+) PC samples.*/\1/p' "$RES/pcsamp.annotate")
	sum=$(awk '/^ +[0-9.]+% +[0-9]+  [0-9a-f]+:  / { s += $2 } END { print s + 0 }' "$RES/pcsamp.annotate")
	if [ ! -x "$CUDA_BIN/nvdisasm" ]; then
		echo "note  no nvdisasm beside $NVCC: annotate without SASS text"
	elif ! grep -q "; SASS by $CUDA_BIN/nvdisasm\$" "$RES/pcsamp.annotate"; then
		bad "annotate two_loops: no SASS text (see $RES/pcsamp.annotate*)"
	elif [ -z "$tot" ] || [ "$tot" != "$sum" ]; then
		bad "annotate two_loops: instructions sum to $sum samples, the summary says $tot"
	else
		echo "ok    annotate two_loops: $tot samples over its SASS instructions"
	fi
fi

echo "== refused: XPU_CUPTI_PC_SAMPLING=bad (the recording unaffected, one line why)"
if XPU_CUPTI_PC_SAMPLING=bad timeout "$T" "$BIN/xpu-record" -F "$FREQ" \
	--cupti-lib "$BIN/libxpu-cupti.so" -o "$RES/pcoff.data" -- "$RES/pcsamp_demo" 10 \
	> "$RES/pcoff.out" 2> "$RES/pcoff.err"; then
	views pcoff
	[ "$(grep -c 'PC_SAMPLING=bad' "$RES/pcoff.err")" = 1 ] && echo "ok    one line at record time" ||
		bad "no single line for the bad setting: $(cat "$RES/pcoff.err")"
	grep -q '\[sass\]' "$RES/pcoff.gpu.folded" && bad "[sass] frames without PC sampling"
	grep -q 'GPU_Kernel\]two_loops' "$RES/pcoff.gpu.folded" && echo "ok    kernels recorded whole" ||
		bad "no two_loops kernel in the refused recording"
else
	bad "xpu-record with a refused PC sampling failed (see $RES/pcoff.err)"
fi

echo "== torch.compile (Triton) kernel lines"
if timeout 120 $PY -c 'import torch, triton, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	cat > "$RES/pcsamp_triton.py" <<'PYEOF'
import torch
@torch.compile
def f(x, y):
    return torch.sin(x) * torch.cos(y) + x * y
x = torch.randn(1 << 24, device="cuda"); y = torch.randn(1 << 24, device="cuda")
for _ in range(200):
    z = f(x, y)
torch.cuda.synchronize()
print("done", float(z[0]))
PYEOF
	if TORCHINDUCTOR_CACHE_DIR=$RES/inductor-cache timeout "$T" "$BIN/xpu-record" -F "$FREQ" \
		--cupti-lib "$BIN/libxpu-cupti.so" --gpu-pc-sampling --gpu-pc-duty=off -o "$RES/pctriton.data" -- \
		$PY "$RES/pcsamp_triton.py" > "$RES/pctriton.out" 2> "$RES/pctriton.err"; then
		views pctriton
		n=$(grep -c 'GPU_Kernel\]triton_.*\[sass\]triton_[^;]* ([^;]*\.py:[0-9]*);\[stall\]' \
			"$RES/pctriton.gpu.folded")
		[ "$n" -gt 0 ] && echo "ok    Triton kernel [sass] frames with .py lines: $n stacks" ||
			bad "no Triton [sass] frame with a source line (see $RES/pctriton.gpu.folded)"
		grep -m3 'GPU_Kernel\]triton_' "$RES/pctriton.gpu.folded" | sed 's/.*cudaLaunchKernel;\|.*cuLaunchKernel[^;]*;/      .../'
	else
		bad "xpu-record --gpu-pc-sampling on torch.compile failed (see $RES/pctriton.err)"
	fi
else
	echo "note  PyTorch with CUDA and Triton not importable: the torch.compile check is skipped"
fi

# "Works with graphs and the attach" (the issue): kernels replayed from
# CUDA graphs (tests/gpu/graph_demo.cu, built with -lineinfo) split by
# their PC samples under [graph replay] as launched ones are; and
# xpu-record -p --gpu-pc-sampling on pcsamp_demo started without it
# (its module loaded before the attach).
kernel_split() {	# FOLDED PLAIN NAME FILTER: the share of kernel weight (under FILTER) split
	$PY - "$@" <<'PYSPLIT'
import re, sys
folded, plain, name, filt = sys.argv[1:5]
kern = split = lined = tot = 0.0
for l in open(folded):
    st, _, n = l.rstrip("\n").rpartition(" ")
    if not st:
        continue
    n = float(n); tot += n
    fr = st.split(";")
    if not any(f.startswith("[GPU_Kernel]") for f in fr) or not re.search(filt, st):
        continue
    kern += n
    if fr[-1].startswith("[stall]") and any(f.startswith("[sass]") for f in fr):
        split += n
        lined += n * any(f.startswith("[sass]") and re.search(r"\(.*:\d+\)$", f) for f in fr)
ptot = sum(float(l.rpartition(" ")[2]) for l in open(plain) if l.strip())
ok = kern > 0 and split >= 0.9 * kern and abs(tot - ptot) <= 1.0
print(("ok    " if ok else "FAIL  ") + f"{name}: {split:.0f} of {kern:.0f} kernel samples split into "
      f"[sass];[stall] frames ({lined:.0f} with a source line); GPU total {tot:.0f} with the split, "
      f"{ptot:.0f} without")
sys.exit(0 if ok else 1)
PYSPLIT
}
echo "== CUDA graphs with --gpu-pc-sampling"
if timeout 300 "$NVCC" -O2 -g -lineinfo -arch=sm_90 -o "$RES/pcgraph_demo" "$TOP/tests/gpu/graph_demo.cu" \
	> "$RES/nvcc_pcgraph.log" 2>&1; then
	if timeout "$T" "$BIN/xpu-record" -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" --gpu-pc-sampling --gpu-pc-duty=off \
		-o "$RES/pcgraph.data" -- "$RES/pcgraph_demo" > "$RES/pcgraph.out" 2> "$RES/pcgraph.err"; then
		views pcgraph
		kernel_split "$RES/pcgraph.gpu.folded" "$RES/pcgraph.plain.folded" \
			"graph replays" '\[graph replay\]' | tee "$RES/pcgraph.check"
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
		grep -m1 '\[graph replay\].*\[stall\]' "$RES/pcgraph.gpu.folded" | sed 's/^.*\(\[graph replay\]\)/      ...\1/' | cut -c1-300
	else
		bad "xpu-record --gpu-pc-sampling on graph_demo failed (see $RES/pcgraph.err)"
	fi
else
	bad "nvcc graph_demo.cu (see $RES/nvcc_pcgraph.log)"
fi
echo "== xpu-record -p --gpu-pc-sampling on pcsamp_demo started without it"
"$RES/pcsamp_demo" 2000 > "$RES/pcattach.app.out" 2>&1 &
app=$!
for _ in $(seq 300); do	# CUDA initialised, its kernels running
	ls -l /proc/$app/fd 2>/dev/null | grep -q '/dev/nvidia-uvm' && break
	kill -0 $app 2>/dev/null || break
	sleep 0.1
done
sleep 2
if timeout "$T" "$BIN/xpu-record" -v -p $app -d 3 --cupti-lib "$BIN/libxpu-cupti.so" --gpu-pc-sampling \
	-o "$RES/pcattach.data" > "$RES/pcattach.out" 2> "$RES/pcattach.err"; then
	kill -0 $app 2>/dev/null && echo "ok    attach: pcsamp_demo runs on after the detach" ||
		bad "attach: pcsamp_demo ended before the detach or did not survive it"
	# it ends on its own within seconds: one that does not hangs (the
	# first attach with PC sampling did); its threads' kernel stacks kept
	for _ in $(seq 600); do kill -0 $app 2>/dev/null || break; sleep 0.1; done
	if kill -0 $app 2>/dev/null; then
		for t in /proc/$app/task/*; do echo "== ${t##*/} $(cat $t/comm) $(cat $t/wchan)"; cat $t/stack; done \
			> "$RES/pcattach.hung" 2>&1
		bad "attach: pcsamp_demo still runs 60 s after the detach: hung (see $RES/pcattach.hung)"
		kill -9 $app
	fi
	wait $app && echo "ok    attach: pcsamp_demo exited 0" || bad "attach: pcsamp_demo exited $?"
	grep -q 'did not end their GPU recording' "$RES/pcattach.err" &&
		bad "attach: the library did not detach in time: $(grep -m1 'did not end' "$RES/pcattach.err")"
	views pcattach
	grep 'pc sampl' "$RES/pcattach.header" | sed 's/^/      /' | cut -c1-200
	kernel_split "$RES/pcattach.gpu.folded" "$RES/pcattach.plain.folded" \
		"attach" 'two_loops' | tee "$RES/pcattach.check"
	[ "${PIPESTATUS[0]}" = 0 ] || fail=1
else
	bad "xpu-record -p --gpu-pc-sampling failed (see $RES/pcattach.err)"
	kill $app 2>/dev/null
	wait $app 2>/dev/null
fi

# The issue's "done when": one recording of PyTorch training steps
# (bench/gpt2_train.py: HuggingFace GPT-2, forward, backward, AdamW) with
# --gpu-pc-sampling: its GPU time from the Python line down to the SASS
# offset and stall reason of the kernel that line launched (forward and
# backward: the autograd probes put backward kernels under the forward
# code); library kernels (cuBLAS, PyTorch's own) are built without
# -lineinfo, so their [sass] frames have offsets and no line.
echo "== training steps: HuggingFace GPT-2 with --gpu-pc-sampling"
if [ "${PC_TRAIN:-1}" = 1 ] && timeout 120 $PY -c 'import transformers' 2>/dev/null; then
	if timeout "$T" "$BIN/xpu-record" -F "$FREQ" --cupti-lib "$BIN/libxpu-cupti.so" \
		--gpu-pc-sampling -o "$RES/pctrain.data" -- $PY "$TOP/bench/gpt2_train.py" 10 \
		> "$RES/pctrain.out" 2> "$RES/pctrain.err"; then
		views pctrain
		$PY - "$RES/pctrain.gpu.folded" "$RES/pctrain.plain.folded" <<'PYCHECK' | tee "$RES/pctrain.check"
import sys
def rows(p):
    for l in open(p):
        st, _, n = l.rstrip("\n").rpartition(" ")
        if st:
            yield st.split(";"), float(n)
tot = py = sass = full = back = 0.0
for fr, n in rows(sys.argv[1]):
    tot += n
    k = next((i for i, f in enumerate(fr) if f.startswith("[GPU_Kernel]")), None)
    has_py = any(f.startswith("py::") for f in fr)
    has_sass = k is not None and any(f.startswith("[sass]") for f in fr[k:])
    has_stall = fr[-1].startswith("[stall]")
    py += n * has_py
    sass += n * (has_sass and has_stall)
    full += n * (has_py and has_sass and has_stall)
    back += n * (has_py and has_sass and has_stall and any("autograd backward" in f for f in fr))
plain = sum(n for _, n in rows(sys.argv[2]))
bad = 0
def ok(c, msg):
    global bad
    print(("ok    " if c else "FAIL  ") + msg)
    bad += not c
kern = sum(n for fr, n in rows(sys.argv[1]) if any(f.startswith("[GPU_Kernel]") for f in fr))
ok(kern > 0 and sass >= 0.9 * kern, f"training: {sass:.0f} of {kern:.0f} kernel samples split into [sass];[stall] frames")
ok(kern > 0 and full >= 0.9 * kern, f"training: {full:.0f} of {kern:.0f} from a py:: line down to [sass] and [stall]")
ok(back > 0, f"training: backward kernels under their forward Python line with [sass]/[stall]: {back:.0f}")
ok(abs(tot - plain) <= 1.0, f"training: GPU total {tot:.0f} with the split, {plain:.0f} without")
sys.exit(1 if bad else 0)
PYCHECK
		[ "${PIPESTATUS[0]}" = 0 ] || fail=1
		grep -m1 'modeling_gpt2.*\[stall\]' "$RES/pctrain.gpu.folded" | sed 's/^.*\(py::forward:[^;]*modeling_gpt2\)/      ...\1/' | cut -c1-600
	else
		bad "xpu-record --gpu-pc-sampling on bench/gpt2_train.py failed (see $RES/pctrain.err)"
	fi
else
	echo "note  no transformers (or PC_TRAIN=0): the training-step check is skipped"
fi
exit $fail

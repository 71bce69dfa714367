#!/usr/bin/env bash
# Every output tells the same truth (issue 31): on each trace and view, the
# total of --stdio, --svg, --pprof (go tool pprof -raw, each sample type),
# --speedscope, --timeline (protoc-decoded) and --diff T T equals --folded's,
# within each output's rounding (tests/shell/outputs_agree.py says how each
# is read). Traces:
#  - gen: gen_trace's synthetic CPU + GPU trace with syncs (merged, CPU, GPU,
#    GPU-idle and sync-wait views; no root needed);
#  - threads: same_stack, 4 threads in each of 2 processes on the same
#    stacks, recorded at 999 Hz with off-CPU time (merged, --wall, --off-cpu):
#    before the pprof fix, --pprof wrote past its buffer on this trace
#    (SIGSEGV, or a malloc abort under --wall);
#  - fake: a CUDA recording through the fake CUPTI library, 3 ms kernels
#    launched every 4 ms (one stream runs one kernel at a time, as on a GPU;
#    GPU idle between them): merged, CPU, GPU, GPU-idle, --wall; and the
#    same with --gpu-pc-sampling (kernels split into [sass];[stall] lines),
#    and a GPU view of 3 samples split over 11 PC lines; and one whose
#    sampled launches are 6x slower (their GPU time corrected).
. "$(dirname "$0")/lib/e2e.sh"
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
AGREE=$XPU_TOP/tests/shell/outputs_agree.py
export T

gen_need
tui_gen "$T/gen.data" -n 3000 --gpu --sync
python3 "$AGREE" "$REPORT" "$T/gen.data" gen merged --cpu-only --gpu-only --gpu-idle --sync-wait ||
	fail "outputs disagree on gen_trace's GPU trace (above)"

need_tools
need_bpf
SAME=$XPU_BUILD/tests/workloads/same_stack
[ -x "$SAME" ] || fail "$SAME not built: run make tests-build"
"$RECORD" -F 999 --no-gpu -o "$T/threads.data" -- "$SAME" 1 4 >"$T/threads.out" 2>"$T/threads.err" ||
	{ cat "$T/threads.err" >&2; fail "xpu-record exited $? on same_stack"; }
[ "$(grep -c '^same_stack: pid' "$T/threads.out")" -eq 2 ] || fail "same_stack did not run two processes"
python3 "$AGREE" "$REPORT" "$T/threads.data" threads merged --cpu-only --wall --off-cpu ||
	fail "outputs disagree on the multi-thread, multi-process trace (above)"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
if [ -x "$APP" ] && [ -f "$LIB" ]; then
	FAKE_LAUNCH_GAP_US=4000 XPU_FAKE_KERNEL_NS=3000000 "$RECORD" -F 999 -o "$T/fake.data" --cupti-lib "$LIB" -- \
		"$APP" 40 0.2 >"$T/fake.out" 2>"$T/fake.err" ||
		{ cat "$T/fake.err" >&2; fail "xpu-record exited $? on fake_cuda_app"; }
	python3 "$AGREE" "$REPORT" "$T/fake.data" fake merged --cpu-only --gpu-only --gpu-idle --wall ||
		fail "outputs disagree on the fake CUDA recording (above)"
	# the same with GPU PC sampling: each kernel split into [sass];[stall]
	# lines of a few samples each, where per-line rounding loses weight
	XPU_FAKE_CUBIN=$XPU_TOP/tests/data/pcsamp/fake_kernel.cubin FAKE_LAUNCH_GAP_US=4000 \
		XPU_FAKE_KERNEL_NS=3000000 "$RECORD" -F 999 -o "$T/pcsamp.data" --cupti-lib "$LIB" \
		--gpu-pc-sampling --gpu-pc-duty=off -- "$APP" 40 0.2 >"$T/pcsamp.out" 2>"$T/pcsamp.err" ||
		{ cat "$T/pcsamp.err" >&2; fail "xpu-record --gpu-pc-sampling exited $? on fake_cuda_app"; }
	"$REPORT" -i "$T/pcsamp.data" --folded --gpu-only 2>/dev/null | grep -q '\[stall\]' ||
		fail "the PC-sampled recording has no [stall] frames"
	python3 "$AGREE" "$REPORT" "$T/pcsamp.data" pcsamp merged --gpu-only --wall ||
		fail "outputs disagree on the PC-sampled fake CUDA recording (above)"
	# 3 samples of GPU time over 11 PC lines of 0.27 each: rounded one by
	# one, pprof's samples/count said "Total samples = 0"
	XPU_FAKE_CUBIN=$XPU_TOP/tests/data/pcsamp/fake_kernel.cubin FAKE_LAUNCH_GAP_US=4000 \
		XPU_FAKE_PC_SAMPLES="0x180:0:1,0x300:0:1,0x4d0:1:1,0x200:2:1,0x220:0:1,0x240:1:1,0x260:2:1,0x280:0:1,0x2a0:1:1,0x2c0:2:1,0x2e0:0:1" \
		XPU_FAKE_KERNEL_NS=300000 "$RECORD" -F 999 -o "$T/pcsmall.data" --cupti-lib "$LIB" \
		--gpu-pc-sampling --gpu-pc-duty=off -- "$APP" 10 0.2 >"$T/pcsmall.out" 2>"$T/pcsmall.err" ||
		{ cat "$T/pcsmall.err" >&2; fail "xpu-record --gpu-pc-sampling exited $? on fake_cuda_app (small)"; }
	python3 "$AGREE" "$REPORT" "$T/pcsmall.data" pcsmall --gpu-only ||
		fail "outputs disagree on the small PC-sampled fake CUDA recording (above)"
	# a sampler that slows what it samples 6x: the views take the sampled
	# launches' GPU time from the unsampled ones (duty-cycled sampling),
	# and every view must take it so
	XPU_FAKE_PC_INFLATE=6 FAKE_LAUNCH_GAP_US=20000 XPU_FAKE_KERNEL_NS=3000000 "$RECORD" -F 999 \
		-o "$T/pcslow.data" --cupti-lib "$LIB" --gpu-pc-sampling --gpu-pc-duty=40:40 -- \
		"$APP" 40 0.2 >"$T/pcslow.out" 2>"$T/pcslow.err" ||
		{ cat "$T/pcslow.err" >&2; fail "xpu-record --gpu-pc-sampling exited $? on fake_cuda_app (slowed)"; }
	"$REPORT" -i "$T/pcslow.data" --header 2>/dev/null | grep -q '6.00x, GPU time from the unsampled' ||
		fail "the slowed PC-sampled recording is not measured as slowed 6x"
	python3 "$AGREE" "$REPORT" "$T/pcslow.data" pcslow merged --gpu-only ||
		fail "outputs disagree on the slowed PC-sampled fake CUDA recording (above)"
else
	note "fake CUDA pieces not built: the CUDA recording is left out"
fi
echo "ok"

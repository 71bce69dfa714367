#!/usr/bin/env bash
# GPU-less end to end of the CPU->GPU join: xpu-record runs fake_cuda_app
# with libfake_cupti.so (real channel client and marker, fake kernels of a
# known duration, see tests/workloads/libfake_cupti/fake_cupti.c); xpu-report
# must put every kernel under the app's launch path, by correlation ID, with
# weight = duration * Hz / 1e9, and every view must hold what it should;
# with NVTX ranges, the [nvtx] frames where the app pushed them.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
need_tools
need_bpf

# 50 launches x 20 ms at 99 Hz: exactly 99 samples of GPU time
LAUNCHES=50 KERNEL_NS=20000000 FREQ=99 WANT=99
XPU_FAKE_KERNEL_NS=$KERNEL_NS "$RECORD" -F $FREQ -o "$T/fake.data" --cupti-lib "$LIB" -- \
	"$APP" $LAUNCHES 0.3 >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err" >&2; fail "xpu-record exited $?"; }

report "$T/merged.folded" -i "$T/fake.data" --folded
report "$T/gpu.folded" -i "$T/fake.data" --folded --gpu-only
report "$T/cpu.folded" -i "$T/fake.data" --folded --cpu-only
report "$T/header.txt" -i "$T/fake.data" --header
report "$T/gpu.stdio" -i "$T/fake.data" --stdio --gpu-only
for f in merged gpu cpu; do
	folded_check_syntax <"$T/$f.folded" || fail "$f.folded is not valid folded output"
done

LAUNCH_RE=';main;app_step;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)$'
got=$(folded_sum "$LAUNCH_RE" <"$T/gpu.folded")
[ "$got" -eq $WANT ] || { cat "$T/gpu.folded" >&2; fail "GPU weight under app_launch is $got, want $WANT"; }
# nothing else in the GPU view: no unknown stacks, no library frames left above the API
[ "$(folded_sum <"$T/gpu.folded")" -eq $WANT ] || { cat "$T/gpu.folded" >&2; fail "GPU view holds more than the launch path"; }
grep -q 'xpu_fake_launch\|xpu_cupti_marker\|unknown CPU stack' "$T/gpu.folded" &&
	fail "library frames or unknown stacks in the GPU view: $(cat "$T/gpu.folded")"
# merged = CPU + GPU; the CPU view has no GPU frame
[ "$(folded_sum "$LAUNCH_RE" <"$T/merged.folded")" -eq $WANT ] || fail "merged view lacks the GPU line"
grep -q 'GPU_' "$T/cpu.folded" && fail "--cpu-only shows GPU frames"
[ "$(folded_sum 'app_spin$' <"$T/cpu.folded")" -gt 0 ] || fail "--cpu-only has no CPU samples of app_spin"
[ "$(folded_sum 'app_spin$' <"$T/merged.folded")" -eq "$(folded_sum 'app_spin$' <"$T/cpu.folded")" ] ||
	fail "merged and --cpu-only disagree on CPU samples"
grep -q '\[GPU_Kernel\]fake_kernel(int)' "$T/gpu.stdio" || fail "--stdio --gpu-only lacks the kernel"

grep -Eq "^#   kernels +$LAUNCHES: by id $LAUNCHES \(100\.0%\), by time 0 \(0\.0%\), unmatched 0 \(0\.0%\)" \
	"$T/header.txt" || { sed -n '/# gpu:/,$p' "$T/header.txt" >&2; fail "header does not show 100% matched by id"; }
grep -q '^#   device 0: Fake GPU' "$T/header.txt" || fail "header lacks the device"
grep -q '^#   subscriber conflict: none' "$T/header.txt" || fail "header lacks the subscriber line"
# The exact GPU summary: one kernel row with every launch, each 20 ms.
grep -Eq '^#  100\.0% +[0-9.]+(ms|s) +50 +20\.0ms +20\.0ms +20\.0ms  fake_kernel\(int\)$' "$T/header.txt" ||
	{ sed -n '/# GPU summary/,$p' "$T/header.txt" >&2; fail "GPU summary lacks the fake_kernel(int) row"; }
grep -q 'CPU stack' "$T/merged.folded.err" && fail "join warnings: $(cat "$T/merged.folded.err")"

# A CUPTI subscriber conflict sent by the library: xpu-record warns while
# recording (record/gpu/channel.c reads the META record), the header names it.
XPU_FAKE_SUBSCRIBER_CONFLICT="CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" \
	"$RECORD" -F $FREQ -o "$T/conflict.data" --cupti-lib "$LIB" -- "$APP" 1 0.05 \
	>"$T/conflict.out" 2>"$T/conflict.err" ||
	{ cat "$T/conflict.err" >&2; fail "xpu-record exited $? (subscriber conflict)"; }
grep -q 'another CUPTI subscriber holds the GPU callbacks (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)' \
	"$T/conflict.err" || { cat "$T/conflict.err" >&2; fail "xpu-record did not warn of the subscriber conflict"; }
report "$T/conflict.txt" -i "$T/conflict.data" --header
grep -q '^#   subscriber conflict: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED' "$T/conflict.txt" ||
	fail "header does not name the subscriber conflict"
note "GPU $got samples under app_launch, header: $(grep '^#   kernels' "$T/header.txt")"

# NVTX (issue 9): the app pushes "step" in app_step around each launch and
# "phase" in app_phase around the spin; the push stacks come from the real
# uprobe. Every kernel goes under [nvtx]step right below app_step, every
# app_spin sample under [nvtx]phase right below app_phase; --no-nvtx gives
# the plain stacks with the same weights; --header lists both ranges.
XPU_FAKE_KERNEL_NS=$KERNEL_NS "$RECORD" -F $FREQ -o "$T/nvtx.data" --cupti-lib "$LIB" -- \
	"$APP" $LAUNCHES 0.3 nvtx >"$T/nvtx-record.out" 2>"$T/nvtx-record.err" ||
	{ cat "$T/nvtx-record.err" >&2; fail "xpu-record (nvtx) exited $?"; }
report "$T/nvtx.folded" -i "$T/nvtx.data" --folded
report "$T/plain.folded" -i "$T/nvtx.data" --folded --no-nvtx
report "$T/nvtx-header.txt" -i "$T/nvtx.data" --header
folded_check_syntax <"$T/nvtx.folded" || fail "nvtx.folded is not valid folded output"
NVTX_RE=';main;app_step;\[nvtx\]step;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)$'
got=$(folded_sum "$NVTX_RE" <"$T/nvtx.folded")
[ "$got" -eq $WANT ] || { cat "$T/nvtx.folded" >&2; fail "GPU weight under [nvtx]step is $got, want $WANT"; }
spin=$(folded_sum 'app_spin$' <"$T/nvtx.folded")
[ "$spin" -gt 0 ] && [ "$(folded_sum ';main;app_phase;\[nvtx\]phase;app_spin$' <"$T/nvtx.folded")" -eq "$spin" ] ||
	{ cat "$T/nvtx.folded" >&2; fail "app_spin samples not all under [nvtx]phase"; }
grep -q '\[nvtx\]' "$T/plain.folded" && fail "--no-nvtx shows [nvtx] frames"
[ "$(folded_sum "$LAUNCH_RE" <"$T/plain.folded")" -eq $WANT ] || fail "--no-nvtx: launch path weight"
[ "$(folded_sum <"$T/plain.folded")" -eq "$(folded_sum <"$T/nvtx.folded")" ] ||
	fail "--no-nvtx changes the total weight"
grep -Eq '^#   push/pop 51, start/end 0, marks 0, never closed 0, malformed 0$' "$T/nvtx-header.txt" &&
	grep -Eq '^# +[0-9.]+(ms|s) +1 +[0-9.]+(ms|s) +[0-9.]+(ms|s)  phase$' "$T/nvtx-header.txt" &&
	grep -Eq "^# +[0-9.]+(ms|us|s) +$LAUNCHES +[0-9.]+(ms|us) +[0-9.]+(ms|us|s)  step\$" "$T/nvtx-header.txt" ||
	{ sed -n '/# NVTX/,$p' "$T/nvtx-header.txt" >&2; fail "header lacks the NVTX ranges"; }
note "NVTX: $got samples under [nvtx]step, $spin app_spin samples under [nvtx]phase"

# NVTX as NCCL uses it (issue 31): ranges in a domain "NCCL" of its own.
# app_comm_init's range is popped through NVTX's payload extension
# (nvtxRangePopPayload, which CUPTI does not report): it must close, with
# app_comm_init's spin under it. Each AllReduce, popped with
# nvtxDomainRangePop, holds its launch. app_comm_finalize's range is never
# popped: --header flags it, and no later sample (app_phase's spin) goes
# under an NCCL frame.
XPU_FAKE_KERNEL_NS=$KERNEL_NS "$RECORD" -F $FREQ -o "$T/nccl.data" --cupti-lib "$LIB" -- \
	"$APP" $LAUNCHES 0.3 nccl >"$T/nccl-record.out" 2>"$T/nccl-record.err" ||
	{ cat "$T/nccl-record.err" >&2; fail "xpu-record (nccl) exited $?"; }
report "$T/nccl.folded" -i "$T/nccl.data" --folded
report "$T/nccl-header.txt" -i "$T/nccl.data" --header
folded_check_syntax <"$T/nccl.folded" || fail "nccl.folded is not valid folded output"
init=$(folded_sum ';main;app_comm_init;\[nvtx\]NCCL:ncclCommInitRankConfig;app_spin$' <"$T/nccl.folded")
[ "$init" -gt 0 ] && [ "$init" -eq "$(folded_sum 'app_comm_init;.*app_spin$' <"$T/nccl.folded")" ] ||
	{ cat "$T/nccl.folded" >&2; fail "app_comm_init's spin is not under [nvtx]NCCL:ncclCommInitRankConfig"; }
got=$(folded_sum ';main;app_allreduce;\[nvtx\]NCCL:AllReduce;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)$' \
	<"$T/nccl.folded")
[ "$got" -eq $WANT ] || { cat "$T/nccl.folded" >&2; fail "GPU weight under [nvtx]NCCL:AllReduce is $got, want $WANT"; }
spin=$(folded_sum 'app_phase;.*app_spin$' <"$T/nccl.folded")
[ "$spin" -gt 0 ] && [ "$(folded_sum ';main;app_phase;\[nvtx\]phase;app_spin$' <"$T/nccl.folded")" -eq "$spin" ] ||
	{ grep 'app_phase' "$T/nccl.folded" >&2; fail "app_phase's samples are under a range that ended before"; }
grep -Eq "^#   push/pop $((LAUNCHES + 3)), start/end 0, marks 0, never closed 1, malformed 0\$" "$T/nccl-header.txt" &&
	grep -Eq '^# +[0-9.]+(ms|s) +1 +[0-9.]+(ms|s) +[0-9.]+(ms|s)  NCCL:ncclCommInitRankConfig$' "$T/nccl-header.txt" &&
	grep -Eq "^# +[0-9.]+(ms|us|s) +$LAUNCHES +[0-9.]+(ms|us) +[0-9.]+(ms|us|s)  NCCL:AllReduce\$" "$T/nccl-header.txt" &&
	grep -Eq '^#   never closed: 1 push/pop, 0 start/end .*: NCCL:ncclCommFinalize 1$' "$T/nccl-header.txt" ||
	{ sed -n '/# NVTX/,$p' "$T/nccl-header.txt" >&2; fail "header: NCCL ranges closed and never closed"; }
note "NCCL NVTX: $init samples under ncclCommInitRankConfig, $got under AllReduce, $spin app_phase samples under phase only"
exit 0

#!/usr/bin/env bash
# The GPU correlation ring (up to 64 MiB of kernel memory, mapped twice into
# xpu-record) is made only when a CUDA process connects:
# - a CPU program recorded with GPU recording on (the default) never makes
#   it, and xpu-record's peak RSS stays under 64 MB at -F 999 (151-164 MB
#   when the ring was made at start);
# - a (fake) CUDA app that launches 5,000 kernels right after its library
#   connects loses no correlation record: the library waits for the
#   recorder's ready byte, sent once the ring is in place (without the
#   wait, 4,748 of 5,000 went to the 1 MiB ring of before and were lost).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
[ -x "$APP" ] && [ -f "$LIB" ] || fail "fake CUDA app not built: run make tests-build"

"$RECORD" -v -F 999 -o "$T/cpu.data" -- "$CPU_DEMO" --no-child 1 >"$T/cpu.out" 2>"$T/cpu.err" ||
	{ cat "$T/cpu.err" >&2; fail "xpu-record failed on cpu_demo"; }
! grep -q "GPU correlation ring:" "$T/cpu.err" || fail "a CPU program's recording made the GPU ring"
rss=$(sed -nE 's/.*peak RSS ([0-9.]+) MB.*/\1/p' "$T/cpu.err")
note "cpu_demo at -F 999, GPU recording on: xpu-record peak RSS $rss MB"
[ -n "$rss" ] || fail "no peak RSS line in xpu-record -v"
in_range "$rss" 1 64 || fail "xpu-record's peak RSS is $rss MB on a CPU program (> 64 MB)"

XPU_FAKE_KERNEL_NS=1000 "$RECORD" -v -F 99 -o "$T/gpu.data" --cupti-lib "$LIB" -- "$APP" 5000 0.01 \
	>"$T/gpu.out" 2>"$T/gpu.err" || { cat "$T/gpu.err" >&2; fail "xpu-record failed on the fake CUDA app"; }
grep -q "GPU correlation ring:" "$T/gpu.err" || fail "the CUDA app's recording made no GPU ring"
report "$T/gpu.header" -i "$T/gpu.data" --header
corr=$(awk '$2 == "GPU_CORR" { print $3 }' "$T/gpu.header")
lost=$(sed -nE 's/.*correlation lost: +([0-9]+).*/\1/p' "$T/gpu.header")
note "fake CUDA app, 5000 launches at once: $corr correlation records, ${lost:-0} lost"
[ "${lost:-0}" -eq 0 ] || fail "$lost correlation records lost in the first burst"
[ "$corr" -ge 5000 ] || fail "only $corr correlation records for 5000 launches"
exit 0

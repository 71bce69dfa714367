#!/usr/bin/env bash
# The README's demo: builds xpu-perf (unless run from `make demo`, which has
# built it), records a bundled demo program and prints its report.
#   GPU present (nvidia-smi works, libxpu-cupti.so and nvcc available):
#     tests/gpu/gpu_demo.cu, built with nvcc, CPU and GPU in one profile.
#   Otherwise: tests/workloads/cpu_demo, a CPU program with a known profile
#     (60% burn_a / 40% burn_b in the main thread, a worker thread, a child).
# Recording needs root (eBPF); sudo is used when run as a user.
set -euo pipefail
cd "$(dirname "$0")/.."
XPU_TOP=$PWD
O=${O:-build}
XPU_BUILD=${XPU_BUILD:-$XPU_TOP/$O}
XPU_BIN=${XPU_BIN:-$XPU_TOP}
RECORD=$XPU_BIN/xpu-record
REPORT=$XPU_BIN/xpu-report
out=$XPU_BUILD/demo
die() { echo "demo: $*" >&2; exit 1; }

if [ -z "${MAKELEVEL:-}" ]; then
	make -s O="$O" all "$O/tests/workloads/cpu_demo"
fi
[ -x "$RECORD" ] && [ -x "$REPORT" ] || die "$RECORD or $REPORT missing: the build failed"

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "recording needs root (CAP_BPF, CAP_PERFMON): run as root or install sudo"
	sudo=(sudo)
fi

mkdir -p "$out"
gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 &&
   [ -f "$XPU_BIN/libxpu-cupti.so" ] && [ -f tests/gpu/gpu_demo.cu ]; then
	nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
	if [ -x "$nvcc" ]; then
		echo "demo: GPU found ($(nvidia-smi -L | head -n 1)): building tests/gpu/gpu_demo.cu"
		"$nvcc" -O2 -g -o "$out/gpu_demo" tests/gpu/gpu_demo.cu -lpthread || die "nvcc failed on tests/gpu/gpu_demo.cu"
		gpu=1
	else
		echo "demo: GPU found but no nvcc (set CUDA_HOME): using the CPU demo"
	fi
fi

if [ $gpu -eq 1 ]; then
	cmd=("$RECORD" -F 999 --cupti-lib "$XPU_BIN/libxpu-cupti.so" -o "$out/xpu.data" -- "$out/gpu_demo")
else
	cmd=("$RECORD" -F 999 -o "$out/xpu.data" -- "$XPU_BUILD/tests/workloads/cpu_demo" 3)
fi
echo "demo: ${sudo[*]} ${cmd[*]}"
"${sudo[@]}" "${cmd[@]}"
[ ${#sudo[@]} -eq 0 ] || "${sudo[@]}" chown "$(id -u):$(id -g)" "$out/xpu.data"

echo
echo "demo: $REPORT -i $out/xpu.data --stdio   (the functions with their own time: Self >= 0.5%)"
"$REPORT" -i "$out/xpu.data" --stdio |
	awk '/^#/ { print; next } $2 + 0 >= 0.5 { print }' | head -n 30 || true
echo
echo "demo: $REPORT -i $out/xpu.data --folded   (heaviest 10 stacks)"
"$REPORT" -i "$out/xpu.data" --folded | awk '{ print $NF "\t" $0 }' | sort -rn -k 1,1 | cut -f 2- | head -n 10 || true
echo
"$REPORT" -i "$out/xpu.data" --svg "$out/flame.svg" &&
	echo "demo: flame graph: $out/flame.svg   ($REPORT -i $out/xpu.data --svg FILE; open it in a browser)"
echo "demo: browse it: $REPORT -i $out/xpu.data   (on a terminal: the call tree, h for keys)"

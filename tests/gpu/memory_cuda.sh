#!/usr/bin/env bash
# xpu-record --gpu-memory on a plain CUDA program (memory_cuda.cu), on the
# GPU machine, as root: every allocation and release of known size in the
# trace (GPU_MEMORY, from CUPTI's MEMORY2), joined to a GPU_CORR of its call
# by correlation ID; the pools (GPU_MEMPOOL: created, trimmed, destroyed);
# each device's memory when the library connected (GPU_MEM_STATE); the
# failed 16 TiB cudaMalloc (GPU_OOM, its size from the call's params); the
# program's output unchanged. Then --flight-recorder --trigger oom: the
# window holds the OOM. Not run by run.sh. XPU_BIN, OUT as for tests/gpu/run.sh; a prebuilt
# MEMORY_CUDA binary is used when given. Exit 0 passed, 1 failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$RES/memory"
D=$RES/memory
chk=$RES/memory.check
: >"$chk"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU (nvidia-smi -L failed)"; exit 2; }
APP=${MEMORY_CUDA:-$D/memory_cuda}
if [ -z "${MEMORY_CUDA:-}" ]; then
	"$NVCC" -O2 -g -arch=sm_90 -o "$APP" "$TOP/tests/gpu/memory_cuda.cu" >"$D/nvcc.log" 2>&1 ||
		{ cat "$D/nvcc.log"; exit 1; }
fi
fail=0
ok() { echo "ok    $*" | tee -a "$chk"; }
bad() { echo "FAIL  $*" | tee -a "$chk"; fail=1; }

"$BIN/xpu-record" -v --gpu-memory -o "$D/m.data" -- "$APP" >"$D/m.out" 2>"$D/m.err" ||
	bad "xpu-record exited $?"
grep -qx 'OOM 2' "$D/m.out" && grep -qx DONE "$D/m.out" && ok "the program's output: OOM 2, DONE" ||
	bad "the program's output: $(tr '\n' ' ' <"$D/m.out")"
"$BIN/xpu-report" -i "$D/m.data" --dump 2>/dev/null | grep -E '^GPU_(MEMORY|MEMPOOL|MEM_STATE|OOM|CORR) ' >"$D/m.dump"
grep -E '^GPU_(MEMORY|MEMPOOL|MEM_STATE|OOM) ' "$D/m.dump" | tee "$D/m.memory" | head -40
grep 'memory records' "$D/m.err" | tee -a "$chk"
# alloc SIZE KIND: an allocation of SIZE bytes of memory kind KIND with its call's stack
alloc() {
	local corr
	corr=$(grep -E "^GPU_MEMORY .* op=1 kind=$2 .* bytes=$1 " "$D/m.dump" | head -1 | sed -nE 's/.* corr=([0-9]+) .*/\1/p')
	[ -n "$corr" ] || { bad "no allocation of $1 bytes (kind $2)"; return; }
	grep -qE "^GPU_CORR .* corr=$corr " "$D/m.dump" && ok "$1 bytes (kind $2): corr $corr has a stack" ||
		bad "$1 bytes (kind $2): no GPU_CORR for corr $corr"
	if [ "$1" = 3145728 ]; then
		grep -qE "^GPU_MEMORY .* op=2 kind=$2 .* bytes=$1 " "$D/m.dump" &&
			bad "3145728 bytes: released, but the program holds them to the end" ||
			ok "3145728 bytes: not released (held to the end)"
	elif grep -qE "^GPU_MEMORY .* op=2 kind=$2 .* bytes=$1 " "$D/m.dump"; then
		ok "$1 bytes (kind $2): released"
	else
		bad "$1 bytes (kind $2): no release"
	fi
}
alloc 1048576 3
alloc 3145728 3
alloc 65536 3
alloc 262144 3
alloc 1048576 2
pools=$(grep '^GPU_MEMPOOL ' "$D/m.dump" | sed -nE 's/.* op=([0-9]).*/\1/p' | sort -u | tr '\n' ' ')
case "$pools" in *1*3*) ok "pools: ops $pools" ;; *) bad "pools: ops $pools (want created and trimmed)" ;; esac
grep -qE '^GPU_MEM_STATE .* total=[1-9][0-9]{9,} .* flags=0x0 ' "$D/m.dump" && ok "device state: $(grep '^GPU_MEM_STATE' "$D/m.dump" | head -1 | cut -c1-140)" ||
	bad "no GPU_MEM_STATE"
oom=$(grep '^GPU_OOM ' "$D/m.dump")
corr=$(echo "$oom" | sed -nE 's/.* corr=([0-9]+) .*/\1/p')
echo "$oom" | grep -qE 'bytes=17592186044416 .* ret=2' && grep -qE "^GPU_CORR .* corr=$corr " "$D/m.dump" &&
	ok "OOM: $oom" || bad "OOM: '$oom'"
# without --gpu-memory: no memory records
"$BIN/xpu-record" -o "$D/n.data" -- "$APP" >"$D/n.out" 2>"$D/n.err" || bad "xpu-record (no --gpu-memory) exited $?"
n=$("$BIN/xpu-report" -i "$D/n.data" --dump 2>/dev/null | grep -cE '^GPU_(MEMORY|MEMPOOL|MEM_STATE|OOM) ')
[ "$n" = 0 ] && ok "without --gpu-memory: no memory records" || bad "without --gpu-memory: $n memory records"
# --trigger oom
mkdir -p "$D/fl"
"$BIN/xpu-record" --gpu-memory --flight-recorder=5 --trigger oom -o "$D/fl/f.data" -- "$APP" \
	>"$D/f.out" 2>"$D/f.err" || bad "xpu-record --trigger oom exited $?"
grep 'flight recorder: oom' "$D/f.err" | tee -a "$chk"
f=$(grep 'flight recorder: oom' "$D/f.err" | head -1 | sed -E 's/.* written to //')
[ -n "$f" ] && "$BIN/xpu-report" -i "$f" --dump 2>/dev/null | grep -qE '^GPU_OOM .*bytes=17592186044416' &&
	ok "--trigger oom: the window holds the OOM" || bad "--trigger oom: no window with the OOM ($(cat "$D/f.err" | tail -3))"
exit $fail

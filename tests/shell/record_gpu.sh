#!/usr/bin/env bash
# The recorder's GPU path without a GPU. fake_cuda_app does what libcuda
# does with CUDA_INJECTION64_PATH (dlopen, InitializeInjection), then
# "launches" through main -> app_step -> app_launch -> xpu_fake_launch:
#  - libmarker_test.so: the uprobe on xpu_cupti_marker gives one GPU_CORR
#    record per launch, with the IDs the library passed and a stack (regs +
#    copy in dwarf mode, PCs in fp mode) that reaches main;
#  - libfake_cupti.so (the real library's channel client): its records come
#    over the socket into the trace;
#  - a client speaking garbage is dropped and counted as lost, a valid
#    message before it is kept;
#  - NVTX ranges (libfake_cupti.so's NVTX side): injected by xpu-record,
#    push stacks by the same uprobe, --no-nvtx, a user's injection kept;
#  - --no-gpu injects nothing.
set -u
REC=$XPU_BIN/xpu-record W=$XPU_BUILD/tests/workloads CHECK=$XPU_BUILD/tests/record_check
[ "$(id -u)" -eq 0 ] || { echo "needs root for eBPF"; exit 2; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }
read -r addr size < <(nm -S "$W/fake_cuda_app" | awk '$4=="main"{print "0x"$1, "0x"$2}')

for cg in dwarf fp; do
	"$REC" -q --call-graph $cg --cupti-lib "$W/libmarker_test.so" -o "$T/m.data" -- \
		"$W/fake_cuda_app" 50 0.1 || fail "$cg: record exit $?"
	"$CHECK" "$T/m.data" corr >"$T/corr"
	ids=$(grep -o ' id=[0-9]*' "$T/corr" | cut -d= -f2 | sort -n | tr '\n' ' ')
	[ "$ids" = "$(seq -s ' ' 1000 1049) " ] || fail "$cg: correlation IDs: $ids"
	grep '^corr' "$T/corr" | grep -vq 'cbid=211 domain=1' && fail "$cg: cbid/domain wrong: $(grep -v 'cbid=211 domain=1' "$T/corr" | head -1)"
	if [ $cg = dwarf ]; then
		# registers and a stack copy, or the frames of their unwinding
		grep -q 'regs=0 ips=0' "$T/corr" && fail "dwarf corr record without registers or frames"
	else
		grep -q 'ips=0' "$T/corr" && fail "fp corr record without user PCs"
	fi
	"$CHECK" "$T/m.data" >"$T/sum"
	[ "$(val features "$T/sum")" = $([ $cg = dwarf ] && echo 0x3b || echo 0x3d) ] || fail "$cg: features"
	[ "$(val lost.2 "$T/sum")" -eq 0 ] || fail "$cg: correlation records lost"
	if [ $cg = dwarf ]; then	# fp cannot walk through -fomit-frame-pointer code
		"$CHECK" "$T/m.data" hits "$W/fake_cuda_app" "$addr" "$size" | grep corr_hit >"$T/hits"
		read -r _ hit all <"$T/hits"
		[ "$hit" -eq 50 ] && [ "$all" -eq 50 ] || fail "main on the stack in $hit of $all corr records"
	fi
	echo "$cg: 50 correlation records, IDs 1000..1049"
done

# The real channel client (libfake_cupti.so): records arrive and are counted.
"$REC" --cupti-lib "$W/libfake_cupti.so" -o "$T/f.data" -- "$W/fake_cuda_app" 20 0.1 2>"$T/err" ||
	fail "fake cupti: exit $?"
cat "$T/err"
"$CHECK" "$T/f.data" >"$T/sum"
for k in GPU_KERNEL GPU_API GPU_CORR; do
	[ "$(val $k "$T/sum")" -eq 20 ] || fail "$k: $(val $k "$T/sum"), want 20"
done
[ "$(val lost.5 "$T/sum")" -eq 0 ] || fail "channel losses"
n=$(( $(val GPU_KERNEL "$T/sum") + $(val GPU_API "$T/sum") + $(val GPU_CORR "$T/sum") + $(val GPU_DEVICE "$T/sum") ))
grep -q " $n GPU records" "$T/err" || fail "summary does not count $n GPU records"

# NVTX: xpu-record points NVTX_INJECTION64_PATH at the library; the app's
# "NVTX" loads it and pushes 20 "step" ranges and one "phase": 21 GPU_NVTX
# records, 21 push stacks (GPU_CORR domain 3) beside the 20 launch ones, and
# the nvtx feature bit. --no-nvtx: none of it. A user's own
# NVTX_INJECTION64_PATH is kept (here one that does not load: no ranges).
"$REC" -q --cupti-lib "$W/libfake_cupti.so" -o "$T/v.data" -- "$W/fake_cuda_app" 20 0.1 nvtx ||
	fail "nvtx: exit $?"
"$CHECK" "$T/v.data" >"$T/sum"
"$CHECK" "$T/v.data" corr >"$T/corr"
[ "$(val GPU_NVTX "$T/sum")" -eq 21 ] || fail "nvtx: GPU_NVTX $(val GPU_NVTX "$T/sum"), want 21"
[ "$(grep -c 'domain=3' "$T/corr")" -eq 21 ] || fail "nvtx: $(grep -c 'domain=3' "$T/corr") push stacks, want 21"
[ "$(grep -c 'cbid=211 domain=1' "$T/corr")" -eq 20 ] || fail "nvtx: launch stacks"
[ $(( $(val features "$T/sum") & 0x40 )) -ne 0 ] || fail "nvtx: no nvtx feature bit ($(val features "$T/sum"))"
grep -q '^meta.nvtx on (NVTX_INJECTION64_PATH set by xpu-record)$' "$T/sum" || fail "nvtx: META nvtx"
grep -q '^meta.cupti.nvtx on$' "$T/sum" || fail "nvtx: META cupti.nvtx"
"$REC" -q --no-nvtx --cupti-lib "$W/libfake_cupti.so" -o "$T/v.data" -- "$W/fake_cuda_app" 20 0.1 nvtx ||
	fail "--no-nvtx: exit $?"
"$CHECK" "$T/v.data" >"$T/sum"
[ "$(val GPU_NVTX "$T/sum")" -eq 0 ] && [ "$(val GPU_CORR "$T/sum")" -eq 20 ] ||
	fail "--no-nvtx: GPU_NVTX $(val GPU_NVTX "$T/sum"), GPU_CORR $(val GPU_CORR "$T/sum")"
[ $(( $(val features "$T/sum") & 0x40 )) -eq 0 ] || fail "--no-nvtx: nvtx feature bit set"
grep -q '^meta.nvtx off (--no-nvtx)$' "$T/sum" || fail "--no-nvtx: META nvtx"
grep -q '^meta.cupti.nvtx off$' "$T/sum" || fail "--no-nvtx: the library was not told"
NVTX_INJECTION64_PATH=/nonexistent/libnvtx_tool.so "$REC" -q --cupti-lib "$W/libfake_cupti.so" \
	-o "$T/v.data" -- "$W/fake_cuda_app" 20 0.1 nvtx || fail "user's NVTX injection: exit $?"
"$CHECK" "$T/v.data" >"$T/sum"
[ "$(val GPU_NVTX "$T/sum")" -eq 0 ] || fail "user's NVTX_INJECTION64_PATH was replaced"
grep -q "^meta.nvtx as set by the user's NVTX_INJECTION64_PATH=/nonexistent/libnvtx_tool.so (kept)$" \
	"$T/sum" || fail "user's NVTX injection: META nvtx $(grep '^meta.nvtx ' "$T/sum")"
echo "NVTX: 21 ranges with push stacks; --no-nvtx and a user's injection respected"

# A hostile client: one good message, then garbage. The good one is kept,
# the client dropped and counted.
cat >"$T/client.py" <<'PY'
import os, socket, struct
def rec(t, body):
    body += b"\0" * (-len(body) % 8)
    return struct.pack("<HHI", t, 0, 8 + len(body)) + body
good = rec(1, b"cupti.test_key\0test.value\0")
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["XPU_CUPTI_SOCKET"])
s.sendall(struct.pack("<II", 0x314e4843, len(good)) + good)
s.sendall(struct.pack("<II", 0x314e4843, 16) + struct.pack("<HHI", 1, 0, 4096) + b"\0" * 8)
s.close()
PY
if command -v python3 >/dev/null; then
	"$REC" -q --cupti-lib "$W/libmarker_test.so" -o "$T/h.data" -- python3 "$T/client.py" ||
		fail "hostile client: exit $?"
	"$CHECK" "$T/h.data" >"$T/sum"
	grep -q '^meta.cupti.test_key test.value' "$T/sum" || fail "valid message before the garbage lost"
	[ "$(val lost.5 "$T/sum")" -eq 1 ] || fail "protocol error not counted: lost.5=$(val lost.5 "$T/sum")"
	echo "hostile client dropped and counted"
fi

# --no-gpu: no injection, no GPU feature.
"$REC" -q --no-gpu --cupti-lib "$W/libmarker_test.so" -o "$T/n.data" -- "$W/fake_cuda_app" 5 0.1 ||
	fail "--no-gpu exit $?"
"$CHECK" "$T/n.data" >"$T/sum"
[ "$(val features "$T/sum")" = 0x33 ] || fail "--no-gpu features"
[ "$(val GPU_CORR "$T/sum")" -eq 0 ] || fail "--no-gpu recorded correlation records"
echo "GPU path ok"

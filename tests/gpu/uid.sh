#!/usr/bin/env bash
# A command that changes its uid before CUDA starts (sudo -u, setpriv) on
# the GPU machine (Documentation/xpu-record.md, "GPU recording"): its CUDA
# process must reach xpu-record's socket (0666 in a 0711 directory, peers
# checked against the tracked tree), so the trace holds its kernels under
# their Python lines, every kernel matched by id, and --header counts no
# gpu-unconnected process. Run as root (XPU_BIN, OUT as for tests/gpu/run.sh):
#   bash tests/gpu/uid.sh      # writes $OUT/uid.check and uid.header
# Exit 0 passed, 1 a check failed, 2 skipped.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${XPU_BIN:-$TOP}
RES=${OUT:-${XPU_BUILD:-$TOP/build}/gpu-results}
PY=${PYTHON:-python3}
mkdir -p "$RES/uid"
for f in xpu-record xpu-report libxpu-cupti.so; do
	[ -e "$BIN/$f" ] || { echo "missing $BIN/$f"; exit 2; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU (nvidia-smi -L failed)"; exit 2; }
command -v setpriv >/dev/null || { echo "no setpriv"; exit 2; }
chk=$RES/uid.check D=$RES/uid
: >"$chk"
fail=0
ok() { echo "ok    $*" | tee -a "$chk"; }
bad() { echo "FAIL  $*" | tee -a "$chk"; fail=1; }
# nobody must read the script and the library: a copy in /tmp
cp "$TOP/tests/gpu/torch_demo.py" /tmp/xpu_uid_demo.py && chmod 644 /tmp/xpu_uid_demo.py
"$BIN/xpu-record" --cupti-lib "$BIN/libxpu-cupti.so" -o "$D/x.data" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp \
	"$PY" /tmp/xpu_uid_demo.py --steps 100 >"$D/out" 2>"$D/err" ||
	bad "xpu-record exited $? ($D/err: $(tail -2 "$D/err"))"
grep -qi "permission denied" "$D/out" "$D/err" && bad "a 'Permission denied' on the way: $(grep -i 'permission denied' "$D/out" "$D/err" | head -1)"
"$BIN/xpu-report" -i "$D/x.data" --header >"$RES/uid.header" 2>&1
"$BIN/xpu-report" -i "$D/x.data" --folded --gpu-only >"$D/gpu.folded" 2>/dev/null
k=$(awk '$0 ~ /GPU_Kernel/ { n += $NF } END { print n + 0 }' "$D/gpu.folded")
py=$(awk '$0 ~ /GPU_Kernel/ && $0 ~ /py::/ { n += $NF } END { print n + 0 }' "$D/gpu.folded")
[ "$k" -gt 0 ] && ok "GPU kernel weight $k in the trace of a process run as nobody" ||
	bad "no GPU kernel in the trace ($(grep -E 'gpu|lost' "$RES/uid.header" | head -5))"
[ "$k" -gt 0 ] && [ "$py" -ge $((k * 9 / 10)) ] && ok "$py of it under Python frames" ||
	bad "$py of $k under Python frames"
grep -Eq '^#   kernels +[0-9]+: by id [0-9]+ \(100\.0%\)' "$RES/uid.header" &&
	ok "$(grep -E '^#   kernels ' "$RES/uid.header" | sed 's/^#   //')" ||
	bad "not every kernel matched by id: $(grep -E '^#   kernels ' "$RES/uid.header")"
u=$(sed -nE 's/^#.*gpu-unconnected +([0-9]+).*/\1/p' "$RES/uid.header" | head -1)
[ "${u:-0}" = 0 ] && ok "gpu-unconnected ${u:-0}" || bad "gpu-unconnected $u"
exit $fail

#!/usr/bin/env bash
# --pprof read by its real consumer, Go's pprof (`go tool pprof`, Debian's
# golang-go): on gen_trace traces (CPU + GPU), -raw lists the sample types
# (samples/count, cpu/nanoseconds, gpu_time/nanoseconds) and the labels (pid,
# tid, comm, origin); the samples total is the --folded total; -top with
# -sample_index=gpu_time names the GPU kernels; --cpu-only has no GPU type;
# -traces shows the full stacks, leaf first, as in --folded. GPU samples
# carry device and stream labels and their gpu_time sums to the header's GPU
# total; the mapping of the traced binary carries its build-id and its
# executable segment as readelf shows them.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
command -v go >/dev/null || skip "go not installed (golang-go, scripts/setup.sh): go tool pprof reads --pprof"
"$REPORT" --help | grep -q -- '--pprof' || skip "xpu-report built without libprotobuf-c: no --pprof"
export HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod
tui_gen "$T/gpu.data" -n 2000 --gpu
note() { echo "# $*"; }
pp() { go tool pprof -symbolize=none "$@" 2>"$T/pprof.err"; }

"$REPORT" -i "$T/gpu.data" --pprof "$T/p.pb.gz" 2>"$T/p.err" || fail "--pprof exited $?: $(cat "$T/p.err")"
[ "$(head -c 2 "$T/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "--pprof output is not gzip"
pp -raw "$T/p.pb.gz" >"$T/raw" || fail "go tool pprof -raw failed: $(cat "$T/pprof.err")"
grep -q '^samples/count\[dflt\] cpu/nanoseconds gpu_time/nanoseconds$' "$T/raw" ||
	fail "sample types: $(grep -m1 'samples/count' "$T/raw")"
for l in 'pid:\[' 'tid:\[' 'comm:\[tui-demo\]' 'origin:\[gpu\]' 'origin:\[cpu\]'; do
	grep -q "$l" "$T/raw" || fail "no label $l in -raw"
done

grep -q 'device:\[0\] origin:\[gpu\] stream:\[' "$T/raw" ||
	fail "GPU samples lack device/stream labels: $(grep -m1 'origin:\[gpu' "$T/raw")"
# gpu_time column (3rd value) of the samples vs kernels + memcpy in --header
gpu_ns=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && NF >= 4 { s += $3 } END { printf "%d", s }' "$T/raw")
hdr_ns=$("$REPORT" -i "$T/gpu.data" --header 2>/dev/null |
	awk '/^#   (kernels|memcpy|memset|sync) / { s += $(NF - 1) * 1e6 } END { printf "%d", s }')
note "gpu_time: $gpu_ns ns in pprof, $hdr_ns ns in --header"
awk -v a="$gpu_ns" -v b="$hdr_ns" 'BEGIN { d = a - b; exit !(b > 0 && d <= 1000 && -d <= 1000) }' ||
	fail "pprof gpu_time $gpu_ns ns, --header $hdr_ns ns"
# the mapping of gen_trace: build-id, memory_start/limit/offset of its R E segment
bid=$(readelf -n "$GEN" | awk '/Build ID/ { print $3 }')
set -- $(readelf -lW "$GEN" | awk '$1 == "LOAD" && $8 == "E" { print $2, $3, $6 }')
seg=$(printf '%#x/%#x/%#x' $(($2)) $(($2 + $3)) $(($1)))
grep -q "^[0-9]*: $seg [^ ]*gen_trace $bid" "$T/raw" ||
	fail "no mapping '$seg ... gen_trace $bid': $(sed -n '/^Mappings/,$p' "$T/raw")"

"$REPORT" -i "$T/gpu.data" --folded >"$T/folded" 2>/dev/null
want=$(awk '{ s += $NF } END { print s }' "$T/folded")
lines=$(grep -c . "$T/folded")
got=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && NF >= 3 { s += $1 } END { print s + 0 }' "$T/raw")
note "samples: $got in pprof, $want in --folded ($lines lines, each rounded)"
nsmp=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && NF >= 3 { n++ } END { print n + 0 }' "$T/raw")
[ "$nsmp" -gt "$lines" ] && lines=$nsmp	# GPU work is split by device and stream
awk -v a="$got" -v b="$want" -v n="$lines" 'BEGIN { d = a - b; exit !(d <= n && -d <= n) }' ||
	fail "pprof holds $got samples, --folded $want"

pp -top -sample_index=gpu_time "$T/p.pb.gz" >"$T/top" || fail "-top failed: $(cat "$T/pprof.err")"
grep -q 'Type: gpu_time' "$T/top" || fail "-sample_index=gpu_time: $(head -3 "$T/top")"
grep -q 'GPU_Kernel.matmul_f32' "$T/top" || fail "-top gpu_time has no matmul_f32 kernel: $(cat "$T/top")"

pp -traces "$T/p.pb.gz" >"$T/traces" || fail "-traces failed"
grep -q 'tui_demo_matmul' "$T/traces" || fail "-traces has no tui_demo_matmul frame"

"$REPORT" -i "$T/gpu.data" --pprof "$T/c.pb.gz" --cpu-only 2>/dev/null || fail "--pprof --cpu-only failed"
pp -raw "$T/c.pb.gz" >"$T/craw" || fail "-raw of --cpu-only failed"
grep -q '^samples/count\[dflt\] cpu/nanoseconds$' "$T/craw" || fail "--cpu-only sample types: $(grep -m1 'samples/count' "$T/craw")"
! grep -q 'origin:\[gpu\]' "$T/craw" || fail "--cpu-only has GPU samples"
exit 0

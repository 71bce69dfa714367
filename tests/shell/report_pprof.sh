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
# Locations are the sampled addresses with their source lines: -list shows
# per-line counts of tui_demo_parse's loop (lines 45, 46 of gen_trace.c),
# -lines names file:line, -disasm gives counts per instruction; the program
# is mapping 1 and the kernel the last (decoded with the upstream
# profile.proto), kernel names carry no _[k]; the period is the sampling
# period in cpu/nanoseconds; -tags has thread, comm and GPU kernel labels.
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

# source lines and addresses, as go tool pprof users read them
(cd "$XPU_TOP" && pp -list '^tui_demo_parse$' "$T/p.pb.gz") >"$T/list" || fail "-list failed: $(cat "$T/pprof.err")"
note "-list tui_demo_parse: $(grep -c '^ *[0-9]' "$T/list") lines with counts"
for l in 45 46; do
	grep -Eq "^ +[1-9][0-9]* +[0-9]+ +$l:" "$T/list" || fail "-list has no count on line $l: $(cat "$T/list")"
done
pp -top -lines "$T/p.pb.gz" >"$T/lines" || fail "-lines failed"
grep -Eq 'tui_demo_matmul tests/tools/gen_trace.c:5[0-9]' "$T/lines" || fail "-lines: no file:line $(head -12 "$T/lines")"
pp -disasm 'tui_demo_parse' "$T/p.pb.gz" >"$T/disasm" || fail "-disasm failed: $(cat "$T/pprof.err")"
[ "$(grep -Ec '^ +[1-9][0-9]* +[0-9]+ +[0-9a-f]+:' "$T/disasm")" -ge 3 ] ||
	fail "-disasm: fewer than 3 instructions with counts: $(cat "$T/disasm")"
pp -tags "$T/p.pb.gz" >"$T/tags" || fail "-tags failed"
for l in ' thread: Total' ' comm: Total' ' kernel: Total' ': tui-worker$' ': matmul_f32\(float'; do
	grep -Eq "$l" "$T/tags" || fail "-tags has no '$l': $(cat "$T/tags")"
done
! grep -q '_\[k\]' "$T/raw" || fail "kernel names keep _[k]: $(grep -m1 '_\[k\]' "$T/raw")"
grep -q 'nvidia_ioctl' "$T/raw" || fail "no kernel frame nvidia_ioctl"
grep -q '^PeriodType: cpu nanoseconds$' "$T/raw" || fail "period type: $(grep Period "$T/raw")"
freq=$("$REPORT" -i "$T/gpu.data" --header 2>/dev/null | sed -n 's/.*sample_freq: *\([0-9]*\).*/\1/p; s/.* \([0-9][0-9]*\) Hz.*/\1/p' | head -1)
[ -n "$freq" ] && { grep -q "^Period: $(( (1000000000 + freq / 2) / freq ))$" "$T/raw" || fail "period $(grep '^Period:' "$T/raw"), $freq Hz"; }
# the byte layout, decoded with the upstream schema: mapping 1 the program, the kernel last
PROTO=${PPROF_PROTO:-/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto}
if command -v protoc >/dev/null && [ -f "$PROTO" ]; then
	gzip -dc "$T/p.pb.gz" | protoc --decode=perftools.profiles.Profile -I"$(dirname "$PROTO")" "$PROTO" \
		>"$T/decoded" 2>"$T/protoc.err" || fail "protoc --decode with $PROTO: $(cat "$T/protoc.err")"
	awk '/^string_table:/ { s[n++] = $0; sub(/^string_table: "/, "", s[n - 1]); sub(/"$/, "", s[n - 1]) }
	     /^mapping {/ { m = 1 } m && /^  filename:/ { f[nm++] = $2 } /^}/ { m = 0 }
	     END { for (i = 0; i < nm; i++) print s[f[i]] }' "$T/decoded" >"$T/maps"
	note "mappings in order: $(tr '\n' ' ' <"$T/maps")"
	head -1 "$T/maps" | grep -q '/gen_trace$' || fail "mapping 1 is not the program: $(cat "$T/maps")"
	[ "$(tail -1 "$T/maps")" = "[kernel.kallsyms]" ] || fail "the kernel is not the last mapping: $(cat "$T/maps")"
fi

"$REPORT" -i "$T/gpu.data" --pprof "$T/c.pb.gz" --cpu-only 2>/dev/null || fail "--pprof --cpu-only failed"
pp -raw "$T/c.pb.gz" >"$T/craw" || fail "-raw of --cpu-only failed"
grep -q '^samples/count\[dflt\] cpu/nanoseconds$' "$T/craw" || fail "--cpu-only sample types: $(grep -m1 'samples/count' "$T/craw")"
! grep -q 'origin:\[gpu\]' "$T/craw" || fail "--cpu-only has GPU samples"
exit 0

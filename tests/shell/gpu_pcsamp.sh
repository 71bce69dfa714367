#!/usr/bin/env bash
# GPU PC sampling end to end without a GPU: xpu-record --gpu-pc-sampling
# runs fake_cuda_app with libfake_cupti.so, whose PC samples go through the
# real library's record making (cupti/pcsamp/pcsamp.c) and whose cubin is
# tests/data/pcsamp/fake_kernel.cubin (fake_kernel.cu built with -lineinfo).
# Each launch samples PCs 0x180 and 0x300 (line 15, long_scoreboard: 4 and 2
# samples) and 0x4d0 (line 17, math_pipe_throttle: 3). The report must
# share every kernel's GPU time exactly by those counts under
# [sass]...(fake_kernel.cu:LINE);[stall]REASON frames, keep the total, show
# the per-kernel table in --header, hide the split with --no-pc-sampling,
# and say why where PC sampling was refused; malformed records and drops
# are counted.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
CUBIN=$XPU_TOP/tests/data/pcsamp/fake_kernel.cubin
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
need_tools
need_bpf

# 50 launches x 20 ms at 99 Hz: 99 samples of GPU time
LAUNCHES=50 KERNEL_NS=20000000 FREQ=99 WANT=99
A=4 B=2 C=3			# samples per launch at 0x180, 0x300 (line 15), 0x4d0 (line 17)
TOTAL=$((A + B + C))
DROPPED=7 MALFORMED=2
XPU_FAKE_PC_SAMPLES="0x180:0:$A,0x300:0:$B,0x4d0:1:$C" XPU_FAKE_CUBIN=$CUBIN \
XPU_FAKE_PC_DROPPED=$DROPPED XPU_FAKE_PC_MALFORMED=$MALFORMED XPU_FAKE_KERNEL_NS=$KERNEL_NS \
	"$RECORD" -F $FREQ -o "$T/pc.data" --cupti-lib "$LIB" --gpu-pc-sampling=12 --gpu-pc-duty=off -- \
	"$APP" $LAUNCHES 0.3 >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err" >&2; fail "xpu-record exited $?"; }

report "$T/gpu.folded" -i "$T/pc.data" --folded --gpu-only
report "$T/plain.folded" -i "$T/pc.data" --folded --gpu-only --no-pc-sampling
report "$T/merged.folded" -i "$T/pc.data" --folded
report "$T/header.txt" -i "$T/pc.data" --header
report "$T/dump.txt" -i "$T/pc.data" --dump
folded_check_syntax <"$T/gpu.folded" || fail "gpu.folded is not valid folded output"

KERNEL='cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)'
sum() { folded_sum "${1:-}" <"$T/gpu.folded"; }
expect() {	# expect NAME GOT WANT
	[ "$2" -eq "$3" ] || { cat "$T/gpu.folded" >&2; fail "$1: $2, want $3"; }
}
expect "total GPU weight" "$(sum)" $WANT
expect "total with --no-pc-sampling" "$(folded_sum <"$T/plain.folded")" $WANT
expect "kernel weight under the launch" "$(sum "$KERNEL;")" $WANT
expect "line 15" "$(sum "$KERNEL;\[sass\]fake_kernel\+0x[0-9a-f]+ \(fake_kernel\.cu:15\);")" \
	$((WANT * (A + B) / TOTAL))
expect "line 17" "$(sum "$KERNEL;\[sass\]fake_kernel\+0x[0-9a-f]+ \(fake_kernel\.cu:17\);")" \
	$((WANT * C / TOTAL))
expect "pc 0x180" "$(sum '\[sass\]fake_kernel\+0x180 \(fake_kernel\.cu:15\);\[stall\]long_scoreboard$')" \
	$((WANT * A / TOTAL))
expect "long_scoreboard" "$(sum ';\[stall\]long_scoreboard$')" $((WANT * (A + B) / TOTAL))
expect "math_pipe_throttle" "$(sum ';\[stall\]math_pipe_throttle$')" $((WANT * C / TOTAL))
grep -q '\[sass\]\|\[stall\]' "$T/plain.folded" && fail "--no-pc-sampling still shows [sass]/[stall] frames"
expect "merged GPU line" "$(folded_sum "$KERNEL;" <"$T/merged.folded")" $WANT

# --header: the state, counts, and the table in samples (launches x counts)
grep -q '^#   pc sampling: on (libfake_cupti); asked: period=2^12 duty=off$' "$T/header.txt" ||
	{ grep 'pc sampl' "$T/header.txt" >&2; fail "header lacks the pc sampling state"; }
grep -Eq "^#   pc samples: $((LAUNCHES * TOTAL)) in [0-9]+ records \(malformed $MALFORMED\), cubins 1 \(reduced 0, skipped 0, unreadable 0\), PCs with a line 3, without 0$" \
	"$T/header.txt" || { grep 'pc sampl' "$T/header.txt" >&2; fail "header pc sample counts"; }
grep -q "^#   pc samples pid [0-9]* fake_kernel(int): $((LAUNCHES * TOTAL)); stalls: long_scoreboard $((LAUNCHES * (A + B))) (66.7%) math_pipe_throttle $((LAUNCHES * C)) (33.3%)$" \
	"$T/header.txt" || { grep -A1 'pc samples pid' "$T/header.txt" >&2; fail "header stall table"; }
grep -q "^#     lines: fake_kernel.cu:15 $((LAUNCHES * (A + B))) (66.7%) fake_kernel.cu:17 $((LAUNCHES * C)) (33.3%)$" \
	"$T/header.txt" || fail "header line table"
grep -q "^#   pc samples dropped: $DROPPED$" "$T/header.txt" || fail "header lacks the drops"
# every GPU_STALL_REASON but the _not_issued one the library leaves out
[ "$(grep -c '^GPU_STALL_REASON' "$T/dump.txt")" -eq 3 ] || fail "stall reasons in the trace"
grep -q '_not_issued' "$T/dump.txt" && fail "a _not_issued stall reason was recorded"

# pprof: the split's frames, the stall reason as a label, the kernel label kept
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	report "$T/pprof.out" -i "$T/pc.data" --pprof "$T/pc.pb.gz"
	go tool pprof -symbolize=none -tags "$T/pc.pb.gz" >"$T/tags" 2>"$T/tags.err" ||
		fail "go tool pprof -tags: $(cat "$T/tags.err")"
	grep -Eq "^ +$((WANT * (A + B) / TOTAL))\.0 .*: long_scoreboard$" "$T/tags" &&
	grep -Eq "^ +$((WANT * C / TOTAL))\.0 .*: math_pipe_throttle$" "$T/tags" &&
	grep -Eq "^ +$WANT\.0 .*: fake_kernel\(int\)$" "$T/tags" ||
		{ cat "$T/tags" >&2; fail "pprof labels: stall and kernel"; }
else
	note "go tool pprof not available: the pprof labels are not checked"
fi

# The timeline: each kernel slice carries its samples' shares by stall
# reason and by line (decoded with Perfetto's own proto)
if "$REPORT" --help | grep -q -- '--timeline FILE' && command -v protoc >/dev/null; then
	"$REPORT" -i "$T/pc.data" --timeline "$T/pc.pftrace" 2>/dev/null || fail "--timeline failed"
	protoc --decode=perfetto.protos.Trace -I "$XPU_TOP/tests/data/perfetto" \
		"$XPU_TOP/tests/data/perfetto/perfetto_trace.proto" <"$T/pc.pftrace" >"$T/pc.txt" ||
		fail "protoc cannot decode the timeline"
	stalls=$(awk -v a=$((A + B)) -v c=$C -v t=$TOTAL \
		'BEGIN { printf "long_scoreboard %.1f%%, math_pipe_throttle %.1f%%", 100 * a / t, 100 * c / t }')
	lines=$(awk -v a=$((A + B)) -v c=$C -v t=$TOTAL \
		'BEGIN { printf "fake_kernel.cu:15 %.1f%%, fake_kernel.cu:17 %.1f%%", 100 * a / t, 100 * c / t }')
	n1=$(grep -cF "string_value: \"$stalls\"" "$T/pc.txt")
	n2=$(grep -cF "string_value: \"$lines\"" "$T/pc.txt")
	[ "$n1" -eq $LAUNCHES ] && [ "$n2" -eq $LAUNCHES ] ||
		fail "timeline: $n1 kernel slices with stalls '$stalls', $n2 with lines '$lines', want $LAUNCHES each"
fi

# Without the cubin: the same split, PCs without lines
XPU_FAKE_PC_SAMPLES="0x180:0:$A,0x300:0:$B,0x4d0:1:$C" XPU_FAKE_KERNEL_NS=$KERNEL_NS \
	"$RECORD" -F $FREQ -o "$T/nocubin.data" --cupti-lib "$LIB" --gpu-pc-sampling --gpu-pc-duty=off -- \
	"$APP" $LAUNCHES 0.3 >"$T/nocubin.out" 2>"$T/nocubin.err" ||
	{ cat "$T/nocubin.err" >&2; fail "xpu-record exited $? (no cubin)"; }
report "$T/nocubin.folded" -i "$T/nocubin.data" --folded --gpu-only
[ "$(folded_sum '\[sass\]fake_kernel\+0x180;\[stall\]long_scoreboard$' <"$T/nocubin.folded")" -eq $((WANT * A / TOTAL)) ] ||
	{ cat "$T/nocubin.folded" >&2; fail "PC 0x180 without a line"; }

# Without the cubin but with host libraries holding it in their fat
# binaries mapped (a module loaded before an attach: report/gpu/
# gpu_fatbin.h): the lines from there, as with the cubin; the plain and the
# zstd-compressed library both mapped agree on each PC
LIBS=$XPU_TOP/tests/data/pcsamp/libfake_kernel.so:$XPU_TOP/tests/data/pcsamp/libfake_kernel_z.so
for maps in "${LIBS#*:}" "$LIBS"; do
	FAKE_MAP_FILE=$maps XPU_FAKE_PC_SAMPLES="0x180:0:$A,0x300:0:$B,0x4d0:1:$C" \
	XPU_FAKE_KERNEL_NS=$KERNEL_NS "$RECORD" -F $FREQ -o "$T/fatbin.data" --cupti-lib "$LIB" \
		--gpu-pc-sampling --gpu-pc-duty=off -- "$APP" $LAUNCHES 0.3 >"$T/fatbin.out" 2>"$T/fatbin.err" ||
		{ cat "$T/fatbin.err" >&2; fail "xpu-record exited $? (fat binaries mapped)"; }
	report "$T/fatbin.folded" -i "$T/fatbin.data" --folded --gpu-only
	report "$T/fatbin.header" -i "$T/fatbin.data" --header
	nfiles=$(echo "$maps" | tr ':' '\n' | wc -l)
	grep -Eq "^#   pc samples: .*cubins 0 \(reduced 0, skipped 0, unreadable 0\), PCs with a line 3, without 0$" \
		"$T/fatbin.header" || { grep 'pc sampl' "$T/fatbin.header" >&2; fail "header: lines from the fat binaries ($maps)"; }
	grep -q "^#   pc sample lines where the trace has no cubin: 3 PCs, 0 ambiguous; mapped files' fat binaries: $nfiles files read, $nfiles cubins with lines, 0 LZ4 cubins not read, 0 damaged" \
		"$T/fatbin.header" || { grep 'fat binaries' "$T/fatbin.header" >&2; fail "header: the fat binaries' line ($maps)"; }
	expect "fat binaries ($nfiles): pc 0x4d0 on line 17" \
		"$(folded_sum '\[sass\]fake_kernel\+0x4d0 \(fake_kernel\.cu:17\);\[stall\]math_pipe_throttle$' <"$T/fatbin.folded")" \
		$((WANT * C / TOTAL))
	expect "fat binaries ($nfiles): line 15" \
		"$(folded_sum "$KERNEL;\[sass\]fake_kernel\+0x[0-9a-f]+ \(fake_kernel\.cu:15\);" <"$T/fatbin.folded")" \
		$((WANT * (A + B) / TOTAL))
done

# Kernels loaded from memory (Triton's) are in no mapped file: --cubins DIR
# adds the *.cubin files under DIR; the recording without a cubin then
# gets the whole cubin's lines (tests/data/pcsamp holds fake_kernel.cubin
# and multi_kernel.cubin, which has no fake_kernel); a DIR that is not one:
# exit 2 with one line
report "$T/dir.folded" -i "$T/nocubin.data" --folded --gpu-only --cubins "$XPU_TOP/tests/data/pcsamp"
report "$T/dir.header" -i "$T/nocubin.data" --header --cubins "$XPU_TOP/tests/data/pcsamp"
grep -q "; --cubins $XPU_TOP/tests/data/pcsamp: 2 .cubin files read, 2 with lines$" "$T/dir.header" ||
	{ grep 'no cubin' "$T/dir.header" >&2; fail "header: --cubins"; }
expect "--cubins: pc 0x4d0 on line 17" \
	"$(folded_sum '\[sass\]fake_kernel\+0x4d0 \(fake_kernel\.cu:17\);\[stall\]math_pipe_throttle$' <"$T/dir.folded")" \
	$((WANT * C / TOTAL))
"$REPORT" -i "$T/nocubin.data" --folded --cubins "$T/no-such-dir" >/dev/null 2>"$T/dir.err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/dir.err")" -eq 1 ] && grep -q -- '--cubins .*: not a directory' "$T/dir.err" ||
	{ cat "$T/dir.err" >&2; fail "--cubins on a missing directory: not one line and exit 2"; }

# A cubin over the library's bound (XPU_CUPTI_CUBIN_MAX, here below the test
# cubin's size) is kept reduced to its line mapping: the same lines
CUBIN_SIZE=$(stat -c %s "$CUBIN")
XPU_CUPTI_CUBIN_MAX=$((CUBIN_SIZE / 4)) XPU_FAKE_CUBIN=$CUBIN \
XPU_FAKE_PC_SAMPLES="0x180:0:$A,0x300:0:$B,0x4d0:1:$C" XPU_FAKE_KERNEL_NS=$KERNEL_NS \
	"$RECORD" -F $FREQ -o "$T/reduced.data" --cupti-lib "$LIB" --gpu-pc-sampling --gpu-pc-duty=off -- \
	"$APP" $LAUNCHES 0.3 >"$T/reduced.out" 2>"$T/reduced.err" ||
	{ cat "$T/reduced.err" >&2; fail "xpu-record exited $? (reduced cubin)"; }
report "$T/reduced.folded" -i "$T/reduced.data" --folded --gpu-only
report "$T/reduced.header" -i "$T/reduced.data" --header
report "$T/reduced.dump" -i "$T/reduced.data" --dump
rsize=$(sed -n 's/^GPU_CUBIN .* size=\([0-9]*\) reduced .*/\1/p' "$T/reduced.dump")
[ -n "$rsize" ] && [ "$rsize" -le $((CUBIN_SIZE / 2)) ] ||
	{ grep GPU_CUBIN "$T/reduced.dump" >&2; fail "no reduced GPU_CUBIN of at most half of $CUBIN_SIZE bytes"; }
grep -q "cupti.cubins.*0 kept whole (0 bytes), 1 larger than $((CUBIN_SIZE / 4)) bytes reduced to their line tables ($rsize bytes of $CUBIN_SIZE), 0 skipped" \
	"$T/reduced.dump" || { grep cupti.cubins "$T/reduced.dump" >&2; fail "META cupti.cubins: the reduced cubin"; }
grep -Eq "^#   pc samples: .*cubins 1 \(reduced 1, skipped 0, unreadable 0\), PCs with a line 3, without 0$" \
	"$T/reduced.header" || { grep 'pc sampl' "$T/reduced.header" >&2; fail "header: the reduced cubin"; }
# the same folded lines as with the whole cubin (only the recordings' own
# timing may differ: the weights are checked by line)
for l in 15 17; do
	[ "$(folded_sum "$KERNEL;\[sass\]fake_kernel\+0x[0-9a-f]+ \(fake_kernel\.cu:$l\);" <"$T/reduced.folded")" -eq \
	  "$(folded_sum "$KERNEL;\[sass\]fake_kernel\+0x[0-9a-f]+ \(fake_kernel\.cu:$l\);" <"$T/gpu.folded")" ] ||
		{ cat "$T/reduced.folded" >&2; fail "reduced cubin: line $l's weight differs from the whole cubin's"; }
done
expect "reduced: pc 0x4d0 on line 17" \
	"$(folded_sum '\[sass\]fake_kernel\+0x4d0 \(fake_kernel\.cu:17\);\[stall\]math_pipe_throttle$' <"$T/reduced.folded")" \
	$((WANT * C / TOTAL))

# PC sampling refused (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): one line at
# record time, the reason in --header, the kernels whole
XPU_FAKE_PC_ERROR=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES XPU_FAKE_KERNEL_NS=$KERNEL_NS \
	"$RECORD" -F $FREQ -o "$T/off.data" --cupti-lib "$LIB" --gpu-pc-sampling -- \
	"$APP" $LAUNCHES 0.3 >"$T/off.out" 2>"$T/off.err" ||
	{ cat "$T/off.err" >&2; fail "xpu-record exited $? (refused)"; }
[ "$(grep -c 'GPU PC sampling off: .*INSUFFICIENT_PRIVILEGES' "$T/off.err")" -eq 1 ] ||
	{ cat "$T/off.err" >&2; fail "no single line at record time for the refusal"; }
report "$T/off.header" -i "$T/off.data" --header
grep -q '^#   pc sampling: off: cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; asked: on$' \
	"$T/off.header" || { grep 'pc sampl' "$T/off.header" >&2; fail "header lacks the refusal"; }
report "$T/off.folded" -i "$T/off.data" --folded --gpu-only
[ "$(folded_sum "$KERNEL\$" <"$T/off.folded")" -eq $WANT ] || fail "refused: the kernels are not whole"

# A sampler that slows what it samples (XPU_FAKE_PC_INFLATE: launches while
# sampling is on take 8x longer), duty-cycled 40 ms on / 40 ms off: the
# ranges are recorded, --header measures 8.00x from the sampled and the
# unsampled launches, and the GPU time of the views is the launches' time
# unsampled (40 x 4 ms at 999 Hz: 160 samples, not the ~720 recorded);
# one warning line. Sampled continuously (--gpu-pc-duty=off) nothing can
# be measured, and --header says so.
XPU_FAKE_PC_INFLATE=8 FAKE_LAUNCH_GAP_US=20000 XPU_FAKE_KERNEL_NS=4000000 \
	"$RECORD" -F 999 -o "$T/slow.data" --cupti-lib "$LIB" --gpu-pc-sampling --gpu-pc-duty=40:40 -- \
	"$APP" 40 0.1 >"$T/slow.out" 2>"$T/slow.err" || { cat "$T/slow.err" >&2; fail "xpu-record exited $? (slowed)"; }
report "$T/slow.header" -i "$T/slow.data" --header
"$REPORT" -i "$T/slow.data" --folded --gpu-only >"$T/slow.folded" 2>"$T/slow.report.err" ||
	fail "xpu-report --folded exited $? (slowed)"
[ "$(grep -c '^#   pc sampling perturbation: [0-9]* sampling ranges' "$T/slow.header")" -eq 1 ] ||
	{ grep -A3 perturbation "$T/slow.header" >&2; fail "header: no perturbation line"; }
grep -Eq '^#     pid [0-9]+ fake_kernel\(int\): sampled 32\.000 ms mean \([0-9]+ launches\), unsampled 4\.000 ms \([0-9]+\): 8\.00x, GPU time from the unsampled launches$' \
	"$T/slow.header" || { grep -A3 perturbation "$T/slow.header" >&2; fail "header: fake_kernel not measured 8.00x"; }
expect "slowed: GPU total from the unsampled launches" "$(folded_sum <"$T/slow.folded")" 160
[ "$(grep -c 'GPU PC sampling slowed 1 kernel (the most: fake_kernel(int), 8.00x)' "$T/slow.report.err")" -eq 1 ] ||
	{ cat "$T/slow.report.err" >&2; fail "no single warning line for the slowed kernel"; }
# The default: sampled from 500 ms after the start on; 60 launches 20 ms
# apart, those after 500 ms 8x slower: 60 x 4 ms of GPU time, 240 samples.
XPU_FAKE_PC_INFLATE=8 FAKE_LAUNCH_GAP_US=20000 XPU_FAKE_KERNEL_NS=4000000 \
	"$RECORD" -F 999 -o "$T/after.data" --cupti-lib "$LIB" --gpu-pc-sampling -- \
	"$APP" 60 0.1 >"$T/after.out" 2>"$T/after.err" || { cat "$T/after.err" >&2; fail "xpu-record exited $? (default)"; }
report "$T/after.header" -i "$T/after.data" --header
report "$T/after.folded" -i "$T/after.data" --folded --gpu-only
grep -q '^#   pc sampling: on (libfake_cupti, from 500 ms after the start); asked: on$' "$T/after.header" ||
	{ grep 'pc sampl' "$T/after.header" >&2; fail "default: header lacks the deferred start"; }
grep -Eq '^#   pc sampling perturbation: 1 sampling ranges;' "$T/after.header" &&
grep -Eq 'fake_kernel\(int\): sampled 32\.000 ms mean .* unsampled 4\.000 ms .*: 8\.00x, GPU time from the unsampled launches$' \
	"$T/after.header" || { grep -A2 perturbation "$T/after.header" >&2; fail "default: fake_kernel not measured 8.00x"; }
expect "default: GPU total from the unsampled launches" "$(folded_sum <"$T/after.folded")" 240
# a run whose kernels all end before the deferred start: one line says why
# there is no sample and what to do
"$RECORD" -F 999 -o "$T/short.data" --cupti-lib "$LIB" --gpu-pc-sampling -- "$APP" 5 0.1 \
	>"$T/short.out" 2>"$T/short.err" || { cat "$T/short.err" >&2; fail "xpu-record exited $? (short)"; }
"$REPORT" -i "$T/short.data" --folded --gpu-only >/dev/null 2>"$T/short.report.err"
[ "$(grep -c 'no GPU PC sample: PC sampling was deferred .* record with --gpu-pc-duty=off$' "$T/short.report.err")" -eq 1 ] ||
	{ cat "$T/short.report.err" >&2; fail "short run: no single line saying why there is no PC sample"; }
XPU_FAKE_PC_INFLATE=8 FAKE_LAUNCH_GAP_US=20000 XPU_FAKE_KERNEL_NS=4000000 \
	"$RECORD" -F 999 -o "$T/cont.data" --cupti-lib "$LIB" --gpu-pc-sampling --gpu-pc-duty=off -- \
	"$APP" 40 0.1 >"$T/cont.out" 2>"$T/cont.err" || { cat "$T/cont.err" >&2; fail "xpu-record exited $? (continuous)"; }
report "$T/cont.header" -i "$T/cont.data" --header
grep -q '^#   pc sampling perturbation: not measured (continuous sampling' "$T/cont.header" ||
	{ grep -A2 'pc sampl' "$T/cont.header" >&2; fail "continuous: header does not say the perturbation is not measured"; }
"$REPORT" -i "$T/cont.data" --dump 2>/dev/null | grep -q GPU_PC_RANGE && fail "continuous sampling wrote GPU_PC_RANGE records"
echo "ok: PC samples split $WANT samples of GPU time by line and stall reason exactly"

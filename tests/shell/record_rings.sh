#!/usr/bin/env bash
# The recorder's memory and its end of recording, as -v says them: the ring
# sizes (sized for -F and the CPUs, one page for a ring that cannot be used,
# --ring-size), the time of each end-of-recording step adding up to the
# total, and a peak RSS that is its own and, with --no-gpu, under the issue
# 13 goal (64 MB at -F 999 on 2 CPUs; it was 312 MB). With GPU on (the
# default) the correlation ring is 64 MiB: 8 MiB lost 30-50% of PyTorch's
# launch stacks on the GPU machines.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

ring() { sed -nE "s/.*ring buffers: .*$2 ([0-9]+) KiB.*/\1/p" "$T/$1.err"; }

record_demo default -v -F 999 -- 1
cat "$T/default.err"
ncpu=$(getconf _NPROCESSORS_CONF)
# a tenth of a second of every CPU at 999 Hz with 18 KB records, 1-64 MiB
want=$(awk -v n="$ncpu" 'BEGIN { w = n * 999 * 18432 / 10; s = 1024 * 1024
	while (s < w && s < 64 * 1048576) s *= 2; print s / 1024 }')
[ "$(ring default samples)" = "$want" ] || fail "samples ring $(ring default samples) KiB, want $want"
[ "$(ring default off-CPU)" = 4096 ] || fail "off-CPU ring $(ring default off-CPU) KiB, want 4096"
[ "$(ring default 'GPU correlation')" = 65536 ] ||
	fail "GPU correlation ring $(ring default 'GPU correlation') KiB, want 65536"

# the end-of-recording line: every step, and the steps add up to the total
line=$(grep 'end of recording: ' "$T/default.err") || fail "no end-of-recording line"
for step in 'sampler stop' 'final drain' 'BPF rings' 'sideband and build-ids' 'compression flush' \
	    'kernel symbols' 'perf maps and metadata' 'lost counts' 'close (fsync)'; do
	grep -qF "$step " <<<"$line" || fail "end of recording: no '$step' time: $line"
done
total=$(sed -nE 's/.*end of recording: ([0-9.]+) s .*/\1/p' <<<"$line")
sum=$(sed -E 's/.*closed \(//; s/\([^()]*\)//g' <<<"$line" | grep -oE '[0-9]+\.[0-9]+' |
	awk '{ s += $1 } END { print s }')
awk -v t="$total" -v s="$sum" 'BEGIN { exit !(s <= t + 0.006 && s >= t - 0.006) }' ||
	fail "the steps sum to $sum s, the total is $total s: $line"
awk -v t="$total" 'BEGIN { exit !(t < 1) }' || note "end of recording took $total s (goal < 1 s; busy machine?)"

# peak RSS: more than the rings' double mapping; with --no-gpu under 64 MB
# with 2 CPUs
record_demo nogpu -v -F 999 --no-gpu -- 1
read -r rss rings < <(sed -nE 's/.*peak RSS ([0-9.]+) MB, of which the ring buffers. ([0-9.]+) MB.*/\1 \2/p' \
	"$T/nogpu.err") || fail "no peak RSS line"
awk -v r="$rss" -v g="$rings" 'BEGIN { exit !(r > g && g > 0) }' || fail "peak RSS $rss MB, rings $rings MB"
if [ "$ncpu" -le 2 ]; then
	awk -v r="$rss" 'BEGIN { exit !(r <= 64) }' || fail "peak RSS $rss MB at -F 999 --no-gpu (goal <= 64 MB)"
fi

# rings that cannot be used are one page; --ring-size sets the sample ring
record_demo small -v --no-gpu --no-off-cpu --ring-size 256K -- 1
[ "$(ring small samples)" = 256 ] || fail "--ring-size 256K: samples ring $(ring small samples) KiB"
[ "$(ring small 'GPU correlation')" = 4 ] || fail "--no-gpu: correlation ring $(ring small 'GPU correlation') KiB"
[ "$(ring small off-CPU)" = 4 ] || fail "--no-off-cpu: off-CPU ring $(ring small off-CPU) KiB"
exit 0

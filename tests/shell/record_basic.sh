#!/usr/bin/env bash
# A real recording of tests/workloads/record_target (main thread, a second
# thread, a forked child; built -fomit-frame-pointer): samples of all three,
# their sideband, stacks copied (dwarf) or walked (fp), the exit status passed
# through, and a complete trace.
set -u
REC=$XPU_BIN/xpu-record W=$XPU_BUILD/tests/workloads CHECK=$XPU_BUILD/tests/record_check
[ "$(id -u)" -eq 0 ] || { echo "needs root for eBPF"; exit 2; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }

# --no-gpu: this is the CPU path; the GPU bit of the features would depend on
# whether libxpu-cupti.so happens to sit beside xpu-record (record_gpu.sh).
"$REC" --no-gpu -o "$T/a.data" -- "$W/record_target" 1.5 >"$T/out" 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 0 ] || fail "exit $rc"
grep -Eq '^xpu-record: [0-9]+ samples, 0 GPU records, [0-9]+ lost, [0-9.]+ [KM]B written to ' "$T/err" || fail "summary line"
# The size it says is the file's (KB below 1 MB, so a small trace is not "0.0 MB").
said=$(sed -nE 's/^xpu-record: .* ([0-9.]+ [KM]B) written to .*/\1/p' "$T/err")
want=$(stat -c %s "$T/a.data" | awk '{ if ($1 >= 1048576) printf "%.1f MB", $1 / 1048576;
					else printf "%.1f KB", $1 / 1024 }')
[ "$said" = "$want" ] || fail "summary says $said written, the file has $want"
[ "$(stat -c %a "$T/a.data")" = 600 ] || fail "trace mode is not 0600"
"$CHECK" "$T/a.data" >"$T/sum" || fail "record_check"
cat "$T/sum"
pid=$(awk '/^ready/{print $2}' "$T/out")
samples=$(val SAMPLE "$T/sum")
# Samples match the CPU time the workload used (it prints it): 99 per CPU-second.
cpu=$(awk '/^cpu/{print $2}' "$T/out")
want=$(awk -v c="$cpu" 'BEGIN{printf "%d", c * 99}')
echo "samples $samples for $cpu CPU-seconds (expected about $want)"
[ "$want" -ge 20 ] || { echo "workload got only $cpu CPU-seconds: machine too busy"; exit 2; }
[ $((samples * 10)) -ge $((want * 7)) ] && [ $((samples * 10)) -le $((want * 13)) ] ||
	fail "$samples samples for $cpu CPU-seconds at 99 Hz: outside 70-130% of $want"
[ "$(val FINISH "$T/sum")" -eq 1 ] || fail "no FINISH record"
[ "$(val chunks_bad "$T/sum")" -eq 0 ] || fail "damaged chunks"
[ "$(val exit_status "$T/sum")" -eq 0 ] || fail "exit status record"
[ "$(val features "$T/sum")" = 0x33 ] || fail "features (want CPU|DWARF|KERNEL|OFF_CPU)"
[ "$(val meta.call_graph "$T/sum")" = dwarf ] || fail "meta call_graph"
# a DWARF stack is its registers and stack copy, or, where the recorder knew
# what the CFI unwinding gives, those frames (format 1.6: most of them)
[ $(($(val samples_with_regs "$T/sum") + $(val samples_unwound "$T/sum"))) -eq "$samples" ] ||
	fail "dwarf samples with neither registers nor frames"
[ "$(val samples_unwound "$T/sum")" -gt $((samples / 2)) ] ||
	fail "only $(val samples_unwound "$T/sum") of $samples samples unwound at record time"
# Nothing lost but, at most, a stack or two that could not be read: a thread
# sampled while it waits in a page fault for the mmap lock another thread
# holds has no page at SP yet (it happens now and then as the thread starts).
for src in 1 2 3 7 8; do
	[ "$(val lost.$src "$T/sum")" -eq 0 ] || fail "lost source $src: $(val lost.$src "$T/sum")"
done
[ "$(val lost.6 "$T/sum")" -le 2 ] || fail "$(val lost.6 "$T/sum") stacks unreadable"
[ "$(val lost_total "$T/sum")" -eq "$(val lost.6 "$T/sum")" ] || fail "lost records: $(grep ^lost "$T/sum")"

# Only the part of the stack in use is copied (the main stack's argv and
# environment strings up to the end of its mapping, a thread's frames up to
# its TLS), not the 128 KiB the option allows: each thread's median copy is
# under 32 KiB, and no more than 2 copies (a lookup of the stack's mapping
# that found the mmap lock busy before the thread had any bounds) take more.
# (Copies, not frames: XPU_STACK_PRUNE=cfi keeps them, pruned.)
XPU_STACK_PRUNE=cfi "$REC" -q --no-gpu -o "$T/w.data" -- "$W/record_target" 1 >"$T/wout" ||
	fail "XPU_STACK_PRUNE=cfi record"
"$CHECK" "$T/w.data" tids >"$T/sizes"
awk '/^sample/ && $4 > 32768 {n++} END {exit n > 2}' "$T/sizes" || fail "$(awk '/^sample/ && $4 > 32768' "$T/sizes" | wc -l) copies over 32 KiB"
for tid in $(awk '/^sample/{print $3}' "$T/sizes" | sort -u); do
	med=$(awk -v t="$tid" '/^sample/ && $3 == t {print $4}' "$T/sizes" | sort -n |
	      awk '{v[NR]=$1} END {print v[int((NR + 1) / 2)]}')
	echo "tid $tid: median stack copy $med bytes"
	[ "$med" -gt 0 ] && [ "$med" -lt 32768 ] || fail "tid $tid: median stack copy $med bytes"
done
[ "$(val FORK "$T/sum")" -ge 2 ] || fail "fork records (thread + child)"
[ "$(val COMM "$T/sum")" -ge 1 ] || fail "comm/exec record"
[ "$(val mmap_with_build_id "$T/sum")" -ge 2 ] || fail "mmaps with build-ids"
[ "$(val LOST "$T/sum")" -ge 3 ] || fail "lost-count records"

# Main thread, second thread and forked child each sampled.
"$CHECK" "$T/a.data" tids | awk '/^sample/{print $2, $3}' | sort | uniq -c >"$T/tids"
cat "$T/tids"
awk -v p="$pid" '$2==p && $3==p' "$T/tids" | grep -q . || fail "main thread not sampled"
awk -v p="$pid" '$2==p && $3!=p' "$T/tids" | grep -q . || fail "second thread not sampled"
awk -v p="$pid" '$2!=p && $2==$3' "$T/tids" | grep -q . || fail "forked child not sampled"

# The copied stacks hold main's return addresses (main thread and child).
read -r addr size < <(nm -S "$W/record_target" | awk '$4=="main"{print "0x"$1, "0x"$2}')
"$CHECK" "$T/a.data" hits "$W/record_target" "$addr" "$size" >"$T/hits"
# Counted over the threads that run main (the main thread, the child): the
# scheduler decides how the 2-core machine's time splits between them and
# the second thread, which never has main on its stack.
read -r hit all < <(awk -v p="$pid" '$1=="sample_hit" && ($3==p || $2!=p) {a++; h+=$4} END {print h+0, a+0}' "$T/hits")
echo "samples of the main thread and the child with main on the stack: $hit of $all"
[ "$all" -gt 0 ] && [ $((hit * 100)) -ge $((all * 95)) ] || fail "main in only $hit of $all stacks"

# Exit status of the command is ours.
"$REC" -q -o "$T/b.data" -- "$W/record_target" 0.1 exit:7 >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 7 ] || fail "exit:7 -> $rc"
[ -s "$T/err" ] && fail "-q printed: $(cat "$T/err")"

# fp mode: user PCs instead of registers and stack copies.
"$REC" -q --no-gpu --call-graph fp -o "$T/c.data" -- "$W/record_target" 0.5 >/dev/null || fail "fp record"
"$CHECK" "$T/c.data" >"$T/fp"
[ "$(val features "$T/fp")" = 0x35 ] || fail "fp features"
[ "$(val user_ips_total "$T/fp")" -gt 0 ] || fail "fp samples without user PCs"
[ "$(val samples_with_regs "$T/fp")" -eq 0 ] || fail "fp samples with registers"
[ "$(val meta.call_graph "$T/fp")" = fp ] || fail "meta call_graph fp"

# Bigger copies are honored (up to the in-use part).
"$REC" -q --call-graph dwarf,65528 -o "$T/d.data" -- "$W/record_target" 0.3 >/dev/null || fail "dwarf,65528"
grep -q "meta.stack_bytes 65528" <("$CHECK" "$T/d.data") || fail "stack_bytes meta"
echo "basic recording ok"

#!/usr/bin/env bash
# -p on a running process: its existing threads and maps are synthesized
# (COMM, FORK, MMAP with build-ids from the files), its threads sampled,
# and -d ends the recording while the process runs on.
set -u
REC=$XPU_BIN/xpu-record W=$XPU_BUILD/tests/workloads CHECK=$XPU_BUILD/tests/record_check
[ "$(id -u)" -eq 0 ] || { echo "needs root for eBPF"; exit 2; }
T=$(mktemp -d)
"$W/record_target" 20 >"$T/out" &
tgt=$!
trap 'kill -9 $tgt 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
val() { awk -v k="$1" '$1==k{print $2; f=1} END{if(!f) print 0}' "$2"; }
# attach once it runs its thread (2 tasks), not after a sleep
for _ in $(seq 200); do [ "$(ls "/proc/$tgt/task" 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.05; done
[ "$(ls "/proc/$tgt/task" 2>/dev/null | wc -l)" -ge 2 ] || fail "record_target did not start its thread in 10 s"

"$REC" -p $tgt -d 1.5 -o "$T/p.data" 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 0 ] || fail "-p exit $rc"
kill -0 $tgt 2>/dev/null || fail "the target did not survive the recording"
"$CHECK" "$T/p.data" >"$T/sum"
cat "$T/sum"
[ "$(val COMM "$T/sum")" -ge 2 ] || fail "comm of main thread and second thread"
[ "$(val FORK "$T/sum")" -ge 1 ] || fail "synthesized thread fork"
[ "$(val mmap_with_build_id "$T/sum")" -ge 2 ] || fail "synthesized mmaps with build-ids"
[ "$(val FINISH "$T/sum")" -eq 1 ] || fail "no FINISH"
"$CHECK" "$T/p.data" tids | awk '/^sample/{print $2, $3}' | sort | uniq -c >"$T/tids"
cat "$T/tids"
awk -v p=$tgt '$2==p && $3==p' "$T/tids" | grep -q . || fail "main thread not sampled"
awk -v p=$tgt '$2==p && $3!=p' "$T/tids" | grep -q . || fail "second thread not sampled"
read -r addr size < <(nm -S "$W/record_target" | awk '$4=="main"{print "0x"$1, "0x"$2}')
"$CHECK" "$T/p.data" hits "$W/record_target" "$addr" "$size" | grep samples_hit >"$T/hits"
read -r _ hit all <"$T/hits"
echo "main on the stack in $hit of $all samples"
[ "$hit" -gt 0 ] || fail "synthesized maps do not cover the stacks"
echo "-p ok"

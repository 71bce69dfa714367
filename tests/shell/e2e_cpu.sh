#!/usr/bin/env bash
# End to end, DWARF call graphs (the default): record cpu_demo (built without
# frame pointers) at 999 Hz and check the folded report holds the complete
# chains from main for the main thread, the worker thread and the forked
# child, the known 60/40 split, and few [unknown] frames. cpu_demo --cpu:
# each thread runs until it had 1.5 s of CPU time, so the counts the checks
# need do not depend on how busy the machine is.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

record_demo run -F 999 -- --cpu 1.5
report "$T/folded" -i "$T/run.data" --folded
folded_check_syntax <"$T/folded" || fail "malformed folded output"

total=$(folded_sum <"$T/folded")
written=$(summary_samples run)
note "samples: $total in the report, $written written"
[ "$total" -eq "$written" ] || fail "report holds $total samples, the recorder wrote $written"

# Samples match the CPU time the workload got (it prints it), at 999 per
# CPU-second: not the wall time, which a busy machine does not give it.
cpu=$(sed -nE 's/^cpu_demo: cpu ([0-9.]+) s$/\1/p' "$T/run.out")
[ -n "$cpu" ] || fail "cpu_demo printed no CPU time: $(cat "$T/run.out")"
want=$(awk -v c="$cpu" 'BEGIN{printf "%d", c * 999}')
note "samples: $total for $cpu CPU-seconds (expected about $want)"
[ "$want" -ge 300 ] || skip "cpu_demo got only $cpu CPU-seconds: machine too busy"
[ $((total * 10)) -ge $((want * 7)) ] && [ $((total * 10)) -le $((want * 13)) ] ||
	fail "$total samples for $cpu CPU-seconds, expected about $want"

# check_chain COMM CHAIN LEAF: of the COMM samples whose leaf is LEAF, at
# least 90% must carry the whole chain (root part above main may vary:
# _start, __libc_start_main..., or start_thread/clone3 for the thread).
check_chain() {
	local comm=$1 chain=$2 leaf=$3 all full
	all=$(folded_sum "^$comm;(.*;)?$leaf\$" <"$T/folded")
	full=$(folded_sum "^$comm;(.*;)?$chain\$" <"$T/folded")
	note "$comm: $full of $all $leaf samples have the full chain"
	[ "$all" -ge 50 ] || fail "$comm: only $all samples in $leaf"
	in_range "$(ratio "$full" "$all")" 0.90 1 ||
		fail "$comm: $full of $all $leaf samples have the chain $chain"
}
check_chain cpu_demo "$CHAIN_A" burn_a
check_chain cpu_demo "$CHAIN_B" burn_b
check_chain demo-worker "$CHAIN_W" burn_worker
check_chain demo-child "$CHAIN_C" burn_child

# The split of the main thread's work: burn_a 60%, burn_b 40%.
a=$(folded_sum '^cpu_demo;(.*;)?burn_a$' <"$T/folded")
b=$(folded_sum '^cpu_demo;(.*;)?burn_b$' <"$T/folded")
share=$(ratio "$a" $((a + b)))
note "burn_a share $share (expected 0.60)"
in_range "$share" 0.52 0.68 || fail "burn_a has $share of burn_a+burn_b, expected 0.60 +- 0.08"

# Few samples lost to unknown frames.
unknown=$(folded_sum '\[unknown\]|\+0x[0-9a-f]+' <"$T/folded")
note "[unknown]: $unknown of $total"
in_range "$(ratio "$unknown" "$total")" 0 0.05 || fail "$unknown of $total samples have [unknown] frames"

# --no-comm drops the first frame, same counts.
report "$T/nocomm" -i "$T/run.data" --folded --no-comm
[ "$(folded_sum <"$T/nocomm")" -eq "$total" ] || fail "--no-comm changed the sample count"
grep -Eq '^(cpu_demo|demo-worker|demo-child);' "$T/nocomm" && fail "--no-comm still prints comms"
[ "$(folded_sum "^(.*;)?$CHAIN_A\$" <"$T/nocomm")" -gt 0 ] || fail "--no-comm lost the chains"

# Kernel frames, if any, carry the _[k] suffix and sit below (after) no user frame.
if grep -q '_\[k\]' "$T/folded"; then
	awk '{ n = split(substr($0, 1, length($0) - length($NF) - 1), f, ";"); k = 0
	       for (i = 2; i <= n; i++) { if (f[i] ~ /_\[k\]$/) k = 1; else if (k) bad = 1 } }
	     END { exit bad }' "$T/folded" || fail "a user frame follows a kernel frame (kernel frames must be leaves)"
fi
echo "ok"

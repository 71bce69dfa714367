#!/usr/bin/env bash
# End to end, --call-graph fp: cpu_demo is built without frame pointers, so
# chains may be cut short; check that it records, reports, and that the
# leaves (taken from the sampled instruction pointer, not the unwinder) show
# the known 60/40 split (cpu_demo --cpu: 1 s of CPU time per thread, however
# busy the machine).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

record_demo fp -F 999 --call-graph fp -- --cpu 1
report "$T/folded" -i "$T/fp.data" --folded
folded_check_syntax <"$T/folded" || fail "malformed folded output"
total=$(folded_sum <"$T/folded")
written=$(summary_samples fp)
note "samples: $total in the report, $written written"
[ "$total" -eq "$written" ] || fail "report holds $total samples, the recorder wrote $written"

for leaf in burn_a burn_b burn_worker burn_child; do
	n=$(folded_sum "(^|;)$leaf\$" <"$T/folded")
	note "$leaf: $n"
	[ "$n" -ge 20 ] || fail "only $n samples end in $leaf"
done
a=$(folded_sum '^cpu_demo;(.*;)?burn_a$' <"$T/folded")
b=$(folded_sum '^cpu_demo;(.*;)?burn_b$' <"$T/folded")
share=$(ratio "$a" $((a + b)))
note "burn_a share $share (expected 0.60)"
in_range "$share" 0.52 0.68 || fail "burn_a has $share of burn_a+burn_b, expected 0.60 +- 0.08"

report "$T/header" -i "$T/fp.data" --header
grep -Eiq 'call.?graph.*fp' "$T/header" || fail "--header does not show the fp call-graph mode"
echo "ok"

#!/usr/bin/env bash
# End to end: the report filters --pid, --tid, --comm and --time keep exactly
# the samples they name. Totals are compared with the unfiltered report, so a
# filter that drops or keeps too much fails.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

record_demo run -F 999 -- 3
main=$(demo_pid run pid)
child=$(demo_pid run "child pid")
worker=$(demo_pid run "worker tid")
[ -n "$main" ] && [ -n "$child" ] && [ -n "$worker" ] || fail "cpu_demo did not print its pids (see $T/run.out)"
note "pid $main, child $child, worker tid $worker"

data=$T/run.data
report "$T/all" -i "$data" --folded
total=$(folded_sum <"$T/all")
n_main=$(folded_sum '^cpu_demo;' <"$T/all")
n_worker=$(folded_sum '^demo-worker;' <"$T/all")
n_child=$(folded_sum '^demo-child;' <"$T/all")
note "total $total: cpu_demo $n_main, demo-worker $n_worker, demo-child $n_child"
[ "$n_main" -gt 0 ] && [ "$n_worker" -gt 0 ] && [ "$n_child" -gt 0 ] || fail "a task is missing from the report"

# filtered NAME ARGS...: folded report with a filter into $T/NAME, prints its total.
filtered() { local n=$1; shift; report "$T/$n" -i "$data" --folded "$@"; }

# --pid: the parent process (main thread + worker), the child, both.
filtered pid_main --pid "$main"
filtered pid_child --pid "$child"
filtered pid_both --pid "$main,$child"
p_main=$(folded_sum <"$T/pid_main"); p_child=$(folded_sum <"$T/pid_child"); p_both=$(folded_sum <"$T/pid_both")
note "--pid: main $p_main, child $p_child, both $p_both"
[ "$p_main" -gt 0 ] && [ "$p_child" -gt 0 ] || fail "--pid gave an empty report"
[ $((p_main + p_child)) -eq "$total" ] || fail "--pid main ($p_main) + --pid child ($p_child) != total ($total)"
[ "$p_both" -eq "$total" ] || fail "--pid main,child gave $p_both, expected $total"
grep -q 'burn_child ' "$T/pid_main" && fail "--pid $main shows the child's burn_child"
grep -Eq 'burn_(a|b|worker) ' "$T/pid_child" && fail "--pid $child shows the parent's functions"
grep -q 'burn_worker ' "$T/pid_main" || fail "--pid $main lost the worker thread"

# --tid: the worker thread only.
filtered tid --tid "$worker"
t=$(folded_sum <"$T/tid")
note "--tid $worker: $t"
[ "$t" -gt 0 ] || fail "--tid gave an empty report"
[ "$(folded_sum '(^|;)burn_worker$' <"$T/tid")" -gt 0 ] || fail "--tid lost burn_worker"
grep -Eq 'burn_(a|b|child) ' "$T/tid" && fail "--tid $worker shows other threads' functions"
in_range "$t" $((n_worker * 99 / 100)) $((n_worker * 101 / 100 + 1)) || fail "--tid gave $t, demo-worker has $n_worker"

# --comm: one name, two names.
filtered comm --comm demo-child
c=$(folded_sum <"$T/comm")
[ "$c" -eq "$n_child" ] || fail "--comm demo-child gave $c, expected $n_child"
grep -vq '^demo-child;' "$T/comm" && fail "--comm demo-child shows other comms"
filtered comm2 --comm demo-child,demo-worker
c2=$(folded_sum <"$T/comm2")
[ "$c2" -eq $((n_child + n_worker)) ] || fail "--comm demo-child,demo-worker gave $c2, expected $((n_child + n_worker))"

# --time: seconds from the first record; either side may be empty. Two
# halves add up to the whole (one boundary sample may land in both).
filtered t1 --time 0,1.5
filtered t2 --time 1.5,
filtered t3 --time ,0.5
h1=$(folded_sum <"$T/t1"); h2=$(folded_sum <"$T/t2"); h3=$(folded_sum <"$T/t3")
note "--time: [0,1.5] $h1, [1.5,] $h2, [,0.5] $h3"
[ "$h1" -gt 0 ] && [ "$h2" -gt 0 ] && [ "$h3" -gt 0 ] || fail "--time gave an empty window"
in_range $((h1 + h2)) "$total" $((total + 2)) || fail "--time 0,1.5 ($h1) + 1.5, ($h2) != total ($total)"
[ "$h3" -lt "$h1" ] || fail "--time ,0.5 ($h3) is not smaller than 0,1.5 ($h1)"
# the samples of the first 0.5 s, counted in --dump: 0.5 s after the
# earliest time= of any record (not a share of the 3 s run, which is the
# share of its CPU time a busy machine gave cpu_demo then)
w3=$("$REPORT" -i "$T/run.data" --dump 2>/dev/null | awk '
	match($0, / time=[0-9]+/) { t = substr($0, RSTART + 6, RLENGTH - 6) + 0; if (t && (!base || t < base)) base = t }
	$1 == "SAMPLE" { n++; st[n] = t; wt[n] = match($0, / weight=[0-9]+/) ? substr($0, RSTART + 8, RLENGTH - 8) : 1 }
	END { for (i = 1; i <= n; i++) if (st[i] - base <= 500000000) s += wt[i]; print s + 0 }')
note "--time ,0.5: $h3 samples, $w3 in --dump's first 0.5 s"
[ "$w3" -gt 0 ] && in_range "$h3" $((w3 - 1)) $((w3 + 1)) ||
	fail "--time ,0.5 holds $h3 samples, --dump has $w3 in the first 0.5 s"

# Filters combine.
filtered combo --comm cpu_demo --time 0,1.5
co=$(folded_sum <"$T/combo")
[ "$co" -gt 0 ] && [ "$co" -lt "$h1" ] && [ "$co" -lt "$n_main" ] || fail "--comm + --time gave $co"
grep -vq '^cpu_demo;' "$T/combo" && fail "--comm cpu_demo --time shows other comms"

# The default output (--stdio) honors filters too.
report "$T/stdio_child" -i "$data" --stdio --comm demo-child
grep -q burn_child "$T/stdio_child" || fail "--stdio --comm demo-child lacks burn_child"
grep -q burn_worker "$T/stdio_child" && fail "--stdio --comm demo-child shows burn_worker"
echo "ok"

#!/usr/bin/env bash
# perf report's everyday options on a real recording of cpu_demo (main ->
# demo_run -> level1..6 -> burn_a 60% / burn_b 40%, a child, a thread):
# --sort, --no-children, --percent-limit, -g caller / callee, --max-stack,
# --symbols, --dsos, -n, and their usage errors.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
record_demo run -F 999 -- 2
D=$T/run.data
pct() { awk -v s="$1" '$0 ~ s { sub("%", "", $1); print $1; exit }' "$2"; }

report "$T/plain" -i "$D" --stdio
report "$T/sorted" -i "$D" --stdio --sort comm,dso,sym -n --children
cmp -s "$T/plain" "$T/sorted" || fail "--sort comm,dso,sym -n --children differs from the default table"

# --percent-limit: every row shown is at or above it, and the rest are counted
report "$T/limit" -i "$D" --stdio --percent-limit 10
awk '/^ +[0-9.]+%/ { sub("%", "", $1); if ($1 + 0 < 10) bad = 1 } END { exit bad }' "$T/limit" ||
	fail "--percent-limit 10 shows a row under 10%"
grep -q 'rows under --percent-limit 10.00% not shown' "$T/limit" || fail "--percent-limit: no count of hidden rows"
grep -q 'burn_a' "$T/limit" || fail "--percent-limit 10 hides burn_a"

# --no-children: one percentage column (self), summing to 100
report "$T/self" -i "$D" --stdio --no-children
head -5 "$T/self" | grep -q '^# Overhead   Samples  Command' || fail "--no-children header: $(sed -n 4p "$T/self")"
sum=$(awk '/^ +[0-9.]+%/ { sub("%", "", $1); s += $1 } END { printf "%.0f", s }' "$T/self")
[ "$sum" = 100 ] || fail "--no-children percentages sum to $sum"

# --sort dso: one row per module; --sort pid,sym: pid:comm column
report "$T/dso" -i "$D" --stdio --sort dso --no-children
[ "$(grep -c '^ .*cpu_demo *$' "$T/dso")" = 1 ] || fail "--sort dso: not one cpu_demo row: $(cat "$T/dso")"
pid=$(demo_pid run pid)
report "$T/pid" -i "$D" --stdio --sort pid,sym
grep -Eq "  $pid:cpu_demo +\[\.\] burn_a" "$T/pid" || fail "--sort pid,sym: no '$pid:cpu_demo [.] burn_a' row"

# the columns are the sort keys, in their order, as perf report's (--sort sym
# has no Shared Object column); Source:Line rides with Symbol
cols() { sed -n '4{s/^# *Children  *Self  *Samples  *//;s/^# *Overhead  *Samples  *//;s/  */|/g;s/Shared|Object/Shared Object/;p}' "$1"; }
for c in "sym|Symbol|Source:Line" "dso,sym|Shared Object|Symbol|Source:Line" \
	 "sym,dso|Symbol|Source:Line|Shared Object" "comm|Command" "dso|Shared Object" \
	 "pid,sym|Pid:Command|Symbol|Source:Line" "sym,comm|Symbol|Source:Line|Command" \
	 "comm,pid,dso,sym|Command|Pid:Command|Shared Object|Symbol|Source:Line"; do
	keys=${c%%|*} want=${c#*|}
	report "$T/cols" -i "$D" --stdio --sort "$keys"
	[ "$(cols "$T/cols")" = "$want" ] || fail "--sort $keys: columns $(cols "$T/cols"), want $want"
done
report "$T/sym" -i "$D" --stdio --sort sym
grep -Eq '^ +[0-9.]+% +[0-9.]+% +[0-9]+  \[\.\] burn_a ' "$T/sym" ||
	fail "--sort sym: no row of percentages, samples and [.] burn_a: $(sed -n 7p "$T/sym")"
report "$T/symdso" -i "$D" --stdio --sort sym,dso
grep -Eq '\[\.\] burn_a .* cpu_demo$' "$T/symdso" || fail "--sort sym,dso: burn_a's module not last"

# -g caller: under burn_a, the chain from main down to it; -g callee: inverted
report "$T/caller" -i "$D" --stdio -g caller --symbols burn_a
awk '/\[\.\] burn_a/ { on = 1 } on' "$T/caller" | tr -d ' |-' | tr '\n' ' ' |
	grep -q 'main .*demo_run level1 level2 level3 level4 level5 level6 burn_a' ||
	fail "-g caller: no main -> ... -> level6 -> burn_a chain: $(head -30 "$T/caller")"
report "$T/callee" -i "$D" --stdio -g callee --symbols burn_a
awk '/\[\.\] burn_a/ { on = 1 } on' "$T/callee" | tr -d ' |-' | tr '\n' ' ' |
	grep -q 'burn_a level6 level5 level4 level3 level2 level1 demo_run' ||
	fail "-g callee: no burn_a <- level6 <- ... chain: $(head -30 "$T/callee")"
report "$T/callee2" -i "$D" --stdio -g callee,1 --symbols burn_a
cmp -s "$T/callee" "$T/callee2" && true	# same layout; the threshold only prunes

# --symbols / --dsos keep only those rows
grep -E '^ +[0-9.]+%' "$T/caller" | grep -qv 'burn_a' && fail "--symbols burn_a shows other rows"
report "$T/libc" -i "$D" --stdio --dsos libc.so.6
grep -E '^ +[0-9.]+%' "$T/libc" | grep -qv ' libc\.so\.6 ' && fail "--dsos libc.so.6 shows other modules"

# --max-stack N: the N frames nearest the leaf (plus the comm root in folded)
report "$T/max" -i "$D" --folded --max-stack 3
awk '{ n = split($0, a, ";"); if (n > 4) bad = 1 } END { exit bad }' "$T/max" ||
	fail "--max-stack 3: a stack longer than 3 frames: $(awk -F';' 'NF > 4' "$T/max" | head -2)"
grep -q 'level5;level6;burn_a' "$T/max" || fail "--max-stack 3 did not keep the leaf-most frames"
report "$T/full" -i "$D" --folded
[ "$(folded_sum <"$T/max")" -eq "$(folded_sum <"$T/full")" ] || fail "--max-stack changes the total"

# usage errors: exit 2, one line naming the option
for bad in "--sort foo|--sort" "--sort dso,device|--sort" "--percent-limit x|--percent-limit" \
	   "--max-stack 0|--max-stack" "--call-graph=sideways|-g"; do
	args=${bad%|*} want=${bad#*|}
	# shellcheck disable=SC2086
	"$REPORT" -i "$D" --stdio $args >/dev/null 2>"$T/err"; rc=$?
	[ $rc -eq $EXIT_USAGE ] || fail "$args: exit $rc, want $EXIT_USAGE"
	[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "bad $want " "$T/err" || fail "$args: $(cat "$T/err")"
done
exit 0

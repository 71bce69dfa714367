#!/usr/bin/env bash
# Every benchmark (bench/*.sh but lib.sh and run.sh) is run by bench/run.sh
# (`make bench`) and has its section in bench/README.md; everything those
# two name exists.
. "$(dirname "$0")/lib/e2e.sh"
B=$XPU_TOP/bench
listed=$(sed -nE 's/^BENCHMARKS=\((.*)\)$/\1/p' "$B/run.sh")
[ -n "$listed" ] || fail "bench/run.sh has no BENCHMARKS=(...) line"
bad=0
for f in "$B"/*.sh; do
	b=$(basename "$f" .sh)
	case $b in lib|run) continue ;; esac
	[[ " $listed " == *" $b "* ]] || { echo "bench/run.sh does not run $b"; bad=1; }
	grep -q "^## $b\.sh " "$B/README.md" || { echo "bench/README.md has no '## $b.sh' section"; bad=1; }
done
for b in $listed; do
	[ -f "$B/$b.sh" ] || { echo "bench/run.sh names $b, no bench/$b.sh"; bad=1; }
done
for b in $(sed -nE 's/^## ([a-z_]+)\.sh .*/\1/p' "$B/README.md"); do
	[ -f "$B/$b.sh" ] || { echo "bench/README.md describes $b.sh, which does not exist"; bad=1; }
done
[ $bad = 0 ] || fail "bench/run.sh or bench/README.md does not list every benchmark"
echo "ok: $(echo $listed | wc -w) benchmarks, each run by bench/run.sh and described in bench/README.md"

#!/usr/bin/env bash
# A/B report speed: this tree's xpu-report against the one of an earlier
# commit (BASE, default HEAD~1; or BASE_BIN=DIR holding an xpu-report), on
# the same traces, runs interleaved: a recording of Debian's xz (a program
# we did not write), one of cpu_demo, and a 1M-event gen_trace --gpu trace.
# Prints min/median/max seconds of `--folded` for each and the ratio of the
# medians (this / base; below 1 is faster). For refactors of report/.
. "$(dirname "$0")/lib.sh"
bench_need
FREQ=${FREQ:-999}
GEN=$XPU_BUILD/tests/tools/gen_trace
[ -x "$GEN" ] || die "$GEN not built: run make tests-build"
command -v xz >/dev/null || die "xz not found"

base_bin=${BASE_BIN:-}
if [ -z "$base_bin" ]; then
	base=${BASE:-HEAD~1}
	git -C "$XPU_TOP" worktree add -q --detach "$W/base" "$base" || die "no commit $base"
	trap 'git -C "$XPU_TOP" worktree remove --force "$W/base" 2>/dev/null; rm -rf "$W"' EXIT
	make -C "$W/base" -j"$(nproc)" xpu-report >"$W/base.log" 2>&1 ||
		die "building $base failed: $(tail -n 3 "$W/base.log")"
	base_bin=$W/base
	echo "base: $base = $(git -C "$XPU_TOP" rev-parse --short "$base")"
fi
[ -x "$base_bin/xpu-report" ] || die "no xpu-report in $base_bin"

# the traces
head -c 64M /dev/urandom | base64 >"$W/in.txt"
"$RECORD" -F "$FREQ" -o "$W/xz.data" -- xz -9 -k -c "$W/in.txt" >/dev/null 2>"$W/rec.err" ||
	die "recording xz failed: $(tail -n 1 "$W/rec.err")"
"$RECORD" -F "$FREQ" -o "$W/demo.data" -- "$CPU_DEMO" 5 >/dev/null 2>"$W/rec.err" ||
	die "recording cpu_demo failed: $(tail -n 1 "$W/rec.err")"
"$GEN" -o "$W/gen.data" -n 1000000 --gpu >/dev/null || die "gen_trace failed"

stats() {	# file of times: "min median max"
	sort -g "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.3f %.3f %.3f\n", v[1], m, v[NR] }'
}
printf '%-10s %10s  %-26s %-26s %s\n' trace samples "base min/median/max s" "this min/median/max s" "ratio"
for t in xz demo gen; do
	n=$("$REPORT" -i "$W/$t.data" --header 2>/dev/null | awk '$2 == "SAMPLE" { print $3 }')
	"$REPORT" -i "$W/$t.data" --folded >"$W/this.out" 2>/dev/null	# warm-up, and
	"$base_bin/xpu-report" -i "$W/$t.data" --folded >"$W/base.out" 2>/dev/null
	cmp -s "$W/this.out" "$W/base.out" || echo "note: $t: --folded differs between the builds"
	: >"$W/b.t"; : >"$W/a.t"
	for ((i = 0; i < REPEAT; i++)); do
		wall "$base_bin/xpu-report" -i "$W/$t.data" --folded >>"$W/b.t"
		wall "$REPORT" -i "$W/$t.data" --folded >>"$W/a.t"
	done
	read -r bmin bmed bmax < <(stats "$W/b.t")
	read -r amin amed amax < <(stats "$W/a.t")
	printf '%-10s %10s  %-26s %-26s %s\n' "$t" "${n:-?}" "$bmin/$bmed/$bmax" "$amin/$amed/$amax" \
		"$(div "$amed" "$bmed")"
done

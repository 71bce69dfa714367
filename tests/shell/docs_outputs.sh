#!/usr/bin/env bash
# Documentation/output-*.md (issue 33): each export's page has a "Checked
# with" section naming the consumer's version, and the versions the tests
# pin are the ones the pages name: Perfetto's proto (tests/data/perfetto/
# README.md), speedscope's npm package (report_speedscope_browser.sh), and
# pprof's go (golang-go) and profile.proto.
. "$(dirname "$0")/lib/e2e.sh"
D=$XPU_TOP/Documentation
for f in pprof speedscope svg timeline; do
	page=$D/output-$f.md
	[ -f "$page" ] || fail "$page missing"
	awk '/^## Checked with/ { on = 1; next } /^## / { on = 0 } on' "$page" >"$T/$f.checked"
	[ -s "$T/$f.checked" ] || grep -q '^Checked with' "$page" || fail "$page: no 'Checked with' section"
	grep -Eq '[0-9]+\.[0-9]+' "$T/$f.checked" "$page" || fail "$page names no version"
done
pin=$(grep -o 'tag \*\*v[0-9.]*\*\*\|at tag \*\*v[0-9.]*\*\*' "$XPU_TOP/tests/data/perfetto/README.md" | grep -o 'v[0-9.]*' | head -1)
[ -n "$pin" ] || fail "tests/data/perfetto/README.md names no tag"
grep -q "Perfetto \*\*$pin\*\*" "$D/output-timeline.md" || fail "output-timeline.md does not name the pinned Perfetto $pin"
ss=$(grep -o 'speedscope@[0-9.]*' "$XPU_TOP/tests/shell/report_speedscope_browser.sh" | head -1)
[ -n "$ss" ] || fail "report_speedscope_browser.sh pins no speedscope version"
grep -q "speedscope ${ss#speedscope@}" "$D/output-speedscope.md" || fail "output-speedscope.md does not name $ss"
grep -q 'golang-go [0-9]' "$T/pprof.checked" || fail "output-pprof.md names no go version"
grep -q 'Chromium [0-9]' "$T/svg.checked" || fail "output-svg.md names no Chromium version"
exit 0

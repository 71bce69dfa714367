#!/usr/bin/env bash
# --speedscope in speedscope's own app: the npm package speedscope@1.25.0
# (dist/release, fetched with `npm pack` once per build tree) served on
# 127.0.0.1, opened in headless Chromium on a gen_trace CPU + GPU trace and
# driven through the DevTools protocol (report_speedscope_browser.py): the
# toolbar names the busiest profile, "Time Order" shows, under the pointer,
# the frames of the sample recorded at that time, "Left Heavy" (a click on its tab) those
# of the merged tree, heaviest first, with their share. Screenshots of both
# views stay in the test's folder (Documentation/images/speedscope-*.png are
# such screenshots, for people to look at). Exit 2 only when Chromium or the
# package cannot be had.
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || skip "chromium not installed (scripts/setup.sh installs it)"
PKG=$XPU_BUILD/npm/speedscope-1.25.0
DIST=$PKG/package/dist/release
if [ ! -s "$DIST/index.html" ]; then
	mkdir -p "$PKG"
	if [ ! -s "$PKG/speedscope-1.25.0.tgz" ]; then
		command -v npm >/dev/null || skip "npm not installed: speedscope comes from its npm package"
		(cd "$PKG" && npm pack --silent speedscope@1.25.0 >/dev/null 2>&1) ||
			skip "npm pack speedscope@1.25.0 failed (no access to the npm registry?)"
	fi
	(cd "$PKG" && tar xzf speedscope-1.25.0.tgz package/dist/release) || fail "cannot unpack $PKG/speedscope-1.25.0.tgz"
fi
tui_gen "$T/gpu.data" -n 2000 --gpu --freq 1000
"$REPORT" -i "$T/gpu.data" --speedscope "$T/profile.json" 2>"$T/err" || fail "--speedscope exited $?: $(cat "$T/err")"
timeout 120 python3 "$XPU_TOP/tests/shell/report_speedscope_browser.py" "$CHROMIUM" "$DIST" "$T/profile.json" "$T" ||
	fail "speedscope in Chromium (above; Chromium's log: $T/chromium.log)"
for v in time-order left-heavy; do
	[ -s "$T/$v.png" ] || fail "no screenshot of $v"
done
exit 0

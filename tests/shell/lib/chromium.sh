# Headless Chromium for the flame-graph tests (sourced after e2e.sh or
# golden/tui/lib.sh, which define T and fail). No Chromium is a failure, not
# a skip: scripts/setup.sh installs Debian's chromium, and a test that cannot
# look at the SVG must not pass.
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
FLAMEGRAPH_PY=$XPU_TOP/tests/shell/lib/flamegraph.py

need_chromium() {
	[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] ||
		fail "chromium is not installed: the flame-graph tests render the SVG in headless Chromium (apt-get install chromium; scripts/setup.sh does)"
	command -v python3 >/dev/null || fail "python3 is not installed (scripts/setup.sh)"
}

# chromium_run ARGS...: one headless run with a profile of its own (tests run
# in parallel); as root Chromium needs --no-sandbox.
chromium_run() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-extensions --user-data-dir="$T/chromium-profile" "$@" 2>>"$T/chromium.log"
}

# chromium_png SVG PNG: a 1200x800 screenshot of the SVG.
chromium_png() {
	rm -f "$2"
	chromium_run --screenshot="$2" --window-size=1200,800 "file://$1" >/dev/null ||
		fail "chromium could not render $1 (log $T/chromium.log)"
	[ -s "$2" ] || fail "chromium wrote no $2 (log $T/chromium.log)"
}

# chromium_dom URL OUT: the document after its scripts ran.
chromium_dom() {
	chromium_run --dump-dom "$1" >"$2" || fail "chromium --dump-dom $1 failed (log $T/chromium.log)"
	grep -q '</svg>' "$2" || fail "chromium --dump-dom $1: no SVG document in $2"
}

# png_family FILE FAMILY: pixels of that colour family (flamegraph.py png).
png_family() { awk -v f="$2" '$1 == "family" && $2 == f { n = $3 } END { print n + 0 }' "$1"; }

# Helpers for tests/shell/tui_*.sh (sourced, not run): a deterministic trace
# from tests/tools/gen_trace.c, xpu-report driven in a private tmux server at a
# fixed size, screens compared with the saved ones in this folder
# (UPDATE_GOLDEN=1 rewrites them).
set -u
XPU_TOP=${XPU_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)}
XPU_BUILD=${XPU_BUILD:-$XPU_TOP/build}
XPU_BIN=${XPU_BIN:-$XPU_TOP}
REPORT=$XPU_BIN/xpu-report
GOLDEN=$XPU_TOP/tests/shell/golden/tui
T=$XPU_BUILD/tests/tui/$(basename "$0" .sh)
SOCK=xpu-tui-$$-0
NSTART=0
rm -rf "$T" && mkdir -p "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 2; }
tmx() { tmux -L "$SOCK" "$@"; }
trap 'tmux -L "$SOCK" kill-server 2>/dev/null' EXIT	# one server per tui_start

tui_need() {
	command -v tmux >/dev/null || skip "tmux not installed (scripts/setup.sh installs it)"
	[ -x "$REPORT" ] || fail "$REPORT not built: run make"
	local err
	err=$("$REPORT" --tui -i /nonexistent 2>&1 </dev/null)
	case "$err" in *"built without ncurses"*) skip "xpu-report built without ncurses";; esac
	gen_need
}

# gen_trace is built by make tests-build, when capstone is there.
GEN=$XPU_BUILD/tests/tools/gen_trace
gen_need() {
	[ -x "$GEN" ] && return 0
	grep -qx 'HAVE_CAPSTONE := y' "$XPU_BUILD/config.mk" 2>/dev/null ||
		skip "no capstone: gen_trace is not built (install libcapstone-dev)"
	fail "$GEN not built: run make tests-build"
}
# gen_trace_mem: gen_trace's GPU memory scenario (tests/tools/gen_trace_mem.c)
GEN_MEM=$XPU_BUILD/tests/tools/gen_trace_mem
tui_gen() {	# file, gen_trace args...
	local out=$1; shift
	"$GEN" -o "$out" "$@" >/dev/null || fail "gen_trace failed"
}

# Starts the TUI in a fresh 80x24 tmux session; waits for its first screen.
tui_start() {	# env-assignments-and-args as one string
	# a fresh server each time: reusing a socket right after kill-server races
	tmx kill-server 2>/dev/null
	NSTART=$((NSTART + 1))
	SOCK=xpu-tui-$$-$NSTART
	tmx new-session -d -x 80 -y 24 -s t -c "$T" \
		"env TERM=screen $1; echo TUI-EXITED=\$?; sleep 600"
	tui_wait "samples" || fail "the TUI did not start: $(tmx capture-pane -p -t t)"
}

# Capture until the screen is stable for 100 ms (the TUI answers each key in
# well under that when it gets a CPU), at most ~5 s.
tui_screen() {
	local a b i
	a=$(tmx capture-pane -p -t t)
	for ((i = 0; i < 50; i++)); do
		sleep 0.1
		b=$(tmx capture-pane -p -t t)
		[ "$a" = "$b" ] && break
		a=$b
	done
	printf '%s\n' "$a"
}

tui_wait() {	# text: wait until it is on the screen
	local i
	for ((i = 0; i < 100; i++)); do
		tmx capture-pane -p -t t 2>/dev/null | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

tui_keys() { tmx send-keys -t t "$@"; }

# Compares the current screen with golden NAME (after filtering through sed
# expressions in $TUI_NORMALIZE, e.g. the recording date). A screen that
# differs is captured again for ~3 s before it fails: on a busy machine the
# TUI may not have run yet when the old screen has been still for 100 ms.
tui_check() {	# name
	local got=$T/$1.txt want=$GOLDEN/$1.txt i
	tui_screen | sed -e "${TUI_NORMALIZE:-s/^\$//}" >"$got"
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		cp "$got" "$want"
		echo "# updated $want"
		return 0
	fi
	[ -f "$want" ] || fail "no golden screen $want (run with UPDATE_GOLDEN=1)"
	for ((i = 0; i < 10; i++)); do
		cmp -s "$want" "$got" && break
		sleep 0.2
		tui_screen | sed -e "${TUI_NORMALIZE:-s/^\$//}" >"$got"
	done
	if ! diff -u "$want" "$got"; then
		fail "screen '$1' differs from $want (UPDATE_GOLDEN=1 rewrites it)"
	fi
	echo "ok screen $1"
}

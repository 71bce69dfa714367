#!/usr/bin/env bash
# xpu-report on bad input: each case gives ONE line on stderr naming the
# problem, nothing on stdout, and the exit code of its class
# (common/exitcodes.h). Needs no root: the traces are made here with printf.
. "$(dirname "$0")/lib/e2e.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"

# expect NAME CODES ARGS...: CODES is a |-separated list of allowed codes.
expect() {
	local name=$1 codes=$2 rc lines; shift 2
	timeout 30 "$REPORT" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	note "$name: exit $rc: $(head -n 1 "$T/$name.err")"
	[ $rc -ne 124 ] || fail "$name: xpu-report still ran after 30 s (waiting on its input?)"
	[ $rc -lt 128 ] || fail "$name: xpu-report crashed (exit $rc)"
	[[ "|$codes|" == *"|$rc|"* ]] || fail "$name: exit $rc, expected $codes"
	lines=$(wc -l <"$T/$name.err")
	[ "$lines" -eq 1 ] || { cat "$T/$name.err" >&2; fail "$name: $lines lines on stderr, expected one"; }
	grep -q '^xpu-report: ' "$T/$name.err" || fail "$name: error line does not start with 'xpu-report: '"
	grep -Eiq 'sanitizer|segmentation|core dumped|BUG:' "$T/$name.err" && fail "$name: crash text on stderr"
	[ ! -s "$T/$name.out" ] || fail "$name: printed output for bad input"
}

# hdr MAJOR MINOR: a 64-byte file header (format/xpu_format.h) with no chunks.
hdr() {
	printf 'XPUPERF\0'
	printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8)))"
	printf "\\x$(printf %02x $(($2 & 255)))\\x$(printf %02x $(($2 >> 8)))"
	printf '\x40\0\0\0'			# header_size 64
	printf '\1\0\0\0\0\0\0\0'		# features: CPU samples
	head -c 40 /dev/zero			# times + reserved
}

expect missing "$EXIT_INPUT" -i "$T/no-such-file" --folded
grep -q 'no-such-file' "$T/missing.err" || fail "missing: the error does not name the file"

head -c 4096 /dev/urandom >"$T/random.data"
expect random "$EXIT_INPUT" -i "$T/random.data" --folded
grep -Eiq 'not an? .*(trace|xpu)|magic' "$T/random.err" ||
	fail "random: the error does not say it is not a trace"

: >"$T/empty.data"
expect empty "$EXIT_CORRUPT" -i "$T/empty.data" --folded

hdr 2 0 >"$T/major.data"
[ "$(stat -c %s "$T/major.data")" -eq 64 ] || fail "test bug: header is not 64 bytes"
expect major "$EXIT_VERSION" -i "$T/major.data" --folded
grep -Eiq 'version|upgrade|newer' "$T/major.err" || fail "major: the error does not mention the version"

hdr 1 0 >"$T/nochunks.data"
expect nochunks "$EXIT_NODATA" -i "$T/nochunks.data" --folded

chmod 000 "$T/nochunks.data"
if [ "$(id -u)" -ne 0 ]; then
	expect unreadable "$EXIT_INPUT" -i "$T/nochunks.data" --folded
fi
chmod 600 "$T/nochunks.data"

# A FIFO as the trace (or as a --diff trace) is refused at once: open() must
# not wait for a writer (one inside -i DIR is skipped when listed).
mkfifo "$T/fifo.data"
expect fifo "$EXIT_INPUT" -i "$T/fifo.data" --folded
grep -q 'fifo.data: it is a FIFO, not a trace file' "$T/fifo.err" || fail "fifo: the error does not say it is a FIFO"
expect fifo_diff_old "$EXIT_INPUT" --diff "$T/fifo.data" "$T/nochunks.data" --folded
"$XPU_BUILD/tests/tools/gen_trace" -o "$T/ok.data" -n 100 || fail "gen_trace failed"
expect fifo_diff_new "$EXIT_INPUT" --diff "$T/ok.data" "$T/fifo.data" --folded
expect dir_diff "$EXIT_INPUT" --diff "$T" "$T/nochunks.data" --folded
if [ -x "$XPU_BIN/xpu-archive" ]; then
	timeout 30 "$XPU_BIN/xpu-archive" -i "$T/fifo.data" 2>"$T/fifo_archive.err"; rc=$?
	[ $rc -eq "$EXIT_INPUT" ] && [ "$(wc -l <"$T/fifo_archive.err")" -eq 1 ] ||
		{ cat "$T/fifo_archive.err" >&2; fail "xpu-archive -i FIFO: exit $rc (124: it waited)"; }
fi

expect unknown_opt "$EXIT_USAGE" --no-such-option
expect bad_time "$EXIT_USAGE" -i "$T/nochunks.data" --time abc --folded
echo "ok"

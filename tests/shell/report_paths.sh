#!/usr/bin/env bash
# Traces naming hostile paths (written by tests/shell/make_trace.c, no root
# needed): a FIFO, /etc/shadow, /proc/self/mem, a --symfs path climbing out of
# DIR with "..", a file without a build-id, a truncated ELF. xpu-report and
# xpu-archive must finish (timeout turns a hang into a failure), open none of
# them, use no file outside DIR, archive nothing unproven, and say why in
# their one-line summaries. Documentation/design-offline.md ("Files a trace
# names").
. "$(dirname "$0")/lib/e2e.sh"
ARCHIVE=$XPU_BIN/xpu-archive
MAKE_TRACE=$XPU_BUILD/tests/make_trace
for f in "$REPORT" "$ARCHIVE"; do [ -x "$f" ] || fail "$f not built: run make"; done
[ -x "$MAKE_TRACE" ] && [ -x "$CPU_DEMO" ] || fail "test helpers not built: run make tests-build"
command -v timeout >/dev/null || skip "timeout (coreutils) not found"
unset DEBUGINFOD_URLS
export XDG_CACHE_HOME=$T/empty-cache TMPDIR=$T/tmp
mkdir -p "$T/bin" "$TMPDIR"
cp "$CPU_DEMO" "$T/bin/cpu_demo"
cp "$MAKE_TRACE" "$T/bin/other"		# a second real ELF, another build-id
hostile=0

# run_to NAME PROG ARGS...: PROG with a time limit; stdout/stderr to $T/NAME.{out,err}
run_to() {
	local name=$1 rc; shift
	timeout 60 "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -ne 124 ] || fail "$name: still running after 60 s (hung on a path from the trace?)"
	[ $rc -lt 128 ] || { cat "$T/$name.err" >&2; fail "$name: crashed (exit $rc)"; }
	return $rc
}

# 1. A FIFO: a blocking open() never returns. Both tools finish and say why.
mkfifo "$T/fifo"
"$MAKE_TRACE" -o "$T/fifo.data" "$T/bin/cpu_demo=$T/bin/cpu_demo" "$T/fifo" || fail "make_trace"
hostile=$((hostile + 1))
run_to fifo-report "$REPORT" -i "$T/fifo.data" --folded || fail "report with a FIFO: exit $?"
grep -q '^hostile;main 10$' "$T/fifo-report.out" || fail "the real ELF beside the FIFO is not symbolized"
grep -q 'stayed unsymbolized: .*not a regular file (1 file: fifo)' "$T/fifo-report.err" ||
	{ cat "$T/fifo-report.err" >&2; fail "report: no reason given for the FIFO"; }
run_to fifo-archive "$ARCHIVE" -i "$T/fifo.data" || fail "archive with a FIFO: exit $?"
grep -q '1 of 2 files were not archived (-v lists them): not a regular file: 1 (fifo)' \
	"$T/fifo-archive.err" || { cat "$T/fifo-archive.err" >&2; fail "archive: no reason for the FIFO"; }
grep -q '^xpu-archive: 1 files, .*, 1 skipped, written to' "$T/fifo-archive.err" ||
	fail "archive: the summary does not count the FIFO as skipped"
# the archive beside the trace a FIFO: ignored, not waited on
rm "$T/fifo.data.archive" && mkfifo "$T/fifo.data.archive"
hostile=$((hostile + 1))
run_to fifo-beside "$REPORT" -i "$T/fifo.data" --folded || fail "report with a FIFO archive: exit $?"
grep -q 'fifo.data.archive is not a regular file: ignored' "$T/fifo-beside.err" ||
	fail "a FIFO as TRACE.archive is not warned about"

# 2. Files never to open: /etc/shadow (private), /proc/self/mem and others.
special=(/proc/self/mem /./proc//self/environ /usr/../proc/kcore /sys/kernel/notes "$T/to-mem")
ln -s /proc/self/mem "$T/to-mem"
"$MAKE_TRACE" -o "$T/secret.data" "$T/bin/cpu_demo=$T/bin/cpu_demo" /etc/shadow "${special[@]}" ||
	fail "make_trace"
hostile=$((hostile + 1 + ${#special[@]}))
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
	run_to secret-report strace -f -o "$T/strace.log" -e trace=open,openat,openat2 \
		"$REPORT" -i "$T/secret.data" --folded -v || fail "report under strace: exit $?"
	for p in /etc/shadow "${special[@]}" /proc/self/environ /proc/kcore; do
		grep -F "\"$p\"" "$T/strace.log" >&2 && fail "$p, named by the trace, was opened"
	done
	note "strace: none of /etc/shadow, ${special[*]} opened"
else
	note "no usable strace: the reasons are checked, not the system calls"
	run_to secret-report "$REPORT" -i "$T/secret.data" --folded -v || fail "report: exit $?"
fi
[ -e /etc/shadow ] && { grep -q '/etc/shadow (recorded path): not opened: private' \
	"$T/secret-report.err" || fail "/etc/shadow: no 'not opened: private' reason"; }
for p in "${special[@]}"; do
	grep -qF "$p: $p (recorded path): not opened: in /proc, /sys or /dev" "$T/secret-report.err" ||
		{ cat "$T/secret-report.err" >&2; fail "$p: no 'not opened: in /proc, /sys or /dev'"; }
done
grep -Eq 'stayed unsymbolized: .*in /proc, /sys or /dev \(5 files' "$T/secret-report.err" ||
	fail "the unsymbolized summary does not count the refused paths"
run_to secret-archive "$ARCHIVE" -i "$T/secret.data" || fail "archive: exit $?"
grep -q 'in /proc, /sys or /dev: 5 (' "$T/secret-archive.err" ||
	{ cat "$T/secret-archive.err" >&2; fail "archive: refused paths not counted"; }
grep -q '^xpu-archive: 1 files,' "$T/secret-archive.err" || fail "archive: more than cpu_demo archived"

# 3. --symfs DIR with "..": the real ELF outside DIR must not be used.
mkdir -p "$T/symfs/usr" "$T/outside"
cp "$CPU_DEMO" "$T/outside/cpu_demo"
ln -s ../../outside "$T/symfs/usr/out"
escapes=("/../outside/cpu_demo" "/usr/../../outside/cpu_demo" "/usr/out/cpu_demo")
for p in "${escapes[@]}"; do
	hostile=$((hostile + 1))
	"$MAKE_TRACE" -o "$T/esc.data" "$p=$T/outside/cpu_demo" || fail "make_trace"
	run_to esc "$REPORT" -i "$T/esc.data" --folded -v --symfs "$T/symfs" || fail "symfs $p: exit $?"
	grep -q 'hostile;main' "$T/esc.out" && fail "--symfs: $p used the ELF outside DIR"
	grep -q '(symfs): not opened: outside the --symfs directory' "$T/esc.err" ||
		{ cat "$T/esc.err" >&2; fail "--symfs $p: no 'outside the --symfs directory' reason"; }
done
# inside DIR it is found (the check above is not vacuous)
mkdir -p "$T/symfs/outside" && cp "$CPU_DEMO" "$T/symfs/outside/cpu_demo"
"$MAKE_TRACE" -o "$T/in.data" "/outside/cpu_demo=$T/outside/cpu_demo" || fail "make_trace"
run_to in "$REPORT" -i "$T/in.data" --folded --symfs "$T/symfs" || fail "symfs inside: exit $?"
grep -q '^hostile;main 10$' "$T/in.out" || fail "--symfs: a file inside DIR is not used"

# 4. No build-id in the trace: not archived unless --no-buildid-check.
"$MAKE_TRACE" -o "$T/nobid.data" "$T/bin/cpu_demo=$T/bin/cpu_demo,nobid" "$T/bin/other=$T/bin/other" ||
	fail "make_trace"
hostile=$((hostile + 1))
run_to nobid "$ARCHIVE" -i "$T/nobid.data" || fail "archive without build-id: exit $?"
grep -q 'no build-id in the trace: 1 (cpu_demo)\. --no-buildid-check archives' "$T/nobid.err" ||
	{ cat "$T/nobid.err" >&2; fail "archive: the file without a build-id is not named"; }
grep -q '^xpu-archive: 1 files, .*1 skipped' "$T/nobid.err" || fail "archive: cpu_demo archived without a build-id"
run_to nobid-ok "$ARCHIVE" -i "$T/nobid.data" --no-buildid-check || fail "--no-buildid-check: exit $?"
grep -q '^xpu-archive: 2 files, .*0 skipped' "$T/nobid-ok.err" || fail "--no-buildid-check: cpu_demo not archived"
mv "$T/bin/cpu_demo" "$T/cpu_demo.away"	# the report takes it from the archive, by path
run_to nobid-report "$REPORT" -i "$T/nobid.data" --folded -v || fail "report from the archive: exit $?"
grep -q '^hostile;main 20$' "$T/nobid-report.out" && grep -q 'cpu_demo: using .*(archive)' "$T/nobid-report.err" ||
	fail "the archived file without a build-id is not used"
mv "$T/cpu_demo.away" "$T/bin/cpu_demo"
rm "$T/nobid.data.archive"

# 5. Truncated ELF files: never archived, said so (with and without build-id).
size=$(stat -c %s "$CPU_DEMO")
head -c $((size / 2)) "$CPU_DEMO" >"$T/bin/half" && chmod 755 "$T/bin/half"
head -c $((size - 10)) "$CPU_DEMO" >"$T/bin/cut" && chmod 755 "$T/bin/cut"
for spec in "$T/bin/half=$CPU_DEMO" "$T/bin/cut=$CPU_DEMO,nobid"; do
	name=$(basename "${spec%%=*}")
	hostile=$((hostile + 1))
	"$MAKE_TRACE" -o "$T/trunc.data" "$spec" "$T/bin/other=$T/bin/other" || fail "make_trace"
	run_to trunc "$ARCHIVE" -i "$T/trunc.data" --no-buildid-check || fail "archive $name: exit $?"
	grep -q "truncated ELF file: 1 ($name)" "$T/trunc.err" ||
		{ cat "$T/trunc.err" >&2; fail "archive: the truncated $name is not reported as skipped"; }
	grep -q '^xpu-archive: 1 files, .*1 skipped' "$T/trunc.err" || fail "archive: $name archived"
	run_to trunc-report "$REPORT" -i "$T/trunc.data" --folded || fail "report $name: exit $?"
	grep -q "stayed unsymbolized: .*truncated ELF (1 file: $name)" "$T/trunc-report.err" ||
		fail "report: the truncated $name is not named"
	rm -f "$T/trunc.data.archive"
done
# 6. xpu-archive -o keeps xpu-report's rule for the files it writes
# (report/files/out_file.h): a symbolic link is refused, not replaced, and its
# target stays as it was; so is a directory, a FIFO; one line, exit 6.
"$MAKE_TRACE" -o "$T/out.data" "$T/bin/cpu_demo=$T/bin/cpu_demo" || fail "make_trace"
echo keep >"$T/target"
ln -s target "$T/link.archive"
mkdir "$T/adir" && mkfifo "$T/afifo"
for o in link.archive adir afifo; do
	run_to "out-$o" "$ARCHIVE" -i "$T/out.data" -o "$T/$o"; rc=$?
	[ $rc -eq 6 ] && [ "$(wc -l <"$T/out-$o.err")" -eq 1 ] ||
		{ cat "$T/out-$o.err" >&2; fail "xpu-archive -o $o: exit $rc, expected 6 and one line"; }
done
grep -q "link.archive: it is a symbolic link, which xpu-archive does not replace: give the file's own path" \
	"$T/out-link.archive.err" || fail "xpu-archive -o LINK: $(cat "$T/out-link.archive.err")"
grep -q "adir: it is a directory: give a file path$" "$T/out-adir.err" ||
	fail "xpu-archive -o DIR: $(cat "$T/out-adir.err")"
[ -L "$T/link.archive" ] && [ "$(cat "$T/target")" = keep ] || fail "xpu-archive -o replaced the link or wrote its target"
run_to out-report "$REPORT" -i "$T/out.data" --svg "$T/link.archive"; rc=$?
[ $rc -eq 6 ] && grep -q 'it is a symbolic link, which xpu-report does not replace' "$T/out-report.err" ||
	fail "xpu-report --svg LINK: exit $rc: $(cat "$T/out-report.err")"
# the default output, TRACE.archive, by the same rule
ln -s target "$T/out.data.archive"
run_to out-default "$ARCHIVE" -i "$T/out.data"; rc=$?
[ $rc -eq 6 ] && [ -L "$T/out.data.archive" ] || fail "xpu-archive over a linked TRACE.archive: exit $rc"
[ -z "$(ls "$T" | grep '\.tmp$')" ] || fail "xpu-archive left a temporary file: $(ls "$T" | grep '\.tmp$')"

note "$hostile hostile paths tried, all refused"
exit 0

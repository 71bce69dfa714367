#!/usr/bin/env bash
# xpu-record's error paths: each is one line naming the problem, with its own
# exit code (common/exitcodes.h), and leaves no trace file behind.
set -u
REC=$XPU_BIN/xpu-record W=$XPU_BUILD/tests/workloads
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect CODE PATTERN CMD...: exit code, one stderr line matching PATTERN.
expect() {
	local code=$1 pat=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	[ $rc -eq "$code" ] || fail "$* -> exit $rc, want $code: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$* -> not one line: $(cat "$T/err")"
	grep -q -- "$pat" "$T/err" || fail "$* -> '$(cat "$T/err")' lacks '$pat'"
	echo "ok: exit $code: $(cat "$T/err")"
}

expect 2 "unknown option --bogus" "$REC" --bogus -- true
expect 2 "unknown option -Z" "$REC" -Z -- true
expect 2 "no command given" "$REC" -o "$T/x.data"
expect 2 "either a command or -p" "$REC" -p 1 -- true
expect 2 "kill-on-exit.*not for -p" "$REC" --kill-on-exit -p 1
expect 2 "needs a value" "$REC" -o
expect 2 "expected a frequency" "$REC" -F 0 -- true
expect 2 "expected fp or dwarf" "$REC" --call-graph lbr -- true
expect 2 "BYTES must be a number" "$REC" --call-graph dwarf,999999 -- true
expect 2 "positive number of seconds" "$REC" -d -1 -- true
# a bad environment knob (common/knobs.c) warns in one line naming the knob
# and the fix, and the recording goes on with its default
env XPU_STACK_PRUNE=off "$REC" -q -o "$T/knob.data" -- true 2>"$T/err" ||
	fail "XPU_STACK_PRUNE=off: exit $?, want 0: $(cat "$T/err")"
grep -q "warning: XPU_STACK_PRUNE=off: expected one of: 0, address, cfi; using the default .*fix or unset XPU_STACK_PRUNE" "$T/err" ||
	fail "XPU_STACK_PRUNE=off: no one-line warning: $(cat "$T/err")"
[ -s "$T/knob.data" ] || fail "XPU_STACK_PRUNE=off: no trace"
echo "ok: a bad knob warns and the default is kept: $(head -1 "$T/err")"
expect 5 "no_such_program_xyz: command not found in PATH" "$REC" -o "$T/x.data" -- no_such_program_xyz
expect 5 "no such file" "$REC" -o "$T/x.data" -- ./no/such/prog
expect 5 "not an executable" "$REC" -o "$T/x.data" -- /etc/passwd
expect 5 "no such process" "$REC" -o "$T/x.data" -p 2147483646
expect 5 "cupti-lib /no/such.so" "$REC" -o "$T/x.data" --cupti-lib /no/such.so -- true
[ -e "$T/x.data" ] && fail "a failed start left $T/x.data"

[ "$(id -u)" -eq 0 ] || { echo "the remaining checks need root"; exit 2; }
expect 6 "cannot write /nonexistent/dir/x.data" "$REC" -o /nonexistent/dir/x.data -- true

# Not root: capabilities named.
if command -v setpriv >/dev/null; then
	chmod 755 "$T"
	expect 3 "CAP_BPF and CAP_PERFMON" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$REC" -o "$T/x.data" -- true
fi

# Kernel without BTF: hide /sys/kernel/btf in a private mount namespace.
if unshare -m true 2>/dev/null; then
	expect 4 "CONFIG_DEBUG_INFO_BTF" unshare -m sh -c \
		"mount -t tmpfs none /sys/kernel/btf && exec $REC -o $T/x.data -- true"
fi

# In a pid namespace of its own the BPF programs' pids are not the
# command's: refused, not a recording without samples (issue 31 item 5).
if unshare -p -f --mount-proc true 2>/dev/null; then
	expect 4 "runs in a pid namespace of its own" unshare -p -f --mount-proc \
		"$REC" -o "$T/x.data" -- true
fi

# BPF program load refused (seccomp makes bpf(BPF_PROG_LOAD) fail with ENOSYS).
expect 4 "the kernel refused the BPF programs (Function not implemented)" \
	"$W/deny_bpf" "$REC" -o "$T/x.data" -- true
[ -e "$T/x.data" ] && fail "a failed BPF load left $T/x.data"
echo "all error paths ok"

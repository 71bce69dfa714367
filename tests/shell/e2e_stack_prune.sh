#!/usr/bin/env bash
# Stack words no unwinder reads are zeroed (format/stack_prune.h): a
# recording made in full (XPU_STACK_PRUNE=0) and its copy with those words
# zeroed (tests/tools/recode --prune) give the same reports, byte for byte,
# for cpu_demo (threads, a forked child) and dlopen_demo (mappings that
# grow while it runs); both unwinders agree on the pruned copy
# (XPU_UNWIND_CHECK=1). xpu-record's own recordings are pruned: their
# samples carry XPU_STACK_PRUNED (flags bit 2 of --dump's stack part).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
RECODE=$XPU_BUILD/tests/tools/recode
DEMO=$XPU_BUILD/tests/workloads/dlopen_demo
[ -x "$RECODE" ] && [ -x "$DEMO" ] || fail "recode or dlopen_demo not built: run make tests-build"

XPU_STACK_PRUNE=0 record_demo full -F 999 -- 2
XPU_STACK_PRUNE=0 "$RECORD" -o "$T/dl.data" -F 999 -- "$DEMO" >"$T/dl.out" 2>"$T/dl.err" ||
	{ cat "$T/dl.err" >&2; fail "xpu-record dlopen_demo failed"; }
for f in full dl; do
	"$RECODE" --prune "$T/$f.data" "$T/$f-pruned.data" >"$T/$f.recode" || fail "recode --prune failed"
	for args in "--folded" "--stdio" "--stdio --sort dso,sym -g caller"; do
		# shellcheck disable=SC2086
		report "$T/a" -i "$T/$f.data" $args
		# shellcheck disable=SC2086
		report "$T/b" -i "$T/$f-pruned.data" $args
		cmp -s "$T/a" "$T/b" || fail "$f: $args differs once pruned: $(diff "$T/a" "$T/b" | head -n 6)"
	done
	XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/$f-pruned.data" --folded >/dev/null 2>"$T/check.err" ||
		fail "$f: the unwinders disagree on the pruned copy: $(tail -n 3 "$T/check.err")"
	a=$(stat -c %s "$T/$f.data")
	b=$(stat -c %s "$T/$f-pruned.data")
	note "$f: $a bytes in full, $b pruned and coded"
	[ "$b" -lt "$a" ] || fail "$f: pruning saved nothing ($b of $a bytes)"
done

record_demo pruned -F 999 -- 1
report "$T/dump" -i "$T/pruned.data" --dump
n=$(grep -c '^SAMPLE' "$T/dump")
p=$(grep '^SAMPLE' "$T/dump" | grep -Ec 'regs=17 stack=[0-9]+ flags=0x[0-9a-f]*[4567cdef] ')
note "xpu-record: $p of $n samples pruned"
[ "$p" -ge $((n * 9 / 10)) ] || fail "only $p of $n samples carry XPU_STACK_PRUNED"
echo "ok"

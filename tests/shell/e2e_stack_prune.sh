#!/usr/bin/env bash
# Stack words no unwinder reads are zeroed (format/stack_prune.h): a
# recording made in full (XPU_STACK_PRUNE=0) and its copies with those words
# zeroed (tests/tools/recode --prune: the address rule, as
# XPU_STACK_PRUNE=address; --prune --cfi: and the stack words the report's
# CFI unwinding does not read, record/unwind_reads.c, as xpu-record does by
# default) give the same reports, byte for byte, for cpu_demo (threads, a
# forked child; also with copies cut at 2 KiB, and attached to with -p)
# and dlopen_demo (mappings that grow while it runs); both
# unwinders agree on the pruned copies (XPU_UNWIND_CHECK=1); the CFI copy
# is no larger, with most stacks' reads known. xpu-record's own
# recordings are pruned so: their samples carry XPU_STACK_PRUNED and
# XPU_STACK_PRUNED_CFI (flags bits 2 and 3 of --dump's stack part).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
RECODE=$XPU_BUILD/tests/tools/recode
DEMO=$XPU_BUILD/tests/workloads/dlopen_demo
[ -x "$RECODE" ] && [ -x "$DEMO" ] || fail "recode or dlopen_demo not built: run make tests-build"

XPU_STACK_PRUNE=0 record_demo full -F 999 -- 2
XPU_STACK_PRUNE=0 "$RECORD" -o "$T/dl.data" -F 999 -- "$DEMO" >"$T/dl.out" 2>"$T/dl.err" ||
	{ cat "$T/dl.err" >&2; fail "xpu-record dlopen_demo failed"; }
# copies cut at 2 KiB: the unwinders read past the copy and fail alike
XPU_STACK_PRUNE=0 record_demo small -F 999 --call-graph dwarf,2048 -- 1
# -p: the mappings come from /proc (synthesized MMAP records)
"$CPU_DEMO" 3 >"$T/attach.out" &
demo=$!
sleep 0.3
XPU_STACK_PRUNE=0 "$RECORD" -o "$T/attach.data" -F 999 -p "$demo" -d 1.5 2>"$T/attach.err" ||
	{ cat "$T/attach.err" >&2; fail "xpu-record -p failed"; }
wait "$demo"
for f in full dl small attach; do
	for mode in address cfi; do
		args=--prune
		[ "$mode" = cfi ] && args="--prune --cfi"
		# shellcheck disable=SC2086
		"$RECODE" $args "$T/$f.data" "$T/$f-$mode.data" >"$T/$f-$mode.recode" ||
			fail "recode $args failed"
		for rargs in "--folded" "--stdio" "--stdio --sort dso,sym -g caller"; do
			# shellcheck disable=SC2086
			report "$T/a" -i "$T/$f.data" $rargs
			# shellcheck disable=SC2086
			report "$T/b" -i "$T/$f-$mode.data" $rargs
			cmp -s "$T/a" "$T/b" ||
				fail "$f: $rargs differs once pruned ($mode): $(diff "$T/a" "$T/b" | head -n 6)"
		done
		XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/$f-$mode.data" --folded >/dev/null 2>"$T/check.err" ||
			fail "$f: the unwinders disagree on the pruned copy ($mode): $(tail -n 3 "$T/check.err")"
	done
	a=$(stat -c %s "$T/$f.data")
	b=$(stat -c %s "$T/$f-address.data")
	c=$(stat -c %s "$T/$f-cfi.data")
	read -r exact unknown < <(sed -nE 's/^cfi: exact ([0-9]+) not known ([0-9]+).*/\1 \2/p' "$T/$f-cfi.recode")
	note "$f: $a bytes in full, $b pruned by the address rule, $c with the CFI reads ($exact stacks known, $unknown not)"
	[ "$b" -lt "$a" ] || fail "$f: pruning saved nothing ($b of $a bytes)"
	# (cpu_demo's stacks are a few frames: the CFI reads save little there,
	# and zstd may spend a few bytes more on other zeros; clang's, in
	# e2e_prune_clang.sh, save two thirds)
	[ "$c" -le $((b + b / 100)) ] || fail "$f: the CFI reads cost bytes ($c against $b)"
	[ "${exact:-0}" -ge $(((exact + unknown) * 9 / 10)) ] ||
		fail "$f: the CFI reads known for only ${exact:-0} of $((exact + unknown)) stacks"
done

record_demo pruned -F 999 -- 1
report "$T/dump" -i "$T/pruned.data" --dump
n=$(grep -c '^SAMPLE' "$T/dump")
p=$(grep '^SAMPLE' "$T/dump" | grep -Ec 'regs=17 stack=[0-9]+ flags=0x[0-9a-f]*[4567cdef] ')
c=$(grep '^SAMPLE' "$T/dump" | grep -Ec 'regs=17 stack=[0-9]+ flags=0x[0-9a-f]*[cdef] ')
note "xpu-record: $p of $n samples pruned, $c of them with the CFI reads"
[ "$p" -ge $((n * 9 / 10)) ] || fail "only $p of $n samples carry XPU_STACK_PRUNED"
[ "$c" -ge $((n * 8 / 10)) ] || fail "only $c of $n samples carry XPU_STACK_PRUNED_CFI"
echo "ok"

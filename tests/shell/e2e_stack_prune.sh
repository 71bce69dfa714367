#!/usr/bin/env bash
# Stack words no unwinder reads are zeroed (format/stack_prune.h), and
# stacks whose CFI unwinding is known become its frames: a recording made
# in full (XPU_STACK_PRUNE=0) and its copies (tests/tools/recode --prune:
# the address rule, as XPU_STACK_PRUNE=address; --prune --cfi --words: and
# the stack words the report's CFI unwinding does not read zeroed,
# record/unwind/unwind_reads.c, as XPU_STACK_PRUNE=cfi; --prune --cfi: the frames
# of that unwinding instead of the words where it is known, as xpu-record
# does by default, format 1.6) give the same reports, byte for byte, for
# cpu_demo (threads, a forked child; also with copies cut at 2 KiB, and
# attached to with -p) and dlopen_demo (mappings that grow while it runs);
# both unwinders agree on the pruned copies (XPU_UNWIND_CHECK=1); each
# copy is no larger than the one before, with most stacks' reads known.
# xpu-record's own recordings are so: most samples carry their frames
# (XPU_STACK_UNWOUND with XPU_STACK_PRUNED and XPU_STACK_PRUNED_CFI: flags
# 0x1c of --dump's stack part, no regs); XPU_STACK_PRUNE=cfi keeps the
# words (flags 0xc).
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
# attach once it runs its thread (it prints the tid then), not after a sleep
for _ in $(seq 200); do grep -q '^cpu_demo: worker tid' "$T/attach.out" && break; sleep 0.05; done
grep -q '^cpu_demo: worker tid' "$T/attach.out" || fail "cpu_demo did not start its thread in 10 s"
XPU_STACK_PRUNE=0 "$RECORD" -o "$T/attach.data" -F 999 -p "$demo" -d 1.5 2>"$T/attach.err" ||
	{ cat "$T/attach.err" >&2; fail "xpu-record -p failed"; }
wait "$demo"
for f in full dl small attach; do
	for mode in address words cfi; do
		case $mode in
		address) args=--prune ;;
		words) args="--prune --cfi --words" ;;
		cfi) args="--prune --cfi" ;;
		esac
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
	c=$(stat -c %s "$T/$f-words.data")
	d=$(stat -c %s "$T/$f-cfi.data")
	read -r exact unknown < <(sed -nE 's/^cfi: exact ([0-9]+) not known ([0-9]+).*/\1 \2/p' "$T/$f-cfi.recode")
	note "$f: $a bytes in full, $b pruned by the address rule, $c with the CFI reads, $d as frames ($exact stacks known, $unknown not)"
	[ "$b" -lt "$a" ] || fail "$f: pruning saved nothing ($b of $a bytes)"
	# (cpu_demo's stacks are a few frames: the CFI reads save little there,
	# and zstd may spend a few bytes more on other zeros: 1.2% once with
	# copies cut at 2 KiB, 25,920 against 25,607 bytes; clang's, in
	# e2e_prune_clang.sh, save two thirds)
	[ "$c" -le $((b + b / 50)) ] || fail "$f: the CFI reads cost bytes ($c against $b)"
	[ "$d" -le $((c + c / 100)) ] || fail "$f: the frames cost bytes ($d against $c)"
	[ "${exact:-0}" -ge $(((exact + unknown) * 9 / 10)) ] ||
		fail "$f: the CFI reads known for only ${exact:-0} of $((exact + unknown)) stacks"
done

# --dump's stack flags: bit 2 PRUNED, bit 3 PRUNED_CFI, bit 4 UNWOUND
record_demo pruned -F 999 -- 1
report "$T/dump" -i "$T/pruned.data" --dump
n=$(grep -c '^SAMPLE' "$T/dump")
p=$(grep '^SAMPLE' "$T/dump" | grep -Ec 'regs=17 stack=[0-9]+ flags=0x[0-9a-f]*[4567cdef] ')
u=$(grep '^SAMPLE' "$T/dump" | grep -Ec 'uips=[1-9][0-9]* regs=0 stack=0 flags=0x[13579bdf][cdef] ')
note "xpu-record: $u of $n samples as frames, $p pruned"
[ "$((p + u))" -ge $((n * 9 / 10)) ] || fail "only $((p + u)) of $n samples carry XPU_STACK_PRUNED"
[ "$u" -ge $((n * 8 / 10)) ] || fail "only $u of $n samples carry their frames (XPU_STACK_UNWOUND)"
XPU_STACK_PRUNE=cfi record_demo words -F 999 -- 1
report "$T/dump" -i "$T/words.data" --dump
n=$(grep -c '^SAMPLE' "$T/dump")
c=$(grep '^SAMPLE' "$T/dump" | grep -Ec 'regs=17 stack=[0-9]+ flags=0x[0-9a-f]*[cdef] ')
note "XPU_STACK_PRUNE=cfi: $c of $n samples with the CFI reads"
[ "$c" -ge $((n * 8 / 10)) ] || fail "only $c of $n samples carry XPU_STACK_PRUNED_CFI"
! grep -q '^SAMPLE.*flags=0x[13579bdf][0-9a-f] ' "$T/dump" || fail "XPU_STACK_PRUNE=cfi wrote frames"
echo "ok"

#!/usr/bin/env bash
# Stack pruning with the CFI reads on a large C++ program we did not write:
# Debian's clang (libclang-cpp and libLLVM, whose .eh_frame comes before
# .eh_frame_hdr, so common/unwind_cfi.c takes their rules through
# PT_GNU_EH_FRAME's table) compiling a generated C file. A whole recording
# (XPU_STACK_PRUNE=0): its report's fast unwinder agrees with libdwfl on
# every stack (XPU_UNWIND_CHECK=1: libdwfl reads the same files through
# their section headers); its copies made as xpu-record makes them, the
# frames of the CFI unwinding where known (tests/tools/recode --prune --cfi,
# format 1.6), and with the words it reads instead (--words, 1.5), give the
# same --folded and --stdio bytes, nearly every stack's reads known, each
# in fewer bytes than the one before (address rule, words, frames).
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
RECODE=$XPU_BUILD/tests/tools/recode
[ -x "$RECODE" ] || fail "recode not built: run make tests-build"
CLANG=$(command -v clang) || skip "no clang (scripts/setup.sh installs it)"
ldd "$CLANG" | grep -q libLLVM || skip "this clang is not linked to libLLVM"

awk -v n=150 -f "$XPU_TOP/bench/gen_source.awk" >"$T/gen.c"
XPU_STACK_PRUNE=0 "$RECORD" -o "$T/whole.data" -F 999 -- "$CLANG" -O2 -c "$T/gen.c" -o "$T/gen.o" \
	>"$T/whole.out" 2>"$T/whole.err" || { cat "$T/whole.err" >&2; fail "xpu-record clang failed"; }
XPU_UNWIND_CHECK=1 "$REPORT" -i "$T/whole.data" --folded >/dev/null 2>"$T/check.err" ||
	fail "the unwinders disagree on clang's stacks: $(tail -n 3 "$T/check.err")"
"$RECODE" --prune "$T/whole.data" "$T/address.data" >/dev/null || fail "recode --prune failed"
"$RECODE" --prune --cfi --words "$T/whole.data" "$T/words.data" >/dev/null ||
	fail "recode --prune --cfi --words failed"
"$RECODE" --prune --cfi "$T/whole.data" "$T/cfi.data" >"$T/cfi.recode" || fail "recode --prune --cfi failed"
for args in "--folded" "--stdio"; do
	# shellcheck disable=SC2086
	report "$T/a" -i "$T/whole.data" $args
	for m in words cfi; do
		# shellcheck disable=SC2086
		report "$T/b" -i "$T/$m.data" $args
		cmp -s "$T/a" "$T/b" || fail "$args differs once pruned ($m): $(diff "$T/a" "$T/b" | head -n 6)"
	done
done
grep -q 'libLLVM' "$T/a" || fail "no frame in libLLVM: $(head -n 3 "$T/a")"
read -r exact unknown < <(sed -nE 's/^cfi: exact ([0-9]+) not known ([0-9]+).*/\1 \2/p' "$T/cfi.recode")
a=$(stat -c %s "$T/whole.data")
b=$(stat -c %s "$T/address.data")
c=$(stat -c %s "$T/words.data")
d=$(stat -c %s "$T/cfi.data")
note "clang: $a bytes whole, $b by the address rule, $c with the CFI words, $d as frames ($exact stacks known, $unknown not)"
[ "${exact:-0}" -ge $(((exact + unknown) * 9 / 10)) ] ||
	fail "the CFI reads known for only ${exact:-0} of $((exact + unknown)) stacks"
[ "$c" -lt "$b" ] || fail "the CFI words saved nothing ($c of $b bytes)"
[ "$d" -lt "$c" ] || fail "the frames saved nothing ($d of $c bytes)"
echo "ok"

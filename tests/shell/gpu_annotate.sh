#!/usr/bin/env bash
# Annotate on a GPU kernel: `xpu-report --annotate KERNEL` and the TUI's
# annotate (key a) on its [GPU_Kernel] or [sass] frame show the kernel's PC
# samples per SASS instruction and per source line. The recording is
# gpu_pcsamp.sh's (fake CUPTI library, tests/data/pcsamp/fake_kernel.cubin):
# each launch samples 0x180 (4, long_scoreboard) and 0x300 (2,
# long_scoreboard) on line 15 and 0x4d0 (3, math_pipe_throttle) on line 17.
#  - nvdisasm hidden (CUDA_HOME and PATH elsewhere): one line says so, and
#    the samples per line and per PC are there, with their lines;
#  - a stand-in nvdisasm (CUDA_HOME/bin/nvdisasm printing nvdisasm -c's
#    layout, another function's section first): each instruction of the
#    kernel's section with its samples, those at the sampled offsets being
#    the counts above, the text nvdisasm printed there, the source line
#    before the instructions of each line;
#  - the toolkit's own nvdisasm, where there is one ($CUDA_HOME/bin,
#    /usr/local/cuda/bin, PATH): the same counts, and the text at each
#    sampled offset equal to nvdisasm's own output for the cubin;
#  - the same text by demangled, mangled and [sass] frame names; an unknown
#    kernel exits 10 with one line; a cubin the recorder reduced (over
#    XPU_CUPTI_CUBIN_MAX) says it has no SASS text, and keeps the lines;
#  - the TUI (under tmux, when installed): a on the [GPU_Kernel] node shows
#    the same annotation.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
CUBIN=$XPU_TOP/tests/data/pcsamp/fake_kernel.cubin
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
need_tools
need_bpf

LAUNCHES=20
A=4 B=2 C=3
TOTAL=$(((A + B + C) * LAUNCHES))
KERNEL='fake_kernel(int)'
record() {	# name, extra env...
	local name=$1; shift
	env "$@" XPU_FAKE_PC_SAMPLES="0x180:0:$A,0x300:0:$B,0x4d0:1:$C" XPU_FAKE_CUBIN=$CUBIN \
		XPU_FAKE_KERNEL_NS=2000000 \
		"$RECORD" -F 99 -o "$T/$name.data" --cupti-lib "$LIB" --gpu-pc-sampling --gpu-pc-duty=off -- \
		"$APP" $LAUNCHES 0.05 >"$T/$name.out" 2>"$T/$name.err" ||
		{ cat "$T/$name.err" >&2; fail "xpu-record failed ($name)"; }
}
record pc
annotate() {	# outfile, trace, cuda_home, path, kernel
	local rc
	env CUDA_HOME="$3" PATH="$4" "$REPORT" -i "$2" --annotate "$5" >"$1" 2>"$1.err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$1.err" >&2; fail "xpu-report --annotate '$5' exited $rc"; }
}
# the sample count and the text of offset OFF's line: "COUNT TEXT"
insn() {	# file, off
	sed -nE "s|^ *[0-9.]+% +([0-9]+)  $2:  (.*)  // .*|\1 \2|p" "$1"
}
check_counts() {	# file, what
	local off want got
	for off in 0180:$((A * LAUNCHES)) 0300:$((B * LAUNCHES)) 04d0:$((C * LAUNCHES)); do
		want=${off#*:} off=${off%:*}
		got=$(insn "$1" $off | cut -d' ' -f1)
		[ "$got" = "$want" ] || { cat "$1" >&2; fail "$2: $got samples at $off, want $want"; }
	done
	grep -q "^Annotate: $KERNEL (GPU kernel _Z11fake_kerneli, cubin 0x[0-9a-f]*)$" "$1" ||
		{ cat "$1" >&2; fail "$2: title"; }
	grep -q "^$TOTAL PC samples at 3 PCs in 1 process; " "$1" || { cat "$1" >&2; fail "$2: summary"; }
	grep -Eq "^ +66\.67% +$(((A + B) * LAUNCHES))  fake_kernel\.cu:15$" "$1" &&
	grep -Eq "^ +33\.33% +$((C * LAUNCHES))  fake_kernel\.cu:17$" "$1" ||
		{ cat "$1" >&2; fail "$2: the per-line table"; }
	grep -Eq "  0180:  .*  // long_scoreboard $((A * LAUNCHES))$" "$1" &&
	grep -Eq "  04d0:  .*  // math_pipe_throttle $((C * LAUNCHES))$" "$1" ||
		{ cat "$1" >&2; fail "$2: stall reasons per instruction"; }
}

# nvdisasm hidden
mkdir -p "$T/none"
annotate "$T/hidden.txt" "$T/pc.data" "$T/none" "$T/none" "$KERNEL"
[ "$(grep -c 'nvdisasm not found' "$T/hidden.txt")" -eq 1 ] &&
grep -q "^$TOTAL PC samples at 3 PCs in 1 process; no SASS text: nvdisasm not found" "$T/hidden.txt" ||
	{ cat "$T/hidden.txt" >&2; fail "no one-line notice without nvdisasm"; }
check_counts "$T/hidden.txt" "without nvdisasm"
[ "$(insn "$T/hidden.txt" 0180 | cut -d' ' -f2-)" = "fake_kernel.cu:15" ] &&
[ "$(insn "$T/hidden.txt" 04d0 | cut -d' ' -f2-)" = "fake_kernel.cu:17" ] ||
	{ cat "$T/hidden.txt" >&2; fail "without nvdisasm: the PCs' lines"; }

# names: mangled and a [sass] frame's give the same text; unknown: one line, exit 10
annotate "$T/mangled.txt" "$T/pc.data" "$T/none" "$T/none" _Z11fake_kerneli
annotate "$T/sass.txt" "$T/pc.data" "$T/none" "$T/none" "[sass]fake_kernel+0x300 (fake_kernel.cu:15)"
cmp -s "$T/hidden.txt" "$T/mangled.txt" && cmp -s "$T/hidden.txt" "$T/sass.txt" ||
	fail "--annotate by mangled or [sass] name differs: $(diff "$T/hidden.txt" "$T/sass.txt")"
"$REPORT" -i "$T/pc.data" --annotate no_such_kernel >"$T/unknown.txt" 2>"$T/unknown.err"
rc=$?
[ $rc -eq 10 ] && [ "$(wc -l <"$T/unknown.err")" -eq 1 ] &&
grep -q "no GPU PC samples of a kernel named 'no_such_kernel'" "$T/unknown.err" ||
	fail "unknown kernel: exit $rc, '$(cat "$T/unknown.err")'"

# a stand-in nvdisasm in nvdisasm -c's layout
mkdir -p "$T/cuda/bin"
cat >"$T/cuda/bin/nvdisasm" <<'EOF'
#!/bin/sh
# stand-in: nvdisasm -c CUBIN, in the real tool's layout
PATH=/usr/bin:/bin
[ "$1" = -c ] && [ -f "$2" ] && [ "$(head -c 4 "$2" | tail -c 3)" = ELF ] || exit 3
printf '\t.section\t.text._Z5otheri,"ax",@progbits\n'
printf '        /*0180*/                   BRA `(.L_x_9) ;\n'
printf '\t.section\t.text._Z11fake_kerneli,"ax",@progbits\n'
printf '\t.sectioninfo\t@"SHI_REGISTERS=12"\n_Z11fake_kerneli:\n.text._Z11fake_kerneli:\n'
off=0
while [ $off -lt 2304 ]; do
	case $off in
	384) t='LDG.E R4, desc[UR4][R4.64]' ;;
	768) t='@!P0 LDG.E R6, desc[UR4][R6.64]' ;;
	1232) t='FFMA R0, R0, 1.0001000165939331055, 0.5' ;;
	*) t=NOP ;;
	esac
	printf '        /*%04x*/                   %s ;                  /* 0x000fe20000000f00 */\n' $off "$t"
	printf '                                                               /* 0x000fc00000000000 */\n'
	[ $off = 1248 ] && printf '.L_x_1:\n'
	off=$((off + 16))
done
printf '\t.section\t.nv.constant0._Z11fake_kerneli,"a",@progbits\n'
printf '        /*0180*/                   BAD_AFTER ;\n'
EOF
chmod +x "$T/cuda/bin/nvdisasm"
annotate "$T/fake.txt" "$T/pc.data" "$T/cuda" "$T/none" "$KERNEL"
grep -q "^$TOTAL PC samples at 3 PCs in 1 process; SASS by $T/cuda/bin/nvdisasm$" "$T/fake.txt" ||
	{ cat "$T/fake.txt" >&2; fail "stand-in nvdisasm not used"; }
check_counts "$T/fake.txt" "stand-in nvdisasm"
[ "$(insn "$T/fake.txt" 0180 | cut -d' ' -f2-)" = "LDG.E R4, desc[UR4][R4.64]" ] &&
[ "$(insn "$T/fake.txt" 0300 | cut -d' ' -f2-)" = "@!P0 LDG.E R6, desc[UR4][R6.64]" ] &&
[ "$(insn "$T/fake.txt" 04d0 | cut -d' ' -f2-)" = "FFMA R0, R0, 1.0001000165939331055, 0.5" ] ||
	{ cat "$T/fake.txt" >&2; fail "stand-in nvdisasm: instruction text"; }
[ "$(grep -c ':  NOP$' "$T/fake.txt")" -eq $((2304 / 16 - 3)) ] ||
	{ cat "$T/fake.txt" >&2; fail "stand-in nvdisasm: every unsampled instruction, once"; }
# the source line before the instructions of each line: 0x180 is on 15
awk '/^  fake_kernel\.cu:[0-9]+$/ { l = $1 } /  0180:  / { print l; exit }' "$T/fake.txt" |
	grep -qx 'fake_kernel.cu:15' || { cat "$T/fake.txt" >&2; fail "no source line before 0x180"; }
grep -q 'BRA\|BAD_AFTER' "$T/fake.txt" && fail "another section's instruction shown"

# the toolkit's nvdisasm, where there is one
real=
if [ -n "${CUDA_HOME:-}" ]; then
	[ -x "$CUDA_HOME/bin/nvdisasm" ] && real=$CUDA_HOME/bin/nvdisasm
elif [ -x /usr/local/cuda/bin/nvdisasm ]; then
	real=/usr/local/cuda/bin/nvdisasm
fi
[ -n "$real" ] || real=$(command -v nvdisasm || true)
if [ -n "$real" ]; then
	annotate "$T/real.txt" "$T/pc.data" "$(dirname "$(dirname "$real")")" "$(dirname "$real")" "$KERNEL"
	grep -q "; SASS by $real$" "$T/real.txt" || { cat "$T/real.txt" >&2; fail "nvdisasm ($real) not used"; }
	check_counts "$T/real.txt" "nvdisasm"
	"$real" -c "$CUBIN" >"$T/nvdisasm.txt" || fail "$real -c $CUBIN failed"
	for off in 0180 0300 04d0; do
		# nvdisasm's own text at off in the kernel's section, without ';' and encodings
		want=$(awk -v off="/*$off*/" '/\.section/ { in_k = index($0, ".text._Z11fake_kerneli") > 0 }
			in_k && $1 == off { $1 = ""; sub(/^ +/, ""); sub(/ *\/\*.*$/, ""); sub(/ *;$/, ""); print; exit }' \
			"$T/nvdisasm.txt")
		got=$(insn "$T/real.txt" $off | cut -d' ' -f2- | tr -s ' ')
		[ -n "$want" ] && [ "$got" = "$(printf '%s' "$want" | tr -s ' ')" ] ||
			fail "nvdisasm: text at $off '$got', nvdisasm printed '$want'"
	done
	note "checked against $real"
else
	note "no nvdisasm here (CUDA_HOME, /usr/local/cuda/bin, PATH): the real tool's text is not checked"
fi

# a cubin the recorder reduced: no SASS text, its lines kept
record reduced XPU_CUPTI_CUBIN_MAX=1024
annotate "$T/reduced.txt" "$T/reduced.data" "$T/cuda" "$T/none" "$KERNEL"
grep -q "; no SASS text: the trace holds this kernel's cubin reduced to its line table" "$T/reduced.txt" ||
	{ cat "$T/reduced.txt" >&2; fail "reduced cubin: no notice"; }
check_counts "$T/reduced.txt" "reduced cubin"
[ "$(insn "$T/reduced.txt" 0180 | cut -d' ' -f2-)" = "fake_kernel.cu:15" ] ||
	{ cat "$T/reduced.txt" >&2; fail "reduced cubin: the PCs' lines"; }

# the TUI: a on the [GPU_Kernel] node (found with /), with the stand-in nvdisasm
if command -v tmux >/dev/null && ! "$REPORT" --tui -i /nonexistent 2>&1 </dev/null | grep -q 'built without ncurses'; then
	SOCK=xpu-gpu-annotate-$$
	trap 'tmux -L "$SOCK" kill-server 2>/dev/null' EXIT
	tmux -L "$SOCK" new-session -d -x 120 -y 40 -s t \
		"env TERM=screen CUDA_HOME=$T/cuda PATH=$T/none $REPORT --tui -i $T/pc.data; sleep 600"
	wait_for() {
		for ((i = 0; i < 100; i++)); do
			tmux -L "$SOCK" capture-pane -p -t t | grep -qF -- "$1" && return 0
			sleep 0.1
		done
		return 1
	}
	wait_for Children || fail "the TUI did not start: $(tmux -L "$SOCK" capture-pane -p -t t)"
	tmux -L "$SOCK" send-keys -t t / G P U _ K e r n e l Enter a
	wait_for "Annotate: $KERNEL" || fail "TUI: no annotate screen: $(tmux -L "$SOCK" capture-pane -p -t t)"
	wait_for "0180:  LDG.E R4, desc[UR4][R4.64]  // long_scoreboard $((A * LAUNCHES))" ||
		fail "TUI: annotate lacks 0x180's samples: $(tmux -L "$SOCK" capture-pane -p -t t)"
else
	note "tmux or ncurses missing: the TUI is not checked"
fi
echo "ok: --annotate and the TUI show $TOTAL PC samples per instruction and line"

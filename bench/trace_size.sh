#!/usr/bin/env bash
# Trace bytes per CPU sample on real programs from Debian packages: xz -9
# and zstd -19 compressing the same text, python3.11 running a call-heavy
# loop (bench/py_calls.py), gcc -O2 compiling a generated C file of about
# 7,800 lines. In each of RUNS interleaved rounds, every program runs under
#   xpu-record (default: format 1.6, the frames of the report's CFI
#               unwinding where the recorder knows them, else the stack
#               words no unwinder reads zeroed; stack copies coded against
#               the thread's previous one),
#   xpu-record with XPU_STACK_PRUNE=cfi (format 1.5: the stack words the
#               CFI unwinding reads rather than its frames),
#   xpu-record with XPU_STACK_PRUNE=address (format 1.4's pruning: the
#               address rule alone),
#   xpu-record with XPU_STACK_PRUNE=0 XPU_STACK_DELTA=0 (whole stack copies
#               written as in format 1.3: the "before"),
#   perf record --call-graph dwarf (8 KB stack copies) and --call-graph fp,
# at FREQ Hz; bytes per sample = file bytes / samples it holds (xpu: the
# recorder's count; perf: SAMPLE events of perf report --stats). Prints
# min/median/max per program and tool. Then, on the first round's "before"
# recording of each program, the same recording pruned and coded offline
# the three ways (tests/tools/recode --prune, --prune --cfi --words,
# --prune --cfi) must give the same
# xpu-report --folded and --stdio output: the bytes saved are bytes no
# report reads.
# Debian's perf 6.1 may abort at the end of a recording (an assertion in
# util/build-id.c): perf runs with -B (no build-id collection) and the
# output says so.
. "$(dirname "$0")/lib.sh"
bench_need
FREQ=${FREQ:-999}
RUNS=${RUNS:-3}
RECODE=${RECODE:-$XPU_BUILD/tests/tools/recode}
[ -x "$RECODE" ] || die "$RECODE not built: run make tests-build"
PY=/usr/bin/python3.11
for p in /usr/bin/xz /usr/bin/zstd "$PY" /usr/bin/gcc; do
	[ -x "$p" ] || die "$p missing: apt-get install xz-utils zstd python3.11 gcc"
done

# Inputs: text to compress (the C headers of the machine, 6 MB), the C file.
{ cat /usr/include/*.h /usr/include/*/*.h 2>/dev/null | head -c $((6 << 20)) >"$W/in.txt"; } || true
[ "$(stat -c %s "$W/in.txt")" -eq $((6 << 20)) ] || die "less than 6 MB of /usr/include to compress"
awk 'BEGIN {
	for (f = 0; f < 300; f++) {
		printf "static double f%d(const double *a, int n, double s)\n{\n", f
		printf "\tdouble acc = s;\n\tfor (int i = 0; i < n; i++) {\n"
		printf "\t\tif (a[i] > %d.5)\n\t\t\tacc += a[i] * %d;\n", f % 7, f + 1
		printf "\t\telse\n\t\t\tacc -= a[i] / %d.0;\n\t}\n", f + 2
		printf "\tswitch (n %% 4) {\n"
		for (c = 0; c < 4; c++)
			printf "\tcase %d:\n\t\tacc *= %d.25;\n\t\tbreak;\n", c, c + f % 5
		printf "\t}\n\treturn acc%s;\n}\n\n", f ? sprintf(" + f%d(a, n - 1, s)", f - 1) : ""
	}
	printf "double run(const double *a, int n)\n{\n\treturn f299(a, n, 0);\n}\n"
}' >"$W/gen.c"
lines=$(wc -l <"$W/gen.c")

PROGS=(xz zstd python gcc)
cmd_of() {
	case $1 in
	xz) echo "/usr/bin/xz -9 -T1 -c $W/in.txt" ;;
	zstd) echo "/usr/bin/zstd -19 -T1 -c $W/in.txt" ;;
	python) echo "$PY $XPU_TOP/bench/py_calls.py 3" ;;
	gcc) echo "/usr/bin/gcc -O2 -c $W/gen.c -o $W/gen.o" ;;
	esac
}

# xrec PROG NAME ENV...: records PROG (ENV: VAR=VALUE to set), prints bytes
# per sample, and appends the recorder's drain-thread CPU time per sample
# (us: reading the rings, pruning, coding, compressing) to $W/NAME.cpu; the
# trace is $W/NAME.data.
xrec() {
	local prog=$1 out=$W/$2.data cpu=$W/${2%-[0-9]*}.cpu try s c; shift 2
	for try in 1 2 3; do
		# shellcheck disable=SC2046
		if env "$@" "$RECORD" -v -F "$FREQ" -o "$out" -- $(cmd_of "$prog") >/dev/null 2>"$W/x.err"; then
			s=$(sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$W/x.err")
			c=$(sed -nE 's/.*drain thread: ([0-9.]+) s CPU.*/\1/p' "$W/x.err")
			awk -v c="$c" -v s="$s" 'BEGIN { printf "%.2f\n", c * 1e6 / s }' >>"$cpu"
			div "$(stat -c %s "$out")" "$s"
			return 0
		fi
		echo "trace_size.sh: xpu-record failed (try $try): $(tail -n 1 "$W/x.err")" >&2
	done
	die "xpu-record failed 3 times on $prog"
}

# prec PROG MODE: perf record --call-graph MODE, prints bytes per sample.
prec() {
	local prog=$1 mode=$2 out=$W/p.data try s
	for try in 1 2 3 4 5; do
		rm -f "$out"
		# shellcheck disable=SC2046
		if perf record -B -q -e cpu-clock -F "$FREQ" --call-graph "$mode" -o "$out" \
			-- $(cmd_of "$prog") >/dev/null 2>"$W/p.err"; then
			s=$(perf report -i "$out" --stats 2>/dev/null | awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
			[ -n "$s" ] && [ "$s" -gt 0 ] && { div "$(stat -c %s "$out")" "$s"; return 0; }
		fi
		echo "trace_size.sh: perf record --call-graph $mode failed (try $try): $(tail -n 1 "$W/p.err")" >&2
	done
	die "perf record failed 5 times on $prog"
}

TOOLS=(after words address before perf-dwarf perf-fp)
for run in $(seq "$RUNS"); do
	for prog in "${PROGS[@]}"; do
		xrec "$prog" "$prog-after" >>"$W/$prog.after"
		xrec "$prog" "$prog-words" XPU_STACK_PRUNE=cfi >>"$W/$prog.words"
		xrec "$prog" "$prog-address" XPU_STACK_PRUNE=address >>"$W/$prog.address"
		xrec "$prog" "$prog-before-$run" XPU_STACK_PRUNE=0 XPU_STACK_DELTA=0 >>"$W/$prog.before"
		prec "$prog" dwarf >>"$W/$prog.perf-dwarf"
		prec "$prog" fp >>"$W/$prog.perf-fp"
	done
done

echo "trace size: bytes per CPU sample at $FREQ Hz, $RUNS interleaved runs (min / median / max)"
echo "programs: xz -9 and zstd -19 on 6 MB of C headers, python3.11 py_calls.py 3, gcc -O2 on a generated $lines-line C file"
echo "perf 6.1 runs with -B (no build-id collection): it may abort at the end of a recording otherwise"
printf '%-8s %-26s %-26s %-26s %-26s %-26s %-26s\n' program "xpu-record (1.6 default)" "CFI words (1.5)" \
	"address rule only (1.4)" "xpu-record (1.3 encoding)" "perf --call-graph dwarf" "perf --call-graph fp"
mmm() { sort -g "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f / %.1f / %.1f", v[1], m, v[NR] }'; }
for prog in "${PROGS[@]}"; do
	printf '%-8s' "$prog"
	for t in "${TOOLS[@]}"; do
		printf ' %-26s' "$(mmm "$W/$prog.$t")"
	done
	printf '\n'
done
echo "ratios of medians: xpu-record 1.6 / CFI words (1.5), / address rule only, / 1.3 encoding, / perf dwarf, / perf fp"
for prog in "${PROGS[@]}"; do
	a=$(median <"$W/$prog.after")
	printf '%-8s %8s %8s %8s %8s %8s\n' "$prog" "$(div "$a" "$(median <"$W/$prog.words")")" \
		"$(div "$a" "$(median <"$W/$prog.address")")" \
		"$(div "$a" "$(median <"$W/$prog.before")")" \
		"$(div "$a" "$(median <"$W/$prog.perf-dwarf")")" "$(div "$a" "$(median <"$W/$prog.perf-fp")")"
done

echo "recorder cost: drain-thread CPU per sample, us (min / median / max)"
for prog in "${PROGS[@]}"; do
	printf '%-8s 1.6 default %-20s CFI words %-20s address rule %-20s 1.3 encoding %s\n' "$prog" \
		"$(mmm "$W/$prog-after.cpu")" "$(mmm "$W/$prog-words.cpu")" "$(mmm "$W/$prog-address.cpu")" \
		"$(mmm "$W/$prog-before.cpu")"
done

echo "same recording (run 1's 1.3-encoding trace), pruned and coded offline by tests/tools/recode:"
for prog in "${PROGS[@]}"; do
	in=$W/$prog-before-1.data
	for mode in address words cfi; do
		case $mode in
		address) args=--prune ;;
		words) args="--prune --cfi --words" ;;
		cfi) args="--prune --cfi" ;;
		esac
		# shellcheck disable=SC2086
		"$RECODE" $args "$in" "$W/$prog-$mode.data" >/dev/null || die "recode failed on $prog"
		same=yes
		for rargs in --folded --stdio; do
			"$REPORT" -i "$in" "$rargs" >"$W/a" 2>/dev/null
			"$REPORT" -i "$W/$prog-$mode.data" "$rargs" >"$W/b" 2>/dev/null
			cmp -s "$W/a" "$W/b" || same="NO ($rargs differs)"
		done
		printf '%-8s %-22s %10d -> %9d bytes (%s x)   report identical: %s\n' "$prog" "$args" \
			"$(stat -c %s "$in")" "$(stat -c %s "$W/$prog-$mode.data")" \
			"$(div "$(stat -c %s "$W/$prog-$mode.data")" "$(stat -c %s "$in")")" "$same"
	done
done

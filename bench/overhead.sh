#!/usr/bin/env bash
# What recording costs real programs, against perf record. Each program is
# a Debian package's, run as shipped:
#   xz     xz -9 -T1 compressing TEXT_MB (default 4) MB of generated text
#   zstd   zstd -19 -T1 on the same text
#   python python3.11 bench/py_calls.py -n PY_ITERS (default 2500)
#   gcc    gcc -O2 -c on a generated 7,845-line C file (280 functions)
# under no profiler, xpu-record, perf record --call-graph dwarf and perf
# record --call-graph fp, and perf record with no call graph (the cost of
# sampling alone: the timer interrupt, its cache and TLB footprint, a
# sample record of a few words), at each of FREQS (default "999 99"); runs are
# interleaved, REPEAT (default 3) of each. Every run is timed three ways:
#   wall: the whole profiler command (start-up and end-of-run work included:
#         perf reads build-ids at the end);
#   work: the program's own wall time, from GNU time wrapped around its exec
#         under the profiler (what the profiled program feels);
#   cpu:  the program's user+sys time (from the same wait4 rusage).
# Then one run per profiler and frequency measures the profiler's own peak
# RSS (VmHWM of its process, polled every 20 ms; not the program's; for
# perf, its end-of-run build-id pass included).
# Last, at -F 999 with kernel.bpf_stats_enabled=1 (WHERE=0: skipped;
# WHERE_ONLY=1: only this), where xpu-record's cost goes: BPF run time, the
# recorder's CPU, record sizes.
# Debian's perf 6.1 sometimes aborts at its end-of-run build-id step (an
# assertion in util/build-id.c): such a run is retried with perf record -B
# (no build-ids) and counted in the "-B" column.
REPEAT=${REPEAT:-3}	# before lib.sh, whose default is 5
. "$(dirname "$0")/lib.sh"
TEXT_MB=${TEXT_MB:-4}
PY_ITERS=${PY_ITERS:-2500}
FREQS=${FREQS:-"999 99"}
PROGS=${PROGS:-"xz zstd python gcc"}
PY=${PY:-/usr/bin/python3.11}
TIME=/usr/bin/time

[ -x "$RECORD" ] || die "xpu-record not built in $XPU_BIN: run make"
command -v perf >/dev/null || die "perf not found: install linux-perf (scripts/setup.sh)"
[ "$(id -u)" -eq 0 ] || die "needs root to record (eBPF, perf events)"
[ -x "$TIME" ] || die "$TIME not found: install the time package"
for t in xz zstd gcc "$PY"; do
	command -v "$t" >/dev/null || die "$t not found: install xz-utils, zstd, gcc, python3.11"
done

# Inputs, the same on every machine: pseudo-random words (awk's srand(1)),
# and a C file of many small functions with loops, switches and calls.
awk -v mb="$TEXT_MB" 'BEGIN {
	srand(1); split("the of and to in is for on that with as by profiler stack sample " \
	"frame kernel thread record trace buffer ring event time cpu gpu memory page map", w)
	while (n < mb * 1048576) { s = w[int(rand() * 30) + 1] (rand() < 0.1 ? ".\n" : " ")
		printf "%s", s; n += length(s) } }' >"$W/text"
awk -v n=280 'BEGIN {
	print "#include <stdint.h>\n#include <string.h>\n\nstruct s { int a[16]; double d[8]; uint64_t h; };\n"
	for (i = 0; i < n; i++) {
		printf "uint64_t f%d(struct s *p, const char *str, int k)\n{\n", i
		printf "\tuint64_t h = %du;\n\tint i;\n\n", (i * 2654435761) % 4294967296
		printf "\tfor (i = 0; i < 16; i++)\n\t\tp->a[i] += (i * %d) ^ str[i & 7];\n", i + 3
		printf "\tswitch (k %% 5) {\n"
		for (c = 0; c < 4; c++)
			printf "\tcase %d:\n\t\th = h * %d + p->a[%d];\n\t\tbreak;\n", c, 31 + c + i, (c + i) % 16
		printf "\tdefault:\n\t\th ^= (uint64_t)p->d[%d];\n\t}\n", i % 8
		printf "\tif (h & 1)\n\t\th += strlen(str + %d);\n", i % 5
		printf "\treturn h + p->a[%d];\n}\n\n", i % 16
	} }' >"$W/gen.c"

prog_cmd() {	# PROG: sets P to its command line
	case $1 in
	xz)     P=(xz -9 -T1 -c "$W/text") ;;
	zstd)   P=(zstd -19 -T1 -c "$W/text") ;;
	python) P=("$PY" "$XPU_TOP/bench/py_calls.py" -n "$PY_ITERS") ;;
	gcc)    P=(gcc -O2 -c "$W/gen.c" -o "$W/gen.o") ;;
	*)      die "unknown program $1 (PROGS: xz zstd python gcc)" ;;
	esac
}

prof_cmd() {	# CONFIG FREQ [-B]: sets C to the profiler's command line (empty: none)
	case $1 in
	none) C=() ;;
	xpu)  C=("$RECORD" -q -F "$2" -o "$W/x.data" --) ;;
	pdw)  C=(perf record -q ${3:-} -e cpu-clock -F "$2" --call-graph dwarf -o "$W/p.data" --) ;;
	pfp)  C=(perf record -q ${3:-} -e cpu-clock -F "$2" --call-graph fp -o "$W/p.data" --) ;;
	pns)  C=(perf record -q ${3:-} -e cpu-clock -F "$2" -o "$W/p.data" --) ;;
	esac
}

# one PROG CONFIG FREQ: one timed run; appends "wall work cpu" to $W/PROG.CONFIG.FREQ
one() {
	local t0 t1 b="" try
	prog_cmd "$1"
	for try in 1 2 3; do
		prof_cmd "$2" "$3" $b
		t0=$(date +%s%N)
		if "${C[@]}" "$TIME" -f '%e %U %S' -o "$W/t" "${P[@]}" >/dev/null 2>>"$W/stderr"; then
			t1=$(date +%s%N)
			[ -n "$b" ] && echo "$1.$2.$3" >>"$W/needed_B"
			awk -v a="$t0" -v b="$t1" '{ printf "%.4f %s %.2f\n", (b - a) / 1e9, $1, $2 + $3 }' \
				"$W/t" >>"$W/$1.$2.$3"
			return 0
		fi
		echo "overhead: run failed (try $try): ${C[*]} ${P[*]}: $(tail -n 1 "$W/stderr")" >&2
		[[ $2 == p* ]] && b=-B
	done
	die "failed 3 times: ${C[*]} ${P[*]}"
}

# peak PROG CONFIG FREQ: the profiler process's peak RSS in MB, as it runs
# by default; a perf that aborted at its end (the build-id assertion) is
# marked "A": its peak until then, which includes most of its build-id pass
peak() {
	local pid hwm=0 v
	prog_cmd "$1"
	prof_cmd "$2" "$3"
	"${C[@]}" "${P[@]}" >/dev/null 2>>"$W/stderr" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || true
		[ -n "$v" ] && hwm=$v
		sleep 0.02
	done
	if wait "$pid"; then v=""; else v=" A"; fi
	awk -v k="$hwm" -v a="$v" 'BEGIN { printf "%.1f%s\n", k / 1024, a }'
}

col() { awk -v c="$1" '{ print $c }' "$2"; }
mmm() { sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.2f %.2f %.2f\n", v[1], m, v[NR] }'; }

echo "overhead: $PROGS; FREQS $FREQS; $REPEAT interleaved runs each; $(nproc) CPUs; $(uname -r);" \
     "perf $(perf version 2>/dev/null | awk '{print $3}'); $("$PY" -V 2>&1); $(xz -V | head -1);" \
     "$(gcc --version | head -1)"
if [ "${WHERE_ONLY:-0}" = 0 ]; then
configs=(none)
for f in $FREQS; do configs+=("xpu $f" "pdw $f" "pfp $f" "pns $f"); done
for p in $PROGS; do one "$p" none 0; rm -f "$W/$p.none.0"; done	# warm-up: page cache, JIT
for ((i = 0; i < REPEAT; i++)); do
	for p in $PROGS; do
		for c in "${configs[@]}"; do
			set -- $c
			one "$p" "$1" "${2:-0}"
		done
	done
done

declare -A med
name() { case $1 in none) echo "no profiler" ;; xpu) echo "xpu-record -F $2" ;;
	pdw) echo "perf -F $2 dwarf" ;; pfp) echo "perf -F $2 fp" ;; pns) echo "perf -F $2 no stack" ;; esac; }
for p in $PROGS; do
	prog_cmd "$p"
	echo
	echo "== $p: ${P[*]##*/}"
	printf '%-20s %18s %6s %18s %6s %6s %6s %3s\n' config "wall s min/med/max" "x" \
		"work s min/med/max" "x" "cpu s" "x" "-B"
	for c in "${configs[@]}"; do
		set -- $c
		f=$W/$p.$1.${2:-0}
		read -r wl wm wh < <(col 1 "$f" | mmm)
		read -r kl km kh < <(col 2 "$f" | mmm)
		read -r _ cm _ < <(col 3 "$f" | mmm)
		med[$p.$1.${2:-0}]="$wm $km $cm"
		if [ "$1" = none ]; then bw=$wm; bk=$km; bc=$cm; fi
		nb=$(grep -c "^$p.$1.${2:-0}\$" "$W/needed_B" 2>/dev/null || true)
		printf '%-20s %18s %6s %18s %6s %6s %6s %3s\n' "$(name "$1" "${2:-}")" "$wl/$wm/$wh" \
			"$(div "$wm" "$bw")" "$kl/$km/$kh" "$(div "$km" "$bk")" "$cm" "$(div "$cm" "$bc")" "${nb:-0}"
	done
done

echo
echo "== ratios to no profiler: work (median, min) / cpu (median) / wall (median)"
printf '%-8s %-6s %-26s %-26s %-26s %-26s\n' program F xpu-record "perf dwarf" "perf fp" "perf no stack"
for p in $PROGS; do
	read -r bw bk bc <<<"${med[$p.none.0]}"
	bkmin=$(col 2 "$W/$p.none.0" | mmm | awk '{ print $1 }')
	for f in $FREQS; do
		line=""
		for t in xpu pdw pfp pns; do
			read -r w k c <<<"${med[$p.$t.$f]}"
			kmin=$(col 2 "$W/$p.$t.$f" | mmm | awk '{ print $1 }')
			line+=$(printf '%-26s ' "$(div "$k" "$bk") $(div "$kmin" "$bkmin") / $(div "$c" "$bc") / $(div "$w" "$bw")")
		done
		printf '%-8s %-6s %s\n' "$p" "$f" "$line"
	done
done

echo
echo "== profiler peak RSS, MB (one run each; A: perf aborted at its end, its peak until then)"
printf '%-8s %-6s %10s %10s %10s\n' program F xpu-record "perf dwarf" "perf fp"
for p in $PROGS; do
	for f in $FREQS; do
		printf '%-8s %-6s %10s %10s %10s\n' "$p" "$f" "$(peak "$p" xpu "$f")" "$(peak "$p" pdw "$f")" \
			"$(peak "$p" pfp "$f")"
	done
done
fi

# Where xpu-record's cost goes, at -F 999 (one run per program, with
# kernel.bpf_stats_enabled=1 for it, restored after): the BPF programs' run
# time (bpftool's run_time_ns of every xpu_* program, polled while the
# recording runs), the recorder's own CPU time and its reader thread's (-v),
# and the sample records' mean size as written (before compression: the frames
# where xpu-record unwound the stack, else the pruned copy).
if [ "${WHERE:-1}" = 1 ] && command -v bpftool >/dev/null; then
	old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$W"' EXIT
	echo
	echo "== where xpu-record -F 999's cost goes (one run each, kernel.bpf_stats_enabled=1)"
	others=""
	echo "(sample ns: the sampler's run time per sample recorded, its early returns for other"
	echo "processes included; BPF s: all of xpu-record's programs; rec cpu: xpu-record's own CPU"
	echo "time, BPF loading included; reader: its reader thread's)"
	printf '%-8s %9s %9s %10s %10s %10s %10s %10s %9s\n' program "prog cpu" samples "sample ns" \
		"BPF s" "BPF/cpu" "rec cpu" "reader" "B/sample"
	for p in $PROGS; do
		prog_cmd "$p"
		"$RECORD" -v -F 999 -o "$W/x.data" -- "$TIME" -f '%e %U %S' -o "$W/t" "${P[@]}" \
			>/dev/null 2>"$W/where.err" &
		pid=$!
		# The recorder's own programs, from its fds' fdinfo (prog_id, run_time_ns,
		# run_cnt): not those of another recorder running meanwhile.
		: >"$W/fdinfo"
		: >"$W/progs.json"
		while kill -0 "$pid" 2>/dev/null; do	# the names: bpftool, once they are loaded
			[ -s "$W/progs.json" ] || ! grep -q prog_id "$W/fdinfo" ||
				bpftool prog show -j >"$W/progs.json" 2>/dev/null || true
			for f in /proc/"$pid"/fdinfo/*; do
				awk -v f="$f" '/^prog_id:|^run_time_ns:|^run_cnt:/ { printf "%s %s %s\n", f, $1, $2 }' \
					"$f" 2>/dev/null || true
			done >>"$W/fdinfo"
			sleep 0.1
		done
		wait "$pid" || die "failed: $RECORD ${P[*]}: $(tail -n 1 "$W/where.err")"
		read -r bpf_s sample_ns detail < <(python3 - "$W/fdinfo" "$W/progs.json" \
			"$(sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$W/where.err")" <<'PYEOF'
import json, sys
cur, best = {}, {}
for line in open(sys.argv[1]):
    f, k, v = line.split()
    c = cur.setdefault(f, {})
    c[k.rstrip(":")] = int(v)
    if k == "run_cnt:" and "prog_id" in c:
        b = best.setdefault(c["prog_id"], {"run_time_ns": 0, "run_cnt": 0})
        if c.get("run_time_ns", 0) >= b["run_time_ns"]:
            best[c["prog_id"]] = {"run_time_ns": c.get("run_time_ns", 0), "run_cnt": c["run_cnt"]}
        cur[f] = {}
try:
    names = {p["id"]: p.get("name", "?") for p in json.load(open(sys.argv[2]))}
except ValueError:
    names = {}
by = {names.get(i, "prog%d" % i): b for i, b in best.items()}
total = sum(b["run_time_ns"] for b in by.values())
samples = int(sys.argv[3] or 0)
s = by.get("xpu_sample", {"run_time_ns": 0})
detail = ",".join("%s:%dx%.0fns" % (n[4:] if n.startswith("xpu_") else n, b["run_cnt"],
                  b["run_time_ns"] / b["run_cnt"] if b["run_cnt"] else 0)
                  for n, b in sorted(by.items()))
print("%.3f %.0f %s" % (total / 1e9, s["run_time_ns"] / samples if samples else 0, detail or "-"))
PYEOF
		)
		cpu=$(awk '{ printf "%.2f", $2 + $3 }' "$W/t")
		read -r rec reader < <(sed -nE 's/.*CPU time ([0-9.]+) s, of which the reader thread.s ([0-9.]+) s.*/\1 \2/p' \
			"$W/where.err")
		samples=$(sed -nE 's/^xpu-record: ([0-9]+) samples,.*/\1/p' "$W/where.err")
		bps=$("$REPORT" -i "$W/x.data" --dump 2>/dev/null | awk '/^SAMPLE/ { v = $0; sub(/ bytes\)$/, "", v)
			sub(/.*, /, "", v); s += v; n++ } END { if (n) printf "%.0f", s / n; else print "n/a" }')
		printf '%-8s %9s %9s %10s %10s %10s %10s %10s %9s\n' "$p" "$cpu" "$samples" "$sample_ns" \
			"$bpf_s" "$(div "$bpf_s" "$cpu")" "${rec:-n/a}" "${reader:-n/a}" "$bps"
		others+="  $p: $detail"$'\n'
	done
	echo "each BPF program, runs x mean run time (the sampler runs on every CPU's tick, the"
	echo "off-CPU ones on every context switch and system call of the machine, returning at"
	echo "once unless the thread is recorded):"
	printf '%s' "$others"
fi

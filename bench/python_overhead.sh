#!/usr/bin/env bash
# What Python frames cost: a Python-call-heavy benchmark (bench/py_calls.py:
# recursion and many small functions) under no profiler, xpu-record
# --python-frames=perf-map (PYTHONPERFSUPPORT=1: a trampoline on every call,
# CPython 3.12+), the interpreter walk (the default) and --python-frames=off,
# at -F 99 and 999. Runs are interleaved, REPEAT times each; the table gives
# min / median / max of the benchmark's own time (it prints it: the
# recorder's start and end are not in it) and the median's ratio to no
# profiler.
#
# Then the walk's own cost, from the kernel's BPF statistics
# (kernel.bpf_stats_enabled=1 for the measurement): the sampler program's
# mean run time with the walk minus without it (--python-frames=off) is the
# cost per sample; the same for the marker uprobe, with py_calls.py calling
# the CUDA-launch marker of tests' libmarker_test.so 20 Python frames deep,
# is the cost per marker hit.
#
# PY: the interpreter (default: the newest python3.13 / python3.12 on PATH,
# else python3; perf-map needs 3.12+). ITERS: benchmark iterations per run.
. "$(dirname "$0")/lib.sh"
bench_need
command -v bpftool >/dev/null || die "bpftool not found (scripts/setup.sh)"
PY=${PY:-$(command -v python3.13 || command -v python3.12 || command -v python3)}
PY=$(readlink -f "$(command -v "$PY")")
ITERS=${ITERS:-1500}
MARKS=${MARKS:-200000}
LIB=$XPU_BUILD/tests/workloads/libmarker_test.so
[ -f "$LIB" ] || die "missing $LIB: run make tests-build"
WORK=("$PY" "$XPU_TOP/bench/py_calls.py" -n "$ITERS")
# pyenv's shims are scripts: the interpreter itself is what must run
"$PY" -c 'import sys; assert sys.implementation.name == "cpython"' ||
	die "$PY is not a CPython interpreter"
pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

configs=(none perfmap walk off)
run_config() {	# CONFIG FREQ: one run; appends the benchmark's seconds to $W/CONFIG-FREQ.wall
	local cmd
	case $1 in
	none)    cmd=() ;;
	perfmap) cmd=("$RECORD" -q --no-gpu --no-off-cpu -F "$2" --python-frames=perf-map -o "$W/x.data" --) ;;
	walk)    cmd=("$RECORD" -q --no-gpu --no-off-cpu -F "$2" -o "$W/x.data" --) ;;
	off)     cmd=("$RECORD" -q --no-gpu --no-off-cpu -F "$2" --python-frames=off -o "$W/x.data" --) ;;
	esac
	: >"$W/stderr"
	retry env -u PYTHONPERFSUPPORT "${cmd[@]}" "${WORK[@]}"
	sed -nE 's/^py_calls: [0-9]+ iterations in ([0-9.]+) s$/\1/p' "$W/retry.out" >>"$W/$1-$2.wall"
}

stats() {	# FILE: "min median max"
	local f=$1
	echo "$(sort -g "$f" | head -n 1) $(median <"$f") $(sort -g "$f" | tail -n 1)"
}

# prog_stats PROG CMD...: runs CMD (an xpu-record command line) and prints
# "run_time_ns run_cnt" of its BPF program PROG, as last seen while it ran
# (the program of that name loaded after CMD started: bpftool may not know
# which process holds a program).
prog_stats() {
	local prog=$1 rpid first; shift
	first=$(bpftool prog show -j | python3 -c 'import json, sys; print(max([p["id"] for p in json.load(sys.stdin)] or [0]))')
	: >"$W/progs.json"
	"$@" >"$W/prog.out" 2>>"$W/stderr" &
	rpid=$!
	while kill -0 "$rpid" 2>/dev/null; do
		bpftool prog show -j >"$W/progs.tmp" 2>/dev/null && mv "$W/progs.tmp" "$W/progs.json"
		sleep 0.1
	done
	wait "$rpid" || die "failed: $*: $(tail -n 1 "$W/stderr")"
	grep -h "marker ns/call" "$W/prog.out" >&2 || true
	python3 - "$W/progs.json" "$prog" "$first" <<'EOF'
import json, sys
path, name, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    progs = json.load(open(path))
except ValueError:
    progs = []
mine = sorted((p for p in progs if p.get("name") == name and p["id"] > first),
              key=lambda p: p["id"])
p = mine[0] if mine else {}
print(p.get("run_time_ns") or 0, p.get("run_cnt") or 0)
EOF
}

echo "python_overhead: ${WORK[*]} (CPython $pyver), $REPEAT runs each, $(nproc) CPUs"
case $pyver in 3.1[2-9]) ;; *) echo "note: CPython $pyver has no perf-map support (3.12+): that row runs without trampolines";; esac
for f in 99 999; do run_config none "$f"; : >"$W/none-$f.wall"; done	# warm-up
for ((i = 0; i < REPEAT; i++)); do
	for f in 99 999; do
		for c in "${configs[@]}"; do run_config "$c" "$f"; done
	done
done

printf '%-44s %8s %8s %8s %8s\n' config "min s" "median s" "max s" "x none"
declare -A med
for f in 99 999; do
	base=$(median <"$W/none-$f.wall")
	for c in "${configs[@]}"; do
		read -r lo mid hi < <(stats "$W/$c-$f.wall")
		med[$c-$f]=$mid
		case $c in
		none)    name="no profiler" ;;
		perfmap) name="xpu-record -F $f --python-frames=perf-map" ;;
		walk)    name="xpu-record -F $f (interpreter walk)" ;;
		off)     name="xpu-record -F $f --python-frames=off" ;;
		esac
		printf '%-44s %8s %8s %8s %8s\n' "$name" "$lo" "$mid" "$hi" "$(div "$mid" "$base")"
	done
	echo "-F $f: walk / perf-map: $(div "${med[walk-$f]}" "${med[perfmap-$f]}") (goal: < 1);" \
	     "walk / off: $(div "${med[walk-$f]}" "${med[off-$f]}")"
done

# The walk's own cost per sample and per marker hit, from BPF statistics.
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled="$old"; rm -rf "$W"' EXIT
per_run() {	# PROG MODE OPTIONS... -- CMD...: mean ns per run of PROG, and the runs
	local prog=$1 mode=$2 t n; shift 2
	read -r t n < <(prog_stats "$prog" "$RECORD" -q --no-off-cpu -F 999 \
		--python-frames="$mode" -o "$W/s.data" "$@")
	awk -v t="$t" -v n="$n" 'BEGIN { if (n) printf "%.0f %d\n", t / n, n; else print "n/a 0" }'
}
read -r s_walk n_walk < <(per_run xpu_sample walk --no-gpu -- "${WORK[@]}")
read -r s_off n_off < <(per_run xpu_sample off --no-gpu -- "${WORK[@]}")
read -r m_walk nm_walk < <(per_run xpu_marker walk --cupti-lib "$LIB" -- "$PY" "$XPU_TOP/bench/py_calls.py" x "$LIB" "$MARKS")
read -r m_off nm_off < <(per_run xpu_marker off --cupti-lib "$LIB" -- "$PY" "$XPU_TOP/bench/py_calls.py" x "$LIB" "$MARKS")
printf '%-44s %10s %10s %10s\n' "BPF program (bpf_stats)" "walk ns" "off ns" "walk cost"
printf '%-44s %10s %10s %10s\n' "xpu_sample, per sample ($n_walk / $n_off runs)" "$s_walk" "$s_off" \
	"$(awk -v a="$s_walk" -v b="$s_off" 'BEGIN { printf "%.2f us", (a - b) / 1000 }')"
printf '%-44s %10s %10s %10s\n' "xpu_marker, per marker hit ($nm_walk / $nm_off)" "$m_walk" "$m_off" \
	"$(awk -v a="$m_walk" -v b="$m_off" 'BEGIN { printf "%.2f us", (a - b) / 1000 }')"

#!/usr/bin/env bash
# End to end: --stdio (symbols and percentages that agree with --folded),
# --header (metadata and lost counts), --dump (every record), and their
# stable shapes against tests/shell/golden/ (numbers, pids and host details
# masked); the export outputs on the same real recording: --svg (XML),
# --pprof (read back by go tool pprof, samples = --folded's) and --speedscope
# (weights = --folded's). Recorded with --no-gpu: whether the CUPTI library is found beside
# xpu-record must not change the shapes. UPDATE_GOLDEN=1 rewrites the golden files.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

record_demo run -F 999 --no-gpu -- 2
data=$T/run.data
report "$T/folded" -i "$data" --folded
total=$(folded_sum <"$T/folded")

# ---- --stdio ----------------------------------------------------------------
report "$T/stdio" -i "$data" --stdio
report "$T/default" -i "$data"
cmp -s "$T/stdio" "$T/default" || fail "the default output (not a terminal) differs from --stdio"
# a row ends in its symbol, then its source line (cpu_demo has DWARF)
SRC=' +cpu_demo\.c:[0-9]+'
for sym in main demo_run level1 level6 burn_a burn_b worker_main burn_worker child_main burn_child; do
	grep -Eq "[0-9.]+%.*[[:space:]]$sym$SRC\$" "$T/stdio" || fail "--stdio has no row for $sym"
done
# burn_a's self share must match the folded counts (same data, 1 point slack).
self_pct() {	# SYMBOL: largest second percentage on rows of SYMBOL
	awk -v s="$1" '$(NF - 1) == s && $NF ~ /^cpu_demo\.c:[0-9]+$/ { n = 0
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+%$/) { n++; if (n == 2) { v = $i + 0; if (v > m) m = v } } }
		END { printf "%.2f\n", m }' "$T/stdio"
}
for leaf in burn_a burn_child; do
	want=$(awk -v a="$(folded_sum "(^|;)$leaf\$" <"$T/folded")" -v t="$total" 'BEGIN { printf "%.2f\n", 100 * a / t }')
	got=$(self_pct $leaf)
	note "$leaf self: --stdio $got%, folded $want%"
	in_range "$got" "$(awk -v w="$want" 'BEGIN { print w - 1 }')" "$(awk -v w="$want" 'BEGIN { print w + 1 }')" ||
		fail "--stdio gives $leaf self $got%, the folded counts say $want%"
done

# ---- --header ---------------------------------------------------------------
report "$T/header" -i "$data" --header
grep -q cpu_demo "$T/header" || fail "--header lacks the command line"
grep -Eiq 'freq.*999' "$T/header" || fail "--header lacks sample_freq 999"
grep -Eiq 'call.?graph.*dwarf' "$T/header" || fail "--header lacks the call-graph mode"
grep -Eiq 'lost' "$T/header" || fail "--header has no lost-events line"
grep -Eiq "$(uname -r | sed 's/[.+]/\\&/g')" "$T/header" || fail "--header lacks the kernel release"

# ---- --dump -----------------------------------------------------------------
report "$T/dump" -i "$data" --dump
lines=$(wc -l <"$T/dump")
[ "$lines" -ge "$total" ] || fail "--dump has $lines lines for $total samples"
for kind in sample mmap comm fork; do
	grep -iq "$kind" "$T/dump" || fail "--dump shows no $kind records"
done
grep -q "$CPU_DEMO" "$T/dump" || fail "--dump shows no mmap of $CPU_DEMO"

# ---- golden shapes ----------------------------------------------------------
# Header: the keys/labels it prints, values masked.
mask() { sed -E -e "s#$XPU_TOP#TOP#g" -e 's/0x[0-9a-fA-F]+/HEX/g' -e 's/[0-9]+(\.[0-9]+)?/N/g' \
	-e 's/\.{2,}/../g' -e 's/[[:space:]]+/ /g' -e 's/ $//'; }
# Metadata keys are open-ended (checked by name below) and the per-type
# record counts depend on the run (kernel frames, exits): keep those
# sections' names, drop their rows.
for key in cmdline hostname kernel arch nr_cpus sample_freq call_graph stack_bytes clock tool_version; do
	grep -Eq "^# +$key: " "$T/header" || fail "--header lacks the metadata key $key"
done
awk '/^# (records by type|metadata):/ { print; skip = 1; next } skip && /^# *$/ { skip = 0 } !skip' "$T/header" |
	mask | sed -E 's/^(# [^:=]+[:=]).*/\1 V/' >"$T/header.shape"
golden_compare header.shape "$T/header.shape"
# Stdio: '#' lines, and the set of rows for cpu_demo's own functions with at
# least 1% children time (a rare sample of the parent inside fork() under
# spawn_child is real but timing-dependent, so tiny rows are not shape).
{ grep '^#' "$T/stdio" | mask
  grep -E "[[:space:]](main|demo_run|level[1-6]|burn_[a-z]+|worker_[a-z0-9]+|child_[a-z0-9]+|spawn_child)$SRC\$" "$T/stdio" |
	awk '$1 + 0 >= 1.0' | mask | sort -u; } >"$T/stdio.shape"
golden_compare stdio.shape "$T/stdio.shape"

# the exports on this real recording
report "$T/svg.out" -i "$data" --svg "$T/run.svg"
if command -v xmllint >/dev/null; then
	xmllint --noout "$T/run.svg" || fail "--svg: not well-formed XML"
fi
grep -q 'burn_a' "$T/run.svg" || fail "--svg has no burn_a frame"
if "$REPORT" --help | grep -q -- '--pprof FILE' && command -v go >/dev/null; then
	report "$T/pp.out" -i "$data" --pprof "$T/run.pb.gz"
	got=$(HOME=$T GOCACHE=$T/gocache go tool pprof -symbolize=none -raw "$T/run.pb.gz" 2>/dev/null |
	      awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && NF >= 3 { s += $1 } END { print s + 0 }')
	[ "$got" -eq "$total" ] || fail "--pprof holds $got samples, --folded $total"
fi
report "$T/ss.out" -i "$data" --speedscope "$T/run.json"
python3 - "$T/run.json" "$total" "$(grep -m1 -o 'sample_freq: [0-9]*' "$T/header" | awk '{ print $2 }')" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
total, freq = float(sys.argv[2]), float(sys.argv[3] or 999)
w = sum(sum(p["weights"]) for p in d["profiles"]) * freq / 1e9
assert abs(w - total) <= 0.01 * total + 1, (w, total)
PY
	fail "--speedscope weights do not add up to --folded's $total samples"
echo "ok"

#!/usr/bin/env bash
# The trace format's damage rules, end to end through xpu-report
# (Documentation/xpu-data-format.md, "Reader rules"). Complements
# report_damage.sh with exact cuts:
#  - every fuzz corpus input (valid, truncated, bit-flipped, hand-made bad
#    chunks, a newer major version) gives a defined exit code, never a crash;
#  - a trace cut inside its file header is corrupt (8);
#  - a trace cut exactly at a chunk boundary is NOT corrupt: every chunk
#    before the cut is whole (exit 0, or 10 if nothing is left to report);
#  - a cut anywhere inside a chunk is corrupt (8; 10 when nothing is left),
#    says so on stderr, and reports exactly the samples of the whole chunks
#    before the cut.
# Uses a real recording when this machine can record, else the corpus's
# multi-chunk trace.
. "$(dirname "$0")/lib/e2e.sh"
CORPUS=$XPU_TOP/tests/fuzz/corpus/reader

[ -x "$REPORT" ] || skip "xpu-report not built yet ($REPORT)"

# run NAME FILE ARGS...: xpu-report FILE; sets rc; fails on a crash.
run() {
	local name=$1 file=$2; shift 2
	"$REPORT" -i "$file" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -lt 128 ] || fail "$name: xpu-report crashed (exit $rc) on $file"
	! grep -Eiq 'sanitizer|segmentation|BUG:' "$T/$name.err" || fail "$name: crash text on stderr"
}

# expect NAME RC ALLOWED...: RC must be one of ALLOWED.
expect() {
	local name=$1 rc=$2 a; shift 2
	for a in "$@"; do [ "$rc" -eq "$a" ] && return 0; done
	cat "$T/$name.err" >&2
	fail "$name: exit $rc, expected one of: $*"
}

# expect_damaged NAME RC: corrupt (8), or no data (10) when the damage left
# nothing to print; either way stderr says the trace is damaged.
expect_damaged() {
	if [ -s "$T/$1.out" ]; then expect "$1" "$2" $EXIT_CORRUPT
	else expect "$1" "$2" $EXIT_CORRUPT $EXIT_NODATA; fi
	grep -Eiq 'trunc|corrupt|damage' "$T/$1.err" || fail "$1: stderr does not say the trace is damaged"
}

# ---- the trace to cut -----------------------------------------------------
data=$T/trace.data
if [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ] && [ -x "$RECORD" ] && [ -x "$CPU_DEMO" ]; then
	record_demo trace -F 499 -- 2
	note "cutting a real recording"
else
	cp "$CORPUS/valid-multichunk-zstd" "$data"
	note "cannot record here (not root or no BTF): cutting the corpus trace"
fi
size=$(stat -c %s "$data")

# Is xpu-report far enough along to judge? It must read the whole trace.
run full "$data" --folded
if [ $rc -ne 0 ] || [ ! -s "$T/full.out" ]; then
	skip "xpu-report does not produce --folded output yet (exit $rc)"
fi
full=$(folded_sum <"$T/full.out")

# Chunk boundaries, from the chunk headers: start + header_size + comp_size.
u32() { od -An -tu4 -j "$2" -N 4 "$1" | tr -d ' '; }
bounds=()
off=$(u32 "$data" 12)		# file header_size
while [ "$off" -lt "$size" ]; do
	bounds+=("$off")
	[ "$(u32 "$data" "$off")" = $((0x4b484358)) ] || fail "no chunk magic at offset $off of an undamaged trace"
	off=$((off + $(u32 "$data" $((off + 4))) + $(u32 "$data" $((off + 8)))))
done
[ "$off" -eq "$size" ] || fail "chunks end at $off, the file at $size"
bounds+=("$size")
note "$size bytes, ${#bounds[@]} chunk boundaries, $full samples"

# ---- cuts inside the file header --------------------------------------------
for cut in 0 1 8 40 63; do
	head -c $cut "$data" >"$T/cut.data"
	run "hdr_$cut" "$T/cut.data" --folded
	expect "hdr_$cut" $rc $EXIT_CORRUPT $([ $cut -lt 8 ] && echo $EXIT_INPUT)
done

# ---- cuts at chunk boundaries and inside chunks ---------------------------------
cuts=()
for b in "${bounds[@]}"; do cuts+=("$b" $((b + 1)) $((b + 31)) $((b + 33))); done
for i in $(seq 1 24); do cuts+=($((size * i / 25))); done
mapfile -t cuts < <(printf '%s\n' "${cuts[@]}" | awk -v s="$size" '$1 <= s' | sort -n -u)
prev=0 prev_bound=0
for cut in "${cuts[@]}"; do
	head -c "$cut" "$data" >"$T/cut.data"
	run "cut_$cut" "$T/cut.data" --folded
	n=$(folded_sum <"$T/cut_$cut.out")
	if printf '%s\n' "${bounds[@]}" | grep -qx "$cut"; then
		expect "cut_$cut" $rc 0 $EXIT_NODATA
		[ "$n" -ge "$prev" ] || fail "clean cut at $cut: $n samples, a shorter cut had $prev"
		prev_bound=$n
	else
		expect_damaged "cut_$cut" $rc
		[ "$n" -eq "$prev_bound" ] ||
			fail "cut at $cut inside a chunk: $n samples, but the whole chunks before it hold $prev_bound"
	fi
	[ "$n" -le "$full" ] || fail "cut at $cut: $n samples, more than the whole trace ($full)"
	prev=$n
done
[ "$prev" -eq "$full" ] || fail "the uncut trace gave $prev samples in the loop, $full before"
note "${#cuts[@]} cuts checked"

# ---- every fuzz corpus input ----------------------------------------------------
nf=0
for f in "$CORPUS"/*; do
	[ -f "$f" ] || continue
	name=corpus_$(basename "$f")
	modes="--folded --header --dump"
	case $(basename "$f") in *-*) ;; *) modes="--folded --dump" ;; esac	# fuzzer finds: keep it quick
	for mode in $modes; do
		run "$name$mode" "$f" $mode
		case $(basename "$f") in
		refused-newer-major) expect "$name$mode" $rc $EXIT_VERSION ;;
		truncated-*|damaged-*|bad-header-size|crafted-count-*|crafted-unaligned-*|\
		crafted-short-*|crafted-size-*)
			expect_damaged "$name$mode" $rc ;;
		valid-*|crafted-empty-chunk|crafted-type-zero)
			expect "$name$mode" $rc 0 $EXIT_NODATA ;;
		*)	# fuzzer finds: anything defined, never a crash
			expect "$name$mode" $rc 0 $EXIT_INPUT $EXIT_CORRUPT $EXIT_VERSION $EXIT_NODATA ;;
		esac
	done
	nf=$((nf + 1))
done
[ $nf -gt 0 ] || fail "no corpus inputs in $CORPUS"
note "$nf corpus inputs through --folded and --dump (seeds also --header)"
echo ok

#!/usr/bin/env bash
# Export speed: --timeline FILE and --pprof FILE against --folded on the same
# trace, a recording of a program we did not write (Debian's xz compressing
# SECONDS_RUN seconds' worth of data, single-threaded, with off-CPU records),
# time per event (SAMPLE + OFFCPU records), min / median / max of REPEAT
# interleaved runs, and the output sizes.
. "$(dirname "$0")/lib.sh"
bench_need
command -v xz >/dev/null || die "xz not found (package xz-utils)"
"$REPORT" --help | grep -q -- '--timeline FILE' || die "xpu-report built without libprotobuf-c: no --timeline/--pprof"
FREQ=${FREQ:-999}
SIZE_MB=${SIZE_MB:-48}		# input for xz -9

# compressible text, about SIZE_MB MB
seq -f "line %.0f of the export benchmark's input, compressed by xz -9" 1 \
	$((SIZE_MB * 16384)) >"$W/in"
"$RECORD" -F "$FREQ" -o "$W/x.data" -- xz -9 -T1 -c "$W/in" >/dev/null 2>"$W/x.err" ||
	die "xpu-record failed: $(tail -n 1 "$W/x.err")"
"$REPORT" -i "$W/x.data" --dump 2>/dev/null | awk '$1 == "SAMPLE" || $1 == "OFFCPU" { n[$1]++ }
	END { print n["SAMPLE"] + 0, n["OFFCPU"] + 0 }' >"$W/n"
read -r samples offcpu <"$W/n"
events=$((samples + offcpu))

# warm-up: page cache, the ELF files' symbols
"$REPORT" -i "$W/x.data" --folded >/dev/null 2>&1
for ((i = 0; i < REPEAT; i++)); do
	wall "$REPORT" -i "$W/x.data" --folded >>"$W/folded"
	wall "$REPORT" -i "$W/x.data" --pprof "$W/p.pb.gz" >>"$W/pprof"
	wall "$REPORT" -i "$W/x.data" --timeline "$W/t.pftrace" >>"$W/timeline"
done
"$REPORT" -i "$W/x.data" --folded >"$W/f.txt" 2>/dev/null
minmax() { sort -g "$1" | sed -n '1p;$p' | paste -sd' '; }
echo "export speed: xz -9 of $SIZE_MB MB at $FREQ Hz: $samples samples + $offcpu off-CPU records = $events events; $REPEAT interleaved runs"
printf '%-28s %8s %8s %8s %11s %9s %10s\n' command min median max "us/event" "x folded" "out bytes"
fm=$(median <"$W/folded")
for o in folded pprof timeline; do
	read -r mn mx <<<"$(minmax "$W/$o")"
	md=$(median <"$W/$o")
	case $o in folded) out=$W/f.txt ;; pprof) out=$W/p.pb.gz ;; timeline) out=$W/t.pftrace ;; esac
	printf '%-28s %8.3f %8.3f %8.3f %11.2f %9s %10s\n' "xpu-report --$o" "$mn" "$md" "$mx" \
		"$(awk -v t="$md" -v n="$events" 'BEGIN { print t * 1e6 / n }')" "$(div "$md" "$fm")" \
		"$(stat -c %s "$out")"
done
echo "--timeline / --folded: $(div "$(median <"$W/timeline")" "$fm"); --pprof / --folded: $(div "$(median <"$W/pprof")" "$fm") (medians)"

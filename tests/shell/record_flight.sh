#!/usr/bin/env bash
# xpu-record --flight-recorder=2 (Documentation/xpu-record.md "Bounded
# capture"): cpu_demo runs 6 s, xpu-record keeps only the last 2 s in
# memory; a SIGUSR2 sent 3.5 s in writes FILE.<timestamp> with about those
# 2 s (not the 3.5 s since the start), the end writes another. Each is
# readable alone: FINISH, cpu_demo's full stacks.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

D=$T/fr && mkdir -p "$D"
"$RECORD" --flight-recorder=2 -o "$D/f.data" -- "$CPU_DEMO" 6 >"$T/rec.out" 2>"$T/rec.err" &
rec=$!
sleep 3.5
kill -USR2 $rec
wait $rec || { cat "$T/rec.err" >&2; fail "xpu-record exited $?"; }
grep -q '^xpu-record: flight recorder: SIGUSR2: .* written to ' "$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "no window written at SIGUSR2"; }
grep -q '^xpu-record: flight recorder: end of the recording: .* written to ' "$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "no window written at the end"; }
ls "$D" >"$T/files"
[ "$(wc -l <"$T/files")" -eq 2 ] || fail "$D holds $(cat "$T/files"), want 2 files"
grep -Evq '^f\.data\.[0-9]{16}$' "$T/files" && fail "not FILE.<timestamp> names: $(cat "$T/files")"
for f in $(cat "$T/files"); do
	"$REPORT" -i "$D/$f" --header >"$T/$f.header" 2>&1 || fail "$f: --header failed"
	grep -q 'finished cleanly: yes' "$T/$f.header" || fail "$f: no FINISH"
	"$REPORT" -i "$D/$f" --folded >"$T/$f.folded" 2>"$T/$f.err" || fail "$f: --folded failed"
	grep -Eq '^cpu_demo;.*main;demo_run;level1;level2;level3;level4;level5;level6;burn_[ab] [0-9]+$' \
		"$T/$f.folded" || { cat "$T/$f.folded" >&2; fail "$f: no full cpu_demo stack"; }
	"$REPORT" -i "$D/$f" --dump 2>/dev/null | awk '$1=="SAMPLE"{split($2,a,"="); print a[2]}' |
		sort -n | sed -n '1p;$p' | tr '\n' ' ' >"$T/$f.range"
	set -- $(cat "$T/$f.range")
	span=$(( ($2 - $1) / 1000000 ))
	note "$f: samples over $span ms"
	# about 2 s: the ring is cut every 0.2 s, so up to 2.2 s; a file
	# of the whole 3.5 s before the signal (or 6 s) is no flight recorder
	[ "$span" -ge 1500 ] && [ "$span" -le 2700 ] || fail "$f: samples over $span ms, want ~2000"
done
note "ok: two windows of ~2 s, each readable alone"

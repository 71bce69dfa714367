#!/usr/bin/env bash
# xpu-record --switch-output=1s --switch-max-files=3 (perf's options,
# Documentation/xpu-record.md "Bounded capture"): cpu_demo runs 5.5 s, so
# the recording is cut into 6 FILE.<timestamp> files and the last 3 are
# kept. Each is readable alone: its header is whole, it finished cleanly,
# --folded gives cpu_demo's functions under their full stacks (its mappings
# and build-ids are repeated at its start), its kernel frames are named
# (KSYM of the kernel IPs seen so far); together they cover the last
# ~2.5 s (samples from about 3 s after the start to the end), and -i DIR
# reads them as one recording: the same processes (no per-file labels), and
# as many samples as the files hold one by one.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

D=$T/rot && mkdir -p "$D"
"$RECORD" --switch-output=1s --switch-max-files=3 -o "$D/x.data" -- "$CPU_DEMO" 5.5 \
	>"$T/rec.out" 2>"$T/rec.err" || { cat "$T/rec.err" >&2; fail "xpu-record exited $?"; }
grep -q '^xpu-record: 6 files written (3 kept by --switch-max-files)' "$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "not 6 files written, 3 kept"; }
ls "$D" >"$T/files"
[ "$(wc -l <"$T/files")" -eq 3 ] || fail "$D holds $(wc -l <"$T/files") files, want 3: $(cat "$T/files")"
grep -Evq '^x\.data\.[0-9]{16}$' "$T/files" && fail "not FILE.<16-digit timestamp> names: $(cat "$T/files")"

total=0 first=
for f in $(cat "$T/files"); do
	"$REPORT" -i "$D/$f" --header >"$T/$f.header" 2>"$T/$f.err" ||
		{ cat "$T/$f.err" >&2; fail "$f: --header failed"; }
	grep -q 'finished cleanly: yes' "$T/$f.header" || fail "$f: no FINISH of its own"
	"$REPORT" -i "$D/$f" --folded >"$T/$f.folded" 2>"$T/$f.err" ||
		{ cat "$T/$f.err" >&2; fail "$f: --folded failed"; }
	# (the last file is the tail after the last switch, which can be a
	# few samples when the machine is loaded: the main thread's stack is
	# checked in the others and in -i DIR's below)
	[ "$f" = "$(tail -1 "$T/files")" ] ||
	grep -Eq '^cpu_demo;.*main;demo_run;level1;level2;level3;level4;level5;level6;burn_[ab] [0-9]+$' \
		"$T/$f.folded" || { cat "$T/$f.folded" >&2; fail "$f: no full cpu_demo stack"; }
	grep -Eq '^demo-(child|worker);.*_l6;burn_(child|worker) [0-9]+$' "$T/$f.folded" ||
		fail "$f: no full child or worker stack"
	# its kernel frames are named: each file has the kernel symbols of the
	# kernel IPs seen so far, not only the last one (KSYM)
	grep -q 'kernel addresses stayed unnamed' "$T/$f.err" && fail "$f: $(cat "$T/$f.err")"
	n=$(awk '{s+=$NF} END{print s+0}' "$T/$f.folded")
	total=$((total + n))
	# the samples' time range (monotonic ns) of this file
	"$REPORT" -i "$D/$f" --dump 2>/dev/null | awk '$1=="SAMPLE"{split($2,a,"="); print a[2]}' |
		sort -n | sed -n '1p;$p' | tr '\n' ' ' >"$T/$f.range"
	note "$f: $n samples, sample times $(cat "$T/$f.range")"
done
# the files follow each other: 3 consecutive slices of ~1 s (the last one
# the half second up to the end)
set -- $(cat "$T/files")
s1=$(cut -d' ' -f1 "$T/$1.range") e1=$(cut -d' ' -f2 "$T/$1.range")
s3=$(cut -d' ' -f1 "$T/$3.range") e3=$(cut -d' ' -f2 "$T/$3.range")
span=$(( (e3 - s1) / 1000000 ))
[ "$span" -ge 1800 ] && [ "$span" -le 3200 ] || fail "the 3 files' samples span $span ms, want ~2.5 s"
[ $(( (e1 - s1) / 1000000 )) -le 1100 ] || fail "$1 holds $(( (e1 - s1) / 1000000 )) ms of samples, want ~1 s"
[ "$s3" -gt "$e1" ] || fail "the files overlap"

"$REPORT" -i "$D" --folded >"$T/dir.folded" 2>"$T/dir.err" || { cat "$T/dir.err" >&2; fail "-i DIR failed"; }
grep -q '^\[' "$T/dir.folded" && fail "-i DIR labels the files of one recording as several: $(head -2 "$T/dir.folded")"
n=$(awk '{s+=$NF} END{print s+0}' "$T/dir.folded")
[ "$n" -eq "$total" ] || fail "-i DIR: $n samples, the files hold $total"
grep -Eq '^cpu_demo;.*burn_a [0-9]+$' "$T/dir.folded" || fail "-i DIR: no cpu_demo stack"
"$REPORT" -i "$D" --header >"$T/dir.header" 2>&1 || fail "-i DIR --header failed"
grep -q '^# inputs: 3 files of one recording' "$T/dir.header" ||
	fail "-i DIR --header: $(grep '^# inputs' "$T/dir.header")"
# the timeline of -i DIR: a "recording files" track, a slice per file in
# time order, named by it, over at least its samples' span (the files
# overlap by the last drain's few ms: a second lane, "recording files (2)")
if "$REPORT" --help | grep -q -- '--timeline FILE' && command -v protoc >/dev/null; then
	"$REPORT" -i "$D" --timeline "$T/dir.pftrace" 2>"$T/tl.err" || { cat "$T/tl.err" >&2; fail "-i DIR --timeline failed"; }
	protoc --decode=perfetto.protos.Trace -I "$XPU_TOP/report/output" \
		"$XPU_TOP/report/output/perfetto_trace.proto" <"$T/dir.pftrace" >"$T/dir.txt" ||
		fail "protoc cannot decode the timeline of -i DIR"
	python3 "$XPU_TOP/tests/shell/timeline_check.py" <"$T/dir.txt" >"$T/dir.json" ||
		fail "timeline: $(cat "$T/dir.json")"
	python3 - "$T/dir.json" "$D" "$T" $(cat "$T/files") <<'PY' || fail "-i DIR --timeline: the files' track (above)"
import json, sys
got = json.load(open(sys.argv[1]))["files"]
d, t, names = sys.argv[2], sys.argv[3], sys.argv[4:]
if [g[0] for g in got] != names:
    sys.exit(f"recording files track: {[g[0] for g in got]}, want {names}")
for (name, start, end, path), want in zip(got, names):
    lo, hi = map(int, open(f"{t}/{want}.range").read().split())
    if path != f"{d}/{want}" or not (start <= lo and hi <= end):
        sys.exit(f"{name}: [{start}, {end}] {path}: want {d}/{want} over its samples [{lo}, {hi}]")
PY
fi
note "ok: 3 files of 6, each readable alone, $total samples, -i DIR as one recording"

#!/usr/bin/env bash
# End to end, a thread renamed after its first samples (rename_demo: its
# worker spins in spin_before() as "rename_demo", then prctl(PR_SET_NAME,
# "late-name") and spins in spin_after()): every output calls the thread by
# its later name, the name a user knows it by:
#  - --folded: the samples after the rename under "late-name";
#  - --timeline (decoded by protoc): the worker's thread track is named
#    late-name;
#  - --speedscope: the worker's profile is "late-name (pid P, tid T)", it is
#    the one the file opens on (the busiest), and its samples are in time
#    order: every spin_before sample before the first spin_after one.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
command -v protoc >/dev/null || skip "protoc not installed (protobuf-compiler, scripts/setup.sh)"
DEMO=$XPU_BUILD/tests/workloads/rename_demo
[ -x "$DEMO" ] || fail "$DEMO not built: run make tests-build"
PROTO_DIR=$XPU_TOP/report/output

"$RECORD" -F 999 -o "$T/run.data" -- "$DEMO" 300 >"$T/run.out" 2>"$T/run.err" ||
	{ cat "$T/run.err" >&2; fail "xpu-record exited $?"; }
tid=$(sed -nE 's/^rename_demo: worker tid ([0-9]+)$/\1/p' "$T/run.out")
[ -n "$tid" ] || fail "rename_demo printed no worker tid: $(cat "$T/run.out")"

report "$T/folded" -i "$T/run.data" --folded
before=$(folded_sum '^rename_demo;.*;spin_before$' <"$T/folded")
after=$(folded_sum '^late-name;.*;spin_after$' <"$T/folded")
note "worker: $before samples in spin_before as rename_demo, $after in spin_after as late-name"
[ "$before" -ge 5 ] && [ "$after" -ge 5 ] || skip "too few samples ($before, $after): machine too busy"

report "$T/tl.out" -i "$T/run.data" --timeline "$T/run.pftrace"
protoc --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" \
	<"$T/run.pftrace" >"$T/run.txt" || fail "protoc cannot decode the timeline"
name=$(awk -v tid="$tid" '/^ +tid: / { t = $2 } /^ +thread_name: / && t == tid { gsub(/"/, "", $2); print $2; exit }' "$T/run.txt")
note "timeline: thread $tid is named '$name'"
[ "$name" = late-name ] || fail "timeline names the renamed thread '$name', not late-name"

report "$T/ss.json" -i "$T/run.data" --speedscope -
python3 - "$T/ss.json" "$tid" <<'PY' || fail "--speedscope (above)"
import json, sys
doc, tid = json.load(open(sys.argv[1])), sys.argv[2]
frames = [f["name"] for f in doc["shared"]["frames"]]
ws = [i for i, p in enumerate(doc["profiles"]) if p["name"].endswith(f", tid {tid})")]
assert len(ws) == 1, [p["name"] for p in doc["profiles"]]
w = doc["profiles"][ws[0]]
assert w["name"].startswith("late-name ("), w["name"]
assert doc["activeProfileIndex"] == ws[0], (doc["activeProfileIndex"], ws[0])
leaf = [frames[s[-1]] for s in w["samples"]]
b = [i for i, f in enumerate(leaf) if f == "spin_before"]
a = [i for i, f in enumerate(leaf) if f == "spin_after"]
assert b and a and max(b) < min(a), f"not in time order: spin_before at {b}, spin_after at {a}"
print(f"# speedscope: {w['name']}, {len(w['samples'])} samples in time order")
PY
echo ok

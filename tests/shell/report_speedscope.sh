#!/usr/bin/env bash
# --speedscope against speedscope's published JSON schema (the npm package's
# dist/release/file-format-schema.json, fetched with `npm pack` once per
# build tree), on a gen_trace trace (CPU + GPU): valid, a profile per thread
# plus one for the GPU work, every stack's frame indexes inside the shared
# frames, and the weights adding up to --folded's total at the sampling
# period (nanoseconds).
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
SCHEMA_DIR=$XPU_BUILD/npm/speedscope-1.25.0
SCHEMA=$SCHEMA_DIR/package/dist/release/file-format-schema.json
if [ ! -s "$SCHEMA" ]; then
	command -v npm >/dev/null || skip "npm not installed: speedscope's schema comes from its npm package"
	mkdir -p "$SCHEMA_DIR"
	(cd "$SCHEMA_DIR" && npm pack --silent speedscope@1.25.0 >/dev/null 2>&1 &&
		tar xzf speedscope-1.25.0.tgz package/dist/release/file-format-schema.json) ||
		skip "npm pack speedscope@1.25.0 failed (no access to the npm registry?)"
fi
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed (scripts/setup.sh)"
tui_gen "$T/gpu.data" -n 2000 --gpu --freq 1000

"$REPORT" -i "$T/gpu.data" --speedscope "$T/out.json" 2>"$T/err" || fail "--speedscope exited $?: $(cat "$T/err")"
"$REPORT" -i "$T/gpu.data" --folded >"$T/folded" 2>/dev/null
python3 - "$SCHEMA" "$T/out.json" "$T/folded" <<'PY' || fail "--speedscope (above)"
import json, sys
import jsonschema
schema, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema)
frames = doc["shared"]["frames"]
names = [p["name"] for p in doc["profiles"]]
assert any(n.startswith("GPU work of ") for n in names), names
assert sum(1 for n in names if "tid" in n) >= 2, names
total = 0
for p in doc["profiles"]:
    assert len(p["samples"]) == len(p["weights"]), p["name"]
    assert abs(sum(p["weights"]) - p["endValue"]) <= len(p["weights"]), p["name"]
    for st in p["samples"]:
        assert st and all(0 <= i < len(frames) for i in st), p["name"]
    total += sum(p["weights"])
lines = [l for l in open(sys.argv[3]) if l.strip()]
folded = sum(float(l.rsplit(" ", 1)[1]) for l in lines)
period = 1e9 / 1000
assert abs(total / period - folded) <= len(lines), (total / period, folded)
assert any(f["name"].startswith("[GPU_Kernel]") for f in frames)
print(f"valid; {len(names)} profiles; {total / period:.0f} samples (folded {folded:.0f})")
PY
"$REPORT" -i "$T/gpu.data" --speedscope "$T/cpu.json" --cpu-only 2>/dev/null || fail "--speedscope --cpu-only failed"
grep -q '"GPU work of' "$T/cpu.json" && fail "--cpu-only has a GPU profile"
exit 0

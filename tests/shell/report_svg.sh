#!/usr/bin/env bash
# --svg: the flame graph is well-formed XML (xmllint), its "all" box holds
# the folded output's total, every box is as wide as its weight and lies
# inside its parent's box, names with <, > and & are escaped, and the view
# shows in the title. On gen_trace traces (CPU, and CPU + GPU).
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
command -v xmllint >/dev/null || skip "xmllint not installed (libxml2-utils, scripts/setup.sh)"
tui_gen "$T/gpu.data" -n 2000 --gpu

check() {	# VIEW-OPTION...: svg and folded of that view agree
	"$REPORT" -i "$T/gpu.data" "$@" --svg "$T/out.svg" 2>"$T/svg.err" || fail "--svg $* exited $?"
	"$REPORT" -i "$T/gpu.data" --folded "$@" >"$T/out.folded" 2>/dev/null
	xmllint --noout "$T/out.svg" || fail "--svg $*: not well-formed XML"
	python3 - "$T/out.svg" "$T/out.folded" <<'PY' || fail "--svg $*: geometry (above)"
import re, sys
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
total = sum(float(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.strip())
boxes = []
for g in root.find("s:g[@id='frames']", ns).findall("s:g", ns):
    t = g.find("s:title", ns).text
    m = re.match(r"(.*) \(([0-9.]+) samples, [0-9.]+ m?u?s, ([0-9.]+)%\)$", t)
    r = g.find("s:rect", ns)
    boxes.append((m.group(1), float(m.group(2)), float(r.get("x")), float(r.get("width")),
                  int(r.get("y")), float(m.group(3))))
name, w_all, x0, width_all, y_all, _ = boxes[0]
assert name == "all", name
# folded rounds each line, the tree does not: within a sample per line
lines = sum(1 for l in open(sys.argv[2]) if l.strip())
assert abs(w_all - total) <= lines, (w_all, total)
for n, w, x, width, y, pct in boxes:	# the title's % has 4 digits
    assert abs(width - pct / 100 * width_all) <= 0.00006 * width_all + 0.01, (n, pct, width)
# every box sits on a box one level down that contains it
levels = {}
for b in boxes:
    levels.setdefault(b[4], []).append(b)
for n, w, x, width, y, _ in boxes[1:]:
    below = levels.get(y + 16, [])
    assert any(bx - 0.02 <= x and x + width <= bx + bw + 0.02 for _, _, bx, bw, _, _ in below), n
print(f"{len(boxes)} boxes, all = {w_all:.0f} samples (folded {total:.0f})")
PY
}
check
grep -q '(CPU+GPU)</text>' "$T/out.svg" || fail "the title does not name the view"
check --cpu-only
grep -q '(CPU only)</text>' "$T/out.svg" || fail "--cpu-only: the title does not name the view"
check --gpu-only
grep -q 'GPU_Kernel' "$T/out.svg" || fail "--gpu-only: no GPU kernel boxes"
exit 0

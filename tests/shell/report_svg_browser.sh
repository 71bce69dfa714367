#!/usr/bin/env bash
# --svg in a browser: headless Chromium renders the flame graph of a
# gen_trace CPU + GPU trace to a PNG (the right size, not blank, every colour
# family of the trace's frames on it: CPU code, kernel, CUDA API, GPU work,
# the report's own grey), and runs its script: ?s=REGEX marks exactly the
# frames whose name matches and prints the right "Matched: P%", ?z=fN zooms
# (the frame fills the width, its ancestors stay as full-width bars, its
# children scale with it, everything else hides), and its handlers: a page
# clicks a box (zoom, the URL follows), hovers one (the details line),
# answers Ctrl-F's prompt (the search), presses Escape (all back). Then the
# structure of the SVG (elements, the controls, every frame with its parent,
# colour family, weight and name), and --diff's table, --folded lines and SVG
# structure for two gen_trace traces, must equal golden/svg/gen.txt
# (UPDATE_GOLDEN=1 rewrites it).
. "$(dirname "$0")/golden/tui/lib.sh"
. "$XPU_TOP/tests/shell/lib/chromium.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
need_chromium
tui_gen "$T/gpu.data" -n 1000 --gpu
tui_gen "$T/sync.data" -n 3000 --gpu --sync
"$REPORT" -i "$T/gpu.data" --svg - >"$T/gpu.svg" 2>/dev/null || fail "--svg exited $?"
FG() { python3 "$FLAMEGRAPH_PY" "$@"; }

# ---- the picture
chromium_png "$T/gpu.svg" "$T/gpu.png"
FG png "$T/gpu.png" >"$T/gpu.png.txt" || fail "cannot read $T/gpu.png"
cat "$T/gpu.png.txt"
grep -qx 'size 1200x800' "$T/gpu.png.txt" || fail "the screenshot is not 1200x800"
colours=$(awk '$1 == "colours" { print $2 }' "$T/gpu.png.txt")
[ "$colours" -ge 50 ] || fail "the screenshot has $colours colours: blank?"
# the smallest family here is the CUDA API frame, ~25 x 15 pixels
for fam in cpu:20000 kernel:2000 cuda-api:200 gpu:20 grey:10000; do
	n=$(png_family "$T/gpu.png.txt" "${fam%:*}")
	[ "$n" -ge "${fam#*:}" ] || fail "${fam%:*} frames: $n pixels in the screenshot, expected >= ${fam#*:}"
done
[ "$(png_family "$T/gpu.png.txt" python)" -lt 50 ] || fail "Python colours on a trace with no Python frame"

# ---- search: the frames the script marks, and its percentage
FG search "$T/gpu.svg" 'matmul|^do_sys' >"$T/search.want"
chromium_dom "file://$T/gpu.svg?s=matmul%7C%5Edo_sys" "$T/search.dom"
FG dom "$T/search.dom" >"$T/search.txt"
awk '$2 ~ /(^|,)match(,|$)/ { print "match " $1 }' "$T/search.txt" >"$T/search.got"
sed -n 's/^matched //p' "$T/search.txt" >>"$T/search.got"
diff -u "$T/search.want" "$T/search.got" || fail "?s=: the script marked other frames or another % (above)"
[ "$(grep -c '^match ' "$T/search.want")" -ge 3 ] || fail "the search matched too little to test"
grep -q 'fill=rgb(230,0,230)' "$T/search.txt" || fail "?s=: matches are not highlighted"
# the same %, from --folded's lines (rounded per line, so within 0.5%)
"$REPORT" -i "$T/gpu.data" --folded --no-comm 2>/dev/null | python3 -c '
import re, sys
rx, hit, tot = re.compile(sys.argv[1]), 0, 0
for l in sys.stdin:
    s, n = l.rsplit(" ", 1)
    tot += int(n); hit += int(n) if any(rx.search(f) for f in s.split(";")) else 0
got = float(re.search(r"([0-9.]+)%", open(sys.argv[2]).read()).group(1))
assert abs(100 * hit / tot - got) < 0.5, (100 * hit / tot, got)
print("folded: %.2f%%, the script: %.2f%%" % (100 * hit / tot, got))
' 'matmul|^do_sys' "$T/search.got" || fail "?s=: Matched % differs from --folded's"

# ---- the ic button: ?s=MATMUL&i=1 matches what matmul matches, ignoring case
FG search "$T/gpu.svg" 'MATMUL' i >"$T/ic.want"
[ "$(grep -c '^match ' "$T/ic.want")" -ge 2 ] || fail "MATMUL, ignoring case, matched too little to test"
chromium_dom "file://$T/gpu.svg?s=MATMUL&i=1" "$T/ic.dom"
FG dom "$T/ic.dom" >"$T/ic.txt"
grep -qx 'ic button on' "$T/ic.txt" || fail "?i=1: the ic button is not on"
awk '$2 ~ /(^|,)match(,|$)/ { print "match " $1 }' "$T/ic.txt" >"$T/ic.got"
sed -n 's/^matched //p' "$T/ic.txt" >>"$T/ic.got"
diff -u "$T/ic.want" "$T/ic.got" || fail "?s=MATMUL&i=1: the script marked other frames or another % (above)"
chromium_dom "file://$T/gpu.svg?s=MATMUL" "$T/case.dom"
FG dom "$T/case.dom" | grep -qx 'matched Matched: 0.00%' || fail "?s=MATMUL without i=1 matched frames (the search must be case-sensitive by default)"

# ---- the title names what the trace holds: CPU, GPU or both
tui_gen "$T/cpu.data" -n 300
"$REPORT" -i "$T/cpu.data" --svg "$T/cpu.svg" 2>/dev/null || fail "--svg of a CPU trace exited $?"
FG shape "$T/cpu.svg" >"$T/cpu.shape"
grep -q "^#title: .*(CPU)'$" "$T/cpu.shape" || fail "a CPU-only trace's title does not say CPU: $(grep '^#title' "$T/cpu.shape")"
FG shape "$T/gpu.svg" >"$T/gpu.shape0"
grep -q "^#title: .*(CPU+GPU)'$" "$T/gpu.shape0" || fail "a CPU + GPU trace's title does not say CPU+GPU"

# ---- --svg-by=thread: a root per thread, as flamegraph.pl draws --folded's
# comm-first lines (one thread per comm here): the same weights, within the
# rounding of --folded's counts (one per line)
"$REPORT" -i "$T/gpu.data" --svg "$T/byt.svg" --svg-by=thread 2>/dev/null || fail "--svg-by=thread exited $?"
"$REPORT" -i "$T/gpu.data" --folded 2>/dev/null >"$T/gpu.folded"
FG shape "$T/byt.svg" >"$T/byt.shape"
python3 - "$T/byt.shape" "$T/gpu.folded" <<'PY' || fail "--svg-by=thread: the thread roots differ from --folded's comms (above)"
import re, sys
got, want, lines = {}, {}, {}
for l in open(sys.argv[1]):
    m = re.match(r"f\d+\s+p=f0\s+d=1\s+\S+\s+([0-9.]+)\s+\S+\s+(.*) \(tid \d+\)$", l.rstrip())
    if m:
        got[m.group(2)] = got.get(m.group(2), 0) + float(m.group(1))  # GPU work of no thread: tid 0
for l in open(sys.argv[2]):
    s, n = l.rsplit(" ", 1)
    c = s.split(";")[0]
    want[c] = want.get(c, 0) + int(n)
    lines[c] = lines.get(c, 0) + 1
assert sorted(got) == sorted(want), (got, want)
for c in want:
    assert abs(got[c] - want[c]) <= lines[c], (c, got[c], want[c])
print("--svg-by=thread roots:", got)
PY
"$REPORT" -i "$T/gpu.data" --svg - --svg-by=rank >/dev/null 2>&1
[ $? -eq 2 ] || fail "--svg-by=rank is not a usage error"

# ---- zoom on tui_demo_backward
id=$(FG shape "$T/gpu.svg" | awk '$NF == "tui_demo_backward" { print $1; exit }')
[ -n "$id" ] || fail "no tui_demo_backward frame"
chromium_dom "file://$T/gpu.svg?z=$id" "$T/zoom.dom"
FG dom "$T/zoom.dom" >"$T/zoom.txt"
FG shape "$T/gpu.svg" >"$T/gpu.shape"
grep -qx 'unzoom button' "$T/zoom.txt" || fail "?z=: the Reset Zoom button is not shown"
python3 - "$T/gpu.shape" "$T/zoom.txt" "$id" <<'PY' || fail "?z=$id: wrong zoom (above)"
import re, sys
orig, parent = {}, {}
for l in open(sys.argv[1]):
    m = re.match(r"(f\d+)\s+p=(\S+)", l)
    if m:
        parent[m.group(1)] = m.group(2)
z = sys.argv[3]
anc, j = set(), parent[z]
while j != "-":
    anc.add(j); j = parent[j]
def under(i):
    while i != "-":
        if i == z:
            return True
        i = parent[i]
    return False
seen = {"parent": 0, "sub": 0, "hide": 0}
boxes = {}
for l in open(sys.argv[2]):
    m = re.match(r"(f\d+) (\S+) x=([0-9.]+) w=([0-9.]+)", l)
    if not m:
        continue
    i, cls, x, w = m.group(1), m.group(2).split(","), float(m.group(3)), float(m.group(4))
    boxes[i] = (x, w)
    if i in anc:
        assert "parent" in cls and "hide" not in cls and (x, w) == (10, 1180), (i, l)
        seen["parent"] += 1
    elif under(i):
        assert "hide" not in cls and "parent" not in cls, l
        seen["sub"] += 1
    else:
        assert "hide" in cls, l
        seen["hide"] += 1
assert boxes[z] == (10, 1180), boxes[z]
# children of the zoomed frame: side by side from its left edge, filling it
kids = sorted(boxes[i] for i in parent if parent[i] == z)
assert kids and abs(kids[0][0] - 10) < 0.02 and abs(sum(w for _, w in kids) - 1180) < 0.5, kids
assert seen["parent"] >= 3 and seen["hide"] >= 5, seen
print("zoom on", z, seen)
PY

# ---- names that are not ASCII (gen_trace --names: 2-, 3- and 4-byte
# characters, bytes that are not UTF-8, names longer than any box): the
# boxes' texts, as written (C) and after a zoom (the script), are the name
# when it fits, else its first characters (code points, as a reader counts
# them) and "..", never a character cut in two
tui_gen "$T/names.data" -n 3000 --gpu --names
"$REPORT" -i "$T/names.data" --svg "$T/names.svg" 2>/dev/null || fail "--svg of the names trace exited $?"
nid=$(FG shape "$T/names.svg" | awk '$NF ~ /^entry_/ { print $1; exit }')
[ -n "$nid" ] || fail "no entry_... frame in the names trace's SVG"
chromium_dom "file://$T/names.svg?z=$nid" "$T/names.dom"
FG dom "$T/names.dom" >"$T/names.txt"
python3 - "$T/names.svg" "$T/names.txt" <<'PY' || fail "the names trace's boxes (above)"
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
name = {}
for g in ET.parse(sys.argv[1]).getroot().iter(NS + "g"):
    if g.get("class") == "f":
        name[g.get("id")] = re.match(r"^(.*) \([0-9.]+ samples", g.find(NS + "title").text, re.S).group(1)
def fit(n, w):	# the C side's and the script's rule, in code points
    k = int((w - 6) // 7) if w > 21 else 0
    return n if k and len(n) <= k else (n[:k - 2] + ".." if k > 2 else "")
def check(where, boxes):
    cut = 0
    for i, w, text in boxes:
        assert text == fit(name[i], w), (where, i, w, text[:40], name[i][:40])
        cut += text.endswith("..") and any(c in name[i] for c in "\U0001f600\u2211")
    assert cut, (where, "no long non-ASCII name shortened")
    print(where, ":", len(boxes), "boxes,", cut, "long names shortened")
root = ET.parse(sys.argv[1]).getroot()
check("written", [(g.get("id"), float(g.find(NS + "rect").get("width")), g.find(NS + "text").text or "")
                  for g in root.iter(NS + "g") if g.get("class") == "f"])
zoomed = []
for l in open(sys.argv[2], encoding="utf-8"):
    m = re.match(r"(f\d+) (\S+) x=[0-9.]+ w=([0-9.]+) fill=\S+ text=(.*)$", l.rstrip("\n"))
    if m and "hide" not in m.group(2).split(","):
        zoomed.append((m.group(1), float(m.group(3)), m.group(4)))
check("zoomed", zoomed)
PY

# ---- the handlers, as a user drives them: a page that loads the SVG in a
# frame clicks a box, moves the pointer over one, answers Ctrl-F's prompt,
# presses Escape, and writes down what the SVG's script did
child=$(FG shape "$T/gpu.svg" | awk -v p="p=$id" '$2 == p { print $1; exit }')
[ -n "$child" ] || fail "tui_demo_backward has no child box"
sed -e "s/@ZOOM@/$id/" -e "s/@HOVER@/$child/" >"$T/harness.html" <<'HTML'
<!DOCTYPE html>
<html><body><iframe id="fg" src="gpu.svg" width="1200" height="800"></iframe><pre id="out"></pre>
<script>
var out = [];
function log(s) { out.push(s); document.getElementById('out').textContent = out.join('\n'); }
document.getElementById('fg').addEventListener('load', function () {
	try {
		var w = this.contentWindow, d = this.contentDocument;
		function state() {
			var r = [];
			d.querySelectorAll('g.f').forEach(function (g) {
				var b = g.querySelector('rect');
				r.push(g.id + ':' + g.getAttribute('class').replace(/ /g, '.') + ':' + b.getAttribute('x') + ':' + b.getAttribute('width'));
			});
			return r.join(' ');
		}
		log('before ' + state());
		d.getElementById('@ZOOM@').querySelector('rect').dispatchEvent(new w.MouseEvent('click', { bubbles: true }));
		log('clicked ' + state());
		log('url ' + w.location.search);
		d.getElementById('@HOVER@').querySelector('rect').dispatchEvent(new w.MouseEvent('mouseover', { bubbles: true }));
		log('details ' + d.getElementById('details').textContent);
		w.prompt = function () { return 'matmul|^do_sys'; };
		w.dispatchEvent(new w.KeyboardEvent('keydown', { key: 'f', ctrlKey: true, bubbles: true }));
		log('matched ' + d.getElementById('matched').textContent);
		log('url ' + w.location.search);
		w.dispatchEvent(new w.KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
		log('escaped ' + state());
		log('matched ' + d.getElementById('matched').textContent);
		w.prompt = function () { return 'MATMUL'; };
		w.dispatchEvent(new w.KeyboardEvent('keydown', { key: 'f', ctrlKey: true, bubbles: true }));
		log('case ' + d.getElementById('matched').textContent);
		d.getElementById('ic').dispatchEvent(new w.MouseEvent('click', { bubbles: true }));
		log('ic ' + d.getElementById('matched').textContent);
		log('url ' + w.location.search);
	} catch (e) { log('error ' + e); }
});
</script></body></html>
HTML
chromium_run --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom \
	"file://$T/harness.html" >"$T/harness.dom" || fail "chromium could not run $T/harness.html"
python3 - "$T/harness.dom" "$id" "$child" "$T/gpu.shape" "$T/search.want" "$T/ic.want" <<'PY' || fail "the handlers (above)"
import html, re, sys
dom, z, child, shape, want, icwant = sys.argv[1:]
m = re.search(r'<pre id="out">(.*?)</pre>', open(dom).read(), re.S)
assert m, "the page wrote nothing"
text = html.unescape(m.group(1))
assert "error" not in text, text
got = {}
for l in text.splitlines():
    k, _, v = l.partition(" ")
    got.setdefault(k, []).append(v)
def boxes(s):
    return {b.split(":")[0]: b.split(":")[1:] for b in s.split()}
before, clicked, escaped = (boxes(got[k][0]) for k in ("before", "clicked", "escaped"))
assert clicked[z] == ["f", "10.00", "1180.00"], clicked[z]
assert clicked["f0"][0] == "f.parent" and sum(v[0] == "f.hide" for v in clicked.values()) >= 5
assert got["url"][0] == "?z=" + z, got["url"]
name = [l.split(None, 6)[6] for l in open(shape) if l.startswith(child + " ")][0].strip()
assert got["details"][0].startswith(name + " ("), (got["details"], name)
wanted = [l.strip() for l in open(want) if l.startswith("Matched")][0]
assert got["matched"][0] == wanted, (got["matched"], wanted)
assert got["url"][1] == "?z=%s&s=matmul%%7C%%5Edo_sys" % z, got["url"]
assert escaped == before, "Escape did not restore the graph"
assert got["matched"][1] == "", got["matched"]
assert got["case"][0] == "Matched: 0.00%", got["case"]
wanted = [l.strip() for l in open(icwant) if l.startswith("Matched")][0]
assert got["ic"][0] == wanted, (got["ic"], wanted)
assert got["url"][2] == "?s=MATMUL&i=1", got["url"]
print("click zoomed on %s, hover: %s, Ctrl-F: %s, Escape restored %d boxes" %
      (z, got["details"][0], got["matched"][0], len(before)))
PY

# ---- the structure, against the golden file
{
	echo "### gpu.data --svg"
	cat "$T/gpu.shape"
	echo "### sync.data --svg --sync-wait"
	"$REPORT" -i "$T/sync.data" --svg - --sync-wait >"$T/sync.svg" 2>/dev/null || fail "--sync-wait --svg exited $?"
	FG shape "$T/sync.svg"
	for by in process thread; do
		echo "### gpu.data --svg --svg-by=$by"
		"$REPORT" -i "$T/gpu.data" --svg - --svg-by=$by >"$T/by-$by.svg" 2>/dev/null || fail "--svg-by=$by exited $?"
		FG shape "$T/by-$by.svg"
	done
	echo "### gpu.data --svg --gpu-only"
	"$REPORT" -i "$T/gpu.data" --svg - --gpu-only >"$T/gpuonly.svg" 2>/dev/null || fail "--gpu-only --svg exited $?"
	FG shape "$T/gpuonly.svg"
	# --diff on two gen_trace traces: the table, the difffolded lines, the
	# structure of the red/blue graph (names relative: run in $T)
	tui_gen "$T/gpu3.data" -n 3000 --gpu
	for args in "" "--diff-norm=tui_demo_io" "--folded" "--folded --diff-norm=none"; do
		echo "### --diff gpu.data gpu3.data $args"
		# shellcheck disable=SC2086
		(cd "$T" && "$REPORT" --diff gpu.data gpu3.data $args 2>/dev/null) || fail "--diff $args exited $?"
	done
	echo "### --diff gpu.data gpu3.data --svg"
	(cd "$T" && "$REPORT" --diff gpu.data gpu3.data --svg diff.svg 2>/dev/null) || fail "--diff --svg exited $?"
	FG shape "$T/diff.svg"
} >"$T/shape.txt" || fail "reading the SVG's structure failed"
G=$XPU_TOP/tests/shell/golden/svg/gen.txt
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$T/shape.txt" "$G" && echo "updated $G"
else
	diff -u "$G" "$T/shape.txt" || fail "the SVG's structure differs from $G (UPDATE_GOLDEN=1 rewrites it if the change is meant)"
fi
exit 0

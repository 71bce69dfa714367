#!/usr/bin/env bash
# Every text output over names that are not plain ASCII (gen_trace --names:
# thread and process names, kernel frames, GPU kernels and the command line
# with 2-, 3- and 4-byte characters, 0xff, sequences cut short, overlong
# forms, CESU-8 surrogates; a kernel frame and a GPU kernel longer than any
# box or buffer, so they are shortened everywhere):
#  - SVG (also --svg-by=thread), speedscope JSON, --dump, pprof's string
#    table (protoc with the upstream profile.proto; go tool pprof -raw when
#    Go is there) and the Perfetto trace's strings (protoc with the pinned
#    proto; build-ids are bytes) are strictly UTF-8, with U+FFFD where the
#    names were not, and never a surrogate;
#  - the SVG parses as XML, and a box's shortened name is its full name's
#    first characters; the long names are shortened in some box;
#  - --folded, --stdio (with -g) and --header may pass a name's bytes, but
#    every byte that is not UTF-8 there is one the names had: a cut never
#    falls inside a character (the long kernel frame is cut in --folded).
. "$(dirname "$0")/golden/tui/lib.sh"
[ -x "$REPORT" ] || fail "$REPORT not built: run make"
gen_need
note() { echo "# $*"; }
tui_gen "$T/n.data" -n 3000 --gpu --names
D=$T/n.data

# what the decoders refused, for the summary below (a check goes on after one)
problem() { echo "$*" | head -n 3 | tr '\n' ' ' >>"$T/problems"; echo >>"$T/problems"; }
: >"$T/problems"
run() {	# output file, args...: xpu-report must exit 0
	local out=$1; shift
	"$REPORT" -i "$D" "$@" >"$out" 2>"$out.err" || fail "xpu-report $* exited $?: $(cat "$out.err")"
}
run "$T/folded" --folded
run "$T/stdio" --stdio
run "$T/stdio_g" --stdio -g caller
run "$T/header" --header
run "$T/dump" --dump
run "$T/svg.out" --svg "$T/flame.svg"
run "$T/svgt.out" --svg "$T/thread.svg" --svg-by=thread
run "$T/ss.out" --speedscope "$T/ss.json"
texts=("$T/dump" "$T/flame.svg" "$T/thread.svg" "$T/ss.json")
if "$REPORT" --help | grep -q -- '--pprof'; then
	run "$T/pp.out" --pprof "$T/p.pb.gz"
	PROTO=${PPROF_PROTO:-/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto}
	if command -v protoc >/dev/null && [ -f "$PROTO" ]; then
		gzip -dc "$T/p.pb.gz" | protoc --decode=perftools.profiles.Profile \
			-I "$(dirname "$PROTO")" "$(basename "$PROTO")" >"$T/pprof.txt" 2>"$T/pprof.perr" ||
			problem "protoc cannot decode --pprof: $(cat "$T/pprof.perr")"
	else
		note "no protoc or profile.proto: pprof's strings not decoded"
	fi
	if command -v go >/dev/null; then
		HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod go tool pprof -symbolize=none -raw \
			"$T/p.pb.gz" >"$T/pprof.raw" 2>"$T/pprof.err" ||
			problem "go tool pprof -raw failed: $(cat "$T/pprof.err")"
		texts+=("$T/pprof.raw")
	else
		note "no go: go tool pprof not run"
	fi
	PD=$XPU_TOP/tests/data/perfetto
	run "$T/tl.out" --timeline "$T/t.pftrace"
	if command -v protoc >/dev/null; then
		protoc --decode=perfetto.protos.Trace -I "$PD" "$PD/perfetto_trace.proto" \
			<"$T/t.pftrace" >"$T/timeline.txt" 2>"$T/timeline.perr" ||
			problem "protoc cannot decode --timeline: $(cat "$T/timeline.perr")"
	fi
else
	note "xpu-report built without libprotobuf-c: no --pprof, no --timeline"
fi

python3 - "$T" "${texts[@]}" <<'PY' || fail "(above)"
import json, os, re, sys
import xml.etree.ElementTree as ET

T, texts = sys.argv[1], sys.argv[2:]
bad = {l.strip(): 1 for l in open(f"{T}/problems", errors="replace") if l.strip()}

def check(what, ok, why=""):	# a problem once, with how often
    if not ok:
        bad[f"{what}: {why}"] = bad.get(f"{what}: {why}", 0) + 1

def strict(path, data=None):
    data = open(path, "rb").read() if data is None else data
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(os.path.basename(path), False,
              f"not UTF-8 at byte {e.start}: {data[max(0, e.start - 20):e.end + 8]!r}")
        return None
    check(os.path.basename(path), not re.search("[\ud800-\udfff]", s), "a surrogate")
    return s

# the maximal subparts that are not UTF-8 (what a decoder replaces)
def units(data):
    out, i = [], 0
    while i < len(data):
        try:
            data[i:].decode("utf-8")
            break
        except UnicodeDecodeError as e:
            out.append(data[i + e.start:i + e.end])
            i += e.end
    return out

# what gen_trace --names wrote that is not UTF-8: a cut inside U+1F600 or
# U+2211 (the long names) would show as F0..., E2 88, none of these
NAMES_BAD = {b"\xff", b"\xfe", b"\xc0", b"\xaf", b"\xe0", b"\x80", b"\xed", b"\xa0",
             b"\xb3", b"\xbf", b"\xe2\x82", b"\xe4\xb8"}

for p in texts:
    if not p.endswith((".svg", ".json")):	# those below
        strict(p)

# SVG: XML, boxes shortened to their name's first characters
for name in ("flame.svg", "thread.svg"):
    s = strict(f"{T}/{name}")
    if s is None:
        continue
    try:
        root = ET.fromstring(s.encode())
    except ET.ParseError as e:
        check(name, False, f"not XML: {e}")
        continue
    ns = "{http://www.w3.org/2000/svg}"
    cut = 0
    for g in root.iter(ns + "g"):
        if g.get("class") != "f":
            continue
        title = g.find(ns + "title").text
        text = g.find(ns + "text").text or ""
        m = re.match(r"^(.*) \([0-9.]+ samples", title, re.S)
        full = m.group(1) if m else title
        if text.endswith("..") and text != full:
            check(name, full.startswith(text[:-2]), f"box {text!r} is not the start of {full[:60]!r}")
            cut += any(c in full for c in "\U0001f600\u2211")
        else:
            check(name, text in ("", full), f"box {text[:40]!r} for {full[:40]!r}")
    check(name, cut > 0, "no long non-ASCII name shortened in a box")
    if name == "thread.svg":
        check(name, "vu\ufffd" in s, "no U+FFFD for the thread name's 0xff")

# speedscope: JSON, U+FFFD for 0xff and the cut thread name
s = strict(f"{T}/ss.json")
if s is not None:
    doc = json.loads(s)
    names = [p["name"] for p in doc["profiles"]]
    check("ss.json", any("d\u00e9j\u00e0-vu\ufffd" in n for n in names), f"profiles {names}")
    check("ss.json", any(n.startswith("w\U0001f600\U0001f600\U0001f600\ufffd ") for n in names),
          f"profiles {names}")
    fr = [f["name"] for f in doc["shared"]["frames"]]
    check("ss.json", "do_syscall_\u20ac_\u2713_\ufffd_[k]" in fr, "frame do_syscall_...")
    check("ss.json", not any(re.search("[\ud800-\udfff]", n) for n in fr + names), "a surrogate")

# pprof and Perfetto as protoc prints them: every quoted string, unescaped
ESC = {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'", "\\": b"\\"}
def unquote(q):
    out, i = bytearray(), 0
    while i < len(q):
        c = q[i]
        if c != "\\":
            out += c.encode()
            i += 1
        elif q[i + 1] in "01234567":
            j = i + 1
            while j < len(q) and j < i + 4 and q[j] in "01234567":
                j += 1
            out.append(int(q[i + 1:j], 8))
            i = j
        elif q[i + 1] == "x":
            m = re.match(r"x([0-9a-fA-F]{1,2})", q[i + 1:])
            out.append(int(m.group(1), 16))
            i += 1 + len(m.group(0))
        else:
            out += ESC[q[i + 1]]
            i += 2
    return bytes(out)

QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
for name, skip in (("pprof.txt", None), ("timeline.txt", "build_ids")):
    path = f"{T}/{name}"
    if not os.path.exists(path) or not os.path.getsize(path):
        continue
    stack, n = [], 0
    for line in open(path, encoding="ascii"):
        line = line.strip()
        if line.endswith("{"):
            stack.append(line[:-1].strip())
            continue
        if line == "}":
            stack.pop()
            continue
        if skip in stack:
            continue
        for q in QUOTED.findall(line):
            n += 1
            b = unquote(q)
            try:
                b.decode("utf-8")
            except UnicodeDecodeError:
                check(name, False, f"a {line.split(':')[0]} not UTF-8: {b[:60]!r}")
    check(name, n > 0, "no strings")

# folded, tables, header: bytes may pass, cuts fall between characters
for name in ("folded", "stdio", "stdio_g", "header"):
    data = open(f"{T}/{name}", "rb").read()
    odd = sorted(set(units(data)) - NAMES_BAD)
    check(name, not odd, f"bytes no name had (a cut inside a character?): {odd[:5]}")
folded = open(f"{T}/folded", "rb").read()
leaf = [f for l in folded.split(b"\n") for f in l.split(b";") if f.startswith(b"nvidia_ioctl_")]
check("folded", leaf and all(len(f) < 13 + 4 * 1200 for f in leaf), "the long kernel frame is not cut")

for b, n in bad.items():
    print("FAIL:", b, f"({n} times)" if n > 1 else "", file=sys.stderr)
print(f"# {len(texts) + 6} outputs checked, {sum(bad.values())} problems")
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# End to end, Python names that are not UTF-8 as the interpreter holds them:
# a function whose name (and qualified name) and file name carry a lone
# surrogate, as a file name decoded with surrogateescape does, beside 2- and
# 4-byte characters. The recorder reads the str objects from the
# interpreter's memory (record/python/python.c); a lone surrogate must become one
# U+FFFD there, never CESU-8 (ED B3 BF), which is not UTF-8. Checked: the
# PY_CODE record as --dump shows it, --folded's frame (bytes as recorded),
# and --speedscope, which must be strictly UTF-8 and name the function.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
py=
for p in /usr/bin/python3.1[0-3]; do
	[ -x "$p" ] && [ ! -L "$p" ] && py=$p && break
done
[ -n "$py" ] || skip "no CPython 3.10-3.13 in /usr/bin"

cat >"$T/names.py" <<'PY'
import time

def spin(seconds):
    end, x = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        for i in range(20000):
            x += i
    return x

# \udcff: what surrogateescape makes of a 0xff byte in a file name
names = {"co_name": "spin_\udcff\u00e9\U0001f600", "co_filename": "/tmp/names_\udcff.py"}
if hasattr(spin.__code__, "co_qualname"):
    names["co_qualname"] = names["co_name"]
spin.__code__ = spin.__code__.replace(**names)
spin(1.5)
print("names: done")
PY
"$RECORD" -o "$T/n.data" -F 499 --no-gpu -- "$py" "$T/names.py" >"$T/n.out" 2>"$T/n.err" ||
	{ cat "$T/n.err" >&2; fail "xpu-record failed"; }
grep -q '^names: done' "$T/n.out" || fail "the workload did not finish: $(cat "$T/n.out")"
report "$T/n.folded" -i "$T/n.data" --folded
report "$T/n.dump" -i "$T/n.data" --dump
report "$T/n.out2" -i "$T/n.data" --speedscope "$T/n.json"
python3 - "$T/n.folded" "$T/n.dump" "$T/n.json" <<'PY' || fail "(above)"
import json, re, sys
folded, dump, ss = (open(p, "rb").read() for p in sys.argv[1:])
R = "\ufffd".encode()
want = b"py::spin_" + R + "\u00e9\U0001f600".encode() + b":/tmp/names_" + R + b".py"
n = sum(int(l.rsplit(b" ", 1)[1]) for l in folded.splitlines() if want in l)
assert n >= 100, f"only {n} samples under {want!r}"
assert b"\xed\xb3\xbf" not in folded, "CESU-8 (ED B3 BF) in --folded"
assert b"\\xed\\xb3\\xbf" not in dump, "CESU-8 in the PY_CODE records (--dump)"
dump.decode("utf-8")
doc = json.loads(ss.decode("utf-8"))
frames = [f["name"] for f in doc["shared"]["frames"]]
assert any(f.startswith("py::spin_\ufffd\u00e9\U0001f600:/tmp/names_\ufffd.py") for f in frames), \
    [f for f in frames if "spin" in f]
assert not any(re.search("[\ud800-\udfff]", f) for f in frames), "a surrogate in speedscope"
print(f"# {n} samples in py::spin_\\ufffd..., no CESU-8")
PY

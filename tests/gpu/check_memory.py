# SPDX-License-Identifier: MIT
"""xpu-report --gpu-memory against what torch itself said (GPU machine):

  check_memory.py torch  BIN DATA JSON SRC    memory_torch.py's holders
  check_memory.py gpt2   BIN DATA JSON SRC    memory_gpt2.py's training
  check_memory.py attach BIN DATA RESERVED    an attach to memory_gpt2.py

BIN holds xpu-report; DATA is the trace; JSON the program's own line
(torch.cuda's figures and its _snapshot() of the live blocks, with the
monotonic clock then); SRC the program's source (its lines are found in
it). Prints "ok ..." or "FAIL ..." per check; exit 0 all passed, 1 not.

The live set "at the end of the work" is xpu-report's at the JSON's
monotonic time (--time T, T from the trace's first timestamped record,
which --dump gives): the program sleeps after its snapshot, before the
interpreter's teardown frees everything.
"""
import json
import re
import subprocess
import sys

failed = False


def ok(cond, what):
    global failed
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    failed |= not cond


def near(got, want, pct=1.0):
    return want > 0 and abs(got - want) <= want * pct / 100.0


def report(bin_dir, data, *args):
    r = subprocess.run([bin_dir + "/xpu-report", "-i", data] + list(args),
                       capture_output=True, text=True)
    if r.returncode:
        print("xpu-report %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r.stdout


def folded(text):
    """[(frames, bytes)] of a --folded output."""
    rows = []
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            rows.append((stack.split(";"), int(n)))
    return rows


def header_peaks(text):
    """(peak allocated, peak reserved) bytes of the first process's device."""
    a = re.search(r"peak allocated .*\((\d+) bytes\)", text)
    r = re.search(r"peak reserved .*\((\d+) bytes\)", text)
    return (int(a.group(1)) if a else -1, int(r.group(1)) if r else -1)


def dump_info(bin_dir, data):
    """The first record's time (ns) and the GPU_BLOCK records as
    (time, op, address, size) from --dump."""
    first, blocks = None, []
    out = subprocess.run([bin_dir + "/xpu-report", "-i", data, "--dump"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.search(r" time=(\d+)", line)
        if not m:
            continue
        t = int(m.group(1))
        if t and (first is None or t < first):
            first = t
        if line.startswith("GPU_BLOCK "):
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            blocks.append((t, f["op"], int(f["ptr"], 16), int(f["size"])))
    return first or 0, sorted(blocks)


def line_of(src, marker):
    for i, text in enumerate(open(src), 1):
        if marker in text:
            return i
    raise SystemExit("%s: no line with %r" % (src, marker))


def py_bytes(rows, pred):
    """Bytes of the stacks with a Python frame pred(frame) is true of."""
    return sum(n for fr, n in rows if any(f.startswith("py::") and pred(f) for f in fr))


def total_of(stdio):
    m = re.search(r"# Total: (\d+) bytes", stdio)
    return int(m.group(1)) if m else -1


def at_end(bin_dir, data, j):
    first, blocks = dump_info(bin_dir, data)
    t = (j["mono_ns"] - first) / 1e9
    return t, first, blocks


def check_torch(bin_dir, data, j, src):
    hdr = report(bin_dir, data, "--header")
    peak, reserved = header_peaks(hdr)
    ok(near(peak, j["max_allocated"]), "peak allocated %d, torch.cuda.max_memory_allocated() %d"
       % (peak, j["max_allocated"]))
    ok(near(reserved, j["max_reserved"]), "peak reserved %d, torch.cuda.max_memory_reserved() %d"
       % (reserved, j["max_reserved"]))
    rows = folded(report(bin_dir, data, "--gpu-memory", "--folded"))
    for fn, size in j["sizes"].items():
        got = py_bytes(rows, lambda f, fn=fn: f.startswith("py::%s:" % fn))
        ok(near(got, size), "at the peak, under %s(): %d bytes, it holds %d" % (fn, got, size))
    t, _, _ = at_end(bin_dir, data, j)
    leak = report(bin_dir, data, "--gpu-memory=leak", "--time", "0,%.6f" % t, "--folded")
    lrows = folded(leak)
    want = sum(b.get("requested", b["size"]) for b in j["live_end"])
    got = sum(n for _, n in lrows)
    ok(got == want, "live at the end of the work (%.3f s): %d bytes, torch's snapshot %d" % (t, got, want))
    line = line_of(src, "leaked.append(")
    got = py_bytes(lrows, lambda f: f.startswith("py::leak_cache:") and f.endswith(":%d" % line))
    ok(near(got, j["sizes"]["leak_cache"]), "the leak under leak_cache() line %d: %d bytes of %d"
       % (line, got, j["sizes"]["leak_cache"]))
    lhdr = report(bin_dir, data, "--header", "--gpu-memory=leak", "--time", "0,%.6f" % t)
    named = [l for l in lhdr.splitlines() if "leak_cache:%d" % line in l and "block" in l]
    ok(bool(named), "--header names the leak by its line: %s" % (named[0].strip() if named else "none"))


def check_gpt2(bin_dir, data, j, src):
    hdr = report(bin_dir, data, "--header")
    peak, reserved = header_peaks(hdr)
    ok(near(peak, j["max_allocated"]), "peak allocated %d, torch.cuda.max_memory_allocated() %d"
       % (peak, j["max_allocated"]))
    ok(near(reserved, j["max_reserved"]), "peak reserved %d, torch.cuda.max_memory_reserved() %d"
       % (reserved, j["max_reserved"]))
    lines = {k: line_of(src, "# %s_LINE" % k) for k in ("MODEL", "FORWARD", "BACKWARD", "STEP")}
    base = src.rsplit("/", 1)[-1]

    def under(rows, k):
        tail = "%s:%d" % (base, lines[k])
        return py_bytes(rows, lambda f: f.endswith(tail))
    rows = folded(report(bin_dir, data, "--gpu-memory", "--folded"))
    total = sum(n for _, n in rows)
    got = {k: under(rows, k) for k in lines}
    print("at the peak (%d bytes): %s" % (total, ", ".join("%s line %d %d" % (k.lower(), lines[k], v)
                                                           for k, v in got.items())))
    ok(near(got["MODEL"], j["param_bytes"]), "parameters under line %d: %d bytes, torch's %d"
       % (lines["MODEL"], got["MODEL"], j["param_bytes"]))
    ok(got["STEP"] >= 2 * j["param_bytes"] * 0.99,
       "optimizer state under opt.step() line %d: %d bytes (AdamW's two moments: %d)"
       % (lines["STEP"], got["STEP"], 2 * j["param_bytes"]))
    ok(got["FORWARD"] > 0.1 * total, "activations under the forward line %d: %d bytes (%.0f%% of the peak)"
       % (lines["FORWARD"], got["FORWARD"], 100.0 * got["FORWARD"] / max(total, 1)))
    # block by block: the trace's live set at the end against _snapshot()
    t, first, blocks = at_end(bin_dir, data, j)
    live = {}
    for bt, op, addr, size in blocks:
        if bt > j["mono_ns"]:
            continue
        if op == "1":
            live[addr] = size
        elif op == "2":
            live.pop(addr, None)
    # a block's bytes in the trace are the size asked for (the probe's):
    # the snapshot's requested_size, its size being the allocator's rounding
    snap = {b["address"]: b.get("requested", b["size"]) for b in j["live_end"]}
    missing = [a for a in snap if a not in live]
    wrong = [a for a in snap if a in live and live[a] != snap[a]]
    extra = [a for a in live if a not in snap]
    ok(not missing and not wrong, "block by block at the end: %d live in _snapshot(), %d missing, "
       "%d of another size, %d in the trace only" % (len(snap), len(missing), len(wrong), len(extra)))
    ok(not extra, "no block live in the trace that _snapshot() does not have (%d)" % len(extra))
    stdio = report(bin_dir, data, "--gpu-memory", "--time", "%.6f" % t, "--stdio")
    want = sum(snap.values())
    ok(total_of(stdio) == want, "--gpu-memory --time %.3f: %d bytes, _snapshot()'s %d"
       % (t, total_of(stdio), want))


def check_attach(bin_dir, data, reserved):
    hdr = report(bin_dir, data, "--header")
    m = re.search(r"before the attach: .* in use on the device", hdr)
    ok(bool(m), "the baseline: %s" % (m.group(0) if m else "no 'before the attach' line"))
    unk = re.search(r"frees of unknown pointers: (\d+)", hdr)
    print("header: %s" % (unk.group(0) if unk else "no unknown-free line"))
    rows = folded(report(bin_dir, data, "--gpu-memory=alloc", "--folded"))
    py = sum(n for fr, n in rows if any(f.startswith("py::step:") for f in fr))
    total = sum(n for _, n in rows)
    ok(py > 0 and py >= 0.9 * total, "allocations after the attach: %d bytes, %d under step()"
       % (total, py))
    print("torch's memory_reserved() when ready: %d" % reserved)


def main():
    mode, bin_dir, data = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "attach":
        check_attach(bin_dir, data, int(sys.argv[4]))
    else:
        j = json.loads(open(sys.argv[4]).read().strip().splitlines()[-1])
        (check_torch if mode == "torch" else check_gpt2)(bin_dir, data, j, sys.argv[5])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

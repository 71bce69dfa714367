# SPDX-License-Identifier: MIT
"""Checks of CUDA graph capture sites (issue 12) for tests/gpu/graph.sh.

check_graph.py demo|torch DIR: DIR holds NAME.{both,capture,launch}.folded
(--gpu-only --folded with each --graph-attribution) and NAME.header.

demo (graph_demo.cu): per GPU leaf, >= 99% of its weight where it belongs:
launch: under replay_site and cudaGraphLaunch; capture: under its capture
function (capture_site, build_site) then [graph replay], no replay_site;
both: replay_site ... cudaGraphLaunch;[graph replay] ... capture function.
torch (compile_demo.py, torch.compile reduce-overhead): replayed work exists,
>= 95% of it finds its capture site, >= 95% of that sits under Python
frames; launch shows no [graph replay]; totals equal across the modes.
Both: --header's "capture site found" line >= 99% (demo) / 95% (torch).
Exit 0 when all pass."""
import re
import sys

fails = 0


def check(ok, msg):
    global fails
    print(("ok    " if ok else "FAIL  ") + msg)
    if not ok:
        fails += 1


def load(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        out.append((stack.split(";"), float(count)))
    return out


def share(rows, leaf, pred):
    tot = sum(w for f, w in rows if f[-1] == leaf)
    good = sum(w for f, w in rows if f[-1] == leaf and pred(f))
    return tot, (good / tot if tot else 0.0)


def has(frames, prefix):
    return any(x.startswith(prefix) for x in frames)


def idx(frames, prefix):
    for i, x in enumerate(frames):
        if x.startswith(prefix):
            return i
    return -1


def header_pct(path):
    for line in open(path):
        m = re.search(r"capture site found for (\d+) records \(([\d.]+)% of replayed time\)", line)
        if m:
            return int(m.group(1)), float(m.group(2))
    return 0, 0.0


def demo(d):
    rows = {m: load(f"{d}/graph.{m}.folded") for m in ("both", "capture", "launch")}
    leaves = {"[GPU_Kernel]cap_a(long)": "capture_site(", "[GPU_Kernel]cap_b(long)": "capture_site(",
              "[GPU_Memset]": "capture_site(", "[GPU_Kernel]built_c(long)": "build_site("}
    for leaf, site in leaves.items():
        tot, s = share(rows["launch"], leaf, lambda f: has(f, "replay_site(") and f[-2] == "cudaGraphLaunch")
        check(tot > 0 and s >= 0.99, f"launch:  {leaf}: {100 * s:.1f}% of {tot:.0f} under replay_site;cudaGraphLaunch")
        tot, s = share(rows["capture"], leaf, lambda f: has(f, site) and f[-2] == "[graph replay]"
                       and not has(f, "replay_site("))
        check(tot > 0 and s >= 0.99, f"capture: {leaf}: {100 * s:.1f}% of {tot:.0f} under {site[:-1]}, then [graph replay]")
        tot, s = share(rows["both"], leaf, lambda f: 0 <= idx(f, "replay_site(") < idx(f, "[graph replay]") < idx(f, site))
        check(tot > 0 and s >= 0.99, f"both:    {leaf}: {100 * s:.1f}% of {tot:.0f} under replay_site ... [graph replay] ... {site[:-1]}")
    created = 0
    for line in open(f"{d}/graph.header"):
        m = re.search(r"graph nodes: (\d+) created, (\d+) cloned", line)
        if m:
            created, cloned = int(m.group(1)), int(m.group(2))
    # 3 captured + 1 added; the copies made by cudaGraphClone and the three
    # instantiations are clones, not capture sites with stacks of their own
    check(created == 4, f"--header: {created} nodes created (4: instantiation and clone copies not counted)")
    n, pct = header_pct(f"{d}/graph.header")
    check(pct >= 99.0, f"--header: capture site found for {n} records, {pct}% of replayed time (>= 99%)")


def torch(d):
    rows = {m: load(f"{d}/compile.{m}.folded") for m in ("both", "capture", "launch")}
    tot = {m: sum(w for _, w in r) for m, r in rows.items()}
    check(abs(tot["both"] - tot["launch"]) <= 0.01 * tot["launch"] + 5 and
          abs(tot["capture"] - tot["launch"]) <= 0.01 * tot["launch"] + 5,
          f"GPU totals agree across modes: {tot}")
    rep = [(f, w) for f, w in rows["capture"] if "[graph replay]" in f]
    r = sum(w for _, w in rep)
    known = sum(w for f, w in rep if "[unknown capture site]" not in f)
    py = sum(w for f, w in rep if "[unknown capture site]" not in f and any(x.startswith("py::") for x in f))
    check(r > 0, f"capture: replayed GPU work present ({r:.0f} samples)")
    check(r > 0 and known / r >= 0.95, f"capture: {100 * known / max(r, 1):.1f}% of replayed work has its capture site")
    check(known > 0 and py / known >= 0.95, f"capture: {100 * py / max(known, 1):.1f}% of it under Python frames of the capture")
    check(not any("[graph replay]" in f for f, _ in rows["launch"]), "launch: no [graph replay] frame")
    rb = sum(w for f, w in rows["both"] if "[graph replay]" in f)
    check(abs(rb - r) <= 0.01 * r + 5, f"both: replayed work {rb:.0f} = capture's {r:.0f}")
    n, pct = header_pct(f"{d}/compile.header")
    check(pct >= 95.0, f"--header: capture site found for {n} records, {pct}% of replayed time (>= 95%)")
    tops = sorted(((w, ";".join(f[-6:])) for f, w in rep), reverse=True)[:5]
    for w, s in tops:
        print(f"      {w:8.0f}  ...;{s}")


if __name__ == "__main__":
    {"demo": demo, "torch": torch}[sys.argv[1]](sys.argv[2])
    sys.exit(1 if fails else 0)

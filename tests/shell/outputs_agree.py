#!/usr/bin/env python3
# Every output tells the same truth: for one trace and each view, the total
# weight of every output of xpu-report, read back by that output's own
# consumer where there is one, equals --folded's.
#
#   folded      the sum of the counts (each line rounded)
#   stdio       "# Total: N samples" (the total rounded); the sum of the
#               Samples column of --no-children (integers, as folded's)
#   svg         the "all" box: "all (X samples, ...)" (two decimals): the
#               unrounded total the others are held to
#   pprof       go tool pprof -raw: the samples/count column (integers that
#               sum to the total rounded, as folded's) and every
#               KIND/nanoseconds column, each against its
#               own view's total (cpu against --cpu-only, ...)
#   speedscope  the weights of every profile (nanoseconds)
#   timeline    protoc-decoded (timeline_check.py): CPU samples + the time of
#               the GPU and CUDA sync slices (views with GPU work) + the off-CPU
#               slices' "off-CPU ns" (views with off-CPU time), where --timeline
#               takes the view
#   diff        --diff T T: the old and new columns of --folded, the --svg "all"
#
# The GPU memory views (--gpu-memory[=MODE], with --time T) weigh bytes:
# stdio's total and Bytes column, the svg's "all (X bytes", pprof's
# *_space/bytes column (and *_objects/count against the table's blocks),
# speedscope's weights of unit "bytes"; the timeline does not take them.
#
# Usage: outputs_agree.py XPU_REPORT TRACE NAME VIEW... (VIEW: "merged" or a
# report option: --cpu-only, --gpu-only, --wall, --off-cpu, --gpu-idle,
# --sync-wait, --gpu-memory...; a view of several words is one argument). Prints a line per (view, output); exits 1 on a disagreement.
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

report, trace, name = sys.argv[1:4]
views = sys.argv[4:]
here = os.path.dirname(os.path.abspath(__file__))
proto_dir = os.path.join(os.path.dirname(here), "..", "report", "output")
tmp = tempfile.mkdtemp(prefix="agree.", dir=os.environ.get("T"))
errors = []

# pprof sample type -> the view holding only that kind of weight
KIND_VIEW = {"cpu": "--cpu-only", "gpu_time": "--gpu-only", "off_cpu": "--off-cpu",
             "gpu_idle": "--gpu-idle", "sync_wait": "--sync-wait"}
# which slices of the timeline a view's weight is made of
VIEW_SLICES = {"merged": ("gpu", "sync"), "--gpu-only": ("gpu", "sync"), "--cpu-only": (),
               "--wall": ("offcpu",), "--off-cpu": ("offcpu",)}


def run(args, binary=False):
    p = subprocess.run([report] + args, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"xpu-report {' '.join(args)} exited {p.returncode}: "
                           f"{p.stderr.decode(errors='replace').strip()}")
    return p.stdout if binary else p.stdout.decode(errors="replace")


def vargs(view):
    return [] if view == "merged" else view.split()


def folded_total(text, col=-1):
    t, n = 0, 0
    for line in text.splitlines():
        if line.strip():
            t += int(line.split()[col])
            n += 1
    return t, n


def svg_total(text):
    m = re.search(r"<title>all \(([0-9.]+) (?:samples|bytes)", text)
    if not m:
        raise RuntimeError("no 'all' box in the SVG")
    return float(m.group(1))


def check(view, output, got, want, tol):
    ok = abs(got - want) <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {name} {view:12s} {output:22s} {got:14.3f}  want "
          f"{want:.3f} +- {tol:.3f}")
    if not ok:
        errors.append(f"{name} {view} {output}: {got:.3f}, want {want:.3f}")


header = run(["-i", trace, "--header"])
freq = float(re.search(r"sample_freq: *([0-9.]+)", header).group(1))
totals = {}    # view -> unrounded total (svg)


def view_total(view):
    if view not in totals:
        totals[view] = svg_total(run(["-i", trace, "--svg", "-"] + vargs(view)))
    return totals[view]


have_go = subprocess.run(["sh", "-c", "command -v go"], capture_output=True).returncode == 0
have_protoc = subprocess.run(["sh", "-c", "command -v protoc"], capture_output=True).returncode == 0
pprof_built = "--pprof FILE" in run(["--help"])

for view in views:
    x = view_total(view)
    exact = 0.02 + 1e-6 * x if not view.startswith("--gpu-memory") else 0.5     # bytes: whole
    folded, nlines = folded_total(run(["-i", trace, "--folded"] + vargs(view)))
    # CPU samples weigh 1 each: nothing to round. Other views' weights are
    # fractions, whatever the total's two decimals look like (a --wall total
    # of 1242.998 shows as 1243.00); folded's integer lines add up to the
    # total rounded (largest remainders), never less by a line's rounding
    whole = view == "--cpu-only"
    rounded = 0 if whole else 0.5 + exact
    check(view, "folded", folded, x, rounded)
    mem = view.startswith("--gpu-memory")
    stdio = run(["-i", trace, "--stdio"] + vargs(view))
    m = re.search(r"^# Total: ([0-9]+) (?:samples|bytes)", stdio, re.M)
    check(view, "stdio", float(m.group(1)) if m else -1, x, 0.5)
    blocks = re.search(r"^# Total: [0-9]+ bytes \(.*\) in ([0-9]+) blocks", stdio, re.M)
    if mem and not blocks:
        errors.append(f"{name} {view} stdio: no blocks in its Total line")
    # the Samples column of the flat table: the rows' self weights as
    # integers, the column summing to the total as folded's lines do
    col = 0
    for line in run(["-i", trace, "--stdio", "--no-children"] + vargs(view)).splitlines():
        f = line.split()
        if len(f) > 2 and not line.startswith("#") and f[0].endswith("%"):
            col += int(f[1])
    check(view, "stdio Samples column", col, x, rounded)

    if pprof_built and have_go:
        pb = os.path.join(tmp, "p.pb.gz")
        run(["-i", trace, "--pprof", pb] + vargs(view))
        raw = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-raw", pb],
                             capture_output=True, env=dict(os.environ, HOME=tmp,
                                                           GOCACHE=os.path.join(tmp, "gocache")))
        if raw.returncode != 0:
            errors.append(f"{name} {view} pprof: go tool pprof -raw failed: {raw.stderr[-300:]}")
        else:
            lines = raw.stdout.decode().splitlines()
            i = lines.index("Samples:")
            cols = [c.split("/")[0] for c in lines[i + 1].replace("[dflt]", "").split()]
            sums = [0] * len(cols)
            for line in lines[i + 2:]:
                if line.startswith("Locations"):
                    break
                m = re.match(r"^\s+(-?[0-9]+(?:\s+-?[0-9]+)*):", line)
                if m:
                    vals = [int(v) for v in m.group(1).split()]
                    if len(vals) != len(cols):
                        raise RuntimeError(f"pprof -raw: {len(vals)} values in {line!r}")
                    sums = [a + b for a, b in zip(sums, vals)]
            if mem:     # Go's heap profile: objects, space
                check(view, f"pprof {cols[1]}", sums[1], x, exact)
                if blocks:
                    check(view, f"pprof {cols[0]}", sums[0], int(blocks.group(1)), 0)
            else:
                check(view, "pprof samples/count", sums[0], x, rounded)	# apportioned as folded
            for c, s in zip(cols[1:], sums[1:] if not mem else []):
                check(view, f"pprof {c}", s * freq / 1e9, view_total(KIND_VIEW[c]),
                      0.02 + 1e-6 * x)

    ss = json.loads(run(["-i", trace, "--speedscope", "-"] + vargs(view)))
    w = 0.0
    for p in ss["profiles"]:
        ws = p["weights"] if p["type"] == "sampled" else []
        w += sum(ws) * (freq / 1e9 if p["unit"] == "nanoseconds" else 1)
    check(view, "speedscope", w, x, exact)

    if pprof_built and have_protoc and view in VIEW_SLICES:
        pf = os.path.join(tmp, "t.pftrace")
        run(["-i", trace, "--timeline", pf] + vargs(view))
        dec = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", proto_dir,
                              os.path.join(proto_dir, "perfetto_trace.proto")],
                             stdin=open(pf, "rb"), capture_output=True, check=True)
        chk = subprocess.run([sys.executable, os.path.join(here, "timeline_check.py")],
                             input=dec.stdout, capture_output=True)
        if chk.returncode != 0:
            errors.append(f"{name} {view} timeline: {chk.stdout.decode()[-300:]}")
        else:
            s = json.loads(chk.stdout)
            ns = 0
            if "gpu" in VIEW_SLICES[view]:
                ns += sum(s["gpu_ns"])
            if "sync" in VIEW_SLICES[view]:     # a sync's own time is GPU work too
                ns += s["sync_ns"]
            if "offcpu" in VIEW_SLICES[view]:
                ns += s["offcpu_arg_ns"]     # a slice may span several blocks
            check(view, "timeline", s["samples"] + ns * freq / 1e9, x, exact)

    d = run(["--diff", trace, trace, "--folded"] + vargs(view))
    old, n = folded_total(d, -2)
    new, _ = folded_total(d, -1)
    check(view, "diff --folded (old)", old, x, rounded)	# the same trace: scale 1
    check(view, "diff --folded (new)", new, x, rounded)
    check(view, "diff --svg", svg_total(run(["--diff", trace, trace, "--svg", "-"] + vargs(view))),
          x, exact)

if errors:
    print("\n".join(["disagreements:"] + errors))
    sys.exit(1)

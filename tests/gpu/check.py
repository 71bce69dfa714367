# SPDX-License-Identifier: MIT
"""Checks xpu-report --folded output against what a GPU program says it did.

  python3 check.py demo   FOLDED FREQ EXPECT_FILE [HEADER]
  python3 check.py torch  FOLDED FREQ [HEADER]
  python3 check.py nvtx   FOLDED PLAIN_FOLDED HEADER OUT

Folded format (xpu-report, documented in the report's man page / issue 3):
root first, frames joined by ';', a space, a count; GPU work is the leaf
frame, "[GPU_Kernel]<demangled name>", "[GPU_Memcpy HtoD]", "[GPU_Memset]",
directly above the CUDA API frame that caused it (e.g. "cudaLaunchKernel").
GPU time is counted in samples at the recording frequency:
samples = ns * FREQ / 1e9. Prints one line per check; exit 1 if any failed.
"""
import re
import sys

failures = 0


def check(ok, msg):
    global failures
    print(("ok    " if ok else "FAIL  ") + msg)
    if not ok:
        failures += 1


def read_folded(path):
    stacks = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            try:
                stacks.append((stack.split(";"), float(count)))
            except ValueError:
                pass
    return stacks


def is_gpu(frame):
    return frame.startswith("[GPU_")


API_RE = re.compile(r"^(cuda|cu)[A-Z]")


def gpu_summary(stacks):
    """Total GPU samples, and those whose leaf sits directly on a CUDA API frame."""
    total = attributed = 0.0
    for frames, n in stacks:
        if not is_gpu(frames[-1]):
            continue
        total += n
        if len(frames) >= 2 and API_RE.match(frames[-2]):
            attributed += n
    return total, attributed


def header_matches(path):
    """Best-effort parse of 'matched by ID / by time / unmatched' counts."""
    if not path:
        return None
    text = open(path, errors="replace").read()
    got = {}
    for key, pat in (("id", r"by (?:correlation )?id\D{0,20}?(\d+)"),
                     ("time", r"by time(?:stamp)?\D{0,20}?(\d+)"),
                     ("none", r"unmatched\D{0,20}?(\d+)")):
        m = re.search(pat, text, re.I)
        if m:
            got[key] = int(m.group(1))
    return got if len(got) == 3 else None


def check_matched(stacks, header):
    total, attributed = gpu_summary(stacks)
    check(total > 0, f"GPU work present in the folded output ({total:.0f} samples)")
    if total:
        frac = attributed / total
        check(frac >= 0.99, f"GPU samples directly above a CUDA API frame: {100 * frac:.2f}% (>= 99%)")
    m = header_matches(header)
    if m is None:
        print("note  kernel match counts not found in --header output; checked the folded attribution only")
    else:
        n = m["id"] + m["time"] + m["none"]
        frac = (m["id"] + m["time"]) / n if n else 0
        check(n > 0 and frac >= 0.99,
              f"kernels matched: {m['id']} by ID, {m['time']} by time, {m['none']} unmatched ({100 * frac:.2f}%, >= 99%)")


# Leaf frame prefix -> (API frame prefixes allowed below it)
API_FOR = {
    "[GPU_Kernel]spin_a": ("cudaLaunchKernel",),
    "[GPU_Kernel]spin_b": ("cudaLaunchKernel",),
    "[GPU_Kernel]spin_c": ("cudaLaunchKernel",),	# the capture's (below)
    "[GPU_Memcpy HtoD]": ("cudaMemcpyAsync",),
    "[GPU_Memcpy DtoH]": ("cudaMemcpyAsync",),
    "[GPU_Memset]": ("cudaMemsetAsync",),
}
# Replayed from a CUDA graph: with the default --graph-attribution=both the
# stack is launch stack; cudaGraphLaunch; [graph replay]; capture stack
# (its own cudaLaunchKernel right above the kernel).
GRAPH = ("[GPU_Kernel]spin_c",)
# Extra frames the stack must hold (besides the path function).
EXTRA = {"path_b": ("thread_b",)}


def demo(folded, freq, expect_file, header):
    stacks = read_folded(folded)
    expects = []
    for line in open(expect_file):
        if line.startswith("EXPECT "):
            _, path, rest = line.split(" ", 2)
            frame, count, ns = rest.rsplit(" ", 2)
            expects.append((path, frame, int(count), float(ns)))
    check(len(expects) == 6, f"gpu_demo printed {len(expects)} EXPECT lines (6)")
    ns_per_sample = 1e9 / freq
    for path, frame, count, ns in expects:
        prefix = frame.split("(")[0]
        apis = API_FOR.get(prefix, ())
        mine = [(f, n) for f, n in stacks if f[-1].startswith(prefix)]
        right = wrong = 0.0
        bad_api = 0.0
        for frames, n in mine:
            names = [x.split("(")[0] for x in frames]
            if path in names and all(e in names for e in EXTRA.get(path, ())):
                right += n
            else:
                wrong += n
            if len(frames) < 2 or not frames[-2].startswith(apis):
                bad_api += n
            elif prefix in GRAPH:
                r = frames.index("[graph replay]") if "[graph replay]" in frames else 0
                if r < 1 or not frames[r - 1].startswith("cudaGraphLaunch"):
                    bad_api += n
        got_ns = right * ns_per_sample
        # Output is rounded per line: allow half a sample per line on top of 5%.
        tol = 0.05 * ns + 0.5 * ns_per_sample * max(1, len(mine))
        check(wrong == 0, f"{path} {frame}: every sample under {path} "
              f"({right:.0f} under it, {wrong:.0f} elsewhere)")
        where = "/".join(apis) + (" (cudaGraphLaunch;[graph replay] below)" if prefix in GRAPH else "")
        check(bad_api == 0, f"{path} {frame}: directly above {where} ({bad_api:.0f} samples not)")
        check(abs(got_ns - ns) <= tol,
              f"{path} {frame}: GPU time {got_ns / 1e6:.1f} ms vs cudaEvent {ns / 1e6:.1f} ms "
              f"({100 * (got_ns - ns) / ns if ns else 0:+.2f}%, {count} launches)")
    check_matched(stacks, header)


def torch_run(folded, freq, header):
    stacks = read_folded(folded)
    check_matched(stacks, header)
    kernels = [(f, n) for f, n in stacks if f[-1].startswith("[GPU_Kernel]")]
    check(len(kernels) > 0, f"PyTorch kernels in the profile ({len(kernels)} distinct stacks)")
    launch = sum(n for f, n in kernels if len(f) >= 2 and f[-2].startswith(("cudaLaunchKernel", "cuLaunchKernel")))
    total = sum(n for _, n in kernels)
    check(total and launch / total >= 0.5,
          f"kernel samples under cudaLaunchKernel/cuLaunchKernel*: {launch:.0f} of {total:.0f}")
    # Full stacks: the launch stack of (almost) all GPU time reaches the root
    # of its thread (the default dwarf copy is 128 KiB: see xpu-record.md).
    # A backward op's kernel moved under its forward code (design-autograd.md)
    # starts at the forward op's Python root instead.
    roots = ("_start", "clone3", "__clone3", "start_thread", "clone")
    rooted = sum(n for f, n in kernels if len(f) > 1 and
                 (f[1] in roots or f[1].startswith("libc.so.6+") or f[1] == "[libc.so.6]" or
                  "clone" in f[1] or
                  (f[1].startswith("py::<module>") and "[autograd backward]" in f)))
    check(total and rooted / total >= 0.95,
          f"kernel samples whose stack reaches the thread root: {100 * rooted / max(total, 1):.1f}% (>= 95%)")
    # Python frames (the interpreter walk, xpu-record's default): kernels launched
    # by the Python thread sit under the training steps; the backward pass's
    # kernels come from the autograd engine's own thread, which has none.
    if any(x.startswith("py::") for f, _ in stacks for x in f):
        main = [(f, n) for f, n in kernels if not f[0].startswith("pt_autograd")]
        auto = [(f, n) for f, n in kernels if f[0].startswith("pt_autograd")]
        mtot = sum(n for _, n in main)
        under = sum(n for f, n in main if any(x.startswith(("py::forward_step", "py::backward_step"))
                                              for x in f))
        check(mtot == 0 or under / mtot >= 0.9,
              f"Python-thread kernels under py::forward_step/py::backward_step: "
              f"{100 * under / max(mtot, 1):.1f}% (>= 90%)")
        atot = sum(n for _, n in auto)
        eng = sum(n for f, n in auto if any("autograd::Engine" in x for x in f))
        check(atot == 0 or eng / atot >= 0.9,
              f"autograd-thread kernels under torch::autograd::Engine: {100 * eng / max(atot, 1):.1f}% (>= 90%)")
        # ... and, by the autograd probes, under the forward code that made
        # their nodes: py::forward_step;...;[autograd backward];...Engine...
        fwd = sum(n for f, n in auto if order(f, "py::train:", "py::forward_step:", "[autograd backward]")
                  and f[f.index("[autograd backward]") + 1].startswith(
                      "torch::autograd::Engine::evaluate_function("))
        check(atot > 0 and fwd / atot >= 0.9,
              f"autograd-thread kernels under their forward code (py::train;..;py::forward_step;..;"
              f"[autograd backward];Engine::evaluate_function): {100 * fwd / max(atot, 1):.1f}% of "
              f"{atot:.0f} samples (>= 90%)")
    else:
        check(False, "Python frames in the profile (xpu-record's interpreter walk)")


def order(frames, *names):
    """Whether each name (a frame, or a frame prefix ending in ':') occurs in
    frames, in this order, root first."""
    at = -1
    for name in names:
        for i in range(at + 1, len(frames)):
            if frames[i] == name or (name.endswith(":") and frames[i].startswith(name)):
                at = i
                break
        else:
            return False
    return True


def nvtx_run(folded, plain, header, out):
    """torch_demo.py --nvtx (see its docstring): the [nvtx] frames where the
    ranges were pushed (in train(), above the step functions), nested step ->
    forward/backward, on the Python thread only; start/end ranges and marks
    in --header, never in stacks; --no-nvtx the same weights without them."""
    stacks = read_folded(folded)
    want = None
    for line in open(out, errors="replace"):
        m = re.match(r"NVTX push_pop (\d+) start_end (\d+) marks (\d+)", line)
        if m:
            want = tuple(int(x) for x in m.groups())
    check(want is not None, "torch_demo --nvtx says what it emitted (NVTX line)")
    if want is None:
        return
    pushpop, startend, marks = want
    steps = pushpop // 3
    text = open(header, errors="replace").read()
    check(f"#   push/pop {pushpop}, start/end {startend}, marks {marks}, never closed 0, malformed 0"
          in text, f"--header counts {pushpop} push/pop, {startend} start/end, {marks} marks, none left open")
    rows = {m.group(2): int(m.group(1)) for m in
            re.finditer(r"^#\s+\S+\s+(\d+)\s+\S+\s+\S+  (\S.*)$", text, re.M)}
    for name in ("step", "forward", "backward"):
        check(rows.get(name) == steps, f"--header row {name}: {rows.get(name)} ranges ({steps})")
    if startend:
        check(rows.get("train") == 1, f"--header row train (start/end): {rows.get('train')} (1)")
    check(not any(x == "[nvtx]train" for f, _ in stacks for x in f),
          "the start/end range is in no stack")

    kernels = [(f, n) for f, n in stacks if f[-1].startswith("[GPU_Kernel]")]
    main = [(f, n) for f, n in kernels if not f[0].startswith("pt_autograd")]
    auto = [(f, n) for f, n in kernels if f[0].startswith("pt_autograd")]
    for step_fn, rng in (("py::forward_step:", "[nvtx]forward"), ("py::backward_step:", "[nvtx]backward")):
        mine = [(f, n) for f, n in main if any(x.startswith(step_fn) for x in f)]
        tot = sum(n for _, n in mine)
        good = sum(n for f, n in mine if order(f, "py::train_nvtx:", "[nvtx]step", rng, step_fn))
        check(tot > 0 and good / tot >= 0.95,
              f"Python-thread kernels under {step_fn[:-1]}: py::train_nvtx;..;[nvtx]step;..;{rng};..;"
              f"{step_fn[:-1]} in {100 * good / max(tot, 1):.1f}% of {tot:.0f} samples (>= 95%)")
    atot = sum(n for _, n in auto)
    leak = sum(n for f, n in auto if any(x.startswith("[nvtx]") for x in f))
    check(leak == 0, f"autograd-thread kernels carry no [nvtx] frame (the ranges are the Python "
          f"thread's): {leak:.0f} of {atot:.0f} samples do")
    cpu = [(f, n) for f, n in stacks if not f[-1].startswith("[GPU_")
           and not f[0].startswith("pt_autograd") and any(x.startswith("py::forward_step:") for x in f)]
    ctot = sum(n for _, n in cpu)
    cgood = sum(n for f, n in cpu if order(f, "[nvtx]step", "[nvtx]forward", "py::forward_step:"))
    check(ctot == 0 or cgood / ctot >= 0.9,
          f"CPU samples in py::forward_step under [nvtx]step;..;[nvtx]forward: "
          f"{100 * cgood / max(ctot, 1):.1f}% of {ctot:.0f} (>= 90%)")

    pstacks = read_folded(plain)
    check(not any(x.startswith("[nvtx]") for f, _ in pstacks for x in f), "--no-nvtx: no [nvtx] frame")
    gpu = sum(n for f, n in stacks if f[-1].startswith("[GPU_"))
    pgpu = sum(n for f, n in pstacks if f[-1].startswith("[GPU_"))
    lines = sum(1 for f, _ in stacks if f[-1].startswith("[GPU_"))
    check(abs(gpu - pgpu) <= 0.5 * lines + 1,
          f"--no-nvtx: the same GPU weight ({pgpu:.0f} vs {gpu:.0f} samples, rounded per line)")


def main():
    mode = sys.argv[1]
    if mode == "demo":
        demo(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif mode == "torch":
        torch_run(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    elif mode == "nvtx":
        nvtx_run(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit(f"usage: {sys.argv[0]} demo|torch|nvtx ...")
    print(f"{'FAILED' if failures else 'PASSED'}: {failures} check(s) failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

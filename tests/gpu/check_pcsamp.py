#!/usr/bin/env python3
"""GPU PC sampling checks for tests/gpu/pc_sampling.sh (issue 35).

  check_pcsamp.py PREFIX SOURCE [CUBIN_DIR]

PREFIX.gpu.folded: xpu-report --folded --gpu-only of pcsamp_demo;
PREFIX.plain.folded: the same with --no-pc-sampling; PREFIX.out: the
program's "EVENTS mem_ms cmp_ms both_ms"; PREFIX.header: --header.
SOURCE: pcsamp_demo.cu (its LOOP_MEM and LOOP_CMP lines). CUBIN_DIR: the
program's cubins (cuobjdump -xelf all), for nvdisasm -g as the ground truth
of the offset-to-line mapping, when the toolkit has both tools.

Checks (one "ok"/"FAIL" line each; exit 1 when one failed):
  - two_loops has [sass] frames with lines, and both loop lines among them;
  - the share of two_loops' GPU time on the LOOP_MEM line, out of the two
    loop lines, within 10 points of mem / (mem + cmp) from the cudaEvents;
  - the dominant stall reason of the memory line is a memory one, of the
    compute line a math / dependency one;
  - the GPU total equals the one --no-pc-sampling gives (each is the
    total rounded: folded apportions by largest remainders);
  - every [sass] frame's line equals nvdisasm -g's for that offset.
"""
import collections
import os
import re
import subprocess
import sys

MEM_STALLS = {"long_scoreboard", "lg_throttle", "memory_throttle", "mio_throttle", "drain",
              "imc_miss", "tex_throttle"}
CMP_STALLS = {"math_pipe_throttle", "wait", "not_selected", "selected", "dispatch_stall",
              "short_scoreboard", "math", "no_instructions"}

fails = 0


def ok(cond, msg):
    global fails
    print(("ok    " if cond else "FAIL  ") + msg)
    if not cond:
        fails += 1


def folded(path):
    out = []
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if stack:
                out.append((stack.split(";"), float(n)))
    return out


def main():
    prefix, source = sys.argv[1], sys.argv[2]
    cubins = sys.argv[3] if len(sys.argv) > 3 else None
    lines = {}
    with open(source) as f:
        for no, text in enumerate(f, 1):
            for tag in ("LOOP_MEM", "LOOP_CMP"):
                if text.rstrip().endswith("// " + tag):
                    lines[tag] = no
    base = os.path.basename(source)
    mem_ms = cmp_ms = None
    with open(prefix + ".out") as f:
        for line in f:
            if line.startswith("EVENTS"):
                _, mem_ms, cmp_ms, _ = line.split()
                mem_ms, cmp_ms = float(mem_ms), float(cmp_ms)
    ok(mem_ms is not None, "the program printed its cudaEvent times")
    if mem_ms is None:
        return 1

    rows = folded(prefix + ".gpu.folded")
    by_line = collections.Counter()
    stalls = collections.defaultdict(collections.Counter)
    sass = {}			# (function, offset) -> line
    kernel_total = 0.0
    sass_re = re.compile(r"\[sass\](\S+)\+(0x[0-9a-f]+)(?: \((.*):(\d+)\))?$")
    for frames, n in rows:
        k = [i for i, fr in enumerate(frames) if fr.startswith("[GPU_Kernel]two_loops")]
        if not k:
            continue
        kernel_total += n
        rest = frames[k[0] + 1:]
        if len(rest) < 2:
            continue
        m = sass_re.match(rest[0])
        if not m:
            continue
        fn, off, file, line = m.group(1), int(m.group(2), 16), m.group(3), m.group(4)
        if file and line:
            sass[(fn, off)] = int(line)
            if file == base:
                by_line[int(line)] += n
                stalls[int(line)][rest[1][len("[stall]"):]] += n
    ok(kernel_total > 0, "two_loops has GPU time (%.1f samples)" % kernel_total)
    ok(len(sass) > 0, "two_loops has [sass] frames with source lines (%d PCs)" % len(sass))
    lm, lc = lines.get("LOOP_MEM"), lines.get("LOOP_CMP")
    ok(by_line[lm] > 0 and by_line[lc] > 0,
       "both loop lines sampled: line %s %.1f, line %s %.1f (of %.1f)" %
       (lm, by_line[lm], lc, by_line[lc], kernel_total))
    if by_line[lm] + by_line[lc] > 0:
        share = by_line[lm] / (by_line[lm] + by_line[lc])
        want = mem_ms / (mem_ms + cmp_ms)
        ok(abs(share - want) <= 0.10,
           "memory loop's share of the two loops: %.3f from PC samples, %.3f from cudaEvents "
           "(mem %.3f ms, cmp %.3f ms): within 10 points" % (share, want, mem_ms, cmp_ms))
        lines_share = (by_line[lm] + by_line[lc]) / kernel_total if kernel_total else 0
        print("note  the two loop lines hold %.1f%% of two_loops' samples" % (100 * lines_share))
    for tag, line, want in (("memory", lm, MEM_STALLS), ("compute", lc, CMP_STALLS)):
        if stalls[line]:
            top, n = stalls[line].most_common(1)[0]
            detail = ", ".join("%s %.1f" % kv for kv in stalls[line].most_common(4))
            ok(top in want, "%s loop (line %s): dominant stall %s (%s)" % (tag, line, top, detail))
        else:
            ok(False, "%s loop (line %s): no stall samples" % (tag, line))

    plain = sum(n for _, n in folded(prefix + ".plain.folded"))
    split = sum(n for _, n in rows)
    ok(abs(plain - split) <= 1.0,	# each the total rounded (folded's largest remainders)
       "GPU total %.0f with the split, %.0f with --no-pc-sampling" % (split, plain))

    # nvdisasm -g: "//## File "...", line N" before the instructions it covers
    nvdisasm = os.environ.get("NVDISASM", "nvdisasm")
    if not cubins or not os.path.isdir(cubins):
        print("note  no cubins extracted: the nvdisasm ground truth is skipped")
        return 1 if fails else 0
    truth = {}
    for name in sorted(os.listdir(cubins)):
        if not name.endswith(".cubin"):
            continue
        try:
            text = subprocess.run([nvdisasm, "-g", "-c", os.path.join(cubins, name)],
                                  capture_output=True, text=True, timeout=120).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            print("note  nvdisasm failed (%s): ground truth skipped" % e)
            return 1 if fails else 0
        fn, line = None, None
        for t in text.splitlines():
            m = re.match(r"\s*\.text\.(\S+):", t) or re.match(r"\s*\.section\s+\.text\.(\S+),", t)
            if m:
                fn, line = m.group(1), None
                continue
            m = re.search(r'//## File ".*", line (\d+)', t)
            if m:
                line = int(m.group(1))
                continue
            m = re.search(r"/\*([0-9a-f]{4,})\*/", t)
            if m and fn and line is not None:
                truth[(fn, int(m.group(1), 16))] = line
    checked = bad = 0
    # our frames name the demangled short name; nvdisasm the mangled one
    short = {}
    for (fn, off) in truth:
        m = re.match(r"_Z\d+(\w+?)P", fn)
        short.setdefault(fn, fn)
    for (fn, off), line in sass.items():
        cands = [l for (tf, to), l in truth.items() if to == off and fn in tf]
        if not cands:
            continue
        checked += 1
        if line not in cands:
            bad += 1
            print("      %s+%#x: ours line %d, nvdisasm %s" % (fn, off, line, cands))
    ok(checked > 0 and bad == 0,
       "[sass] lines against nvdisasm -g: %d PCs checked, %d differ" % (checked, bad))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

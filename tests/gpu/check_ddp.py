# SPDX-License-Identifier: MIT
"""Checks of the 2-rank DDP run of tests/gpu/run.sh (ddp_demo.py under
torchrun --nproc_per_node=2, recorded whole by one xpu-record):

  - both ranks in --header's ranks section (rank, local rank, world size 2),
    each with the pid ddp_demo.py printed;
  - both devices in the GPU summary, each with kernels;
  - per-device kernel time (--header) equal to the kernel durations of that
    device in the records (--dump), and their sum to the total;
  - all-reduce kernels (nccl) present and attributed to CPU stacks (>= 90%
    of their time not under [unknown CPU stack]), under backward_step;
  - --rank 0 + --rank 1 + the processes without a rank == the whole
    profile (--cpu-only: exact sample counts; --gpu-only: within rounding),
    and --gpu-only --device 0 + --device 1 == --gpu-only without syncs;
  - NVTX (issue 31 item 6): NCCL's ncclCommInitRankConfig and
    ncclCommFinalize ranges (popped with nvtxRangePopPayload) are not in
    --header's never-closed line, and no CPU sample at interpreter shutdown
    (a Py_Finalize* frame) sits under an [nvtx]NCCL: frame.

usage: check_ddp.py XPU_REPORT TRACE TORCHRUN_OUT PREFIX
PREFIX.* get the reports it ran (header, folded views), for inspection."""
import re
import subprocess
import sys

failed = False


def check(ok, msg):
    global failed
    print(("ok    " if ok else "FAIL  ") + msg)
    failed |= not ok


def run(report, trace, prefix, name, *args):
    """xpu-report's stdout (saved as PREFIX.name); '' when it failed."""
    p = subprocess.run([report, "-i", trace, *args], capture_output=True, text=True, errors="replace")
    with open(f"{prefix}.{name}", "w") as f:
        f.write(p.stdout)
    if p.returncode not in (0, 10):	# 10: nothing in that selection
        print(f"note  xpu-report {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout if p.returncode == 0 else ""


def folded(text):
    out = []
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack:
            out.append((stack.split(";"), int(n)))
    return out


def total(stacks, pred=lambda f: True):
    return sum(n for f, n in stacks if pred(f))


def ns(s):
    """gpu__ns_str's "80.7ms" / "16.4us" / "2.00s" / "800ns" -> ns."""
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", s)
    return float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)] if m else None


def close(a, b, rel, absolute=0):
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), absolute)


def main(report, trace, out, prefix):
    # what the ranks said about themselves
    # anywhere in a line: the two ranks and torchrun share the output, and
    # another process's unfinished line may precede a rank's (one run of
    # the final tree missed rank 1's start that way)
    ranks = {}
    text = open(out, errors="replace").read()
    for m in re.finditer(r"DDP rank (\d+) local (\d+) world (\d+) device (\d+) pid (\d+)", text):
        r, loc, w, dev, pid = map(int, m.groups())
        ranks[r] = dict(local=loc, world=w, device=dev, pid=pid)
    done = len(re.findall(r"DONE rank \d+ steps", text))
    check(sorted(ranks) == [0, 1] and done == 2,
          f"ddp_demo: ranks {sorted(ranks)} started, {done} finished")
    if sorted(ranks) != [0, 1]:
        return

    header = run(report, trace, prefix, "header", "--header")
    rows = {}
    sec = header.split("# ranks", 1)[1] if "# ranks" in header else ""
    for line in sec.splitlines()[2:]:
        if not line.startswith("#   ") or line.startswith("#   ..."):
            break
        f = line[1:].split()
        if len(f) >= 5 and f[0].isdigit():
            rows[int(f[0])] = f
    for r, info in ranks.items():
        f = rows.get(info["pid"])
        check(f is not None and f[2] == str(r) and f[3] == str(info["local"]) and f[4] == "2",
              f"--header ranks: pid {info['pid']} has rank {r}, local {info['local']}, world 2 "
              f"({' '.join(f) if f else 'not listed'})")

    # per-device lines of the GPU summary: "#   DEV  busy kernels kern-time copies copy-time"
    devs = {}
    m = re.search(r"^#   device +busy +kernels +kern time +copies +copy time\n((?:#   \d+ .*\n)+)",
                  header, re.M)
    for line in (m.group(1).splitlines() if m else []):
        f = line[1:].split()
        devs[int(f[0])] = dict(busy=ns(f[1]), kernels=int(f[2]), kern=ns(f[3]), copy=ns(f[5]))
    want = sorted({info["device"] for info in ranks.values()})
    check(sorted(devs) == want and all(d["kernels"] > 0 for d in devs.values()),
          f"GPU summary has devices {sorted(devs)} (ranks used {want}), each with kernels")

    # exact per-device kernel time from the records
    dump = subprocess.run([report, "-i", trace, "--dump"], capture_output=True, text=True, errors="replace").stdout
    exact = {}
    for m2 in re.finditer(r"^GPU_KERNEL start=(\d+) end=(\d+) .* dev=(\d+) ", dump, re.M):
        s, e, d = map(int, m2.groups())
        exact[d] = exact.get(d, 0) + max(e - s, 0)
    tot = re.search(r"^#   kernels: \d+ launches of \d+ kernels, (\S+) in total", header, re.M)
    for d, v in sorted(devs.items()):
        check(v["kern"] is not None and close(v["kern"], exact.get(d, 0), 0.006, 1),
              f"device {d}: kernel time {v['kern'] / 1e6 if v['kern'] else 0:.3f} ms in --header, "
              f"{exact.get(d, 0) / 1e6:.3f} ms in the records")
        # busy is the union of kernels and copies: more than 0, at most their
        # sum (less where streams overlap: NCCL's with the compute stream)
        check(v["busy"] is not None and v["kern"] is not None and v["copy"] is not None and
              0 < v["busy"] <= (v["kern"] + v["copy"]) * 1.006 + 1,
              f"device {d}: busy {v['busy'] / 1e6 if v['busy'] else 0:.3f} ms, at most kernels "
              f"+ copies {(v['kern'] or 0) / 1e6 + (v['copy'] or 0) / 1e6:.3f} ms")
    if tot:
        s = sum(v["kern"] for v in devs.values() if v["kern"])
        check(close(s, ns(tot.group(1)), 0.01) and close(s, sum(exact.values()), 0.01),
              f"per-device kernel times add up: {s / 1e6:.3f} ms, total {tot.group(1)}, "
              f"records {sum(exact.values()) / 1e6:.3f} ms")
    else:
        check(False, "no kernels total line in --header")

    # all-reduce kernels under CPU stacks
    gpu = folded(run(report, trace, prefix, "gpu.folded", "--gpu-only", "--folded"))
    nccl = [(f, n) for f, n in gpu if "nccl" in f[-1].lower()]
    nccl_w = total(nccl)
    known = total(nccl, lambda f: "[unknown CPU stack]" not in f)
    under_bwd = total(nccl, lambda f: any("backward_step" in x for x in f))
    check(nccl_w > 0, f"nccl kernels in the GPU profile ({nccl_w} samples, "
          f"{len(nccl)} stacks, e.g. {nccl[0][0][-1] if nccl else '-'})")
    check(nccl_w > 0 and known >= 0.9 * nccl_w,
          f"nccl kernels attributed to CPU stacks: {known} of {nccl_w} samples (>= 90%)")
    print(f"note  nccl kernel weight under backward_step: {under_bwd} of {nccl_w} "
          "(the all-reduce may also launch from DDP's reducer thread)")

    # NVTX: NCCL's ranges end; none covers the interpreter's shutdown
    nc = re.search(r"^#   never closed: .*$", header, re.M)
    left = [n for n in ("NCCL:ncclCommInitRankConfig", "NCCL:ncclCommFinalize")
            if nc and n + " " in nc.group(0)]
    check(not left, f"NCCL's payload-popped ranges closed (never closed: {', '.join(left) or 'none'})")
    if nc:
        print(f"note  {nc.group(0)[4:]}")
    cpu = folded(run(report, trace, prefix, "nvtx.cpu.folded", "--cpu-only", "--folded"))
    fin = [(f, n) for f, n in cpu if any(x.startswith("Py_Finalize") for x in f)]
    under = [(f, n) for f, n in fin if any(x.startswith("[nvtx]NCCL:") for x in f)]
    check(not under, f"samples at interpreter shutdown under an [nvtx]NCCL: frame: {total(under)} "
          f"of {total(fin)}" + (f" (e.g. {';'.join(under[0][0][-6:])})" if under else ""))
    print(f"note  CPU samples under an [nvtx]NCCL: frame: "
          f"{total(cpu, lambda f: any(x.startswith('[nvtx]NCCL:') for x in f))}; "
          f"at shutdown (Py_Finalize*): {total(fin)}")

    # --rank: the ranks and the unranked processes make up the whole
    ranked = set(rows)
    pids = set(int(p) for p in re.findall(r"^(?:COMM|FORK|EXIT|SAMPLE|OFFCPU) .*? pid=(\d+) ",
                                          dump, re.M))
    norank = sorted(pids - ranked)
    for view, exact_sum in (("--cpu-only", True), ("--gpu-only", False)):
        allv = total(folded(run(report, trace, prefix, f"all{view}", view, "--folded")))
        parts = [total(folded(run(report, trace, prefix, f"rank{r}{view}", view, "--folded",
                                  "--rank", str(r)))) for r in (0, 1)]
        rest = total(folded(run(report, trace, prefix, f"norank{view}", view, "--folded",
                                "--pid", ",".join(map(str, norank))))) if norank else 0
        s = sum(parts) + rest
        ok = s == allv if exact_sum else close(s, allv, 0.01, 5)
        check(ok and all(parts), f"{view}: --rank 0 ({parts[0]}) + --rank 1 ({parts[1]}) + "
              f"unranked pids ({rest}) = {s}, whole profile {allv}")

    # --device: the devices' GPU work adds up to all but the syncs
    nosync = total(gpu, lambda f: not f[-1].startswith("[GPU_Sync"))
    per = [total(folded(run(report, trace, prefix, f"dev{d}", "--gpu-only", "--folded",
                            "--device", str(d)))) for d in want]
    check(all(per) and close(sum(per), nosync, 0.01, 5),
          f"--device {' + '.join(f'{d} ({n})' for d, n in zip(want, per))} = {sum(per)}, "
          f"GPU work without syncs {nosync}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
    sys.exit(1 if failed else 0)

"""Checks the Python chains of a folded report of tests/workloads/py_demo.py
(tests/shell/e2e_python.sh).

Reads the folded report on stdin. A sample is "in the workload's Python
code" when its stack holds a frame of its functions (pyd_*), or an eval-loop frame
(_PyEval_EvalFrameDefault) left unreplaced with no Python frame at all (a
walk that failed). For each such sample the sequence of py:: frames must be
a prefix of one of the workload's three chains, exact up to the innermost
frame (whose line may be any), and a key callback run by sorted() must have
C frames between pyd_sort_with_c and pyd_key_callback.

Samples of the interpreter's own start (Py_InitializeFromConfig: importing
site and the codecs) with eval-loop frames and no Python frame are not the
workload's: the recorder starts walking a process's frames once its drain
thread has seen the interpreter mapped and filled the process's BPF map
entry (record/python/python.c), a few ms after exec, so the first samples of a run
have none. They are counted apart ("startup N") for the caller to bound.
Prints "total N ok M sorts S cframes C startup K" and the first few bad
chains; with --no-lines, frames carry no line.
"""
import re
import sys

NO_LINES = "--no-lines" in sys.argv

MAIN = ["<module>:55", "pyd_main:48"] + ["pyd_recurse:23"] * 5 + \
       ["pyd_recurse:22", "pyd_hot_leaf:*"]
SORT = ["<module>:55", "pyd_main:49", "pyd_sort_with_c:34", "pyd_key_callback:*"]
WORKER = ["pyd_worker_loop:39"] + ["pyd_recurse:23"] * 2 + ["pyd_recurse:22", "pyd_hot_leaf:*"]

frame_re = re.compile(r"^py::(.+?):(/[^:]*?)(?::(\d+))?$")


def short(frame):
    m = frame_re.match(frame)
    if not m:
        return None, None
    name, path, line = m.group(1), m.group(2), m.group(3)
    if NO_LINES != (line is None):
        return "<line?>" + frame, path
    return (name if NO_LINES else "%s:%s" % (name, line)), path


def fits(chain, want):
    if len(chain) > len(want) or not chain:
        return False
    for i, f in enumerate(chain):
        w = want[i]
        if NO_LINES:
            w = w.split(":")[0]
            if f != w:
                return False
        elif i == len(chain) - 1:
            if f.split(":")[0] != w.split(":")[0]:
                return False
        elif f != w:
            return False
    return True


total = ok = cframes = sorts = startup = 0
INIT = ("Py_InitializeFromConfig", "pymain_init")
bad = []
for line in sys.stdin:
    stack, _, count = line.rstrip("\n").rpartition(" ")
    n = int(count)
    frames = stack.split(";")
    py = [(i, f) for i, f in enumerate(frames) if f.startswith("py::")]
    mine = [f for _, f in py if f.startswith("py::pyd_")]
    evals = [f for f in frames if f.startswith("_PyEval_EvalFrameDefault")]
    if not mine and not (evals and not py):
        continue
    if not py and any(f.startswith(INIT) for f in frames):
        startup += n
        continue
    total += n
    names = []
    for _, f in py:
        s, path = short(f)
        if path and path.endswith("py_demo.py"):
            names.append(s)
        elif path and path.endswith("threading.py") and \
                all(x == "threading" for x in names):
            names.append("threading")
        else:
            names.append("?" + f)
    good = False
    if names and names[0] == "threading":
        rest = [x for x in names if x != "threading"]
        good = all(x == "threading" for x in names[:len(names) - len(rest)]) and \
            fits(rest, WORKER)
    else:
        good = fits(names, MAIN) or fits(names, SORT)
    if good and names[-1].startswith("pyd_key_callback"):
        sorts += n
        i_sort = [i for i, f in py if "pyd_sort_with_c" in f]
        i_key = [i for i, f in py if "pyd_key_callback" in f]
        if i_sort and i_key and i_key[-1] - i_sort[-1] > 1:
            cframes += n
        else:
            good = False
    if good:
        ok += n
    elif len(bad) < 5:
        bad.append("%d %s" % (n, ";".join(names) if names else stack))
print("total %d ok %d sorts %d cframes %d startup %d" % (total, ok, sorts, cframes, startup))
for b in bad:
    print("bad: " + b)

#!/usr/bin/env bash
# The folders are the layers, and includes only go down. Two checks over every
# tracked .c/.h of the folders in LAYERS (XPU_TOP: the tree to check, default
# this one); each prints every violation it finds and the script fails if
# either finds one:
#
# 1. Direction. A file may include a header of its own folder, and what its
#    folder's row in LAYERS allows: the listed folders or files, and "<" for
#    every folder of a lower rank in its wing (rank: the layers of the
#    recorder's wing, record/, of the CUDA library's, cupti/, and of the
#    report's, report/ and archive/;
#    bottom 0; two folders of the same rank do not include each other).
#    record/options.h (struct record_opts) and record/clock.h (the trace's
#    clock) are the recorder's base, named file by file in the rows below.
#    A folder that is in no row may not be included by anything.
#
# 2. Cycles. The include graph between units: a unit is a path without its
#    .c/.h ending, so foo.c and foo.h in the same folder are one node (a
#    header without a .c, or a .c without a header, is a node of its own).
#    An edge U -> V when a file of U includes V's header ("dir/v.h" from the
#    top of the tree, or "v.h" beside the including file), V not U. Any cycle
#    (U -> ... -> U, over two or more units) fails, printed as its units in
#    order. A shared header that declares functions of several .c files
#    (as record/record.h once did) stands for none of them here: it hides a
#    cycle between those .c files, so prefer one header per .c.
set -u
cd "${XPU_TOP:-$(dirname "$0")/../..}"

# folder            rank  may include (besides its own folder)
LAYERS='
common              -     -
format              -     common
bpf                 -     format common
cupti/channel       0     format
cupti/walk          1     < format common/unwind_frame.h common/unwind_simple.h common/unwind_simple_walk.h common/unwind_table.h
cupti/nvtx          1     < format
cupti/pcsamp        1     < format
cupti/memory        2     < format
cupti/activity      3     < format
cupti               4     < format common/unwind_frame.h common/unwind_simple.h common/unwind_simple_walk.h common/unwind_table.h
record/files        0     < format common record/options.h record/clock.h
record/unwind       0     < bpf cupti/channel/wire.h format common record/options.h record/clock.h
record/python       1     < bpf format common record/options.h record/clock.h
record/kernel       2     < bpf cupti/channel/wire.h format common record/options.h record/clock.h
record/target       3     < bpf cupti/channel/wire.h format common record/options.h record/clock.h
record/gpu          3     < bpf cupti/channel/wire.h format common record/options.h record/clock.h
record/capture      4     < bpf cupti/channel/wire.h format common record/options.h record/clock.h record/output.h
record              5     < bpf cupti/channel/wire.h format common
report/files        0     format common
report/phase        0     -
report/profile      0     format common
report/symbols      1     < format common
report/finders      2     < format common
report/machine      2     < format common
report/unwind       3     < format common
report/session      4     < format common
report/annotate     5     < format common
report/gpu          5     < cupti/channel/wire.h format common
archive             5     < format common
report/output       6     < format common
report/tui          7     < format common
report              8     < format common
'

git ls-files 'common/*.[ch]' 'format/*.[ch]' 'cupti/*.[ch]' 'record/*.[ch]' 'record/**/*.[ch]' \
	'bpf/*.[ch]' 'report/*.[ch]' 'report/**/*.[ch]' 'archive/*.[ch]' |
LAYERS=$LAYERS python3 -c '
import os, re, sys

layers = {}				# folder -> (rank or None, allowed list)
for line in os.environ["LAYERS"].strip().splitlines():
	f = line.split()
	rank = None if f[1] == "-" else int(f[1])
	layers[f[0]] = (rank, [a for a in f[2:] if a != "-"])

def folder(path):
	return os.path.dirname(path)

def wing(f):			# ranks compare within a wing: record/, cupti/, or report/ and archive/
	for w in ("record", "cupti"):
		if f == w or f.startswith(w + "/"):
			return w
	return "report"

def allowed(src, inc):
	sf, inf = folder(src), folder(inc)
	if sf == inf:
		return True
	rank, allow = layers[sf]
	if inf not in layers:
		return False
	for a in allow:
		if a == "<":
			r = layers[inf][0]
			if wing(inf) == wing(sf) and r is not None and r < rank:
				return True
		elif inc == a or inf == a:
			return True
	return False

files = [l for l in sys.stdin.read().split() if os.path.isfile(l)]
bad = 0
inc_re = re.compile(r"^#include \"([^\"]+)\"")
incs = {}
for f in files:
	incs[f] = []
	for line in open(f, errors="replace"):
		m = inc_re.match(line)
		if not m:
			continue
		inc = m.group(1)
		incs[f].append(inc if "/" in inc else os.path.join(folder(f), inc))
		if "/" not in inc:
			continue
		if folder(f) not in layers:
			print("FAIL: %s: its folder has no row in layering.sh LAYERS" % f)
			bad = 1
		elif not allowed(f, inc):
			print("FAIL: %s includes \"%s\" (%s may include: %s)" % (f, inc,
				folder(f), " ".join(layers[folder(f)][1]) or "its own folder only"))
			bad = 1

# cycles: units, edges, then a depth-first search that prints each cycle
unit = lambda p: re.sub(r"\.[ch]$", "", p)
units = {unit(f) for f in files}
edges = {u: set() for u in units}
for f, l in incs.items():
	for inc in l:
		v = unit(inc)
		if v in units and v != unit(f):
			edges[unit(f)].add(v)
state = {}				# unit -> 1 on the path, 2 done
path = []
cycles = []
sys.setrecursionlimit(100000)
def dfs(u):
	state[u] = 1
	path.append(u)
	for v in sorted(edges[u]):
		if state.get(v) == 1:
			cycles.append(path[path.index(v):] + [v])
		elif v not in state:
			dfs(v)
	path.pop()
	state[u] = 2
for u in sorted(units):
	if u not in state:
		dfs(u)
for c in cycles:
	print("FAIL: include cycle: " + " -> ".join(c))
	bad = 1
if not bad:
	print("ok: every include goes down a layer, and no include cycle")
sys.exit(bad)
'

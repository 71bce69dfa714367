#!/usr/bin/env python3
# Checks a --timeline file as decoded by protoc (Google's own parser, not our
# protobuf-c code): `protoc --decode=perfetto.protos.Trace perfetto_trace.proto`
# text on stdin. Prints a JSON summary for the calling test to compare with
# what --dump and --folded say, after checking what Perfetto's trace processor
# needs to import the file without errors:
#   - one packet sequence (trusted_packet_sequence_id 1), the first packet
#     clears the incremental state and holds the clock snapshot (MONOTONIC as
#     the trace clock), every later one says it needs it;
#   - every interned id (event name, annotation name, callstack, frame,
#     function name, mapping, mapping path) is defined before its first use,
#     in file order, and never defined twice;
#   - every track event's track is described, uuids are unique, parents exist;
#   - per track, BEGIN and END pair up in time order (file order breaking
#     ties, as Perfetto's sorter does) and never END an empty track;
#   - every flow id started on an API slice ends on exactly one GPU slice and
#     the other way round;
#   - a graph launch's slice (named "graph N", on a GPU stream track) holds
#     the work it replayed: each slice with that correlation id on its track
#     lies inside it, and as many as its "replayed work" says.
# Usage: timeline_check.py < decoded.txt > summary.json
import json
import sys
from collections import Counter, defaultdict


def parse(lines):
    """protobuf text format -> nested dicts of lists."""
    root = defaultdict(list)
    stack = [root]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            node = defaultdict(list)
            stack[-1][line[:-1].strip()].append(node)
            stack.append(node)
            continue
        key, _, val = line.partition(": ")
        if val.startswith('"'):
            raw = bytes(val[1:-1], "utf-8").decode("unicode_escape").encode("latin-1")
            try:
                val = raw.decode("utf-8")
            except UnicodeDecodeError:      # bytes (a build-id): as hex
                val = raw.hex()
        else:
            try:
                val = int(val)
            except ValueError:
                try:
                    val = float(val)
                except ValueError:
                    pass
        stack[-1][key].append(val)
    assert len(stack) == 1, "unbalanced braces"
    return root


def one(node, key, default=None):
    v = node.get(key, [])
    assert len(v) <= 1, f"{key} repeated"
    return v[0] if v else default


def fail(msg):
    sys.exit(f"timeline_check: {msg}")


trace = parse(sys.stdin)
packets = trace["packet"]
if not packets:
    fail("no packets")
defined = defaultdict(dict)     # kind -> iid -> value
tracks = {}                     # uuid -> descriptor
events = []                     # (ts, file order, packet)
samples = []
first = packets[0]
if one(first, "sequence_flags") != 1 or not one(first, "clock_snapshot"):
    fail("the first packet must clear the incremental state and carry the clocks")
cs = one(first, "clock_snapshot")
if one(cs, "primary_trace_clock") != "BUILTIN_CLOCK_MONOTONIC":
    fail("trace clock is not MONOTONIC")
if not any(one(c, "clock_id") == 3 for c in cs["clocks"]):
    fail("no MONOTONIC clock in the snapshot")


def define(kind, entries, value_key):
    for e in entries:
        iid = one(e, "iid")
        if not iid:
            fail(f"{kind} without iid")
        if iid in defined[kind]:
            fail(f"{kind} {iid} defined twice")
        defined[kind][iid] = e if value_key is None else one(e, value_key)


def use(kind, iid, where):
    if iid not in defined[kind]:
        fail(f"{where}: {kind} {iid} used before it is defined")


for n, p in enumerate(packets):
    if one(p, "trusted_packet_sequence_id") != 1:
        fail(f"packet {n}: not on sequence 1")
    if n and one(p, "sequence_flags") != 2:
        fail(f"packet {n}: sequence_flags is not SEQ_NEEDS_INCREMENTAL_STATE")
    data = [k for k in ("clock_snapshot", "track_descriptor", "track_event", "perf_sample") if k in p]
    if len(data) != 1:
        fail(f"packet {n}: {len(data)} payloads")
    for i in p.get("interned_data", []):
        define("event_names", i.get("event_names", []), "name")
        define("annotation_names", i.get("debug_annotation_names", []), "name")
        define("function_names", i.get("function_names", []), "str")
        define("mapping_paths", i.get("mapping_paths", []), "str")
        define("build_ids", i.get("build_ids", []), "str")
        for m in i.get("mappings", []):
            for pid in m.get("path_string_ids", []):
                use("mapping_paths", pid, "mapping")
            if one(m, "build_id") is not None:
                use("build_ids", one(m, "build_id"), "mapping")
        define("mappings", i.get("mappings", []), None)
        for f in i.get("frames", []):
            use("function_names", one(f, "function_name_id"), "frame")
            use("mappings", one(f, "mapping_id"), "frame")
        define("frames", i.get("frames", []), None)
        for c in i.get("callstacks", []):
            for f in c.get("frame_ids", []):
                use("frames", f, "callstack")
        define("callstacks", i.get("callstacks", []), None)
    if "track_descriptor" in p:
        d = one(p, "track_descriptor")
        u = one(d, "uuid")
        if not u or u in tracks:
            fail(f"track uuid {u} missing or repeated")
        parent = one(d, "parent_uuid")
        if parent is not None and parent not in tracks:
            fail(f"track {u}: parent {parent} not described before")
        tracks[u] = d
    elif "track_event" in p:
        ev = one(p, "track_event")
        if one(ev, "track_uuid") not in tracks:
            fail(f"event on undescribed track {one(ev, 'track_uuid')}")
        if one(ev, "type") == "TYPE_SLICE_BEGIN":
            use("event_names", one(ev, "name_iid"), "slice")
            for a in ev.get("debug_annotations", []):
                use("annotation_names", one(a, "name_iid"), "annotation")
        if one(ev, "callstack_iid") is not None:
            use("callstacks", one(ev, "callstack_iid"), "slice")
        events.append((one(p, "timestamp"), n, ev))
    elif "perf_sample" in p:
        ps = one(p, "perf_sample")
        if one(ps, "callstack_iid") is not None:
            use("callstacks", one(ps, "callstack_iid"), "sample")
        samples.append((one(p, "timestamp"), ps))


def track_name(u):
    d = tracks[u]
    return one(d, "name") or one(one(d, "thread", {}), "thread_name") or \
        one(one(d, "process", {}), "process_name")


def stack_names(iid):
    out = []
    for f in defined["callstacks"][iid]["frame_ids"]:
        fr = defined["frames"][f]
        name = defined["function_names"][one(fr, "function_name_id")]
        out.append(name + ("_[k]" if one(fr, "kind") == "KIND_KERNEL" else ""))
    return out


# slices: pair BEGIN/END per track in Perfetto's order
open_ = defaultdict(list)
slices = []
counters = defaultdict(list)    # track uuid -> [(time, value)] of TYPE_COUNTER events
for ts, n, ev in sorted(events, key=lambda e: (e[0], e[1])):
    u = one(ev, "track_uuid")
    if one(ev, "type") == "TYPE_SLICE_BEGIN":
        open_[u].append((ts, ev))
    elif one(ev, "type") == "TYPE_SLICE_END":
        if not open_[u]:
            fail(f"END on track {u} ({track_name(u)}) with no open slice at {ts}")
        start, b = open_[u].pop()
        args = {defined["annotation_names"][one(a, "name_iid")]:
                next(v[0] for k, v in a.items() if k.endswith("_value"))
                for a in b.get("debug_annotations", [])}
        slices.append({"track": u, "start": start, "end": ts,
                       "name": defined["event_names"][one(b, "name_iid")],
                       "flows": b.get("flow_ids", []),
                       "term": b.get("terminating_flow_ids", []),
                       "stack": stack_names(one(b, "callstack_iid"))
                       if one(b, "callstack_iid") is not None else None,
                       "args": args})
    elif one(ev, "type") == "TYPE_COUNTER":
        if "counter" not in tracks[u]:
            fail(f"a counter value on track {u} ({track_name(u)}), not a counter track")
        counters[u].append((ts, int(one(ev, "counter_value", 0))))
    else:
        fail("an event that is neither BEGIN, END nor COUNTER")
for u, o in open_.items():
    if o:
        fail(f"{len(o)} slices never end on track {u}")
started = Counter(f for s in slices for f in s["flows"])
ended = Counter(f for s in slices for f in s["term"])
if any(c != 1 for c in started.values()) or started != ended:
    fail("flows: started and terminated ids differ")


def is_graph(s):
    return "replayed work" in s["args"]


def path(u):
    """'process/thread/child' names of a track."""
    names = []
    while u is not None:
        names.append(track_name(u))
        u = one(tracks[u], "parent_uuid")
    return "/".join(reversed(names))


graphs = [s for s in slices if is_graph(s)]
for g in graphs:
    inner = [s for s in slices if s["track"] == g["track"] and not is_graph(s)
             and s["args"].get("correlation_id") == g["args"]["correlation_id"]]
    if len(inner) != g["args"]["replayed work"]:
        fail(f"graph slice at {g['start']}: {len(inner)} slices of its launch, it says "
             f"{g['args']['replayed work']}")
    if any(s["start"] < g["start"] or s["end"] > g["end"] for s in inner):
        fail(f"graph slice at {g['start']}: its work is not inside it")
threads = sorted({(one(one(d, "thread"), "pid"), one(one(d, "thread"), "tid"),
                   one(one(d, "thread"), "thread_name"))
                  for d in tracks.values() if "thread" in d})
by_track = Counter()
for s in slices:
    by_track[path(s["track"])] += 1
folded = Counter()
for ts, ps in samples:
    if one(ps, "callstack_iid") is not None:
        folded[";".join(stack_names(one(ps, "callstack_iid")))] += 1
json.dump({
    "packets": len(packets),
    "threads": [list(t) for t in threads],
    "tracks": sorted(path(u) for u in tracks),
    "slices_by_track": dict(by_track),
    "names_by_kind": {
        "api": sorted(Counter(s["name"] for s in slices if "/CUDA API" in path(s["track"])).items()),
        "gpu": sorted(Counter(s["name"] for s in slices if path(s["track"]).startswith("GPU ")
                              and not is_graph(s)).items()),
        "graph": sorted(Counter(s["name"] for s in slices if is_graph(s)).items()),
        "nvtx": sorted(Counter(s["name"] for s in slices if "/NVTX" in path(s["track"])).items()),
        "offcpu": sorted(Counter(s["name"] for s in slices if "/off-CPU" in path(s["track"])).items()),
        "sync": sorted(Counter(s["name"] for s in slices if "/CUDA sync" in path(s["track"])).items()),
    },
    "files": [[s["name"], s["start"], s["end"], s["args"].get("file")] for s in
              sorted(slices, key=lambda s: s["start"]) if path(s["track"]).startswith("recording files")],
    "api_slices": sum(1 for s in slices if "/CUDA API" in path(s["track"])),
    "api_with_stack": sum(1 for s in slices if "/CUDA API" in path(s["track"]) and s["stack"]),
    "api_stack_tails": dict(Counter(";".join(s["stack"][-3:]) for s in slices
                                    if "/CUDA API" in path(s["track"]) and s["stack"])),
    # a kernel PC sampling slowed: the views' time is its unsampled time
    "gpu_ns": sorted(int(s["args"].get("GPU ns unsampled", s["end"] - s["start"])) for s in slices
                     if path(s["track"]).startswith("GPU ") and not is_graph(s)),
    "graph_slices": len(graphs),
    "graph_work": sum(g["args"]["replayed work"] for g in graphs),
    "graph_work_nested": sum(1 for s in slices if path(s["track"]).startswith("GPU ")
                             and not is_graph(s) and "graph_id" in s["args"]),
    "mapping_build_ids": {defined["mapping_paths"][one(m, "path_string_ids")]:
                          defined["build_ids"][one(m, "build_id")]
                          for m in defined["mappings"].values() if one(m, "build_id") is not None},
    "mappings": len(defined["mappings"]),
    "flows": sum(started.values()),
    "gpu_slices": sum(1 for s in slices if path(s["track"]).startswith("GPU ") and not is_graph(s)),
    "memcpy_args_ok": all("bytes" in s["args"] and "GB/s" in s["args"]
                          for s in slices if s["name"].startswith("Memcpy")),
    "sync_ns": sum(s["end"] - s["start"] for s in slices if "/CUDA sync" in path(s["track"])),
    "offcpu_arg_ns": sum(s["args"].get("off-CPU ns", s["end"] - s["start"])
                         for s in slices if "/off-CPU" in path(s["track"])),
    "offcpu_ns": dict(sum((Counter({path(s["track"]) + "|" + s["name"]: s["end"] - s["start"]})
                           for s in slices if "/off-CPU" in path(s["track"])), Counter())),
    "samples": len(samples),
    "folded": dict(folded),
    # GPU memory: each counter track's highest and last value; the large
    # allocations' slices (bytes, stack)
    "counter_max": {path(u): max(v for _, v in c) for u, c in counters.items()},
    "counter_last": {path(u): c[-1][1] for u, c in counters.items()},
    "mem_slices": sorted([s["args"].get("bytes"), ";".join(s["stack"] or [])] for s in slices
                         if "memory: large allocations" in path(s["track"])),
}, sys.stdout, indent=1, sort_keys=True)

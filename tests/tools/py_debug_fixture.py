#!/usr/bin/env python3
"""Writes the fixture of one CPython interpreter for tests/unit/test_record_python.c.

Usage: py_debug_fixture.py FILE [RUNNER...] > tests/data/python/cpython-3.N.txt

FILE is the interpreter's ELF file (the executable or libpython) that
defines _PyRuntime; RUNNER is the command that runs it (default: FILE
itself), e.g. ~/.cache/xpu-perf/python/3.14/run python3.14
(scripts/python-interpreters.sh). The fixture holds what xpu-record reads
from the file: Py_Version's value and the first 1024 bytes of _PyRuntime's
initial value (where _Py_DebugOffsets is), found with readelf; and offsets
MEASURED in the running interpreter with ctypes, without the debug
offsets: the thread state's thread_id (the word equal to
threading.get_ident()), the code object's qualname, filename, linetable
(words equal to those objects' addresses), firstlineno, the bytecode
(where co_code's bytes start) and sizeof(PyASCIIObject). (The frame's
fields are checked end to end: tests/python/check.sh.) The unit test compares the layout read from the
bytes with the measured offsets.
"""
import subprocess
import sys

PROBE = r'''
import ctypes, sys, threading
api = ctypes.pythonapi
api.PyThreadState_Get.restype = ctypes.c_void_p
def u64(a): return ctypes.c_uint64.from_address(a).value
def scan(base, n, pred):
    return [o for o in range(0, n, 8) if pred(u64(base + o))]
ts = api.PyThreadState_Get()
out = {}
out["ts_thread_id"] = scan(ts, 512, lambda v: v == threading.get_ident())
co = compile("def f():\n    return 1\n", "fixture_file.py", "exec").co_consts[0]
co = co.replace(co_firstlineno=4321, co_qualname="fixture.qualname")
out["co_qualname"] = scan(id(co), 256, lambda v: v == id(co.co_qualname))
out["co_filename"] = scan(id(co), 256, lambda v: v == id(co.co_filename))
out["co_linetable"] = scan(id(co), 256, lambda v: v == id(co.co_linetable))
out["co_firstlineno"] = [o for o in range(0, 256, 4)
                         if ctypes.c_int32.from_address(id(co) + o).value == 4321]
code = co.co_code	# the opcodes (not CACHE, 0) of the unquickened copy
raw = ctypes.string_at(id(co), 512)
ops = [i for i in range(0, len(code), 2) if code[i]]
out["co_code"] = [o for o in range(16, 512 - len(code), 8)
                  if all(raw[o + i] == code[i] for i in ops)][:1]
out["ascii_size"] = [sys.getsizeof("") - 1]
for k, v in out.items():
    print(k, *v)
'''


def section_of(path, addr):
    out = subprocess.check_output(["readelf", "-SW", path], text=True)
    for line in out.splitlines():
        if "]" not in line:
            continue
        f = line.split("]", 1)[1].split()
        if len(f) < 5 or f[1] not in ("PROGBITS",):
            continue
        start, off, size = int(f[2], 16), int(f[3], 16), int(f[4], 16)
        if start <= addr < start + size:
            return off + (addr - start), start + size - addr
    raise SystemExit(f"{path}: no section holds {addr:#x}")


def main():
    path = sys.argv[1]
    runner = sys.argv[2:] or [path]
    syms = {}
    out = subprocess.check_output(["readelf", "-sW", "--dyn-syms", path], text=True)
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[7] in ("_PyRuntime", "Py_Version") and f[6] != "UND":
            syms[f[7]] = int(f[1], 16)
    data = open(path, "rb").read()
    off, room = section_of(path, syms["_PyRuntime"])
    runtime = data[off:off + min(1024, room)]
    off, _ = section_of(path, syms["Py_Version"])
    version = int.from_bytes(data[off:off + 4], "little")
    measured = subprocess.check_output(runner + ["-c", PROBE], text=True)
    print(f"# CPython {version >> 24}.{(version >> 16) & 255}.{(version >> 8) & 255}"
          f" ({path.split('/')[-1]}): made by tests/tools/py_debug_fixture.py")
    print(f"version {version:#010x}")
    for i in range(0, len(runtime), 32):
        print("runtime", runtime[i:i + 32].hex())
    for line in measured.splitlines():
        print("measured", line)


main()

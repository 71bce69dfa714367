#!/usr/bin/env bash
# tests/gpu/check_attach.py (the GPU attach test's checks) on synthetic step
# logs, so that the check itself is known to pass and to fail: an attached
# loop whose steps after the detach are as its twin's passes; one 6% slower
# after the detach than its twin over the same seconds fails, even when the
# twin itself got 2% faster; a host that slowed both by 8% passes against
# the twin; a window with under 99% of its kernels matched fails.
. "$(dirname "$0")/lib/e2e.sh"
CHECK=$XPU_TOP/tests/gpu/check_attach.py
# logs NAME AFTER_FACTOR [HOST_AFTER_FACTOR]: 1.5 ms steps, 20000 of them
# from t=1000 s; inside the windows (1012-1017, 1020-1023) 30% slower; after
# 1024 s: the app's x AFTER_FACTOR (a residue), both x HOST_AFTER_FACTOR
# (the host)
logs() {
	python3 - "$T/$1" "$2" "${3:-1}" <<'PY'
import random, sys
out, residue, host = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
random.seed(1)
for name, res in (("app", residue), ("twin", 1.0)):
    with open(f"{out}.{name}", "w") as f:
        t = 1000.0
        for i in range(20000):
            ms = 1.5 * random.uniform(0.97, 1.03)
            if name == "app" and (1012 < t < 1017 or 1020 < t < 1023):
                ms *= 1.3
            if t > 1024:
                ms *= res * host
            t += ms / 1000
            f.write(f"{i} {t:.6f} {ms:.4f} {ms * 0.5:.4f}\n")
PY
}
printf '1012 1017\n1020 1023\n' >"$T/windows"
echo "#   kernels      1000: by id 1000 (100.0%), by time 0 (0.0%), unmatched 0 (0.0%), 1.0 ms" >"$T/h"
echo "#   kernels      1000: by id 980 (98.0%), by time 0 (0.0%), unmatched 20 (2.0%), 1.0 ms" >"$T/h98"
echo "py::step;cudaLaunchKernel;[GPU_Kernel]k 10" >"$T/f"
run() {	# NAME HEADER: check_attach.py's exit code
	python3 "$CHECK" --ref "$T/$1.twin" --twin "$T/$1.twin" "$T/$1.app" "$T/windows" "$T/$2" "$T/f" \
		"$T/h" "$T/f" >"$T/$1.$2.out" 2>&1
}
logs same 1.0
run same h || { cat "$T/same.h.out" >&2; fail "no residue: check_attach.py failed"; }
grep -q '^ok    step time:.*beyond the twin' "$T/same.h.out" || fail "no residue: no step-time line against the twin"
logs slow 1.06 0.98
run slow h && { cat "$T/slow.h.out" >&2; fail "a 6% residue passed"; }
grep -q '^FAIL  step time:' "$T/slow.h.out" || { cat "$T/slow.h.out" >&2; fail "a 6% residue: no FAIL step-time line"; }
logs host 1.0 1.08
run host h || { cat "$T/host.h.out" >&2; fail "a host slowdown seen by the twin too was charged to the attach"; }
run same h98 && { cat "$T/same.h98.out" >&2; fail "98% of the kernels matched passed"; }
grep -q '^FAIL  attach 1: 1000 kernels, 980 matched' "$T/same.h98.out" || fail "98% matched: no FAIL line"
grep -h "step time" "$T"/*.out
echo ok

#!/usr/bin/env bash
# tests/gpu/run.sh (the GPU machine's test) without a GPU: stub nvcc,
# nvidia-smi, python, xpu-record and xpu-report let its own logic run. A
# failed per-process check must not be followed by the "ok" line for it,
# and its outputs go to $XPU_BUILD/gpu-results, never into the tracked
# tests/gpu/results/.
. "$(dirname "$0")/lib/e2e.sh"
[ "$(id -u)" -eq 0 ] || skip "tests/gpu/run.sh insists on root"
S=$T/stub
mkdir -p "$S"
: >"$S/libxpu-cupti.so"
cat >"$S/nvidia-smi" <<'EOF'
#!/bin/sh
echo "GPU 0: stub"
EOF
cat >"$S/nvcc" <<'EOF'
#!/bin/bash
[ "$1" = --version ] && { echo "stub nvcc"; exit 0; }
out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
case $out in *cupti_first) exit 1 ;; esac
printf '#!/bin/sh\necho DONE\n' >"$out" && chmod +x "$out"
EOF
cat >"$S/python" <<'EOF'
#!/bin/sh
echo "FAIL  stub check.py"
exit 1
EOF
cat >"$S/xpu-record" <<'EOF'
#!/bin/bash
while [ $# -gt 0 ] && [ "$1" != -- ]; do [ "$1" = -o ] && out=$2; shift; done
shift
: >"$out"
"$@"
EOF
# Two pids; pid 22 has GPU work under path_a only, unless STUB_ALL=1.
cat >"$S/xpu-report" <<'EOF'
#!/bin/bash
all='a;path_a(int, long);k 1\na;path_b(int, long);k 1\na;path_graph(int, long);k 1\n'
case " $* " in
*" --header "*) echo "#   kernels          1160: by id 1160 (100.0%)" ;;
*" --dump "*) printf 'GPU_KERNEL time=1 pid=11 x\nGPU_KERNEL time=2 pid=22 x\n' ;;
*" --pid 11 "*) printf "$all" ;;
*" --pid 22 "*) [ -n "${STUB_ALL:-}" ] && printf "$all" || printf 'a;path_a(int, long);k 1\n' ;;
*) echo "main;f 3" ;;
esac
EOF
chmod +x "$S"/*

saved_sum() { (cd "$XPU_TOP/tests/gpu/results" && ls -A | sort && cat -- *) | cksum; }
before=$(saved_sum)
run_gpu() {	# log
	env -u OUT PATH="$S:$PATH" XPU_BIN="$S" XPU_BUILD="$T/build" NVCC="$S/nvcc" PYTHON="$S/python" \
		bash "$XPU_TOP/tests/gpu/run.sh" >"$T/$1" 2>&1
}

run_gpu fail.log; rc=$?
[ $rc -eq 1 ] || { cat "$T/fail.log" >&2; fail "run.sh with a failed check exited $rc, want 1"; }
grep -qF 'FAIL  pid 22: no GPU work under path_b(int, long);' "$T/fail.log" ||
	{ cat "$T/fail.log" >&2; fail "the stubbed per-pid failure was not reported"; }
grep -q "^ok    each process's kernels" "$T/fail.log" &&
	fail "run.sh says 'ok each process's kernels under its own paths' after a failure"

STUB_ALL=1 run_gpu pass.log
grep -q "^ok    each process's kernels" "$T/pass.log" ||
	{ cat "$T/pass.log" >&2; fail "no 'ok each process's kernels' line when every pid passes"; }

[ -f "$T/build/gpu-results/machine.txt" ] && [ -f "$T/build/gpu-results/multi.header" ] ||
	fail "run.sh did not write its outputs to \$XPU_BUILD/gpu-results"
[ "$(saved_sum)" = "$before" ] || fail "run.sh without --save changed the tracked tests/gpu/results/"
echo "ok: per-pid failure reported without the ok line; outputs in \$XPU_BUILD/gpu-results"

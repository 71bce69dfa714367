#!/bin/bash
# What capping the stack copy does to PyTorch launch stacks (quality: check.py on
# torch_demo.py) and to the launch path (bench/gpu_overhead.sh rows d16k, d32k).
# XPU_BIN=<dir with the tools> tests/gpu/launch_stack_caps.sh; results in
# tests/gpu/results/launch_stack_caps.txt. Not part of run.sh.
B=${XPU_BIN:?set XPU_BIN}; TOP=$(cd "$(dirname "$0")/../.." && pwd); R=/tmp/capexp; mkdir -p $R
for n in 16384 32768 65536 131064; do
	$B/xpu-record -F 999 --call-graph dwarf,$n --cupti-lib $B/libxpu-cupti.so -o $R/t$n.data -- python3 $TOP/tests/gpu/torch_demo.py > $R/t$n.out 2> $R/t$n.err
	$B/xpu-report -i $R/t$n.data --folded > $R/t$n.folded 2>/dev/null
	$B/xpu-report -i $R/t$n.data --header > $R/t$n.header 2>/dev/null
	echo "== cap $n: $(ls -l $R/t$n.data | awk '{print $5}') bytes, $(grep 'correlation lost' $R/t$n.header)"
	python3 $TOP/tests/gpu/check.py torch $R/t$n.folded 999 $R/t$n.header | grep -v '^ok    GPU\|^PASSED'
	# where the launch stacks of kernels start (their second frame, weighted)
	awk '$0 ~ /\[GPU_Kernel\]/ { n = $NF; split($0, f, ";"); r = f[2]; w[r] += n } END { for (r in w) print w[r], r }' $R/t$n.folded | sort -rn | head -4
done
XPU_BIN=$B MODES=launch REPEAT=3 TOOLS="none floor callbacks fp d16k d32k xpu" bash $TOP/bench/gpu_overhead.sh

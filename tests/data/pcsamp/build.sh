#!/bin/sh
# Rebuilds the cubins from their .cu files (needs the CUDA toolkit).
set -e
cd "$(dirname "$0")"
for f in fake_kernel multi_kernel; do
	"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -cubin -lineinfo -arch=sm_90 -o $f.cubin $f.cu
done

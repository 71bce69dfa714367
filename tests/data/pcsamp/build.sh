#!/bin/sh
# Rebuilds fake_kernel.cubin from fake_kernel.cu (needs the CUDA toolkit).
set -e
cd "$(dirname "$0")"
"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -cubin -lineinfo -arch=sm_90 -o fake_kernel.cubin fake_kernel.cu

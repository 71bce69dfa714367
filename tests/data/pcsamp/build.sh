#!/bin/sh
# Rebuilds the cubins and fat-binary libraries from their .cu files (needs
# the CUDA toolkit).
set -e
cd "$(dirname "$0")"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
for f in fake_kernel multi_kernel; do
	"$NVCC" -cubin -lineinfo -arch=sm_90 -o $f.cubin $f.cu
done
# host libraries whose .nv_fatbin holds fake_kernel's cubin (report/gpu/
# fatbin.h): as nvcc stores it by default (the ELF entry plain) and
# zstd-compressed; never loaded (-cudart=none), only mapped by
# fake_cuda_app (FAKE_MAP_FILE)
"$NVCC" -shared -Xcompiler -fPIC -lineinfo -arch=sm_90 -cudart=none -o libfake_kernel.so fake_kernel.cu
"$NVCC" -shared -Xcompiler -fPIC -lineinfo -arch=sm_90 -cudart=none --compress-mode=size \
	-o libfake_kernel_z.so fake_kernel.cu

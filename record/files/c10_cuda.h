/* SPDX-License-Identifier: MIT */
/* What a mapped libc10_cuda.so offers the allocator probes (c10_cuda.c). */
#ifndef XPU_RECORD_FILES_C10_CUDA_H
#define XPU_RECORD_FILES_C10_CUDA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define C10_CUDA_LIB		"libc10_cuda.so"
/* the uprobe fallback's functions, by demangled name */
#define C10_CUDA_MALLOC	"c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned long, CUstream_st*)"
#define C10_CUDA_FREE	"c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::free(void*)"

enum c10_cuda_probes {
	C10_CUDA_NONE = 0,	/* neither: left alone */
	C10_CUDA_USDT,		/* the notes pytorch:malloc and pytorch:free */
	C10_CUDA_UPROBE,	/* no notes, but the two functions */
};

#define C10_CUDA_KNOWN	8
struct c10_cuda_file {
	int fd;			/* the file read: the caller closes it (-1: none) */
	uint64_t key;		/* st_dev << 40 ^ st_ino */
	bool read;		/* key was not one of known[]: the file was read */
	bool mapped;		/* opened through /proc/PID/map_files */
	enum c10_cuda_probes probes;
	int nr_notes;		/* its stapsdt notes, all providers */
	uint64_t off[2];	/* C10_CUDA_UPROBE: malloc's and free's file offsets */
};

/*
 * Opens the libc10_cuda.so process pid mapped at [start, end) from path:
 * through /proc/PID/map_files (the mapped inode, whatever the path names
 * now), else path itself following no link; a regular file read with the
 * time bound of common/bounded.h. Unless its key is one of
 * known[0..nr_known), reads which probes it offers. 0 and *out, or -errno.
 */
int c10_cuda__open(pid_t pid, uint64_t start, uint64_t end, const char *path,
		   const uint64_t *known, int nr_known, struct c10_cuda_file *out);

/* The file pid mapped at [start, end) from path, opened as
 * c10_cuda__open() does but not read (a return site's uprobe goes on it):
 * its descriptor, or -errno. */
int c10_cuda__open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path);

/* Which probes the ELF file at fd offers (out->probes, nr_notes, off). */
void c10_cuda__read_fd(int fd, struct c10_cuda_file *out);

#endif

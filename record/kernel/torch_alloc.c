// SPDX-License-Identifier: MIT
/*
 * PyTorch's CUDA caching allocator, block by block (--gpu-memory;
 * bpf/xpu_alloc.bpf.h has the programs): when a tracked process maps a
 * libc10_cuda.so, at its start or later by dlopen (the side band's MMAP,
 * or /proc/PID/maps for -p), the file is read once (record/files/c10_cuda.c:
 * the USDT notes pytorch:malloc and pytorch:free, else the functions by
 * demangled name) and the probes are placed for that process only:
 *  - USDT through libbpf, which increments the notes' semaphores in .probes
 *    (the allocator fires the probes only while they are set);
 *  - else uprobes on NativeCachingAllocator::malloc and ::free, by the
 *    file offsets found, and one on each return site of malloc as the
 *    first malloc from there tells it (XPU_BPF_EV_ALLOC_SITE; not a
 *    uretprobe, which turns an exception thrown through malloc into
 *    std::terminate).
 * Per process, as the autograd probes (record/kernel/bpf.c): another
 * PyTorch process using the same file, not recorded, takes no trap and
 * keeps its semaphores at zero. The probes go on the descriptor read
 * (/proc/self/fd/N), so on the file whose notes or symbols were read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "bpf/xpu_events.h"
#include "bpf/xpu_record.skel.h"
#include "common/file.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "record/clock.h"
#include "record/files/c10_cuda.h"
#include "record/kernel/torch_alloc.h"

#define TORCH_ALLOC_SITES_MAX	64	/* return sites probed per process */

struct torch_alloc {
	struct xpu_record_bpf *skel;
	/* libc10_cuda.so files seen (by dev and inode): what they offer */
	struct { uint64_t key, off[2]; enum c10_cuda_probes probes; } files[C10_CUDA_KNOWN];
	int nr_files;
	struct u64map procs;		/* pid << 32 ^ file index -> 1: done */
	struct bpf_link **links;
	int nr_links;
	size_t links_cap;
	int nr_usdt, nr_uprobe;		/* processes probed each way */
	/* the uprobe fallback's return sites (pid, address) in alloc_sites */
	struct xpu_bpf_site_key *sites;
	int nr_sites;
	size_t sites_cap;
};

struct torch_alloc *torch_alloc__new(struct xpu_record_bpf *skel)
{
	struct torch_alloc *ta = xzalloc(sizeof(*ta));

	ta->skel = skel;
	u64map__init(&ta->procs);
	return ta;
}

static void torch_alloc__keep(struct torch_alloc *ta, struct bpf_link **l, int n)
{
	ta->links = xgrow(ta->links, &ta->links_cap, (size_t)ta->nr_links + n, sizeof(*ta->links));
	for (int i = 0; i < n; i++)
		ta->links[ta->nr_links++] = l[i];
}

/* The probes of file f in process pid, through fdpath: 0 or -errno. */
static int torch_alloc__attach(struct torch_alloc *ta, int f, pid_t pid, const char *fdpath)
{
	struct bpf_link *l[2] = { NULL, NULL };
	int n, err;

	if (ta->files[f].probes == C10_CUDA_USDT) {
		l[0] = bpf_program__attach_usdt(ta->skel->progs.xpu_torch_malloc, pid, fdpath,
						"pytorch", "malloc", NULL);
		l[1] = l[0] ? bpf_program__attach_usdt(ta->skel->progs.xpu_torch_free, pid, fdpath,
						       "pytorch", "free", NULL) : NULL;
		n = 2;
	} else {	/* the return sites' probes come with the first mallocs */
		l[0] = bpf_program__attach_uprobe(ta->skel->progs.xpu_torch_umalloc, false, pid, fdpath,
						  ta->files[f].off[0]);
		l[1] = l[0] ? bpf_program__attach_uprobe(ta->skel->progs.xpu_torch_ufree, false, pid,
							 fdpath, ta->files[f].off[1]) : NULL;
		n = 2;
	}
	if (!l[n - 1]) {
		err = -errno;
		for (int i = 0; i < n; i++)
			bpf_link__destroy(l[i]);
		return err ? err : -EINVAL;
	}
	torch_alloc__keep(ta, l, n);
	if (ta->files[f].probes == C10_CUDA_USDT)
		ta->nr_usdt++;
	else
		ta->nr_uprobe++;
	return 0;
}

/* The index of the file read (a new row for one not seen), or -1. */
static int torch_alloc__file(struct torch_alloc *ta, const struct c10_cuda_file *cf,
			     const char *path)
{
	int f;

	for (f = 0; f < ta->nr_files && ta->files[f].key != cf->key; f++)
		;
	if (f < ta->nr_files)
		return f;
	if (f == C10_CUDA_KNOWN || !cf->read)
		return -1;
	ta->nr_files++;
	ta->files[f].key = cf->key;
	ta->files[f].probes = cf->probes;
	memcpy(ta->files[f].off, cf->off, sizeof(ta->files[f].off));
	if (cf->probes == C10_CUDA_NONE)
		warn("--gpu-memory: %s has neither the USDT notes pytorch:malloc and pytorch:free "
		     "nor NativeCachingAllocator::malloc and ::free: its allocations are not recorded",
		     path);
	else
		debug(1, "gpu-memory: %s: %s", path, cf->probes == C10_CUDA_USDT ?
		      "USDT notes pytorch:malloc and pytorch:free" :
		      "no USDT notes: uprobes on NativeCachingAllocator::malloc and ::free");
	return f;
}

void torch_alloc__mapping(struct torch_alloc *ta, pid_t pid, uint64_t start, uint64_t end,
			  const char *path)
{
	const char *base = strrchr(path, '/');
	uint64_t known[C10_CUDA_KNOWN], t0, *done;
	struct c10_cuda_file cf;
	char fdpath[64];
	int f, ret;

	if (!ta || !base || strncmp(base + 1, C10_CUDA_LIB, sizeof(C10_CUDA_LIB) - 1) ||
	    (base[sizeof(C10_CUDA_LIB)] && base[sizeof(C10_CUDA_LIB)] != '.'))
		return;
	t0 = record__now_ns();
	for (f = 0; f < ta->nr_files; f++)
		known[f] = ta->files[f].key;
	ret = c10_cuda__open(pid, start, end, path, known, ta->nr_files, &cf);
	if (ret) {
		debug(1, "gpu-memory: %s (pid %d): %s: not probed", path, (int)pid, strerror(-ret));
		return;
	}
	f = torch_alloc__file(ta, &cf, path);
	if (f < 0)
		goto out_close;
	done = u64map__slot(&ta->procs, (uint64_t)pid << 32 ^ (uint64_t)f);
	if (ta->files[f].probes == C10_CUDA_NONE || *done)
		goto out_close;
	*done = 1;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", cf.fd);
	ret = torch_alloc__attach(ta, f, pid, fdpath);
	if (ret)
		warn("--gpu-memory: no allocator probes in %s for pid %d: %s", path, (int)pid,
		     strerror(-ret));
	else
		debug(1, "gpu-memory: %s probes in %s for pid %d, placed in %.1f ms",
		      ta->files[f].probes == C10_CUDA_USDT ? "USDT" : "uprobe", path, (int)pid,
		      (double)(record__now_ns() - t0) / 1e6);
out_close:
	close(cf.fd);
}

/* The mapping of pid that holds address ra: its bounds, offset and path
 * (from /proc/PID/maps, the process's own account); 0 or -errno. */
static int torch_alloc__find_map(pid_t pid, uint64_t ra, uint64_t *start, uint64_t *end,
				 uint64_t *pgoff, char *path, size_t size)
{
	char name[64], line[4096 + 128];
	int ret = -ENOENT;
	FILE *fp;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	if (!(fp = file__fopen_regular(name, 0, FILE_TEXT_MAX)))
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long s, e, off;
		char *file = strchr(line, '/'), perm[8];

		if (!file || sscanf(line, "%llx-%llx %7s %llx", &s, &e, perm, &off) != 4 || ra < s ||
		    ra >= e)
			continue;
		if (perm[2] != 'x')	/* a return address in code, or none */
			break;
		file[strcspn(file, "\n")] = 0;
		if (strlen(file) >= size)
			break;
		*start = s;
		*end = e;
		*pgoff = off;
		strcpy(path, file);
		ret = 0;
		break;
	}
	fclose(fp);
	return ret;
}

/* A uprobe on the return site ra of pid: 0 or -errno. */
static int torch_alloc__site_probe(struct torch_alloc *ta, pid_t pid, uint64_t ra)
{
	uint64_t start = 0, end = 0, pgoff = 0;
	char path[PATH_MAX], fdpath[64];
	struct bpf_link *l;
	int fd, ret;

	ret = torch_alloc__find_map(pid, ra, &start, &end, &pgoff, path, sizeof(path));
	if (ret)
		return ret;
	fd = c10_cuda__open_mapped(pid, start, end, path);
	if (fd < 0)
		return fd;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	l = bpf_program__attach_uprobe(ta->skel->progs.xpu_torch_umalloc_ret, false, pid, fdpath,
				       ra - start + pgoff);
	ret = l ? 0 : (errno ? -errno : -EINVAL);
	close(fd);
	if (l)
		torch_alloc__keep(ta, &l, 1);
	debug(1, "gpu-memory: pid %d: malloc's return site %s+%#llx: %s", (int)pid, path,
	      (unsigned long long)(ra - start + pgoff), l ? "probed" : strerror(-ret));
	return ret;
}

void torch_alloc__site(struct torch_alloc *ta, pid_t pid, uint64_t ra)
{
	struct xpu_bpf_site_key k = { .ra = ra, .pid = (uint32_t)pid };
	uint8_t v;

	int n = 0;

	if (!ta)
		return;
	/* the return address is the program's word: a program that makes up
	 * many gets no more probes than PyTorch's few call sites need */
	for (int i = 0; i < ta->nr_sites; i++)
		n += ta->sites[i].pid == (uint32_t)pid;
	if (n >= TORCH_ALLOC_SITES_MAX)
		v = XPU_BPF_SITE_FAILED;
	else
		v = torch_alloc__site_probe(ta, pid, ra) ? XPU_BPF_SITE_FAILED : XPU_BPF_SITE_PROBED;
	if (bpf_map_update_elem(bpf_map__fd(ta->skel->maps.alloc_sites), &k, &v, BPF_ANY))
		return;
	ta->sites = xgrow(ta->sites, &ta->sites_cap, (size_t)ta->nr_sites + 1, sizeof(*ta->sites));
	ta->sites[ta->nr_sites++] = k;
}

void torch_alloc__exit(struct torch_alloc *ta, pid_t pid)
{
	int n = 0;

	if (!ta)
		return;
	for (int f = 0; f < ta->nr_files; f++)
		u64map__del(&ta->procs, (uint64_t)pid << 32 ^ (uint64_t)f);
	/* a later process of that pid learns its own return sites */
	for (int i = 0; i < ta->nr_sites; i++) {
		if (ta->sites[i].pid == (uint32_t)pid)
			bpf_map_delete_elem(bpf_map__fd(ta->skel->maps.alloc_sites), &ta->sites[i]);
		else
			ta->sites[n++] = ta->sites[i];
	}
	ta->nr_sites = n;
}

void torch_alloc__stats(const struct torch_alloc *ta, int *usdt, int *uprobe)
{
	*usdt = ta ? ta->nr_usdt : 0;
	*uprobe = ta ? ta->nr_uprobe : 0;
}

void torch_alloc__detach(struct torch_alloc *ta)
{
	if (!ta)
		return;
	for (int i = 0; i < ta->nr_links; i++)
		bpf_link__destroy(ta->links[i]);
	ta->nr_links = 0;
}

void torch_alloc__free(struct torch_alloc *ta)
{
	if (!ta)
		return;
	torch_alloc__detach(ta);
	u64map__exit(&ta->procs);
	free(ta->sites);
	free(ta->links);
	free(ta);
}

// SPDX-License-Identifier: MIT
/* PC sample lines from the mapped files' fat binaries (gpu_fatbin.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/elf_section.h"
#include "common/file.h"
#include "common/xalloc.h"
#include "report/gpu/cubin_lines.h"
#include "report/gpu/gpu_fatbin.h"
#include "report/machine/machine.h"

struct gpu_fatbin_cubin {
	unsigned arch;
	struct cubin_lines lines;
};

struct gpu_fatbin_dso {
	struct gpu_fatbin_cubin *c;	/* those with a line table */
	size_t nr, cap;
};

/* the cubins of a (pid, maps, kernel) that have the kernel with lines */
struct gpu_fatbin_kernel {
	const struct gpu_fatbin_cubin **c;
	size_t nr, cap;
};

void gpu_fatbin__init(struct gpu_fatbin *fb)
{
	memset(fb, 0, sizeof(*fb));
	u64map__init(&fb->dsos);
	bmap__init(&fb->kernels);
}

static void fb__kernel_free(void *v)
{
	struct gpu_fatbin_kernel *k = v;

	free(k->c);
	free(k);
}

static void fb__dso_free(struct gpu_fatbin_dso *d)
{
	if (!d)
		return;
	for (size_t j = 0; j < d->nr; j++)
		cubin_lines__exit(&d->c[j].lines);
	free(d->c);
	free(d);
}

void gpu_fatbin__exit(struct gpu_fatbin *fb)
{
	uint64_t k, v;

	for (size_t i = 0; u64map__next(&fb->dsos, &i, &k, &v); )
		fb__dso_free((struct gpu_fatbin_dso *)(uintptr_t)v);
	u64map__exit(&fb->dsos);
	fb__dso_free(fb->dir_cubins);
	free(fb->dir);
	bmap__exit(&fb->kernels, fb__kernel_free);
}

struct fb_scan {
	struct gpu_fatbin *fb;
	struct gpu_fatbin_dso *d;
};

static int fb__cubin(unsigned arch, const void *cubin, size_t size, void *ctx)
{
	struct fb_scan *sc = ctx;
	struct cubin_lines cl;

	if (cubin_lines__parse(&cl, cubin, size))
		return 0;
	if (!cl.nr_rows) {		/* built without -lineinfo */
		cubin_lines__exit(&cl);
		return 0;
	}
	sc->d->c = xgrow(sc->d->c, &sc->d->cap, sc->d->nr + 1, sizeof(*sc->d->c));
	sc->d->c[sc->d->nr++] = (struct gpu_fatbin_cubin){ arch, cl };
	if (sc->d != sc->fb->dir_cubins)
		sc->fb->cubins_lines++;
	return 0;
}

/* The cubins with lines of the DSO's .nv_fatbin, read once. */
static struct gpu_fatbin_dso *fb__dso(struct gpu_fatbin *fb, struct machine *m, struct dso *dso)
{
	uint64_t *slot = u64map__slot(&fb->dsos, (uint64_t)(uintptr_t)dso);
	struct gpu_fatbin_dso *d;
	struct fb_scan sc;
	GElf_Shdr sh;

	if (*slot)
		return (struct gpu_fatbin_dso *)(uintptr_t)*slot;
	d = xzalloc(sizeof(*d));
	*slot = (uint64_t)(uintptr_t)d;
	if (dso__load(dso, &m->dsos) || !dso->elf || !dso->raw ||
	    !elf_section__find(dso->elf, ".nv_fatbin", &sh) || sh.sh_type == SHT_NOBITS ||
	    sh.sh_offset > dso->raw_size || sh.sh_size > dso->raw_size - sh.sh_offset)
		return d;
	if (sh.sh_size > GPU_FATBIN_SECTION_MAX) {
		fb->too_large++;
		return d;
	}
	fb->files++;
	sc = (struct fb_scan){ fb, d };
	fatbin__each_cubin(dso->raw + sh.sh_offset, sh.sh_size, fb__cubin, &sc, &fb->st);
	return d;
}

void gpu_fatbin__set_dir(struct gpu_fatbin *fb, const char *dir)
{
	free(fb->dir);
	fb->dir = dir ? xstrdup(dir) : NULL;
}

#define FB_DIR_DEPTH	16
#define FB_DIR_FILES	100000		/* *.cubin files read at most */

/* The *.cubin files under path (no links followed), depth levels down. */
static void fb__scan_dir(struct gpu_fatbin *fb, const char *path, int depth)
{
	DIR *dir = opendir(path);
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) && fb->dir_files < FB_DIR_FILES) {
		size_t len = strlen(de->d_name);
		char *sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = xasprintf("%s/%s", path, de->d_name);
		if (de->d_type == DT_DIR && depth > 0) {
			fb__scan_dir(fb, sub, depth - 1);
		} else if ((de->d_type == DT_REG || de->d_type == DT_UNKNOWN) && len > 6 &&
			   !strcmp(de->d_name + len - 6, ".cubin")) {
			struct stat st;
			int fd = file__open_regular(sub, O_NOFOLLOW, FATBIN_CUBIN_MAX, &st);

			if (fd >= 0) {
				char *buf = xmalloc((size_t)st.st_size + 1);
				struct fb_scan sc = { fb, fb->dir_cubins };
				size_t got = 0;
				ssize_t n;

				while (got < (size_t)st.st_size &&
				       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
					got += (size_t)n;
				close(fd);
				fb->dir_files++;
				if (got == (size_t)st.st_size)
					fb__cubin(0, buf, got, &sc);	/* any architecture */
				free(buf);
			}
		}
		free(sub);
	}
	closedir(dir);
}

struct fb_find {
	struct gpu_fatbin *fb;
	struct machine *m;
	unsigned sm;
	const char *mangled;
	struct gpu_fatbin_kernel *k;
	struct u64map seen;		/* DSOs looked at (a file mapped in several parts) */
};

static bool fb__has_func(const struct cubin_lines *cl, const char *mangled)
{
	for (size_t i = 0; i < cl->nr_funcs; i++)
		if (!strcmp(cl->funcs[i], mangled))
			return true;
	return false;
}

static int fb__map(struct map *map, void *arg)
{
	struct fb_find *f = arg;
	struct gpu_fatbin_dso *d;
	uint64_t *seen;

	if (!map->dso)
		return 0;
	seen = u64map__slot(&f->seen, (uint64_t)(uintptr_t)map->dso);
	if (*seen)
		return 0;
	*seen = 1;
	d = fb__dso(f->fb, f->m, map->dso);
	for (size_t i = 0; i < d->nr; i++)
		if ((!f->sm || d->c[i].arch == f->sm) && fb__has_func(&d->c[i].lines, f->mangled)) {
			f->k->c = xgrow(f->k->c, &f->k->cap, f->k->nr + 1, sizeof(*f->k->c));
			f->k->c[f->k->nr++] = &d->c[i];
		}
	return 0;
}

/* The cubins that have the kernel, for pid's mappings around time: found
 * once per (pid, span of unchanged mappings, SM, kernel). */
static const struct gpu_fatbin_kernel *fb__kernel(struct gpu_fatbin *fb, struct machine *m,
						  uint32_t pid, uint64_t time, unsigned sm,
						  const char *mangled)
{
	size_t len = strlen(mangled);
	uint64_t lo, hi;
	char *key;
	void **slot;
	bool found;
	struct fb_find f;

	machine__maps_span(m, pid, time, &lo, &hi);
	key = xmalloc(4 + 4 + 8 + len);
	memcpy(key, &pid, 4);
	memcpy(key + 4, &sm, 4);
	memcpy(key + 8, &lo, 8);
	memcpy(key + 16, mangled, len);
	slot = bmap__slot(&fb->kernels, key, 16 + len, &found);
	free(key);
	if (found)
		return *slot;
	f = (struct fb_find){ .fb = fb, .m = m, .sm = sm, .mangled = mangled,
			      .k = xzalloc(sizeof(*f.k)) };
	*slot = f.k;
	u64map__init(&f.seen);
	machine__for_each_map(m, pid, time, fb__map, &f);
	u64map__exit(&f.seen);
	if (fb->dir && !fb->dir_cubins) {	/* --cubins DIR, once */
		fb->dir_cubins = xzalloc(sizeof(*fb->dir_cubins));
		fb__scan_dir(fb, fb->dir, FB_DIR_DEPTH);
	}
	for (size_t i = 0; fb->dir_cubins && i < fb->dir_cubins->nr; i++)
		if (fb__has_func(&fb->dir_cubins->c[i].lines, mangled)) {
			f.k->c = xgrow(f.k->c, &f.k->cap, f.k->nr + 1, sizeof(*f.k->c));
			f.k->c[f.k->nr++] = &fb->dir_cubins->c[i];
		}
	return f.k;
}

int gpu_fatbin__line(struct gpu_fatbin *fb, struct machine *m, uint32_t pid, uint64_t time,
		     unsigned sm, const char *mangled, uint64_t pc, const char **file,
		     uint32_t *line)
{
	const struct gpu_fatbin_kernel *k;
	const char *f0 = NULL;
	uint32_t l0 = 0;
	size_t n = 0;

	if (!mangled)
		return -ENOENT;
	k = fb__kernel(fb, m, pid, time, sm, mangled);
	for (size_t i = 0; i < k->nr; i++) {
		const char *f;
		uint32_t l;

		if (cubin_lines__lookup(&k->c[i]->lines, mangled, pc, &f, &l))
			continue;
		if (n++ && (l != l0 || strcmp(f, f0))) {
			fb->ambiguous++;
			return -ENOENT;
		}
		f0 = f;
		l0 = l;
	}
	if (!n)
		return -ENOENT;
	fb->found++;
	*file = f0;
	*line = l0;
	return 0;
}

void gpu_fatbin__header(const struct gpu_fatbin *fb, FILE *fp)
{
	if (!fb->dsos.len && !fb->dir_cubins)
		return;
	fprintf(fp, "#   pc sample lines where the trace has no cubin: %llu PCs, %llu ambiguous; "
		"mapped files' fat binaries: %llu files read, %llu cubins with lines, %llu LZ4 "
		"cubins not read, %llu damaged, %llu files over %u MB not read",
		(unsigned long long)fb->found, (unsigned long long)fb->ambiguous,
		(unsigned long long)fb->files, (unsigned long long)fb->cubins_lines,
		(unsigned long long)fb->st.lz4, (unsigned long long)fb->st.bad,
		(unsigned long long)fb->too_large, GPU_FATBIN_SECTION_MAX >> 20);
	if (fb->dir_cubins)
		fprintf(fp, "; --cubins %s: %llu .cubin files read, %zu with lines", fb->dir,
			(unsigned long long)fb->dir_files, fb->dir_cubins->nr);
	fputc('\n', fp);
}

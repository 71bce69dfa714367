// SPDX-License-Identifier: MIT
/* Installing the finders for reports on another machine, and saying which
 * frames stayed unsymbolized and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/xalloc.h"
#include "report/files/archive.h"
#include "report/finders/find_chain.h"

void find_chain__install(struct dsos *d, const char *trace, const char *symfs)
{
	char *archive = xasprintf("%s%s", trace, ARCHIVE_SUFFIX);

	find_archive__install(d, archive);
	free(archive);
	if (symfs)
		find_symfs__install(d, symfs);
	find_buildid_cache__install(d);
	find_debuginfod__install(d);
}

enum unsym_reason {
	UNSYM_MISSING, UNSYM_MISMATCH, UNSYM_STRIPPED, UNSYM_DYNSYM, UNSYM_GAPS,
	UNSYM_BAD_ELF, UNSYM_TRUNCATED,
	UNSYM_REFUSED,		/* + enum path_refusal - 1: one reason per refusal */
	UNSYM_NR = UNSYM_REFUSED + PATH_REFUSAL_NR - 1
};

static const char *find_chain__reason_str(int r)
{
	static const char *const names[UNSYM_REFUSED] = {
		[UNSYM_MISSING]	  = "file not found",
		[UNSYM_MISMATCH]  = "build-id mismatch",
		[UNSYM_STRIPPED]  = "stripped (no symbols)",
		/* liblzma: its exported functions named, its static ones not */
		[UNSYM_DYNSYM]	  = "only exported symbols (.dynsym; install its debug symbols)",
		[UNSYM_GAPS]	  = "outside every symbol",
		[UNSYM_BAD_ELF]	  = "not a readable ELF",
		[UNSYM_TRUNCATED] = "truncated ELF",
	};

	if (r < UNSYM_REFUSED)
		return names[r];
	return path__refusal_str((enum path_refusal)(r - UNSYM_REFUSED + 1));
}

static int find_chain__reason(const struct dso *dso)
{
	switch (dso->status) {
	case DSO_MISSING:	return UNSYM_MISSING;
	case DSO_MISMATCH:	return UNSYM_MISMATCH;
	case DSO_BAD_ELF:	return UNSYM_BAD_ELF;
	case DSO_TRUNCATED:	return UNSYM_TRUNCATED;
	case DSO_REFUSED:	return UNSYM_REFUSED + (int)dso->refused - 1;
	case DSO_OK:
		if (!dso->symtab_loaded)
			return -1;
		if (!dso->symtab.nr)
			return UNSYM_STRIPPED;
		return dso->symtab_from && !strcmp(dso->symtab_from, "dynsym") ? UNSYM_DYNSYM
									       : UNSYM_GAPS;
	default:		/* [vdso], anonymous memory: nothing to look for */
		return -1;
	}
}

void find_chain__warn(const struct dsos *d)
{
	uint64_t addrs[UNSYM_NR] = { 0 }, total = 0;
	size_t files[UNSYM_NR] = { 0 }, nr_files = 0, size;
	char *names[UNSYM_NR] = { NULL }, *msg = NULL;
	FILE *fp;

	/* every module is named: the one a user must fetch may be the last */
	for (size_t i = 0; i < d->nr; i++) {
		const struct dso *dso = d->list[i];
		int r = find_chain__reason(dso);
		char *was = names[r < 0 ? 0 : r];

		if (r < 0 || !dso->frames_unsymbolized)
			continue;
		addrs[r] += dso->frames_unsymbolized;
		total += dso->frames_unsymbolized;
		nr_files++;
		names[r] = xasprintf("%s%s%s", was ? was : "", was ? ", " : "", dso->short_name);
		free(was);
		files[r]++;
	}
	if (!total)
		return;
	fp = open_memstream(&msg, &size);
	if (!fp)
		return;
	for (int r = 0, n = 0; r < UNSYM_NR; r++) {
		if (!addrs[r])
			continue;
		fprintf(fp, "%s%llu %s (%zu file%s: %s)", n++ ? ", " : "",
			(unsigned long long)addrs[r], find_chain__reason_str(r), files[r],
			files[r] == 1 ? "" : "s", names[r]);
		free(names[r]);
	}
	fclose(fp);
	warn("%llu addresses in %zu file%s stayed unsymbolized: %s; bring the files with "
	     "xpu-archive, --symfs DIR or the build-id cache (Documentation/xpu-archive.md)",
	     (unsigned long long)total, nr_files, nr_files == 1 ? "" : "s", msg);
	free(msg);
}

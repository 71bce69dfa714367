// SPDX-License-Identifier: MIT
/* The DSO_FIND_ARCHIVE finder: objects and their debug files from
 * TRACE.archive (report/files/archive.h), extracted on first use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "report/files/archive.h"
#include "report/symbols/dso.h"
#include "report/finders/find_chain.h"
#include "report/files/path.h"

/* ---- the DSO_FIND_ARCHIVE finder ---------------------------------------------- */

static struct archive *find_archive__open_one;	/* closed (files removed) at exit */

static void find_archive__atexit(void)
{
	archive__close(find_archive__open_one);
	find_archive__open_one = NULL;
}

static int find_archive__find(const struct dso *dso, char *buf, size_t len,
			      enum path_refusal *why, void *ctx)
{
	struct archive *a = ctx;
	struct archive_entry *e = archive__lookup(a, ARCHIVE_KIND_ELF, dso->build_id,
						  dso->build_id_size, dso->path);

	if (!e || archive__extract(a, e))
		return -ENOENT;
	if (snprintf(buf, len, "%s", e->extracted) >= (int)len)
		return -ENAMETOOLONG;
	return path__open(e->extracted, 0, why);
}

/* Separate debug files (symbols of files without .symtab), by build-id. */
static int find_archive__debuginfo(const uint8_t *id, size_t size, char *buf, size_t len,
				   void *ctx)
{
	struct archive *a = ctx;
	struct archive_entry *e = archive__lookup(a, ARCHIVE_KIND_DEBUG, id, size, "");

	if (!size || !e || archive__extract(a, e))
		return -ENOENT;
	return snprintf(buf, len, "%s", e->extracted) >= (int)len ? -ENAMETOOLONG : 0;
}

int find_archive__install(struct dsos *d, const char *archive_path)
{
	static bool atexit_done;
	struct archive *a;
	int err = archive__open(&a, archive_path);

	switch (-err) {
	case 0:
		break;
	case ENOENT:
		return err;
	case EBADMSG:
		warn("%s is not an xpu-archive file (bad magic or header): ignored", archive_path);
		return err;
	case EPERM:
		warn("%s is not a regular file: ignored", archive_path);
		return err;
	case EPROTONOSUPPORT:
		warn("%s was written by a newer xpu-archive: ignored; upgrade xpu-report",
		     archive_path);
		return err;
	default:
		warn("cannot read %s: %s: ignored", archive_path, strerror(-err));
		return err;
	}
	if (a->damage[0])
		warn("%s is damaged: %s; its %zu entries before the damage are used",
		     archive_path, a->damage, a->nr);
	debug(1, "%s: %zu entries", archive_path, a->nr);
	if (!atexit_done) {
		atexit(find_archive__atexit);
		atexit_done = true;
	}
	archive__close(find_archive__open_one);
	find_archive__open_one = a;
	dsos__set_finder(d, DSO_FIND_ARCHIVE, "archive", find_archive__find, a);
	dsos__set_debug_finder(d, DSO_FIND_ARCHIVE, find_archive__debuginfo);
	return 0;
}

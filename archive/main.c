// SPDX-License-Identifier: MIT
/*
 * xpu-archive: packs the ELF files a trace needs into TRACE.archive, so that
 * xpu-report can symbolize and unwind on a machine without them. It runs the
 * report's session passes over the trace (CPU samples and GPU launch stacks)
 * and keeps every DSO at least one frame fell into, found at its recorded
 * path with the recorded build-id (a DSO the trace gives no build-id for only
 * with --no-buildid-check), read through the descriptor report/symbols/dso.c checked.
 * What is left out is said in one line, by reason. See
 * Documentation/xpu-archive.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "report/files/archive.h"
#include "common/knobs.h"
#include "common/log.h"
#include "common/opt_table.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "report/files/out_file.h"
#include "report/session/session.h"

struct archive_opts {
	const char *input;
	const char *output;		/* NULL: INPUT.archive */
	int level;
	bool no_buildid_check;		/* also archive DSOs without a recorded build-id */
};

#define AO struct archive_opts

static void archive__opt_input(void *v, const struct opt_row *row, const char *arg,
			       struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	((struct archive_opts *)v)->input = arg;
}

static void archive__opt_output(void *v, const struct opt_row *row, const char *arg,
				struct opt_ctx *ctx)
{
	(void)row, (void)ctx;
	((struct archive_opts *)v)->output = arg;
}

static void archive__opt_level(void *v, const struct opt_row *row, const char *arg,
			       struct opt_ctx *ctx)
{
	struct archive_opts *o = v;
	char *end;

	(void)row, (void)ctx;
	o->level = (int)strtol(arg, &end, 10);
	if (*end || end == arg || o->level < 1 || o->level > 19)
		die(XPU_EXIT_USAGE, "-l %s: expected a zstd level from 1 to 19", arg);
}

static void archive__opt_quiet(void *v, const struct opt_row *row, const char *arg,
			       struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	xpu_quiet = 1;
}

static void archive__opt_verbose(void *v, const struct opt_row *row, const char *arg,
				 struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	xpu_verbose++;
}

static void archive__opt_help(void *v, const struct opt_row *row, const char *arg,
			      struct opt_ctx *ctx);

static void archive__opt_version(void *v, const struct opt_row *row, const char *arg,
				 struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	printf("xpu-archive %s\n", XPU_VERSION);
	exit(XPU_EXIT_OK);
}

static const struct opt_row archive__rows[] = {
	OPT_FN_ARG("input", 'i', "FILE", archive__opt_input, "trace to read (default xpu.data)"),
	OPT_FN_ARG("output", 'o', "OUT", archive__opt_output,
		   "archive to write (default FILE.archive)"),
	OPT_FN_ARG("level", 'l', "N", archive__opt_level, "zstd level, 1 to 19 (default 3)"),
	OPT_TRUE("no-buildid-check", 0, AO, no_buildid_check,
		 "also archive files the trace gives no build-id for\n"
		 "(found by path only: nothing proves they are the same)"),
	OPT_FN("quiet", 'q', archive__opt_quiet, "no summary line"),
	OPT_FN("verbose", 'v', archive__opt_verbose, "list each file (repeat for more)"),
	OPT_FN("help", 'h', archive__opt_help, "this text"),
	OPT_FN("version", 0, archive__opt_version, "print the version"),
};

static void archive__opt_help(void *v, const struct opt_row *row, const char *arg,
			      struct opt_ctx *ctx)
{
	(void)v, (void)row, (void)arg, (void)ctx;
	fputs("usage: xpu-archive [-i FILE] [-o OUT] [-l LEVEL] [--no-buildid-check]\n"
	      "  packs the ELF files with samples or GPU launch stacks in the trace into one\n"
	      "  file; xpu-report uses FILE.archive when it sits beside FILE.\n", stdout);
	opt_table__help(stdout, archive__rows, ARRAY_SIZE(archive__rows), 22);
	fputs("examples:\n"
	      "  xpu-archive                             pack what xpu.data needs into xpu.data.archive\n"
	      "  xpu-archive -i train.data -l 19         smaller archive, slower\n"
	      "  xpu-archive -i train.data -o /mnt/share/train.data.archive   write it elsewhere\n",
	      stdout);
	exit(XPU_EXIT_OK);
}

static void archive__parse(struct archive_opts *o, int argc, char **argv)
{
	o->input = "xpu.data";
	o->level = 3;
	optind = opt_table__parse(archive__rows, ARRAY_SIZE(archive__rows), o, argc, argv,
				  "xpu-archive", false);
	if (optind < argc)
		die(XPU_EXIT_USAGE, "unexpected argument '%s'; the trace is given with -i FILE",
		    argv[optind]);
}

/* GPU launch stacks: resolving them marks their DSOs as used, like samples. */
static int archive__corr(struct session *s, const struct xpu_record *rec, int pass, void *priv)
{
	const struct xpu_gpu_corr *c = rec->body;
	uint32_t frames[CALLCHAIN_MAX];
	struct xpu_stack_view v;
	size_t fixed = offsetof(struct xpu_gpu_corr, stack);

	if (pass != 2 || rec->type != XPU_REC_GPU_CORR || rec->body_size < sizeof(*c) ||
	    xpu_stack__parse(&c->stack, rec->body_size - fixed, &v))
		return 0;
	callchain__resolve(&s->callchain, c->pid, c->tid, c->time, &v, frames, CALLCHAIN_MAX,
			   NULL);
	return 0;
}

/* Files left out, counted by reason, for one warning line. */
#define SKIP_NO_BUILDID "no build-id in the trace"
struct archive_skips {
	struct { const char *reason; size_t nr; char names[200]; } r[16];
	size_t nr_reasons, total;
};

static void archive__skip(struct archive_skips *sk, const struct dso *dso, const char *reason)
{
	size_t i, n;

	debug(1, "%s: %s: not archived", dso->path, reason);
	for (i = 0; i < sk->nr_reasons && strcmp(sk->r[i].reason, reason); i++)
		;
	if (i == sk->nr_reasons) {
		if (i == sizeof(sk->r) / sizeof(sk->r[0]))
			i--;	/* more reasons than exist today: lump into the last */
		else
			sk->r[sk->nr_reasons++].reason = reason;
	}
	n = strlen(sk->r[i].names);
	if (sk->r[i].nr < 3)
		snprintf(sk->r[i].names + n, sizeof(sk->r[i].names) - n, "%s%s",
			 sk->r[i].nr ? ", " : "", dso->short_name);
	else if (sk->r[i].nr == 3)
		snprintf(sk->r[i].names + n, sizeof(sk->r[i].names) - n, ", ...");
	sk->r[i].nr++;
	sk->total++;
}

/* "2 of 5 files were not archived (...): build-id mismatch: 1 (app); ...". */
static void archive__warn_skips(const struct archive_skips *sk, size_t used)
{
	char msg[2048];
	size_t len = 0;
	bool no_bid = false, other = false;

	if (!sk->total)
		return;
	for (size_t i = 0; i < sk->nr_reasons && len < sizeof(msg); i++) {
		len += snprintf(msg + len, sizeof(msg) - len, "%s%s: %zu (%s)", i ? "; " : "",
				sk->r[i].reason, sk->r[i].nr, sk->r[i].names);
		if (!strcmp(sk->r[i].reason, SKIP_NO_BUILDID))
			no_bid = true;
		else
			other = true;
	}
	warn("%zu of %zu files were not archived (-v lists them): %s.%s%s", sk->total, used,
	     msg, no_bid ? " --no-buildid-check archives files without a build-id." : "",
	     other ? " Run xpu-archive where the trace was recorded." : "");
}

/* The separate debug file the symbols came from (report/symbols/dso.c found it by
 * build-id under /usr/lib/debug), so they are the same elsewhere. */
static int archive__add_debuginfo(struct archive_writer *w, struct dso *dso, uint64_t *fsize,
				  uint64_t *dsize)
{
	char hex[2 * XPU_MMAP_BUILD_ID_MAX + 1], path[128];
	int err;

	if (!dso->debug_elf || !dso->build_id_size)
		return -ENOENT;
	build_id__hex(dso->build_id, dso->build_id_size, hex);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	err = archive_writer__add(w, ARCHIVE_KIND_DEBUG, dso->debug_fd, path, dso->build_id,
				  dso->build_id_size, fsize, dsize);
	if (err)
		warn("%s: cannot archive its debug file %s: %s", dso->path, path, strerror(-err));
	else
		debug(1, "%s: %llu bytes -> %llu", path, (unsigned long long)*fsize,
		      (unsigned long long)*dsize);
	return err;
}

/* OUT follows xpu-report's rule for the files it writes (report/files/out_file.h):
 * a symbolic link, a directory, a device, a FIFO are refused before any work;
 * the archive is written beside OUT and renamed over it. */
static void archive__check_output(const char *output)
{
	char msg[512];
	int ret = out_file__check(output, "", msg, sizeof(msg));

	if (ret == OUT_FILE_IN_PLACE)
		die(XPU_EXIT_OUTPUT, "cannot write %s: it is a FIFO or a device, and xpu-archive "
		    "writes a file it renames: give a file path", output);
	if (ret < 0)
		die(XPU_EXIT_OUTPUT, "%s", msg);
}

int main(int argc, char **argv)
{
	struct archive_opts o = { 0 };
	struct session_tool corr = { .name = "archive-corr", .record = archive__corr };
	struct archive_writer *w;
	struct archive_skips skips = { 0 };
	struct session s;
	char *output;
	uint64_t in_bytes = 0, out_bytes = 0;
	size_t used = 0, added = 0;
	struct progress pr;
	int err, code = XPU_EXIT_OK;

	xpu_log_init(argv[0]);
	archive__parse(&o, argc, argv);
	knobs__parse(KNOB_P_ARCHIVE);
	output = o.output ? xstrdup(o.output) : xasprintf("%s" ARCHIVE_SUFFIX, o.input);
	archive__check_output(output);
	session__open_or_die(&s, o.input, "archive");
	session__add_tool(&s, &corr);
	if (session__pass1(&s) || session__pass2(&s))
		die(XPU_EXIT_FAILURE, "reading %s failed", o.input);
	if (session__damaged(&s)) {
		warn("%s is damaged: only the files used by its readable part are archived",
		     o.input);
		code = XPU_EXIT_CORRUPT;
	}
	if (!s.nr_samples && !s.nr_records[XPU_REC_GPU_CORR]) {
		session__close(&s);
		die(XPU_EXIT_NODATA, "%s holds no samples and no GPU launch stacks: nothing to "
		    "archive", o.input);
	}

	err = archive_writer__open(&w, output, o.level);
	if (err)
		die(XPU_EXIT_OUTPUT, "cannot write a temporary file beside %s: %s: choose a "
		    "writable path with -o", output, strerror(-err));

	progress__start(&pr);
	for (size_t i = 0; i < s.machine.dsos.nr; i++) {
		struct dso *dso = s.machine.dsos.list[i];
		uint64_t fsize, dsize;
		char what[256];

		if (!dso->frames_total || dso->status == DSO_PSEUDO)
			continue;
		used++;
		snprintf(what, sizeof(what), "archiving file %zu of %zu: %s", i + 1, s.machine.dsos.nr,
			 dso->short_name);
		progress__step(&pr, what);
		if (dso->status != DSO_OK) {	/* pass 2 already tried to load it */
			archive__skip(&skips, dso, dso__reason(dso));
			continue;
		}
		if (!dso->build_id_size && !o.no_buildid_check) {
			archive__skip(&skips, dso, SKIP_NO_BUILDID);
			continue;
		}
		err = archive_writer__add(w, ARCHIVE_KIND_ELF, dso->fd, dso->path, dso->build_id,
					  dso->build_id_size, &fsize, &dsize);
		if (err == -ENOSPC || err == -EIO || err == -EDQUOT) {
			archive_writer__abort(w);
			die(XPU_EXIT_OUTPUT, "writing %s failed: %s", output, strerror(-err));
		}
		if (err) {
			debug(1, "%s: cannot read %s: %s", dso->path, dso->file, strerror(-err));
			archive__skip(&skips, dso, err == -ENODATA ? "changed while archived"
								   : "read error");
			continue;
		}
		debug(1, "%s: %llu bytes -> %llu", dso->path, (unsigned long long)fsize,
		      (unsigned long long)dsize);
		added++;
		in_bytes += fsize;
		out_bytes += dsize;
		if (!archive__add_debuginfo(w, dso, &fsize, &dsize)) {
			in_bytes += fsize;
			out_bytes += dsize;
		}
	}
	progress__end(&pr);
	session__close(&s);
	archive__warn_skips(&skips, used);
	if (!added) {
		archive_writer__abort(w);
		die(XPU_EXIT_NOTFOUND, "none of the %zu files the trace uses could be archived: "
		    "run xpu-archive on the machine where %s was recorded", used, o.input);
	}
	err = archive_writer__close(w);
	if (err)
		die(XPU_EXIT_OUTPUT, "writing %s failed: %s", output, strerror(-err));
	if (!xpu_quiet)
		fprintf(stderr, "xpu-archive: %zu files, %.1f MB (%.1f MB uncompressed), %zu "
			"skipped, written to %s\n", added, out_bytes / 1048576.0,
			in_bytes / 1048576.0, skips.total, output);
	free(output);
	return code;
}

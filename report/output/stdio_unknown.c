// SPDX-License-Identifier: MIT
/*
 * The table's [module] rows: addresses of a module no symbol covers are one
 * frame, "[zstd]", so a stripped binary is one box, not a tower per
 * instruction (callchain.h). Its row then hides where the time goes: the
 * table says how many sampled addresses the row holds and the hottest one,
 * and a note under the table points at --unknown-addresses and at the debug
 * package to install: Debian's and Ubuntu's "PKG-dbgsym", PKG from
 * dpkg-query -S when the file read is the recorded path itself (the report
 * runs on the machine that recorded, or one with the same file), else
 * "the binary's -dbgsym package".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/xalloc.h"
#include "report/output/output.h"

bool stdio_unknown__is(const struct frame *f)
{
	return f->unknown && f->module[0] && f->name[0] == '[';
}

struct stdio_unknown *stdio_unknown__new(const struct profile *p)
{
	struct stdio_unknown *u = NULL;
	size_t iter = 0;
	uint32_t frame;
	uint64_t addr;
	double w;

	while (profile__addr_next(p, &iter, &frame, &addr, &w)) {
		struct stdio_unknown *s;

		if (frame >= p->nr_frames || !stdio_unknown__is(profile__frame(p, frame)))
			continue;
		if (!u)
			u = xcalloc(p->nr_frames, sizeof(*u));
		s = &u[frame];
		s->nr_addrs++;
		s->weight += w;
		if (w > s->hot_weight || (w == s->hot_weight && addr < s->hot)) {
			s->hot = addr;
			s->hot_weight = w;
		}
	}
	return u;
}

void stdio_unknown__cell(const struct stdio_unknown *u, const struct profile *p, uint32_t frame,
			 char *buf, size_t size)
{
	const struct stdio_unknown *s = u ? &u[frame] : NULL;

	if (!s || !s->nr_addrs) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, size, "%u addr%s, hottest %s+%#llx", s->nr_addrs, s->nr_addrs == 1 ? "" : "s",
		 profile__frame(p, frame)->module, (unsigned long long)s->hot);
}

/* The file the module's row came from, read on this machine as recorded:
 * its path; NULL when it was not read, or read from elsewhere (an archive,
 * --symfs, the build-id cache). */
static const char *stdio_unknown__local(const struct session *s, const char *module)
{
	const struct dsos *d = &s->machine.dsos;

	for (size_t i = 0; i < d->nr; i++) {
		const struct dso *dso = d->list[i];

		if (!dso->frames_unsymbolized || strcmp(dso->short_name, module))
			continue;
		if (dso->status == DSO_OK && dso->file && !strcmp(dso->file, dso->path))
			return dso->path;
	}
	return NULL;
}

/* dpkg-query -S PATH: the package holding PATH, into pkg (without its
 * ":arch"); 0, or -ENOENT when dpkg knows no package for it. */
static int stdio_unknown__dpkg(const char *path, char *pkg, size_t size)
{
	char out[512];
	size_t len = 0;
	int fds[2], status, null;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!pid) {
		null = open("/dev/null", O_RDWR);
		dup2(fds[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		close(fds[0]);
		execlp("dpkg-query", "dpkg-query", "-S", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (r = read(fds[0], out + len, sizeof(out) - 1 - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		len += (size_t)r;
	}
	out[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* "zstd: /usr/bin/zstd", "liblzma5:amd64: /lib/..." (one package: a
	 * path two packages share is no answer) */
	len = strcspn(out, ":,\n ");
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !len || len >= size ||
	    out[strcspn(out, ",")] == ',' || !strncmp(out, "diversion", 9))
		return -ENOENT;
	memcpy(pkg, out, len);
	pkg[len] = '\0';
	return 0;
}

/* The debug package of the module's file: "zstd-dbgsym" when dpkg knows
 * the file (tried as recorded and, for /usr/lib and /usr/bin on a merged
 * /usr, without "/usr"), else NULL. */
static bool stdio_unknown__package(const struct session *s, const char *module, char *pkg,
				   size_t size)
{
	const char *path = stdio_unknown__local(s, module);
	char real[4096];

	if (!path)
		return false;
	if (!stdio_unknown__dpkg(path, pkg, size))
		return true;
	if (!strncmp(path, "/usr/", 5) && !stdio_unknown__dpkg(path + 4, pkg, size))
		return true;
	if (realpath(path, real) && strcmp(real, path) && !stdio_unknown__dpkg(real, pkg, size))
		return true;
	return false;
}

/* This machine's Debian suite (VERSION_CODENAME of /etc/os-release), or
 * "SUITE". */
static const char *stdio_unknown__suite(char *buf, size_t size)
{
	FILE *f = fopen("/etc/os-release", "r");
	char line[256];

	snprintf(buf, size, "SUITE");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VERSION_CODENAME=", 17) || !line[17] || line[17] == '\n')
			continue;
		snprintf(buf, size, "%.*s", (int)strcspn(line + 17, "\"\n"), line + 17);
		break;
	}
	if (f)
		fclose(f);
	return buf;
}

void stdio_unknown__note(const struct stdio_unknown *u, const struct session *s, FILE *fp,
			 uint32_t frame, double self_pct)
{
	const struct stdio_unknown *st = &u[frame];
	const char *module = profile__frame(&s->profile, frame)->module;
	char pkg[256], suite[64];

	fprintf(fp, "# [%s]: %.2f%% self in %u sampled address%s no symbol covers, the hottest "
		"%s+%#llx (%.1f%% of its self); --unknown-addresses makes each address a row of its "
		"own; for names, install ", module, self_pct, st->nr_addrs,
		st->nr_addrs == 1 ? "" : "es", module, (unsigned long long)st->hot,
		st->weight > 0 ? 100.0 * st->hot_weight / st->weight : 0);
	if (stdio_unknown__package(s, module, pkg, sizeof(pkg)))
		fprintf(fp, "%s-dbgsym (Debian: your distribution's debug-symbol archive, "
			"suite %s-debug)", pkg,
			stdio_unknown__suite(suite, sizeof(suite)));
	else
		fprintf(fp, "the binary's -dbgsym package (Debian, Ubuntu; -debuginfo on Fedora)");
	fprintf(fp, " and report again\n");
}

// SPDX-License-Identifier: MIT
/* A GPU kernel's PC samples per SASS instruction and line (gpu_annotate.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hashmap.h"
#include "common/log.h"
#include "common/sort.h"
#include "common/xalloc.h"
#include "format/xpu_format.h"
#include "report/symbols/demangle.h"
#include "report/gpu/gpu.h"
#include "report/gpu/gpu_pcsamp.h"
#include "report/gpu/gpu_annotate.h"

#define GA_KERNEL	"[GPU_Kernel]"
#define GA_SASS		"[sass]"
#define GA_MAX_REASONS	8

struct ga_pc {
	uint64_t pc, samples;
	const char *file;		/* NULL: no line */
	uint32_t line;
	struct { const char *name; uint32_t index; uint64_t samples; } reasons[GA_MAX_REASONS];
	size_t nr_reasons;
	uint64_t other;			/* samples of reasons past GA_MAX_REASONS */
};

struct ga_insn {
	uint64_t off;
	char *text;
};

bool gpu_annotate__is_kernel_frame(const char *name)
{
	return name && (!strncmp(name, GA_KERNEL, strlen(GA_KERNEL)) ||
			!strncmp(name, GA_SASS, strlen(GA_SASS)));
}

static void ga__add(struct gpu_annotation *a, enum gpu_annotate_kind kind, uint64_t samples,
		    const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		die(XPU_EXIT_FAILURE, "out of memory");
	if (a->nr == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->lines = xrealloc(a->lines, a->cap * sizeof(*a->lines));
	}
	a->lines[a->nr++] = (struct gpu_annotate_line){ .kind = kind, .samples = samples,
							.text = text };
}

/* The kernel's name out of a frame's: "[sass]k(int)+0x180 (k.cu:15)" -> "k(int)" */
static char *ga__name(const char *name)
{
	char *s, *plus = NULL;

	if (!strncmp(name, GA_KERNEL, strlen(GA_KERNEL)))
		return xstrdup(name + strlen(GA_KERNEL));
	if (strncmp(name, GA_SASS, strlen(GA_SASS)))
		return xstrdup(name);
	s = xstrdup(name + strlen(GA_SASS));
	for (char *p = s; (p = strstr(p, "+0x")); p++)
		plus = p;
	if (plus)
		*plus = '\0';
	return s;
}

static bool ga__matches(const char *mangled, const char *name)
{
	char *d;
	bool hit;

	if (!mangled)
		return false;
	if (!strcmp(mangled, name))
		return true;
	d = demangle(mangled, true);
	hit = d && !strcmp(d, name);
	free(d);
	if (hit)
		return true;
	d = demangle(mangled, false);
	hit = d && !strcmp(d, name);
	free(d);
	return hit;
}

static int ga_pc__cmp(const void *a, const void *b)
{
	const struct ga_pc *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* pcs sorted by ga_pc__cmp */
static struct ga_pc *ga__find_pc(struct ga_pc *pcs, size_t n, uint64_t pc)
{
	struct ga_pc key = { .pc = pc };

	return n ? bsearch(&key, pcs, n, sizeof(*pcs), ga_pc__cmp) : NULL;
}

/* ---- nvdisasm ---- */

static bool ga__exe(const char *path)
{
	return !access(path, X_OK);
}

/* $CUDA_HOME/bin/nvdisasm; without CUDA_HOME, /usr/local/cuda's; then PATH */
static char *ga__nvdisasm(void)
{
	const char *home = getenv("CUDA_HOME"), *path = getenv("PATH");
	char *p;

	if (home && *home) {
		p = xasprintf("%s/bin/nvdisasm", home);
		if (ga__exe(p))
			return p;
		free(p);
	} else if (ga__exe("/usr/local/cuda/bin/nvdisasm")) {
		return xstrdup("/usr/local/cuda/bin/nvdisasm");
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		p = xasprintf("%.*s/nvdisasm", (int)n, n ? path : ".");
		if (ga__exe(p))
			return p;
		free(p);
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* One line of nvdisasm -c: a function's section starts at
 * ".section .text.NAME,..."; an instruction is its offset in hex inside a
 * C comment (no blanks), then its text up to ';' */
static void ga__parse_line(char *l, const char *mangled, bool *in, struct ga_insn **insns,
			   size_t *nr, size_t *cap)
{
	char *p = l + strspn(l, " \t"), *end, *text;
	uint64_t off;

	if (!strncmp(p, ".section", 8) && (p[8] == ' ' || p[8] == '\t')) {	/* not .sectioninfo */
		char *t = strstr(p, ".text.");
		size_t n;

		*in = false;		/* another section: not the function's code */
		if (!t)
			return;
		t += 6;
		n = strcspn(t, ", \t\"\n");
		*in = n == strlen(mangled) && !strncmp(t, mangled, n);
		return;
	}
	if (!*in || strncmp(p, "/*", 2))
		return;
	off = strtoull(p + 2, &end, 16);
	if (end == p + 2 || strncmp(end, "*/", 2))
		return;		/* an encoding: a comment starting " 0x" */
	text = end + 2;
	text += strspn(text, " \t");
	if ((end = strstr(text, "/*")))	/* an encoding after the instruction */
		*end = '\0';
	end = text + strlen(text);
	while (end > text && strchr(" \t\n;", end[-1]))
		*--end = '\0';
	if (!*text)
		return;
	if (*nr == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*insns = xrealloc(*insns, *cap * sizeof(**insns));
	}
	(*insns)[(*nr)++] = (struct ga_insn){ .off = off, .text = xstrdup(text) };
}

/* Runs nvdisasm -c on the cubin; the function's instructions in *insns.
 * Returns 0, or -errno with why in err. */
static int ga__disasm(const char *tool, const void *cubin, size_t size, const char *mangled,
		      struct ga_insn **insns, size_t *nr, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	char *path = xasprintf("%s/xpu-report-cubin-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *line = NULL;
	size_t cap = 0, lcap = 0;
	int fd, pipefd[2], status = 0, ret = -EIO;
	bool in = false;
	pid_t pid;
	FILE *fp;

	*insns = NULL;
	*nr = 0;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, cubin, size) != (ssize_t)size) {
		snprintf(err, errlen, "cannot write the cubin to %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out_unlink;
	}
	close(fd);
	if (pipe(pipefd)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out_unlink;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		goto out_unlink;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(pipefd[1], STDOUT_FILENO);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDERR_FILENO);
		}
		close(pipefd[0]);
		close(pipefd[1]);
		execl(tool, "nvdisasm", "-c", path, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	fp = fdopen(pipefd[0], "r");
	if (!fp) {
		close(pipefd[0]);
	} else {
		while (getline(&line, &lcap, fp) > 0)
			ga__parse_line(line, mangled, &in, insns, nr, &cap);
		fclose(fp);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen, "%s failed on the cubin (%s %d)", tool,
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	} else if (!*nr) {
		snprintf(err, errlen, "%s printed no instruction of %s", tool, mangled);
	} else {
		ret = 0;
	}
out_unlink:
	unlink(path);
	free(path);
	free(line);
	return ret;
}

/* ---- the annotation ---- */

struct ga_line {
	const char *file;
	uint32_t line;
	uint64_t samples;
};

static int ga_line__cmp(const void *a, const void *b)
{
	const struct ga_line *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (strcmp(x->file, y->file))
		return strcmp(x->file, y->file);
	return x->line < y->line ? -1 : x->line > y->line;
}

static const char *ga__base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static double ga__pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

/* "long_scoreboard 200, math_pipe_throttle 3" */
static void ga__reasons(const struct ga_pc *p, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < p->nr_reasons && len < size; i++) {
		if (p->reasons[i].name)
			len += (size_t)snprintf(buf + len, size - len, "%s%s %" PRIu64, i ? ", " : "",
						p->reasons[i].name, p->reasons[i].samples);
		else
			len += (size_t)snprintf(buf + len, size - len, "%sreason_%u %" PRIu64,
						i ? ", " : "", p->reasons[i].index,
						p->reasons[i].samples);
	}
	if (p->other && len < size)
		snprintf(buf + len, size - len, ", other %" PRIu64, p->other);
}

static void ga__insn_line(struct gpu_annotation *a, const struct ga_pc *p, uint64_t off,
			  const char *text)
{
	char reasons[512];

	if (!p || !p->samples) {
		ga__add(a, GPU_ANNOTATE_INSN, 0, "%17s  %04" PRIx64 ":  %s", "", off, text);
		return;
	}
	ga__reasons(p, reasons, sizeof(reasons));
	if (a->hottest == SIZE_MAX || p->samples > a->lines[a->hottest].samples)
		a->hottest = a->nr;
	ga__add(a, GPU_ANNOTATE_INSN, p->samples, "%7.2f%% %8" PRIu64 "  %04" PRIx64 ":  %s  // %s",
		ga__pct(p->samples, a->total), p->samples, off, text, reasons);
}

int gpu_annotate__kernel(struct gpu_annotation *a, struct session *s, const char *frame_name,
			 char *err, size_t errlen)
{
	const struct gpu_join *g = session__tool(s, GPU_JOIN_TOOL);
	const struct gpu_pcsamp *ps = g ? gpu_join__pcsamp(g) : NULL;
	char *name = ga__name(frame_name), *dem, *tool = NULL, why[640];
	const char *mangled = NULL;
	struct ga_pc *pcs = NULL;
	struct ga_line *lines = NULL;
	struct ga_insn *insns = NULL;
	size_t nr_pcs = 0, nr_lines = 0, nr_insns = 0, cap = 0;
	uint64_t crc = 0, other_samples = 0;
	struct ga_group { size_t from, to; } *groups = NULL;
	struct ga_crc { uint64_t crc, samples; uint32_t pid; const char *mangled; } *crcs = NULL;
	size_t nr_groups = 0, groups_cap = 0, nr_crcs = 0, pick = 0;
	struct u64map pc_idx;
	uint32_t pid = 0, flags = 0, nr_pids = 0, last_pid = UINT32_MAX;
	const void *cubin = NULL;
	size_t cubin_size = 0;
	int ret = -ENOENT;

	memset(a, 0, sizeof(*a));
	a->hottest = SIZE_MAX;
	if (!ps || !ps->nr) {
		snprintf(err, errlen, "annotate %s: the trace has no GPU PC samples (record with "
			 "xpu-record --gpu-pc-sampling)", name);
		goto out;
	}
	/* the kernel's (pid, name id) groups, runs of the sorted entries, and
	 * the cubin with the most of its samples */
	for (size_t i = 0, j; i < ps->nr; i = j) {
		const char *m = gpu_join__kernel_name(g, ps->e[i].pid, ps->e[i].name_id);
		bool hit = ga__matches(m, name);

		for (j = i; j < ps->nr && ps->e[j].pid == ps->e[i].pid &&
		     ps->e[j].name_id == ps->e[i].name_id; j++)
			;
		if (!hit)
			continue;
		if (nr_groups == groups_cap) {
			groups_cap = groups_cap ? groups_cap * 2 : 8;
			groups = xrealloc(groups, groups_cap * sizeof(*groups));
		}
		groups[nr_groups++] = (struct ga_group){ .from = i, .to = j };
		for (size_t k = i; k < j; k++) {
			size_t c;

			for (c = 0; c < nr_crcs && crcs[c].crc != ps->e[k].crc; c++)
				;
			if (c == nr_crcs) {
				crcs = xrealloc(crcs, (nr_crcs + 1) * sizeof(*crcs));
				crcs[nr_crcs++] = (struct ga_crc){ .crc = ps->e[k].crc,
								   .pid = ps->e[k].pid,
								   .mangled = m };
			}
			crcs[c].samples += ps->e[k].samples;
		}
	}
	for (size_t c = 0; c < nr_crcs; c++)
		if (!mangled || crcs[c].samples > crcs[pick].samples) {
			pick = c;
			mangled = crcs[c].mangled;
			crc = crcs[c].crc;
			pid = crcs[c].pid;
		}
	if (!mangled) {
		snprintf(err, errlen, "annotate: no GPU PC samples of a kernel named '%s' (give a "
			 "kernel's name as its [GPU_Kernel] frame shows it, or mangled)", name);
		goto out;
	}

	/* its PCs, over every process that ran it from that cubin */
	u64map__init(&pc_idx);
	for (size_t gi = 0; gi < nr_groups; gi++) {
		bool counted = false;

		for (size_t i = groups[gi].from; i < groups[gi].to; i++) {
			const struct gpu_pcs_entry *e = &ps->e[i];
			uint64_t *slot;
			struct ga_pc *p;
			size_t r;

			if (e->crc != crc) {
				other_samples += e->samples;
				continue;
			}
			if (!counted && e->pid != last_pid)
				nr_pids++;
			counted = true;
			last_pid = e->pid;
			slot = u64map__slot(&pc_idx, e->pc);
			if (!*slot) {
				if (nr_pcs == cap) {
					cap = cap ? cap * 2 : 64;
					pcs = xrealloc(pcs, cap * sizeof(*pcs));
				}
				p = &pcs[nr_pcs++];
				*slot = nr_pcs;
				memset(p, 0, sizeof(*p));
				p->pc = e->pc;
				if (gpu_pcsamp__line(ps, e->pid, crc, mangled, e->pc, &p->file, &p->line))
					p->file = NULL;
			}
			p = &pcs[*slot - 1];
			p->samples += e->samples;
			a->total += e->samples;
			for (r = 0; r < p->nr_reasons && p->reasons[r].index != e->reason; r++)
				;
			if (r < p->nr_reasons) {
				p->reasons[r].samples += e->samples;
			} else if (r < GA_MAX_REASONS) {
				p->reasons[r].name = gpu_pcsamp__entry_reason(ps, e);
				p->reasons[r].index = e->reason;
				p->reasons[r].samples = e->samples;
				p->nr_reasons++;
			} else {
				p->other += e->samples;
			}
		}
	}
	u64map__exit(&pc_idx);
	xpu_qsort(pcs, nr_pcs, sizeof(*pcs), ga_pc__cmp);

	/* per line */
	lines = xcalloc(nr_pcs + 1, sizeof(*lines));
	for (size_t i = 0; i < nr_pcs; i++) {
		const char *file = pcs[i].file ? pcs[i].file : "[no line]";
		size_t k;

		for (k = 0; k < nr_lines; k++)
			if (lines[k].line == pcs[i].line && !strcmp(lines[k].file, file))
				break;
		if (k == nr_lines)
			lines[nr_lines++] = (struct ga_line){ .file = file, .line = pcs[i].line };
		lines[k].samples += pcs[i].samples;
	}
	xpu_qsort(lines, nr_lines, sizeof(*lines), ga_line__cmp);

	/* the SASS text, where the toolkit is here and the cubin whole */
	cubin = gpu_pcsamp__cubin_data(ps, pid, crc, &cubin_size, &flags);
	if (flags & XPU_CUBIN_REDUCED)
		snprintf(why, sizeof(why), "the trace holds this kernel's cubin reduced to its line "
			 "table (it was larger than xpu-record keeps whole)");
	else if (flags & XPU_CUBIN_SKIPPED)
		snprintf(why, sizeof(why), "the trace holds no cubin of this kernel (it was larger "
			 "than xpu-record keeps, with no line table)");
	else if (!cubin)
		snprintf(why, sizeof(why), "the trace holds no cubin of this kernel");
	else if (!(tool = ga__nvdisasm()))
		snprintf(why, sizeof(why), "nvdisasm not found ($CUDA_HOME/bin, /usr/local/cuda/bin, "
			 "PATH: install the CUDA toolkit or set CUDA_HOME)");
	else if (!ga__disasm(tool, cubin, cubin_size, mangled, &insns, &nr_insns, why, sizeof(why)))
		a->sass = true;

	dem = demangle(mangled, true);
	a->title = xasprintf("%s (GPU kernel %s, cubin %#" PRIx64 ")", dem ? dem : mangled,
			     mangled, crc);
	free(dem);
	if (a->sass)
		ga__add(a, GPU_ANNOTATE_NOTE, a->total, "%" PRIu64 " PC samples at %zu PCs in %u "
			"process%s; SASS by %s", a->total, nr_pcs, nr_pids, nr_pids == 1 ? "" : "es",
			tool);
	else
		ga__add(a, GPU_ANNOTATE_NOTE, a->total, "%" PRIu64 " PC samples at %zu PCs in %u "
			"process%s; no SASS text: %s", a->total, nr_pcs, nr_pids,
			nr_pids == 1 ? "" : "es", why);
	if (other_samples)
		ga__add(a, GPU_ANNOTATE_NOTE, other_samples, "%" PRIu64 " more samples of a kernel "
			"of this name in other cubins are not shown", other_samples);
	ga__add(a, GPU_ANNOTATE_HEAD, 0, "per source line:");
	for (size_t i = 0; i < nr_lines; i++)
		ga__add(a, GPU_ANNOTATE_LINE, lines[i].samples, "%7.2f%% %8" PRIu64 "  %s%s%.0u",
			ga__pct(lines[i].samples, a->total), lines[i].samples,
			ga__base(lines[i].file), lines[i].line ? ":" : "", lines[i].line);
	if (a->sass) {
		const char *file = NULL;
		uint32_t line = 0;
		size_t shown = 0;

		ga__add(a, GPU_ANNOTATE_HEAD, 0, "per instruction (%zu):", nr_insns);
		for (size_t i = 0; i < nr_insns; i++) {
			const char *f;
			uint32_t l;
			struct ga_pc *p = ga__find_pc(pcs, nr_pcs, insns[i].off);

			if (!gpu_pcsamp__line(ps, pid, crc, mangled, insns[i].off, &f, &l) &&
			    (!file || l != line || strcmp(f, file))) {
				ga__add(a, GPU_ANNOTATE_SOURCE, 0, "%s:%u", ga__base(f), l);
				file = f;
				line = l;
			}
			ga__insn_line(a, p, insns[i].off, insns[i].text);
			shown += p != NULL;
		}
		if (shown < nr_pcs) {
			ga__add(a, GPU_ANNOTATE_HEAD, 0, "PCs at no instruction nvdisasm printed:");
			for (size_t i = 0; i < nr_pcs; i++) {
				bool found = false;

				for (size_t k = 0; k < nr_insns && !found; k++)
					found = insns[k].off == pcs[i].pc;
				if (!found)
					ga__insn_line(a, &pcs[i], pcs[i].pc, "?");
			}
		}
	} else {
		ga__add(a, GPU_ANNOTATE_HEAD, 0, "per PC:");
		for (size_t i = 0; i < nr_pcs; i++) {
			char where[512];

			if (pcs[i].file)
				snprintf(where, sizeof(where), "%s:%u", ga__base(pcs[i].file),
					 pcs[i].line);
			else
				snprintf(where, sizeof(where), "[no line]");
			ga__insn_line(a, &pcs[i], pcs[i].pc, where);
		}
	}
	ret = 0;
out:
	for (size_t i = 0; i < nr_insns; i++)
		free(insns[i].text);
	free(insns);
	free(tool);
	free(lines);
	free(pcs);
	free(groups);
	free(crcs);
	free(name);
	if (!ret && a->hottest == SIZE_MAX)
		a->hottest = 0;
	return ret;
}

void gpu_annotation__exit(struct gpu_annotation *a)
{
	for (size_t i = 0; i < a->nr; i++)
		free(a->lines[i].text);
	free(a->lines);
	free(a->title);
	memset(a, 0, sizeof(*a));
}

int gpu_annotation__fprint(const struct gpu_annotation *a, FILE *fp)
{
	fprintf(fp, "Annotate: %s\n", a->title);
	for (size_t i = 0; i < a->nr; i++)
		fprintf(fp, "%s%s\n", a->lines[i].kind == GPU_ANNOTATE_SOURCE ? "  " : "",
			a->lines[i].text);
	return ferror(fp) ? -EIO : 0;
}

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

/* What gpu_annotate__kernel() learns of the kernel, step by step. */
struct ga_kernel {
	const struct gpu_pcsamp *ps;
	const char *name;		/* as asked, without a frame's prefix */
	/* the kernel's (pid, name id) groups: runs [from, to) of the sorted
	 * entries */
	struct ga_group { size_t from, to; } *groups;
	size_t nr_groups, groups_cap;
	/* the cubins of their samples */
	struct ga_crc { uint64_t crc, samples; uint32_t pid; const char *mangled; } *crcs;
	size_t nr_crcs;
	/* the cubin shown: the one with the most samples */
	const char *mangled;
	uint64_t crc;
	uint32_t pid;
	uint32_t nr_pids;		/* that ran it from that cubin */
	uint64_t other_samples;		/* of the kernel in other cubins */
	struct ga_pc *pcs;		/* sorted by ga_pc__cmp */
	size_t nr_pcs;
	struct ga_line *lines;		/* sorted by ga_line__cmp */
	size_t nr_lines;
	struct ga_insn *insns;		/* a->sass: nvdisasm's text */
	size_t nr_insns;
	char *tool;			/* nvdisasm's path, or NULL */
	char why[640];			/* !a->sass: why there is no SASS text */
};

/* The kernel's (pid, name id) groups, and the cubins of their samples. */
static void ga__groups(struct ga_kernel *k, const struct gpu_join *g)
{
	const struct gpu_pcsamp *ps = k->ps;

	for (size_t i = 0, j; i < ps->nr; i = j) {
		const char *m = gpu_join__kernel_name(g, ps->e[i].pid, ps->e[i].name_id);
		bool hit = ga__matches(m, k->name);

		for (j = i; j < ps->nr && ps->e[j].pid == ps->e[i].pid &&
		     ps->e[j].name_id == ps->e[i].name_id; j++)
			;
		if (!hit)
			continue;
		if (k->nr_groups == k->groups_cap) {
			k->groups_cap = k->groups_cap ? k->groups_cap * 2 : 8;
			k->groups = xrealloc(k->groups, k->groups_cap * sizeof(*k->groups));
		}
		k->groups[k->nr_groups++] = (struct ga_group){ .from = i, .to = j };
		for (size_t e = i; e < j; e++) {
			size_t c;

			for (c = 0; c < k->nr_crcs && k->crcs[c].crc != ps->e[e].crc; c++)
				;
			if (c == k->nr_crcs) {
				k->crcs = xrealloc(k->crcs, (k->nr_crcs + 1) * sizeof(*k->crcs));
				k->crcs[k->nr_crcs++] = (struct ga_crc){ .crc = ps->e[e].crc,
									 .pid = ps->e[e].pid,
									 .mangled = m };
			}
			k->crcs[c].samples += ps->e[e].samples;
		}
	}
}

/* The cubin with the most of the kernel's samples; false when none. */
static bool ga__pick_cubin(struct ga_kernel *k)
{
	size_t pick = 0;

	for (size_t c = 0; c < k->nr_crcs; c++)
		if (!k->mangled || k->crcs[c].samples > k->crcs[pick].samples) {
			pick = c;
			k->mangled = k->crcs[c].mangled;
			k->crc = k->crcs[c].crc;
			k->pid = k->crcs[c].pid;
		}
	return k->mangled != NULL;
}

/* The PC of entry e, new with its source line the first time. */
static struct ga_pc *ga__pc(struct ga_kernel *k, struct u64map *pc_idx, size_t *cap,
			    const struct gpu_pcs_entry *e)
{
	uint64_t *slot = u64map__slot(pc_idx, e->pc);
	struct ga_pc *p;

	if (!*slot) {
		if (k->nr_pcs == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			k->pcs = xrealloc(k->pcs, *cap * sizeof(*k->pcs));
		}
		p = &k->pcs[k->nr_pcs++];
		*slot = k->nr_pcs;
		memset(p, 0, sizeof(*p));
		p->pc = e->pc;
		if (gpu_pcsamp__line(k->ps, e->pid, k->crc, k->mangled, e->pc, &p->file, &p->line))
			p->file = NULL;
	}
	return &k->pcs[*slot - 1];
}

/* Entry e's samples under its stall reason: the first GA_MAX_REASONS
 * reasons by name, the rest as other. */
static void ga_pc__add_reason(struct ga_pc *p, const struct gpu_pcsamp *ps,
			      const struct gpu_pcs_entry *e)
{
	size_t r;

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

/* The kernel's PCs, over every process that ran it from the cubin picked;
 * the samples of other cubins only counted. */
static void ga__pcs(struct ga_kernel *k, struct gpu_annotation *a)
{
	struct u64map pc_idx;
	uint32_t last_pid = UINT32_MAX;
	size_t cap = 0;

	u64map__init(&pc_idx);
	for (size_t gi = 0; gi < k->nr_groups; gi++) {
		bool counted = false;

		for (size_t i = k->groups[gi].from; i < k->groups[gi].to; i++) {
			const struct gpu_pcs_entry *e = &k->ps->e[i];
			struct ga_pc *p;

			if (e->crc != k->crc) {
				k->other_samples += e->samples;
				continue;
			}
			if (!counted && e->pid != last_pid)
				k->nr_pids++;
			counted = true;
			last_pid = e->pid;
			p = ga__pc(k, &pc_idx, &cap, e);
			p->samples += e->samples;
			a->total += e->samples;
			ga_pc__add_reason(p, k->ps, e);
		}
	}
	u64map__exit(&pc_idx);
	xpu_qsort(k->pcs, k->nr_pcs, sizeof(*k->pcs), ga_pc__cmp);
}

/* The PCs' samples summed per source line, the heaviest first. */
static void ga__lines(struct ga_kernel *k)
{
	k->lines = xcalloc(k->nr_pcs + 1, sizeof(*k->lines));
	for (size_t i = 0; i < k->nr_pcs; i++) {
		const char *file = k->pcs[i].file ? k->pcs[i].file : "[no line]";
		size_t l;

		for (l = 0; l < k->nr_lines; l++)
			if (k->lines[l].line == k->pcs[i].line && !strcmp(k->lines[l].file, file))
				break;
		if (l == k->nr_lines)
			k->lines[k->nr_lines++] = (struct ga_line){ .file = file,
								    .line = k->pcs[i].line };
		k->lines[l].samples += k->pcs[i].samples;
	}
	xpu_qsort(k->lines, k->nr_lines, sizeof(*k->lines), ga_line__cmp);
}

/* The SASS text, where the toolkit is here and the cubin whole (a->sass);
 * else why not, in k->why. */
static void ga__sass(struct ga_kernel *k, struct gpu_annotation *a)
{
	const void *cubin;
	size_t cubin_size = 0;
	uint32_t flags = 0;

	cubin = gpu_pcsamp__cubin_data(k->ps, k->pid, k->crc, &cubin_size, &flags);
	if (flags & XPU_CUBIN_REDUCED)
		snprintf(k->why, sizeof(k->why), "the trace holds this kernel's cubin reduced to "
			 "its line table (it was larger than xpu-record keeps whole)");
	else if (flags & XPU_CUBIN_SKIPPED)
		snprintf(k->why, sizeof(k->why), "the trace holds no cubin of this kernel (it was "
			 "larger than xpu-record keeps, with no line table)");
	else if (!cubin)
		snprintf(k->why, sizeof(k->why), "the trace holds no cubin of this kernel");
	else if (!(k->tool = ga__nvdisasm()))
		snprintf(k->why, sizeof(k->why), "nvdisasm not found ($CUDA_HOME/bin, "
			 "/usr/local/cuda/bin, PATH: install the CUDA toolkit or set CUDA_HOME)");
	else if (!ga__disasm(k->tool, cubin, cubin_size, k->mangled, &k->insns, &k->nr_insns,
			     k->why, sizeof(k->why)))
		a->sass = true;
}

/* The title, the summary notes and the table per source line. */
static void ga__summary(const struct ga_kernel *k, struct gpu_annotation *a)
{
	char *dem = demangle(k->mangled, true);
	const char *es = k->nr_pids == 1 ? "" : "es";

	a->title = xasprintf("%s (GPU kernel %s, cubin %#" PRIx64 ")", dem ? dem : k->mangled,
			     k->mangled, k->crc);
	free(dem);
	if (a->sass)
		ga__add(a, GPU_ANNOTATE_NOTE, a->total, "%" PRIu64 " PC samples at %zu PCs in %u "
			"process%s; SASS by %s", a->total, k->nr_pcs, k->nr_pids, es, k->tool);
	else
		ga__add(a, GPU_ANNOTATE_NOTE, a->total, "%" PRIu64 " PC samples at %zu PCs in %u "
			"process%s; no SASS text: %s", a->total, k->nr_pcs, k->nr_pids, es, k->why);
	if (k->other_samples)
		ga__add(a, GPU_ANNOTATE_NOTE, k->other_samples, "%" PRIu64 " more samples of a "
			"kernel of this name in other cubins are not shown", k->other_samples);
	ga__add(a, GPU_ANNOTATE_HEAD, 0, "per source line:");
	for (size_t i = 0; i < k->nr_lines; i++)
		ga__add(a, GPU_ANNOTATE_LINE, k->lines[i].samples, "%7.2f%% %8" PRIu64 "  %s%s%.0u",
			ga__pct(k->lines[i].samples, a->total), k->lines[i].samples,
			ga__base(k->lines[i].file), k->lines[i].line ? ":" : "", k->lines[i].line);
}

/* With SASS text: every instruction, under its source line when that
 * changes, then the sampled PCs nvdisasm printed no instruction at. */
static void ga__per_insn(const struct ga_kernel *k, struct gpu_annotation *a)
{
	const char *file = NULL;
	uint32_t line = 0;
	size_t shown = 0;

	ga__add(a, GPU_ANNOTATE_HEAD, 0, "per instruction (%zu):", k->nr_insns);
	for (size_t i = 0; i < k->nr_insns; i++) {
		const char *f;
		uint32_t l;
		struct ga_pc *p = ga__find_pc(k->pcs, k->nr_pcs, k->insns[i].off);

		if (!gpu_pcsamp__line(k->ps, k->pid, k->crc, k->mangled, k->insns[i].off, &f, &l) &&
		    (!file || l != line || strcmp(f, file))) {
			ga__add(a, GPU_ANNOTATE_SOURCE, 0, "%s:%u", ga__base(f), l);
			file = f;
			line = l;
		}
		ga__insn_line(a, p, k->insns[i].off, k->insns[i].text);
		shown += p != NULL;
	}
	if (shown >= k->nr_pcs)
		return;
	ga__add(a, GPU_ANNOTATE_HEAD, 0, "PCs at no instruction nvdisasm printed:");
	for (size_t i = 0; i < k->nr_pcs; i++) {
		bool found = false;

		for (size_t n = 0; n < k->nr_insns && !found; n++)
			found = k->insns[n].off == k->pcs[i].pc;
		if (!found)
			ga__insn_line(a, &k->pcs[i], k->pcs[i].pc, "?");
	}
}

/* Without SASS text: every sampled PC with its source line. */
static void ga__per_pc(const struct ga_kernel *k, struct gpu_annotation *a)
{
	ga__add(a, GPU_ANNOTATE_HEAD, 0, "per PC:");
	for (size_t i = 0; i < k->nr_pcs; i++) {
		char where[512];

		if (k->pcs[i].file)
			snprintf(where, sizeof(where), "%s:%u", ga__base(k->pcs[i].file),
				 k->pcs[i].line);
		else
			snprintf(where, sizeof(where), "[no line]");
		ga__insn_line(a, &k->pcs[i], k->pcs[i].pc, where);
	}
}

static void ga_kernel__exit(struct ga_kernel *k)
{
	for (size_t i = 0; i < k->nr_insns; i++)
		free(k->insns[i].text);
	free(k->insns);
	free(k->tool);
	free(k->lines);
	free(k->pcs);
	free(k->groups);
	free(k->crcs);
}

int gpu_annotate__kernel(struct gpu_annotation *a, struct session *s, const char *frame_name,
			 char *err, size_t errlen)
{
	const struct gpu_join *g = session__tool(s, GPU_JOIN_TOOL);
	char *name = ga__name(frame_name);
	struct ga_kernel k = { .ps = g ? gpu_join__pcsamp(g) : NULL, .name = name };
	int ret = -ENOENT;

	memset(a, 0, sizeof(*a));
	a->hottest = SIZE_MAX;
	if (!k.ps || !k.ps->nr) {
		snprintf(err, errlen, "annotate %s: the trace has no GPU PC samples (record with "
			 "xpu-record --gpu-pc-sampling)", name);
		goto out;
	}
	ga__groups(&k, g);
	if (!ga__pick_cubin(&k)) {
		snprintf(err, errlen, "annotate: no GPU PC samples of a kernel named '%s' (give a "
			 "kernel's name as its [GPU_Kernel] frame shows it, or mangled)", name);
		goto out;
	}
	ga__pcs(&k, a);
	ga__lines(&k);
	ga__sass(&k, a);
	ga__summary(&k, a);
	if (a->sass)
		ga__per_insn(&k, a);
	else
		ga__per_pc(&k, a);
	ret = 0;
out:
	ga_kernel__exit(&k);
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

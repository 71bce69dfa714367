// SPDX-License-Identifier: MIT
/*
 * The interpreter walk's user-space half (Documentation/design-python.md).
 *
 * Setup: when a tracked process maps a CPython interpreter (an ELF named
 * python3.N or libpython3.N... that defines _PyRuntime), its version is
 * read from the file (Py_Version, 3.11+; else the name) and, for a version
 * of the table below, the process's entry in the BPF map py_procs gets
 * _PyRuntime's and PyCode_Type's run-time addresses and that version's
 * layout. A fork copies the parent's entry (the BPF side at once, see
 * xpu_fork), an exec drops it (an inherited one at once: xpu_exec, which
 * also wakes the reader to read the new image's mappings without delay).
 *
 * Code objects: the first time a PY_STACK names a code address of a
 * process, the code object is read from the process's memory
 * (process_vm_readv, every size bounded, its type checked against
 * PyCode_Type) and written as a PY_CODE record before that PY_STACK.
 *
 * At the end, each process's self-check counters (bpf/xpu_python.bpf.h)
 * say whether the layout fitted; one that did not gets a warning.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "format/writer.h"
#include "common/hashmap.h"
#include "bpf/xpu_events.h"
#include "common/bounded.h"
#include "common/file.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "record/python/python_layout.h"
#include "record/python/python.h"
#include "record/files/buildid.h"
#include "record/clock.h"

/* How long the reader polls every millisecond after a launcher linked to
 * libpython was mapped (python__waiting): ld.so maps the library right after. */
#define PY_LAUNCHER_WAIT_NS	(100 * 1000000ull)
#define PY_STR_MAX	1024		/* characters of a name or file name kept */
#define PY_LINETABLE_MAX 65536		/* bytes of a line table kept */

struct py_proc {
	struct py_layout lay;
	uint64_t code_type;
	uint64_t since;			/* the time of the mapping (or fork) that set it */
	pid_t parent;			/* inherited at fork: its code objects are the parent's too */
	struct u64map seen;		/* code_key << 48 | address: written as PY_CODE */
};

struct python {
	struct xpu_writer *w;
	int map_fd;
	struct u64map procs;		/* pid -> struct py_proc * */
	struct u64map warned;		/* versions (and 0: free-threaded) warned about */
	struct u64map execs;		/* pid -> time of its last exec seen */
	pthread_mutex_t native_lock;	/* native: asked from the launch rules' thread */
	struct u64map native;		/* pid -> time + 1 its interpreter was found unreadable */
	uint64_t waiting_until;		/* a launcher seen: poll often until then (ns) */
	uint64_t stacks, codes, code_errors;
};

struct python *python__new(int map_fd, struct xpu_writer *w)
{
	struct python *py = xzalloc(sizeof(*py));

	py->w = w;
	py->map_fd = map_fd;
	u64map__init(&py->procs);
	u64map__init(&py->warned);
	u64map__init(&py->execs);
	u64map__init(&py->native);
	pthread_mutex_init(&py->native_lock, NULL);
	return py;
}

/*
 * A file that may hold an interpreter: its name has "python" in it
 * ("python3.11", "libpython3.12.so.1.0", "python3.13t", a venv's or
 * pyenv's "python", "python3.14-dbg"); whether it is one, and which, its
 * symbols say (_PyRuntime, Py_Version, _Py_DebugOffsets). Returns the minor
 * version its name gives ("python3.N..."), 0 when it gives none, -1 for a
 * file not to look at; *threaded for a name of a free-threaded build ('t').
 */
static int python__name_version(const char *path, bool *threaded)
{
	const char *base = strrchr(path, '/'), *at;
	char *end;
	long minor;

	base = base ? base + 1 : path;
	if (!(at = strstr(base, "python")))
		return -1;
	if (strncmp(at, "python3.", 8))
		return 0;
	minor = strtol(at + 8, &end, 10);
	if (end == at + 8 || minor < 0 || minor > 99)
		return 0;
	*threaded = *end == 't';
	return (int)minor;
}

struct py_elf {
	uint64_t runtime, code_type, version_addr;
	uint64_t bias;
	bool have_bias;
	uint32_t py_version;		/* Py_Version's value; 0: none */
	size_t debug_len;		/* bytes of _PyRuntime's initial value read */
	uint8_t debug[PY_DEBUG_READ];	/* _PyRuntime's start: _Py_DebugOffsets (3.13+) */
};

static void python__elf_symbols(Elf *e, struct py_elf *pe)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "_PyRuntime"))
				pe->runtime = sym.st_value;
			else if (!strcmp(name, "PyCode_Type"))
				pe->code_type = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				pe->version_addr = sym.st_value;
		}
	}
}

/* Up to len bytes of the initial value at addr, from the section that
 * holds it in the file (Py_Version's value, _PyRuntime's start: .data or
 * .PyRuntime). Returns the bytes read. */
static size_t python__elf_read(Elf *e, uint64_t addr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (addr && (scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr >= sh.sh_addr + sh.sh_size || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || addr - sh.sh_addr >= d->d_size)
			continue;
		n = d->d_size - (addr - sh.sh_addr);
		if (n > len)
			n = len;
		memcpy(buf, (const char *)d->d_buf + (addr - sh.sh_addr), n);
		return n;
	}
	return 0;
}

/* The load bias of a mapping of pgoff at start, from the PT_LOAD holding pgoff. */
static void python__elf_bias(Elf *e, uint64_t start, uint64_t pgoff, struct py_elf *pe)
{
	size_t nph;

	if (elf_getphdrnum(e, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    pgoff < (ph.p_offset & ~4095ULL) || pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		pe->bias = start - ((ph.p_vaddr - ph.p_offset) + pgoff);
		pe->have_bias = true;
		return;
	}
}

struct python_elf_job {
	char path[PATH_MAX];
	pid_t pid;
	uint64_t start, pgoff;
	struct py_elf pe;
};

static int python__read_elf_job(void *arg)
{
	struct python_elf_job *j = arg;
	char root[PATH_MAX + 32];
	int fd, ret;
	Elf *e;

	/* the process's own view of the path first (containers) */
	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)j->pid, j->path);
	ret = buildid__open_elf(root, &fd, &e);
	if (ret)
		ret = buildid__open_elf(j->path, &fd, &e);
	if (ret)
		return ret;
	python__elf_symbols(e, &j->pe);
	if (python__elf_read(e, j->pe.version_addr, &j->pe.py_version, 4) != 4)
		j->pe.py_version = 0;
	j->pe.debug_len = python__elf_read(e, j->pe.runtime, j->pe.debug, sizeof(j->pe.debug));
	python__elf_bias(e, j->start, j->pgoff, &j->pe);
	elf_end(e);
	close(fd);
	return 0;
}

/* The interpreter's file: a regular file, read with a time bound
 * (common/bounded.h): the program may have put anything at its path. */
static int python__read_elf(pid_t pid, const char *path, uint64_t start, uint64_t pgoff,
			    struct py_elf *pe)
{
	struct python_elf_job j = { .pid = pid, .start = start, .pgoff = pgoff };
	int ret;

	if (strlen(path) >= sizeof(j.path))
		return -ENAMETOOLONG;
	strcpy(j.path, path);
	ret = bounded__call(python__read_elf_job, NULL, &j, sizeof(j));
	if (!ret)
		*pe = j.pe;
	return ret;
}

static void python__warn_once(struct python *py, uint64_t key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void python__warn_once(struct python *py, uint64_t key, const char *fmt, ...)
{
	uint64_t *slot = u64map__slot(&py->warned, key + 1);
	char buf[512];
	va_list ap;

	if (*slot)
		return;
	*slot = 1;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	warn("%s", buf);
}

static void python__proc_free(struct py_proc *pp)
{
	if (!pp)
		return;
	u64map__exit(&pp->seen);
	free(pp);
}

static void python__set(struct python *py, pid_t pid, const struct py_layout *lay,
			uint64_t runtime, uint64_t code_type, uint64_t time, pid_t parent)
{
	struct xpu_bpf_py_cfg cfg = lay->cfg;
	uint32_t key = pid;
	uint64_t *slot = u64map__slot(&py->procs, (uint64_t)pid);
	struct py_proc *pp;

	cfg.runtime = runtime;
	cfg.code_type = code_type;
	cfg.co_qualname = lay->co_qualname;
	cfg.co_filename = lay->co_filename;
	cfg.co_firstlineno = lay->co_firstlineno;
	cfg.co_size = (lay->co_qualname > lay->co_filename ? lay->co_qualname : lay->co_filename) + 8;
	cfg.inherited = parent > 0;
	if (!parent)
		py->waiting_until = 0;	/* found */
	cfg.parent = parent > 0 ? (uint32_t)parent : 0;
	/* inherited: the BPF side may have copied it at the fork already, and
	 * its counters run since then */
	if (bpf_map_update_elem(py->map_fd, &key, &cfg, parent > 0 ? BPF_NOEXIST : BPF_ANY) &&
	    !(parent > 0 && errno == EEXIST)) {
		debug(1, "pid %d: cannot register the Python process: %s", (int)pid, strerror(errno));
		return;
	}
	python__proc_free((struct py_proc *)(uintptr_t)*slot);
	pp = xzalloc(sizeof(*pp));
	pp->lay = *lay;
	pp->code_type = code_type;
	pp->since = time;
	pp->parent = parent;
	u64map__init(&pp->seen);
	*slot = (uint64_t)(uintptr_t)pp;
}

bool python__layout_of(struct python *py, pid_t pid, struct xpu_bpf_py_cfg *cfg)
{
	uint32_t key = (uint32_t)pid;

	return py && !bpf_map_lookup_elem(py->map_fd, &key, cfg);
}

bool python__waiting(struct python *py)
{
	return py && py->waiting_until && record__now_ns() < py->waiting_until;
}

/* pid maps a CPython whose frames the walk cannot read (python__native) */
static void python__set_native(struct python *py, pid_t pid, uint64_t time)
{
	pthread_mutex_lock(&py->native_lock);
	*u64map__slot(&py->native, (uint64_t)pid) = time + 1;
	pthread_mutex_unlock(&py->native_lock);
}

bool python__native(struct python *py, pid_t pid)
{
	bool native;

	if (!py)
		return false;
	pthread_mutex_lock(&py->native_lock);
	native = u64map__find(&py->native, (uint64_t)pid) != NULL;
	pthread_mutex_unlock(&py->native_lock);
	return native;
}

void python__mapping(struct python *py, pid_t pid, const char *path, uint64_t start,
		     uint64_t pgoff, uint64_t time)
{
	struct py_elf pe = { 0 };
	struct py_layout lay;
	const struct py_layout *hand;
	const char *why = "";
	bool threaded = false;
	int minor = python__name_version(path, &threaded), ret, dbg;
	unsigned version;

	if (!py || minor < 0)
		return;
	ret = python__read_elf(pid, path, start, pgoff, &pe);
	if (ret)
		return;
	if (!pe.runtime) {	/* a launcher linked to libpython: the library has it */
		/* ld.so maps it in the next milliseconds: read the side-band
		 * often until then (python__waiting) */
		if (!threaded && minor > 0)
			py->waiting_until = record__now_ns() + PY_LAUNCHER_WAIT_NS;
		return;
	}
	/* 3.13+: the interpreter's own _Py_DebugOffsets */
	dbg = python_layout__debug(pe.debug, pe.debug_len, &lay, &why);
	if (pe.py_version >> 24 == 3)
		version = pe.py_version >> 16;
	else if (dbg != PY_DEBUG_NONE)
		version = lay.cfg.version;
	else if (minor > 0)
		version = 0x0300 | (unsigned)minor;
	else
		return;		/* named python, with a _PyRuntime, and no version */
	if (minor > 0 && (version & 0xff) != (unsigned)minor)
		debug(1, "%s: CPython %u.%u by its symbols disagrees with its name: the symbols "
		      "are believed", path, version >> 8, version & 0xff);
	if (dbg == PY_DEBUG_FREE_THREADED || (dbg == PY_DEBUG_NONE && threaded)) {
		python__warn_once(py, 0, "pid %d: %s is a free-threaded CPython build: the interpreter "
				  "walk does not support it; its stacks stay native", (int)pid, path);
		python__set_native(py, pid, time);
		return;
	}
	if (dbg != PY_DEBUG_NONE && lay.cfg.version != version) {
		dbg = PY_DEBUG_BAD;
		why = "its _Py_DebugOffsets' version is not Py_Version's";
	}
	hand = python_layout__table(version, false);
	if (hand) {
		lay = *hand;
	} else if (dbg != PY_DEBUG_OK) {
		if (version < 0x030d || dbg == PY_DEBUG_UNKNOWN || dbg == PY_DEBUG_NONE)
			python__warn_once(py, version, "pid %d: %s is CPython %u.%u: the interpreter "
					  "walk knows 3.10 to 3.15; its stacks stay native (3.12+: "
					  "--python-frames=perf-map)", (int)pid, path, version >> 8,
					  version & 0xff);
		else
			python__warn_once(py, version, "pid %d: %s (CPython %u.%u): %s: its stacks "
					  "stay native", (int)pid, path, version >> 8, version & 0xff,
					  why);
		python__set_native(py, pid, time);
		return;
	}
	if (!pe.have_bias || !pe.code_type) {
		debug(1, "pid %d: %s: no load address or no PyCode_Type: no Python frames",
		      (int)pid, path);
		python__set_native(py, pid, time);
		return;
	}
	debug(1, "pid %d: CPython %u.%u in %s: _PyRuntime at %#llx, layout from %s", (int)pid,
	      version >> 8, version & 0xff, path, (unsigned long long)(pe.bias + pe.runtime),
	      lay.from_debug ? "its _Py_DebugOffsets" : "the table");
	python__set(py, pid, &lay, pe.bias + pe.runtime, pe.bias + pe.code_type, time, 0);
}

void python__scan_maps(struct python *py, pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int mm;

	if (!py)
		return;
	mm = file__proc_live_tid(pid);	/* an exited main thread shows no maps */
	snprintf(path, sizeof(path), "/proc/%d/maps", mm > 0 ? mm : (int)pid);
	f = file__fopen_regular(path, 0, FILE_TEXT_MAX);
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, end, off;
		char perms[8];
		int name = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &name) < 4 || !name || perms[2] != 'x' || line[name] != '/')
			continue;
		line[name + strcspn(line + name, "\n")] = '\0';
		python__mapping(py, pid, line + name, start, off, 0);
	}
	free(line);
	fclose(f);
}

void python__fork(struct python *py, pid_t ppid, pid_t pid, uint64_t time)
{
	uint64_t *slot, *exec_time;
	struct py_proc *pp;
	struct xpu_bpf_py_cfg cfg;
	uint32_t key = ppid;

	/* the same interpreter, unless the child's exec (read first) replaced it */
	if (py && python__native(py, ppid) &&
	    !((exec_time = u64map__find(&py->execs, (uint64_t)pid)) && *exec_time >= time))
		python__set_native(py, pid, time);
	if (!py || !(slot = u64map__find(&py->procs, (uint64_t)ppid)) || !*slot)
		return;
	/* the side-band's per-CPU buffers: the child's exec, on another CPU,
	 * may have been read first; the entry would outlive it */
	if ((exec_time = u64map__find(&py->execs, (uint64_t)pid)) && *exec_time >= time)
		return;
	pp = (struct py_proc *)(uintptr_t)*slot;
	if (bpf_map_lookup_elem(py->map_fd, &key, &cfg))
		return;
	python__set(py, pid, &pp->lay, cfg.runtime, cfg.code_type, time, ppid);
}

/*
 * The sideband comes in per-CPU buffers: a process that execs on one CPU
 * and maps its interpreter on another may have its mapping drained before
 * its exec. An entry set by a mapping newer than the exec stays (under
 * load, python3.13 lost every Python frame of a run this way).
 */
void python__exec(struct python *py, pid_t pid, uint64_t time)
{
	uint64_t *slot;
	uint32_t key = pid;

	if (!py)
		return;
	if (time)
		*u64map__slot(&py->execs, (uint64_t)pid) = time;
	pthread_mutex_lock(&py->native_lock);	/* a new image: not known yet */
	if ((slot = u64map__find(&py->native, (uint64_t)pid)) && (!time || *slot - 1 <= time))
		u64map__del(&py->native, (uint64_t)pid);
	pthread_mutex_unlock(&py->native_lock);
	if (!(slot = u64map__find(&py->procs, (uint64_t)pid)))
		return;
	if (*slot && time && ((struct py_proc *)(uintptr_t)*slot)->since > time)
		return;
	python__proc_free((struct py_proc *)(uintptr_t)*slot);
	u64map__del(&py->procs, (uint64_t)pid);
	bpf_map_delete_elem(py->map_fd, &key);
}

static int python__peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * A str object of pid as UTF-8 into out (4 * PY_STR_MAX + 1 bytes), NUL
 * and all NULs inside replaced; compact strings only (what the compiler
 * makes for names). A lone surrogate (a file name decoded with
 * surrogateescape, a name made with "\udcff") is U+FFFD, never CESU-8,
 * which no output may carry (common/utf8.h). Returns the length, or -1.
 */
static int python__str(pid_t pid, const struct py_layout *lay, uint64_t addr, char *out)
{
	uint8_t hdr[80], data[4 * PY_STR_MAX];
	uint64_t len;
	uint32_t state, kind;
	size_t at, pos = 0;

	/* the ASCII header first: a small object may end its arena, so no
	 * read goes past what the object's kind says it has */
	if (!addr || lay->compact_size > sizeof(hdr) || python__peek(pid, addr, hdr, lay->ascii_size))
		return -1;
	memcpy(&len, hdr + 16, 8);
	memcpy(&state, hdr + 32, 4);
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return -1;		/* not compact, or not ready */
	if (len > PY_STR_MAX)
		len = PY_STR_MAX;
	at = state & (1u << 6) ? lay->ascii_size : lay->compact_size;
	if (at > lay->ascii_size &&
	    python__peek(pid, addr + lay->ascii_size, hdr + lay->ascii_size, at - lay->ascii_size))
		return -1;
	if (len && python__peek(pid, addr + at, data, len * kind))
		return -1;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? data[i] : kind == 2 ? ((uint16_t *)data)[i]
							      : ((uint32_t *)data)[i];

		pos += utf8__put(out + pos, c ? c : '?');
	}
	out[pos] = '\0';
	return (int)pos;
}

/* Reads code object addr of pid and writes its PY_CODE record, if it is
 * still the object the frame saw (its key). */
static int python__code(struct python *py, pid_t pid, pid_t from, struct py_proc *pp,
			uint64_t addr, uint16_t want_key)
{
	const struct py_layout *lay = &pp->lay;
	struct xpu_py_code c = { .addr = addr, .pid = (uint32_t)pid,
				 .version = lay->cfg.version };
	static char qual[4 * PY_STR_MAX + 1], file[4 * PY_STR_MAX + 1];
	static uint8_t table[PY_LINETABLE_MAX];
	static const uint8_t zeros[8];
	uint8_t co[256];
	uint64_t type, qp, fp, lp, tsize = 0;
	size_t need = lay->co_linetable + 8;
	struct iovec iov[5];
	int q, f;

	if ((size_t)lay->co_qualname + 8 > need)
		need = lay->co_qualname + 8;
	if ((size_t)lay->co_filename + 8 > need)
		need = lay->co_filename + 8;
	if (need > sizeof(co) || python__peek(from, addr, co, need))
		return -EFAULT;
	memcpy(&type, co + 8, 8);
	if (type != pp->code_type)
		return -EINVAL;
	memcpy(&qp, co + lay->co_qualname, 8);
	memcpy(&fp, co + lay->co_filename, 8);
	memcpy(&lp, co + lay->co_linetable, 8);
	memcpy(&c.firstlineno, co + lay->co_firstlineno, 4);
	c.code_key = xpu_py_code_key(qp, fp, c.firstlineno);
	if (c.code_key != want_key)
		return -ESTALE;		/* freed and replaced since the sample */
	q = python__str(from, lay, qp, qual);
	f = python__str(from, lay, fp, file);
	if (q < 0 || f < 0)
		return -EINVAL;
	if (lp) {
		uint8_t bh[32];

		if (!python__peek(from, lp, bh, sizeof(bh))) {
			memcpy(&tsize, bh + 16, 8);	/* ob_size */
			if (tsize > PY_LINETABLE_MAX || python__peek(from, lp + lay->bytes_sval, table, tsize))
				tsize = 0;
		}
	}
	c.qualname_size = (uint16_t)(q + 1);
	c.filename_size = (uint16_t)(f + 1);
	c.linetable_size = (uint32_t)tsize;
	iov[0] = (struct iovec){ &c, sizeof(c) };
	iov[1] = (struct iovec){ qual, (size_t)q + 1 };
	iov[2] = (struct iovec){ file, (size_t)f + 1 };
	iov[3] = (struct iovec){ table, tsize };
	iov[4] = (struct iovec){ (void *)zeros, (8 - (sizeof(c) + q + 1 + f + 1 + tsize) % 8) % 8 };
	return xpu_writer__addv(py->w, XPU_REC_PY_CODE, 0, iov, 5);
}

/*
 * A stack of a process the BPF side gave its parent's entry at the fork
 * (xpu_fork) before this reader saw the FORK record: take the parent's
 * entry now, as python__fork() will. The slot, or NULL.
 */
static uint64_t *python__adopt(struct python *py, pid_t pid, uint64_t time)
{
	struct xpu_bpf_py_cfg cfg;
	uint32_t key = (uint32_t)pid;

	if (bpf_map_lookup_elem(py->map_fd, &key, &cfg) || !cfg.inherited || !cfg.parent)
		return NULL;
	python__fork(py, (pid_t)cfg.parent, pid, time);
	return u64map__find(&py->procs, (uint64_t)pid);
}

void python__stack(struct python *py, const void *rec, size_t len)
{
	struct xpu_py_stack st;
	const uint8_t *fr = (const uint8_t *)rec + sizeof(st);
	struct py_proc *pp;
	uint64_t *slot;

	if (!py || len < sizeof(st))
		return;
	memcpy(&st, rec, sizeof(st));
	if ((len - sizeof(st)) / sizeof(struct xpu_py_frame) < st.nr_frames)
		return;
	py->stacks++;
	slot = u64map__find(&py->procs, st.pid);
	if (!slot || !*slot)
		slot = python__adopt(py, st.pid, st.time);
	if (!slot || !*slot)
		return;
	pp = (struct py_proc *)(uintptr_t)*slot;
	for (unsigned i = 0; i < st.nr_frames; i++) {
		struct xpu_py_frame f;
		uint64_t *seen;

		memcpy(&f, fr + i * sizeof(f), sizeof(f));
		seen = u64map__slot(&pp->seen, (uint64_t)f.code_key << 48 ^ f.code);
		if (*seen)
			continue;
		*seen = 1;
		/* a child gone (exit, exec) before we read: the parent has the
		 * code objects made before the fork (the key tells) */
		if (python__code(py, st.pid, st.pid, pp, f.code, f.code_key) &&
		    (!pp->parent || python__code(py, st.pid, pp->parent, pp, f.code, f.code_key)))
			py->code_errors++;
		else
			py->codes++;
	}
}

uint64_t python__finish(struct python *py)
{
	size_t iter = 0;
	uint64_t key, val;

	if (!py)
		return 0;
	while (u64map__next(&py->procs, &iter, &key, &val)) {
		struct py_proc *pp = (struct py_proc *)(uintptr_t)val;
		struct xpu_bpf_py_cfg cfg;
		uint32_t k = (uint32_t)key;

		if (!pp || bpf_map_lookup_elem(py->map_fd, &k, &cfg))
			continue;
		debug(1, "pid %u: Python walks %llu, frames %llu, thread states failing the check "
		      "%llu, code objects failing it %llu", k, (unsigned long long)cfg.walks,
		      (unsigned long long)cfg.frames, (unsigned long long)cfg.bad_thread,
		      (unsigned long long)cfg.bad_code);
		if ((cfg.bad_thread && !cfg.walks) || cfg.bad_code * 10 > cfg.frames + 10)
			warn("pid %u (CPython %u.%u): the interpreter walk's checks failed (%llu thread "
			     "states, %llu code objects): this build's layout differs from the "
			     "table; its stacks stay native", k, pp->lay.cfg.version >> 8,
			     pp->lay.cfg.version & 0xff, (unsigned long long)cfg.bad_thread,
			     (unsigned long long)cfg.bad_code);
	}
	debug(1, "Python: %llu stacks, %llu code objects written, %llu unreadable",
	      (unsigned long long)py->stacks, (unsigned long long)py->codes,
	      (unsigned long long)py->code_errors);
	return py->stacks;
}

void python__free(struct python *py)
{
	size_t iter = 0;
	uint64_t key, val;

	if (!py)
		return;
	while (u64map__next(&py->procs, &iter, &key, &val))
		python__proc_free((struct py_proc *)(uintptr_t)val);
	u64map__exit(&py->procs);
	u64map__exit(&py->warned);
	u64map__exit(&py->execs);
	u64map__exit(&py->native);
	pthread_mutex_destroy(&py->native_lock);
	free(py);
}

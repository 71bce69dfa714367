// SPDX-License-Identifier: MIT
/*
 * Getting libxpu-cupti.so into a running process (xpu-record -p on a CUDA
 * process; Documentation/design-attach.md): one thread of the process is
 * borrowed with ptrace for the time of a dlopen() and of the library's
 * attach entry (cupti/attach.h), which starts a thread of the library's
 * own and returns. The other threads run on.
 *
 * The steps, each safe to be cut short by the recorder's death (the
 * kernel then detaches the thread and it runs on):
 *  1. seize and interrupt the chosen thread (a signal that comes first is
 *     delivered, and the interrupt waited for again);
 *  2. save its registers; write a frame below its stack's red zone (the
 *     strings, room for its FPU/SSE/AVX state) and a trampoline into a
 *     code cave: the unused tail of the last page of an executable
 *     mapping, past its segment's end, which nothing executes or reads.
 *     Until the next step the thread's registers are its own: the writes
 *     are in memory no one uses;
 *  3. one PTRACE_SETREGS (atomic) points it at the trampoline. From here
 *     the trampoline needs no tracer: it saves the FPU state (xsave), calls
 *     dlopen() and the entry, restores the FPU state, makes a syscall that
 *     does not exist (the tracer stops it there), and then, had no tracer
 *     stopped it, restores every register from constants written into its
 *     own code and jumps back: the thread goes on where it was;
 *  4. the tracer, alive, stops that syscall, sets the saved registers
 *     itself (PTRACE_SETREGS again, the syscall skipped), puts the cave's
 *     bytes back and detaches.
 * A thread interrupted inside a system call is resumed as the kernel would
 * have resumed it: an interrupted restartable call (-ERESTARTSYS,
 * -ERESTARTNOINTR, -ERESTARTNOHAND) is made again, -ERESTART_RESTARTBLOCK
 * continues through restart_syscall; a finished call keeps its result.
 * errno: the trampoline saves *__errno_location() before the load and
 * writes it back after.
 *
 * A process whose main thread has exited (pthread_exit(): a zombie, its
 * /proc/PID/maps empty, its map_files, mem, exe, root and fd gone) is read
 * through a live thread's /proc/TID (common/file.h), and never borrows the
 * zombie. A process with a thread under seccomp is never injected
 * (inject__seccomp()).
 *
 * A process that does not see our library's file (another mount
 * namespace: a container) gets it through a memfd: the trampoline makes
 * one and stops at the magic syscall with its fd; the tracer copies the
 * library into /proc/PID/fd/FD, places the marker's uprobe on that file
 * and answers 0 (no tracer: -ENOSYS, the load is skipped); dlopen then
 * loads /proc/self/fd/FD and the fd is closed.
 *
 * XPU_INJECT_DIE_AT=N (tests): the recorder kills itself with SIGKILL at
 * step N (1: the thread stopped; 2: memory written; 3: registers set;
 * 4: the trampoline running; 5: at its end, before the registers are put
 * back; 6: after, before the detach; 7: at the memfd stop; 8: halfway
 * through the copy into the memfd). XPU_INJECT_HOLD_MS=N holds the thread
 * stopped N ms at its first stop and at the trampoline's end (signals sent
 * meanwhile must all be delivered). XPU_INJECT_MEMFD=1: the memfd even
 * where the file is seen.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cpuid.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include "common/file.h"
#include "common/log.h"
#include "cupti/channel/wire.h"
#include "record/gpu/inject.h"
#include "record/gpu/memfd.h"
#include "record/gpu/trampoline.h"
#include "record/options.h"
#include "record/files/elf_funcs.h"
#include "record/gpu/channel.h"

#define INJ_RED_ZONE		128
#define INJ_PATH_MAX		4096
#define INJ_TRIES		20		/* threads in ld.so: tries, 5 ms apart */
#define INJ_STACK_NEED		(128u << 10)	/* stack the loader may use */
#define INJ_SKIP_MAX		64		/* threads left out (small stacks) */
#define INJ_RUN_TIMEOUT_S	10.0		/* dlopen + entry at most */

#ifndef ERESTARTSYS
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516
#endif
#define NR_RESTART_SYSCALL	219

struct inj_map {
	uint64_t start, end, pgoff;
	char perms[5];
	dev_t dev;
	uint64_t ino;
	char path[INJ_PATH_MAX];
};

struct inj_target {
	pid_t pid;
	pid_t mm;				/* a live thread: /proc/MM shows the process */
	uint64_t dlopen, dlsym, dlerror;	/* in the process */
	uint64_t errno_location;		/* libc's __errno_location, or 0 */
	bool libc_private;			/* __libc_dlopen_mode: old glibc */
	uint64_t attach;			/* the loaded library's entry, or 0 */
	uint64_t cave, cave_len;
	bool have_cuda;
	bool cuda_app;				/* CUDA libraries, libcuda or not */
	bool have_lib;
	int nr_maps;				/* the lines of its maps */
	bool memfd;				/* the library goes through a memfd */
	uint64_t lib_start, lib_end;		/* a mapping of the loaded copy */
	struct inj_map ldso[8];			/* the dynamic linker's code */
	int nr_ldso;
	const char *lib;			/* our file */
	inject_marker_fn marker;		/* the uprobe on a copy of it */
	void *marker_ctx;
};

/* tests' knobs (record_opts, from XPU_INJECT_*), set by inject__pids */
static int inj_die_at = -1;	/* XPU_INJECT_DIE_AT */
static int inj_hold_ms;		/* XPU_INJECT_HOLD_MS */
static bool inj_memfd;		/* XPU_INJECT_MEMFD */

/* XPU_INJECT_HOLD_MS (tests): the thread kept stopped that long at its
 * first stop and at the trampoline's end, so that signals sent meanwhile
 * come at the injection's stops and must all be delivered. */
static void inject__hold(void)
{
	if (inj_hold_ms > 0)
		usleep((useconds_t)inj_hold_ms * 1000);
}

static void inject__step(int step)
{
	if (step == inj_die_at) {
		debug(1, "XPU_INJECT_DIE_AT=%d: killing myself", step);
		kill(getpid(), SIGKILL);
	}
}

static double inject__ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

static bool inject__parse_map(const char *line, struct inj_map *m)
{
	unsigned int maj, min;
	int pos = 0;

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %n", &m->start, &m->end, m->perms, &m->pgoff,
		   &maj, &min, &m->ino, &pos) < 7)
		return false;
	m->dev = makedev(maj, min);
	snprintf(m->path, sizeof(m->path), "%s", line + pos);
	m->path[strcspn(m->path, "\n")] = 0;
	return true;
}

static const char *inject__base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The address in the process of the function at file offset off of the
 * file mapped by the executable mapping m, or 0. */
static uint64_t inject__addr(const struct inj_map *m, uint64_t off)
{
	if (off < m->pgoff || off >= m->pgoff + (m->end - m->start))
		return 0;
	return m->start + (off - m->pgoff);
}

/* names[0..n) of the file of the executable mapping m (read through the
 * process's root, so a container's file), as addresses in addrs. */
static int inject__lookup(pid_t pid, const struct inj_map *m, const char *const *names, int n,
			  uint64_t *addrs)
{
	char path[INJ_PATH_MAX + 64];
	uint64_t offs[ELF_FUNCS_MAX];
	int found = 0;

	/* the mapped file itself (a memfd's too), else by name in its root */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, m->start, m->end);
	if (elf_funcs__offsets(path, names, n, offs) < 0 && m->path[0] == '/') {
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
		elf_funcs__offsets(path, names, n, offs);
	}
	for (int i = 0; i < n; i++) {
		addrs[i] = offs[i] ? inject__addr(m, offs[i]) : 0;
		found += addrs[i] != 0;
	}
	return found;
}

/* The unused tail of the last page of an executable mapping: past the end
 * of the file's executable segment (its ELF program headers), up to the
 * page's end. */
static uint64_t inject__cave(pid_t pid, const struct inj_map *m, uint64_t *len)
{
	char path[INJ_PATH_MAX + 64];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t best = 0;
	int fd;

	*len = 0;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph))
		goto out;
	for (int i = 0; i < eh.e_phnum; i++) {
		uint64_t end_off, cave, page_end;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || ph.p_memsz != ph.p_filesz)
			continue;
		end_off = ph.p_offset + ph.p_filesz;
		if (end_off <= m->pgoff || end_off > m->pgoff + (m->end - m->start))
			continue;
		cave = m->start + (end_off - m->pgoff);
		cave = (cave + 15) & ~15ull;
		page_end = (cave + 4095) & ~4095ull;
		if (page_end > m->end || cave >= page_end)
			continue;
		if (page_end - cave > *len) {
			*len = page_end - cave;
			best = cave;
		}
	}
out:
	close(fd);
	return best;
}

/* Reads the process's mappings: libc's dlopen (or libdl's, or glibc's
 * private one before 2.34), libcuda, our library, a code cave. */
static int inject__scan(struct inj_target *t, const char *lib, const struct stat *lib_st)
{
	static const char *const dl_names[3] = { "dlopen", "dlsym", "dlerror" };
	static const char *const priv_names[2] = { "__libc_dlopen_mode", "__libc_dlsym" };
	static const char *const attach_name[1] = { XPU_CUPTI_ATTACH_SYMBOL };
	char path[64], line[INJ_PATH_MAX + 128];
	struct inj_map m, libc = { 0 };
	bool have_libc = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->mm);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *base;
		uint64_t a[3], len;

		if (!inject__parse_map(line, &m))
			continue;
		t->nr_maps++;
		if (m.path[0] != '/')
			continue;
		/* a copy loaded from a memfd by an earlier attach */
		if (!strncmp(m.path, "/memfd:" INJECT_MEMFD_NAME " ", 8 + strlen(INJECT_MEMFD_NAME)) &&
		    m.perms[2] == 'x' && !t->attach) {
			uint64_t a[1];

			if (inject__lookup(t->mm, &m, attach_name, 1, a) == 1) {
				t->have_lib = true;
				t->attach = a[0];
				t->lib_start = m.start;
				t->lib_end = m.end;
			}
			continue;
		}
		base = inject__base(m.path);
		if (!strncmp(base, "libcuda.so", 10))
			t->have_cuda = true;
		if (!strncmp(base, "libcudart.so", 12) || !strncmp(base, "libtorch_cuda", 13) ||
		    !strncmp(base, "libcublas", 9) || !strncmp(base, "libnccl", 7))
			t->cuda_app = true;
		if (m.perms[2] != 'x')
			continue;
		if (m.dev == lib_st->st_dev && m.ino == lib_st->st_ino && !t->attach &&
		    inject__lookup(t->mm, &m, attach_name, 1, a) == 1) {
			t->have_lib = true;
			t->attach = a[0];
		}
		if (!t->dlopen && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-2.", 7) ||
				   !strncmp(base, "libdl.so", 8) || !strncmp(base, "libdl-2.", 8)) &&
		    inject__lookup(t->mm, &m, dl_names, 3, a) >= 2 && a[0] && a[1]) {
			t->dlopen = a[0];
			t->dlsym = a[1];
			t->dlerror = a[2];
		}
		if (!have_libc && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-2.", 7))) {
			libc = m;
			have_libc = true;
		}
		if (strncmp(m.path, "/memfd:", 7)) {
			uint64_t cave = inject__cave(t->mm, &m, &len);

			if (cave && len > t->cave_len) {
				t->cave = cave;
				t->cave_len = len;
			}
		}
	}
	fclose(f);
	if (have_libc) {
		static const char *const errno_name[1] = { "__errno_location" };
		uint64_t a[1];

		if (inject__lookup(t->mm, &libc, errno_name, 1, a) == 1)
			t->errno_location = a[0];
	}
	if (!t->dlopen && have_libc) {
		uint64_t a[2];

		if (inject__lookup(t->mm, &libc, priv_names, 2, a) == 2) {
			t->dlopen = a[0];
			t->dlsym = a[1];
			t->libc_private = true;
		}
	}
	return 0;
}

/* ---- the thread ------------------------------------------------------------- */

/* How good a thread is to borrow: one blocked in a call that holds no lock
 * of libc (a sleep, a poll, a read) best, then any blocked one, then a
 * running one; never one inside the dynamic linker (pc in ld.so). */
static int inject__rank(pid_t pid, pid_t tid, const struct inj_map *ldso, int nr_ldso)
{
	static const long calm[] = { 0, 7, 23, 35, 43, 45, 47, 61, 128, 130, 230, 232, 247,
				     270, 271, 281, 288, 441 };
	char path[96], buf[256];
	unsigned long v[9];
	long nr;

	if (!file__proc_task_live(pid, tid))
		return -1;	/* an exited main thread (pthread_exit): a zombie */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (file__read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	if (!strncmp(buf, "running", 7))
		return 1;
	if (sscanf(buf, "%ld %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 3)
		return 1;
	/* "-1 sp pc": blocked outside a syscall; else nr, 6 args, sp, pc */
	uint64_t pc = nr < 0 ? v[1] : v[7];

	for (int i = 0; i < nr_ldso; i++)
		if (pc >= ldso[i].start && pc < ldso[i].end)
			return 0;
	for (size_t i = 0; i < sizeof(calm) / sizeof(calm[0]); i++)
		if (nr == calm[i])
			return 4;
	return nr == 202 ? 3 : 2;	/* a futex wait, any other call */
}

static int inject__ldso(pid_t pid, struct inj_map *out, int max)
{
	char path[64], line[INJ_PATH_MAX + 128];
	struct inj_map m;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (n < max && fgets(line, sizeof(line), f))
		if (inject__parse_map(line, &m) && m.perms[2] == 'x' &&
		    !strncmp(inject__base(m.path), "ld-", 3))
			out[n++] = m;
	fclose(f);
	return n;
}

static pid_t inject__pick_thread(pid_t pid, const struct inj_map *ldso, int nr_ldso,
				 const pid_t *skip, int nr_skip)
{
	char path[64];
	struct dirent *de;
	pid_t best = 0;
	int best_rank = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return -errno;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		int r;

		if (tid <= 0)
			continue;
		for (int i = 0; i < nr_skip; i++)
			if (skip[i] == tid)
				tid = 0;
		if (!tid)
			continue;
		r = inject__rank(pid, tid, ldso, nr_ldso);
		/* the main thread last among equals: it often holds a lock
		 * (Python's GIL) the others wait for */
		if (r > best_rank || (r == best_rank && r > 0 && best == pid)) {
			best = tid;
			best_rank = r;
		}
	}
	closedir(d);
	return best_rank > 0 ? best : -EAGAIN;
}

/* Waits for tid's next stop: its status, or -errno (gone). */
static int inject__wait(pid_t tid, int *status)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL);

		if (r == tid)
			return WIFSTOPPED(*status) ? 0 : -ESRCH;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* The interrupt's stop: a signal that stops the thread first is delivered
 * (its handler runs with the thread's own registers) and the interrupt,
 * still pending, waited for again. -EINTR: the process is stopped (job
 * control): left as it is. */
static int inject__stop(pid_t tid)
{
	int status, err;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		return -errno;
	for (;;) {
		if ((err = inject__wait(tid, &status)))
			return err;
		if (status >> 16 == PTRACE_EVENT_STOP)
			return WSTOPSIG(status) == SIGTRAP ? 0 : -EINTR;
		if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(status)))
			return -errno;
	}
}

/* What the thread's registers will be when it goes on, as the kernel would
 * have resumed it after this stop: an interrupted restartable call made
 * again; then no syscall in progress (orig_rax -1), so that setting these
 * registers restarts nothing by itself. */
static void inject__resume_regs(struct user_regs_struct *r)
{
	if ((long)r->orig_rax >= 0) {
		switch ((long)r->rax) {
		case -ERESTARTSYS:
		case -ERESTARTNOINTR:
		case -ERESTARTNOHAND:
			r->rax = r->orig_rax;
			r->rip -= 2;
			break;
		case -ERESTART_RESTARTBLOCK:
			r->rax = NR_RESTART_SYSCALL;
			r->rip -= 2;
			break;
		}
	}
	r->orig_rax = -1;
}

/* Whether the stack at sp has INJ_STACK_NEED bytes below it for the
 * loader (dlopen's own use, the frame): a thread's stack mapping, or the
 * main thread's, which grows. */
static bool inject__stack_room(pid_t pid, uint64_t sp)
{
	char path[64], line[INJ_PATH_MAX + 128];
	struct inj_map m;
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return true;
	while (fgets(line, sizeof(line), f)) {
		if (!inject__parse_map(line, &m) || sp < m.start || sp >= m.end)
			continue;
		ok = !strcmp(m.path, "[stack]") || sp - m.start >= INJ_STACK_NEED;
		break;
	}
	fclose(f);
	return ok;
}

static int inject__mem(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* At the trampoline's memfd stop: our library copied into the process's
 * memfd fd (through /proc/PID/fd/FD: the recorder writes, the process
 * only maps it), its path in the process written where dlopen reads it,
 * the marker's uprobe placed on that file. Returns 0 or -errno: the
 * trampoline then closes the fd and goes back. */
static void inject__step_copying(void)
{
	inject__step(8);	/* half a library in the memfd */
}

static int inject__fill_memfd(struct inj_target *t, pid_t tid, int fd, uint64_t path_addr)
{
	char path[64], buf[64];
	int mfd, err;

	inject__step(7);
	/* the target's own descriptor, never /proc/TID/fd/N reopened: its
	 * other threads may have put a root-only file at N (memfd.h) */
	mfd = memfd__take(t->pid, fd, INJECT_MEMFD_NAME);
	if (mfd < 0)
		return mfd;
	err = memfd__fill(mfd, t->lib, inject__step_copying);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);	/* the inode checked */
	if (!err && t->marker) {
		int m = t->marker(t->marker_ctx, path);

		if (m)
			debug(1, "pid %d: no uprobe on the library's memfd copy: %s", t->pid,
			      strerror(-m));
	}
	close(mfd);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd);
	return inject__mem(tid, path_addr, buf, strlen(buf) + 1, true);
}

/* The size of the xsave area (CPUID 0xD: the components XCR0 enables), or 0
 * without xsave (fxsave's 512 bytes then). */
static unsigned int inject__xsave_size(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))	/* OSXSAVE */
		return 0;
	__cpuid_count(0xd, 0, a, b, c, d);
	return b;
}

/* ---- the whole ---------------------------------------------------------------- */

/* What the borrowed thread runs, and where: the trampoline and its frame,
 * built for the registers it had (orig) and will have (back). */
struct inj_run {
	struct user_regs_struct orig, back, regs;
	struct trampoline_frame fa;
	struct trampoline code;
	uint8_t cave_save[TRAMPOLINE_MAX];
	uint64_t sp;
	struct timespec t_stop, t_run;
};

/* How inject__run() leaves the thread after an error. */
enum inj_leave {
	INJ_LEAVE_DETACH,	/* its registers are its own: it goes on as if never stopped */
	INJ_LEAVE_RUNNING,	/* the trampoline finishes and puts everything back by itself */
	INJ_LEAVE_GONE,		/* the thread is gone: nothing to do */
};

/* The thread stopped, its registers read and checked: not inside the
 * dynamic linker (-EAGAIN), room on its stack (-ENOBUFS). */
static int inject__borrow(struct inj_target *t, pid_t tid, struct inj_run *r)
{
	int err;

	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD))
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &r->t_stop);
	err = inject__stop(tid);
	if (err)
		return err;
	inject__hold();
	inject__step(1);
	if (ptrace(PTRACE_GETREGS, tid, 0, &r->orig))
		return -errno;
	for (int i = 0; i < t->nr_ldso; i++)
		if (r->orig.rip >= t->ldso[i].start && r->orig.rip < t->ldso[i].end)
			return -EAGAIN;	/* inside the dynamic linker: not now */
	if (!inject__stack_room(tid, r->orig.rsp))
		return -ENOBUFS;	/* a small stack: another thread */
	r->back = r->orig;
	inject__resume_regs(&r->back);
	return 0;
}

/* The frame (the xsave area, 64-aligned, then the strings) below the
 * stack's red zone and the trampoline in the cave: written into memory no
 * one uses, the thread's registers still its own. */
static int inject__write_code(struct inj_target *t, pid_t tid, const char *lib,
			      const char *config, struct inj_run *r)
{
	unsigned int xs = inject__xsave_size();
	size_t xs_len = xs ? xs : 512, path_len = strlen(lib) + 1, cfg_len = strlen(config) + 1;
	size_t sym_len = sizeof(XPU_CUPTI_ATTACH_SYMBOL), name_len = sizeof(INJECT_MEMFD_NAME);
	struct trampoline_calls calls = {
		.dlopen = t->dlopen, .dlsym = t->dlsym, .dlerror = t->dlerror,
		.errno_location = t->errno_location, .libc_private = t->libc_private,
		.attach = t->attach, .memfd = t->memfd,
	};
	struct trampoline_frame *fa = &r->fa;
	size_t frame_len;
	uint8_t *frame;
	int err;

	if (path_len < 64)
		path_len = 64;		/* room for /proc/self/fd/N */
	frame_len = ((xs_len + 63) & ~63ul) + path_len + cfg_len + sym_len + name_len + 8;
	r->sp = (r->orig.rsp - INJ_RED_ZONE - frame_len) & ~63ull;
	fa->xsave = r->sp;
	fa->xsave_ok = xs != 0;
	fa->path = r->sp + ((xs_len + 63) & ~63ul);
	fa->config = fa->path + path_len;
	fa->sym = fa->config + cfg_len;
	fa->name = fa->sym + sym_len;
	fa->errno_slot = fa->name + name_len;
	frame = calloc(1, frame_len);
	if (!frame)
		return -ENOMEM;
	memcpy(frame + (fa->path - r->sp), lib, strlen(lib) + 1);
	memcpy(frame + (fa->config - r->sp), config, cfg_len);
	memcpy(frame + (fa->sym - r->sp), XPU_CUPTI_ATTACH_SYMBOL, sym_len);
	memcpy(frame + (fa->name - r->sp), INJECT_MEMFD_NAME, name_len);
	trampoline__build(&r->code, &calls, fa, &r->back);
	if (r->code.n > t->cave_len || r->code.n > sizeof(r->code.b)) {
		free(frame);
		return -ENOSPC;
	}
	err = inject__mem(tid, r->sp, frame, frame_len, true);
	free(frame);
	if (!err)
		err = inject__mem(tid, t->cave, r->cave_save, r->code.n, false);
	if (!err)
		err = inject__mem(tid, t->cave, r->code.b, r->code.n, true);
	if (!err)
		inject__step(2);
	return err;
}

/* The one change of the thread's state, atomic: it runs the trampoline. */
static int inject__point(struct inj_target *t, pid_t tid, struct inj_run *r,
			 struct inject_result *res)
{
	r->regs = r->orig;
	r->regs.rip = t->cave;
	r->regs.rsp = r->sp - 64;	/* calls below the frame, 16-aligned */
	r->regs.orig_rax = -1;		/* no restart of an interrupted call */
	r->regs.eflags &= ~0x400ul;	/* DF clear, as calls expect */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r->regs))
		return -errno;
	inject__step(3);
	res->stop_ms = inject__ms(&r->t_stop);
	clock_gettime(CLOCK_MONOTONIC, &r->t_run);
	if (ptrace(PTRACE_SYSCALL, tid, 0, 0))
		return -errno;
	inject__step(4);
	return 0;
}

/* The next stop of the running trampoline, waited for at most until its
 * INJ_RUN_TIMEOUT_S: a thread that blocks in the loader (a lock held by a
 * thread that died) must not keep the recorder waiting forever. On the
 * timeout the thread is interrupted and left to finish alone (-ETIMEDOUT;
 * *stopped says whether it could be stopped to be detached). */
static int inject__wait_run(pid_t tid, const struct inj_run *r, int *status, bool *stopped)
{
	*stopped = true;
	for (;;) {
		pid_t w = waitpid(tid, status, __WALL | WNOHANG);

		if (w == tid)
			return WIFSTOPPED(*status) ? 0 : -ESRCH;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (inject__ms(&r->t_run) > INJ_RUN_TIMEOUT_S * 1000)
			break;
		usleep(200);
	}
	/* interrupted, then detached at that stop; a thread that will not stop
	 * (uninterruptible) is detached when the recorder exits */
	*stopped = false;
	if (!ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		for (int i = 0; i < 1000 && !*stopped; i++) {
			if (waitpid(tid, status, __WALL | WNOHANG) == tid)
				*stopped = WIFSTOPPED(*status);
			else
				usleep(1000);
		}
	return -ETIMEDOUT;
}

/* Follows the trampoline from syscall stop to syscall stop: at the memfd
 * stop the library goes in; at the magic syscall it has ended (0). */
static int inject__follow(struct inj_target *t, pid_t tid, struct inj_run *r,
			  struct inject_result *res, enum inj_leave *leave)
{
	struct user_regs_struct *regs = &r->regs;
	int status, err;

	for (;;) {
		bool stopped;
		int sig = 0;

		if ((err = inject__wait_run(tid, r, &status, &stopped))) {
			*leave = err == -ETIMEDOUT && stopped ? INJ_LEAVE_RUNNING : INJ_LEAVE_GONE;
			return err;
		}
		*leave = INJ_LEAVE_GONE;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			res->syscall_stops++;
			if (ptrace(PTRACE_GETREGS, tid, 0, regs))
				return -errno;
			if (regs->orig_rax == TRAMPOLINE_MAGIC_SYSCALL &&
			    regs->rdi == TRAMPOLINE_STAGE_MEMFD) {
				/* the memfd is there: the library into it */
				if ((err = inject__fill_memfd(t, tid, (int)regs->rsi, r->fa.path)))
					debug(1, "pid %d: cannot fill the memfd: %s", t->pid,
					      strerror(-err));
				regs->rax = err;	/* 0: go on; the syscall skipped */
				regs->orig_rax = -1;
				*leave = INJ_LEAVE_RUNNING;
				if (ptrace(PTRACE_SETREGS, tid, 0, regs))
					return -errno;
			} else if (regs->orig_rax == TRAMPOLINE_MAGIC_SYSCALL) {
				return 0;
			}
		} else if (status >> 16 == PTRACE_EVENT_STOP) {
			/* stopped by job control on the way: it finishes alone
			 * once continued (step 3) */
			*leave = INJ_LEAVE_RUNNING;
			return -EINTR;
		} else {
			sig = WSTOPSIG(status);	/* delivered: its handler runs on our stack */
		}
		if (inject__ms(&r->t_run) > INJ_RUN_TIMEOUT_S * 1000) {
			*leave = INJ_LEAVE_RUNNING;
			return -ETIMEDOUT;
		}
		if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)sig))
			return -errno;
	}
}

/* At the trampoline's end: its results, the thread's registers and the
 * cave's bytes back, detached. */
static int inject__give_back(struct inj_target *t, pid_t tid, struct inj_run *r,
			     struct inject_result *res)
{
	res->run_ms = inject__ms(&r->t_run);
	inject__hold();
	res->step = (int)r->regs.rdi;
	res->ret = (int)(long)r->regs.rsi;
	res->dl_error[0] = 0;
	if (r->regs.rdx) {
		inject__mem(tid, r->regs.rdx, res->dl_error, sizeof(res->dl_error) - 1, false);
		res->dl_error[sizeof(res->dl_error) - 1] = 0;
	}
	inject__step(5);
	if (ptrace(PTRACE_SETREGS, tid, 0, &r->back))
		return -errno;
	inject__step(6);
	inject__mem(tid, t->cave, r->cave_save, r->code.n, true);
	ptrace(PTRACE_DETACH, tid, 0, 0);
	res->total_ms = inject__ms(&r->t_stop);
	return 0;
}

static int inject__run(struct inj_target *t, pid_t tid, const char *lib, const char *config,
		       struct inject_result *res)
{
	enum inj_leave leave = INJ_LEAVE_DETACH;
	struct inj_run *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	err = inject__borrow(t, tid, r);
	if (!err)
		err = inject__write_code(t, tid, lib, config, r);
	if (!err)
		err = inject__point(t, tid, r, res);
	if (!err)
		err = inject__follow(t, tid, r, res, &leave);
	if (!err && (err = inject__give_back(t, tid, r, res)))
		leave = INJ_LEAVE_RUNNING;
	else if (!err)
		leave = INJ_LEAVE_GONE;		/* detached */
	if (leave != INJ_LEAVE_GONE)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	free(r);
	return err;
}

#define INJ_NOPERM_FMT "ptrace of pid %d not permitted: run as root or with CAP_SYS_PTRACE; " \
	"/proc/sys/kernel/yama/ptrace_scope 3 forbids it for everyone"

/* TracerPid of thread tid: another debugger's, or 0. */
static pid_t inject__tracer(pid_t tid)
{
	char path[64], line[256];
	pid_t t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &t) == 1)
			break;
	fclose(f);
	return t;
}

/*
 * The first live thread of pid under seccomp (/proc/PID/task/TID/status
 * "Seccomp:" 1 strict, 2 a filter; a filter belongs to a thread, so each
 * one is read), its mode in *mode and its "Seccomp_filters:" count in
 * *filters (-1 on kernels before 5.9, which do not say); 0 when none.
 *
 * Such a process is never injected: the thread borrowed runs dlopen()
 * (openat, mmap, mprotect, fstat, read, close, futex), the library's
 * constructors and its attach entry, whose thread makes many more calls
 * (clone3, socket, connect, memfd_create, the driver's ioctls), any of
 * which a filter may answer with SECCOMP_RET_KILL_PROCESS (strict mode
 * kills the thread at the first openat, and leaves the loader's lock held:
 * the next thread that loads anything hangs). Showing that a filter lets
 * them all through would mean running it (PTRACE_SECCOMP_GET_FILTER) over
 * every call the loader and the library may make with every argument they
 * may pass, a set with no bound: not done.
 */
static pid_t inject__seccomp(pid_t pid, int *mode, int *filters)
{
	char path[96], buf[4096];
	struct dirent *de;
	pid_t found = 0;
	const char *p;
	DIR *d;

	*mode = 0;
	*filters = -1;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return 0;
	while (!found && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0 || !file__proc_task_live(pid, tid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
		if (file__read_proc(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nSeccomp:")) ||
		    sscanf(p, "\nSeccomp: %d", mode) != 1 || !*mode)
			continue;
		found = tid;
		if ((p = strstr(buf, "\nSeccomp_filters:")))
			sscanf(p, "\nSeccomp_filters: %d", filters);
	}
	closedir(d);
	return found;
}

/* Whether the process's program is other than x86-64 (or its ELF header
 * unreadable) into *other_arch; -errno with a line in msg when its
 * /proc/MM/exe cannot be opened. */
static int inject__exe_arch(const struct inj_target *t, bool *other_arch, char *msg,
			    size_t msglen)
{
	char path[64];
	Elf64_Ehdr eh;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/exe", t->mm);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			snprintf(msg, msglen, INJ_NOPERM_FMT, t->pid);
		else
			snprintf(msg, msglen, "cannot read /proc/%d/exe: %s", t->mm, strerror(errno));
		return err;
	}
	err = pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) ? 0 : -EIO;
	close(fd);
	*other_arch = err || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64;
	return 0;
}

/* -EOPNOTSUPP with a line in msg when a thread of the process is under
 * seccomp: any call of the loader or the library's could kill the process
 * (inject__seccomp); else 0. */
static int inject__seccomp_refusal(pid_t pid, char *msg, size_t msglen)
{
	char how[48] = "strict mode";
	int sec_mode, sec_filters;
	pid_t sec_tid = inject__seccomp(pid, &sec_mode, &sec_filters);

	if (sec_tid <= 0)
		return 0;
	if (sec_mode != 1 && sec_filters > 0)
		snprintf(how, sizeof(how), "%d filter%s", sec_filters, sec_filters > 1 ? "s" : "");
	else if (sec_mode != 1)
		snprintf(how, sizeof(how), "a filter");
	snprintf(msg, msglen, "pid %d runs under seccomp (thread %d, %s): injecting the GPU "
		 "library could kill it; record it with --no-gpu (CPU samples only) or start "
		 "it under xpu-record", pid, sec_tid, how);
	return -EOPNOTSUPP;
}

/* What the scan of the process's maps says against injecting it (no
 * mappings, no libcuda, another architecture, seccomp): -errno with a line
 * in msg, or 0. */
static int inject__refusal(const struct inj_target *t, bool other_arch,
			   struct inject_result *res, char *msg, size_t msglen)
{
	pid_t pid = t->pid;

	if (!t->nr_maps) {
		snprintf(msg, msglen, "pid %d shows no mappings in /proc/%d/maps (its threads are "
			 "ending?): the GPU recording has nothing to attach to", pid, t->mm);
		return -ENODATA;
	}
	if (!t->have_cuda) {
		snprintf(msg, msglen, "pid %d has not loaded libcuda%s: CPU samples only (attach "
			 "again once it runs CUDA)", pid, t->cuda_app ? " yet (CUDA not initialised)" : "");
		res->cuda_app = t->cuda_app;
		return -ENOENT;
	}
	if (other_arch) {
		snprintf(msg, msglen, "pid %d is not an x86-64 program (a 32-bit or other "
			 "architecture's): the GPU recording attaches to x86-64 processes only", pid);
		return -ENOEXEC;
	}
	return inject__seccomp_refusal(pid, msg, msglen);
}

/* How the library gets in: its own file, or a memfd copy where the
 * process's root does not hold the same file; and the marker's uprobe
 * again on a memfd copy an earlier attach loaded. */
static void inject__route(struct inj_target *t, const char *real, const struct stat *lib_st,
			  inject_marker_fn marker, void *marker_ctx)
{
	char path[INJ_PATH_MAX + 64];
	struct stat in_st;
	int err;

	/* the library must be the same file inside the process's root */
	snprintf(path, sizeof(path), "/proc/%d/root%s", t->mm, real);
	/* not the same file inside the process's root (a container): through
	 * a memfd (XPU_INJECT_MEMFD=1: always, for tests) */
	t->memfd = !t->have_lib && (stat(path, &in_st) || in_st.st_dev != lib_st->st_dev ||
				    in_st.st_ino != lib_st->st_ino || inj_memfd);
	t->lib = real;
	t->marker = marker;
	t->marker_ctx = marker_ctx;
	/* a memfd copy loaded by an earlier attach: its uprobe again */
	if (t->have_lib && t->lib_start && marker) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", t->mm, t->lib_start,
			 t->lib_end);
		if ((err = marker(marker_ctx, path)))
			debug(1, "pid %d: no uprobe on the library's memfd copy: %s", t->pid,
			      strerror(-err));
	}
}

/* -errno with a line in msg when the process has no dlopen to call or no
 * code cave for the trampoline; else 0. */
static int inject__no_loader(const struct inj_target *t, char *msg, size_t msglen)
{
	if (!t->have_lib && !t->dlopen) {
		snprintf(msg, msglen, "no dlopen in pid %d (a static program?): the GPU recording "
			 "cannot be attached", t->pid);
		return -ENOSYS;
	}
	if (!t->cave) {
		snprintf(msg, msglen, "no room for the loader code in pid %d's executable mappings",
			 t->pid);
		return -ENOSPC;
	}
	return 0;
}

/* Runs the injection in a thread of the process, another one while the
 * thread picked ended meanwhile, had too small a stack or found an earlier
 * attach still ending; INJ_TRIES at most. Returns inject__run()'s result. */
static int inject__tries(struct inj_target *t, const char *real, const char *config,
			 struct inject_result *res)
{
	pid_t skip[INJ_SKIP_MAX];
	int nr_skip = 0, err = 0;

	t->nr_ldso = inject__ldso(t->mm, t->ldso, 8);
	for (int tries = 0; tries < INJ_TRIES; tries++) {
		pid_t tid = inject__pick_thread(t->pid, t->ldso, t->nr_ldso, skip, nr_skip);

		err = tid;
		if (tid > 0) {
			res->tid = tid;
			err = inject__run(t, tid, real, config, res);
			/* an earlier attach still ending in the library: again */
			if (!err && !res->step && res->ret == -EALREADY && tries < INJ_TRIES - 1)
				err = -EAGAIN;
			else if (err == -ENOBUFS && nr_skip < INJ_SKIP_MAX)
				skip[nr_skip++] = tid;
			else if (err != -ESRCH && err != -EAGAIN)
				break;	/* -ESRCH: the thread ended meanwhile */
		}
		usleep(tries < 5 ? 5000 : 200000);
	}
	return err;
}

/* The outcome of the tries (err) and of the trampoline's steps (res) as
 * -errno with a line in msg, or 0. */
static int inject__outcome(const struct inj_target *t, const char *real, int err,
			   const struct inject_result *res, char *msg, size_t msglen)
{
	pid_t pid = t->pid, tracer;

	if ((err == -EPERM || err == -EACCES) && (tracer = inject__tracer(t->mm)) > 0) {
		snprintf(msg, msglen, "pid %d is traced by pid %d (a debugger, strace): detach it "
			 "and attach again", pid, tracer);
		err = -EBUSY;
	} else if (err == -EPERM || err == -EACCES) {
		snprintf(msg, msglen, INJ_NOPERM_FMT, pid);
	} else if (err == -ENOBUFS) {
		snprintf(msg, msglen, "no thread of pid %d has %u KB of stack free below it for "
			 "the loader", pid, INJ_STACK_NEED >> 10);
	} else if (err == -EINTR) {
		snprintf(msg, msglen, "pid %d is stopped (job control): continue it (kill -CONT) "
			 "and attach again", pid);
	} else if (err == -ETIMEDOUT) {
		snprintf(msg, msglen, "pid %d: loading the library took over %.0f s; left to "
			 "finish alone", pid, INJ_RUN_TIMEOUT_S);
	} else if (err) {
		snprintf(msg, msglen, "cannot attach to pid %d: %s", pid, strerror(-err));
	} else if (res->step == 1) {
		snprintf(msg, msglen, "dlopen(%s) failed in pid %d: %s", real, pid,
			 res->dl_error[0] ? res->dl_error : "no reason given");
		err = -ENOEXEC;
	} else if (res->step == 2) {
		snprintf(msg, msglen, "%s in pid %d has no %s: an older library?", real, pid,
			 XPU_CUPTI_ATTACH_SYMBOL);
		err = -ENOEXEC;
	} else if (res->ret == -EISCONN) {
		/* the library's connection is another recorder's: not retried */
		snprintf(msg, msglen, "pid %d is recorded already by another xpu-record -p: let "
			 "that one end first, or record it with --no-gpu (CPU samples only)", pid);
		err = -EISCONN;
	} else if (res->ret == -EALREADY || res->ret == -EBUSY) {
		snprintf(msg, msglen, "pid %d is recorded already (%s)", pid, res->ret == -EBUSY ?
			 "it was started under xpu-record" :
			 "an earlier xpu-record -p's attach is still ending");
		err = -EALREADY;
	} else if (res->ret) {
		snprintf(msg, msglen, "the library's attach failed in pid %d: %s", pid,
			 strerror(-res->ret));
		err = res->ret < 0 ? res->ret : -EIO;
	}
	return err;
}

int inject__attach(pid_t pid, const char *lib, const char *config, inject_marker_fn marker,
		   void *marker_ctx, struct inject_result *res, char *msg, size_t msglen)
{
	struct inj_target t = { .pid = pid };
	struct stat lib_st;
	char *real;
	bool other_arch = false;
	int err;

	memset(res, 0, sizeof(*res));
	msg[0] = 0;
	/* the main thread may have exited (pthread_exit): its /proc/PID shows
	 * no maps, map_files, mem, exe or root; a live thread's shows them */
	t.mm = file__proc_live_tid(pid);
	if (t.mm < 0) {
		/* nothing to inject, as without libcuda (main.c says it) */
		snprintf(msg, msglen, "pid %d has no live thread (it has exited; a zombie until "
			 "its parent reaps it)", pid);
		return -ENOENT;
	}
	if ((err = inject__exe_arch(&t, &other_arch, msg, msglen)))
		return err;
	real = realpath(lib, NULL);
	if (!real || stat(real, &lib_st)) {
		err = -errno;
		snprintf(msg, msglen, "%s: %s", lib, strerror(errno));
		free(real);
		return err;
	}
	err = inject__scan(&t, real, &lib_st);
	if (err) {
		snprintf(msg, msglen, "cannot read /proc/%d/maps: %s", t.mm, strerror(-err));
		goto out;
	}
	if ((err = inject__refusal(&t, other_arch, res, msg, msglen)))
		goto out;
	inject__route(&t, real, &lib_st, marker, marker_ctx);
	if ((err = inject__no_loader(&t, msg, msglen)))
		goto out;
	err = inject__tries(&t, real, config, res);
	err = inject__outcome(&t, real, err, res, msg, msglen);
	res->reloaded = t.have_lib;
	res->memfd = t.memfd || t.lib_start;
out:
	free(real);
	return err;
}

/* The configuration an attach hands the library: what a launched process
 * gets in its environment (record/target/launch.c), and the variables of
 * benchmarks set in xpu-record's own (XPU_CUPTI_APIS, ...). The library's
 * knobs (common/knobs.h, KNOB_P_CUPTI) are read from the environment as it
 * is now, not parsed: main.c sets the PC sampling ones from the options. */
static void inject__config(char *buf, size_t size, const char *socket_path, bool nvtx, bool walk)
{
	static const char *const passed[] = { XPU_CUPTI_APIS_ENV, XPU_CUPTI_API_ACTIVITY_ENV,
					      XPU_CUPTI_MARKER_ENV, XPU_CUPTI_PC_SAMPLING_ENV,
					      XPU_CUPTI_PC_DUTY_ENV, XPU_CUPTI_CUBIN_MAX_ENV };
	size_t n = 0;

	n += snprintf(buf + n, size - n, "%s=%s\n", XPU_CUPTI_SOCKET_ENV, socket_path);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		if (getenv(passed[i]) && n < size)
			n += snprintf(buf + n, size - n, "%s=%s\n", passed[i], getenv(passed[i]));
	if (walk && !getenv(XPU_CUPTI_MARKER_ENV) && n < size)
		n += snprintf(buf + n, size - n, "%s=walk\n", XPU_CUPTI_MARKER_ENV);
	if (!nvtx && n < size)
		n += snprintf(buf + n, size - n, "%s=off\n", XPU_CUPTI_NVTX_ENV);
	if (xpu_verbose && n < size)
		snprintf(buf + n, size - n, "%s=1\n", XPU_CUPTI_VERBOSE_ENV);
}

int inject__pids(const struct record_opts *o, const char *lib, struct channel *ch, bool walk,
		 inject_marker_fn marker, void *marker_ctx, int *nr_attached, char *err, size_t errlen)
{
	char config[2048], msg[512];
	struct inject_result res;

	*nr_attached = 0;
	inj_die_at = o->inject_die_at;
	inj_hold_ms = o->inject_hold_ms;
	inj_memfd = o->inject_memfd;
	inject__config(config, sizeof(config), channel__path(ch), !o->no_nvtx, walk);
	for (int i = 0; i < o->nr_pids; i++) {
		pid_t pid = o->pids[i];
		int ret;

		/* the library connects as the process's user: every uid may
		 * (record/gpu/channel.c), the tracked ones are accepted */
		ret = inject__attach(pid, lib, config, marker, marker_ctx, &res, msg, sizeof(msg));
		if (!ret) {
			(*nr_attached)++;
			debug(1, "-p %d: GPU recording attached%s%s: thread %d stopped %.3f ms before "
			      "it ran the loader, %.3f ms in dlopen and the attach entry, %.3f ms "
			      "away from its own code in all (%d system call stops)", pid, res.reloaded ?
			      " (library loaded already)" : "", res.memfd ? " (through a memfd)" : "", res.tid, res.stop_ms, res.run_ms,
			      res.total_ms, res.syscall_stops);
			continue;
		}
		switch (ret) {
		case -ENODATA:		/* no mappings: nothing to attach to */
			warn("-p %d: %s", pid, msg);
			continue;
		case -ENOENT:		/* no CUDA in it (yet): its CPU samples */
			if (!res.cuda_app) {	/* a CPU program: nothing to say */
				debug(1, "-p %d: %s", pid, msg);
				continue;
			}
			/* fall through */
		case -EALREADY:
			warn("-p %d: %s", pid, msg);
			continue;
		case -EPERM:
		case -EACCES:
			snprintf(err, errlen, "-p %d: %s", pid, msg);
			return XPU_EXIT_NOPERM;
		case -EOPNOTSUPP:	/* seccomp: the line names the fix */
		case -EISCONN:		/* another recorder's attach: likewise */
			snprintf(err, errlen, "-p %d: %s", pid, msg);
			return XPU_EXIT_ATTACH;
		default:
			snprintf(err, errlen, "-p %d: %s (--no-gpu records its CPU samples only)",
				 pid, msg);
			return XPU_EXIT_ATTACH;
		}
	}
	/* each library connects from its own thread: say it if one does not
	 * (a process whose /tmp is not ours cannot reach the socket) */
	for (int i = 0; i < 300 && channel__accepted(ch) < (uint64_t)*nr_attached; i++)
		usleep(10000);
	if (channel__accepted(ch) < (uint64_t)*nr_attached)
		warn("%llu of the %d attached processes did not connect within 3 s (their /tmp "
		     "is not the recorder's? the library says why on their stderr): their GPU "
		     "work is not recorded", (unsigned long long)(*nr_attached - channel__accepted(ch)),
		     *nr_attached);
	return 0;
}

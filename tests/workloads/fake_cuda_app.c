// SPDX-License-Identifier: MIT
/*
 * fake_cuda_app [LAUNCHES] [SECONDS] [nvtx|nccl|graph|mem]: does what libcuda does with
 * CUDA_INJECTION64_PATH (dlopen the library, call its InitializeInjection),
 * then "launches" LAUNCHES times through a fixed call chain
 * main -> app_step -> app_launch -> xpu_fake_launch(i) (see
 * libfake_cupti.c and libmarker_test.c for what the library does), and
 * spins for SECONDS of CPU time so CPU samples land too. Without the
 * variable it only spins. Built -O2 -fomit-frame-pointer like the code
 * users profile.
 *
 * With "nvtx", it also does what an NVTX instance does with
 * NVTX_INJECTION64_PATH (dlopen that library, call InitializeInjectionNvtx2)
 * and wraps each app_step's work in an NVTX range "step" (pushed in
 * app_step) and the spin in a range "phase" (pushed in app_phase):
 * main -> app_phase -> app_spin.
 *
 * FAKE_SLOW_STEP=N makes step N (0-based) spin 300 ms of wall clock inside
 * its "step" range, in app_slow_step: the one slow step of a loop
 * (xpu-record --trigger 'nvtx:step>MS', tests/shell/record_trigger.sh).
 *
 * With "nccl" instead, NVTX as NCCL uses it (its src/include/nvtx.h), in a
 * domain "NCCL" of its own, and the phase range above: main ->
 * app_comm_init pushes "ncclCommInitRankConfig" and spins SECONDS/2, then
 * pops it as NCCL pops a range that got a payload, through NVTX's payload
 * extension (nvtxRangePopPayload: the slot InitializeInjectionNvtxExtension
 * of the injection library filled; none filled, the pop is a no-op, as in
 * NVTX); main -> app_allreduce pushes "AllReduce" around each launch and
 * pops it with nvtxDomainRangePop; main -> app_comm_finalize pushes
 * "ncclCommFinalize" and never pops it (a pop the recorder does not see);
 * then main -> app_phase as above.
 *
 * With "graph" instead, it builds a CUDA graph the way the fake library
 * plays it (libfake_cupti.c): main -> graph_capture_site captures 3 kernel
 * launches, main -> graph_build_site adds a fourth node outside any launch,
 * main instantiates it, then main -> graph_replay_site launches it
 * LAUNCHES times (4 kernels of XPU_FAKE_KERNEL_NS each per launch).
 *
 * With "mem" instead, before the launches it allocates the way a CUDA
 * program does, through the fake library's allocation calls
 * (libfake_cupti/fake_memory.c): main -> mem_sync_site cudaMallocs 1 MiB
 * and 3 MiB, main -> mem_async_site cudaMallocAsyncs 64 KiB (the pool's
 * first), main -> mem_free_site frees the 1 MiB and the 64 KiB and trims
 * the pool, main -> mem_oom_site asks cudaMalloc for 100 GiB, more than the
 * fake device has: it returns 2 and the app prints "fake_cuda_app:
 * cudaMalloc(107374182400) returned 2" and goes on; the 3 MiB stay
 * allocated to the end.
 *
 * Without CUDA_INJECTION64_PATH and with FAKE_CUDA_DRIVER naming the fake
 * libcuda.so.1 (tests/workloads/fake_cuda/fake_driver.c), it launches
 * through that library, as a CUDA program runs without a profiler, until
 * xpu-record -p injects libfake_cupti.so and its attach subscribes; at the
 * end it prints "fake_cuda_app: N launches done" (attach tests: the loop
 * ran to its end). FAKE_UNTIL_FILE=PATH: the loop runs until PATH exists,
 * LAUNCHES or not (N is then the launches made). FAKE_COUNT_SIGNALS=1
 * counts the SIGRTMIN it receives and prints "fake_cuda_app: signals N"
 * at the end (attach tests: signals sent during the injection's stops are
 * all delivered). FAKE_STDIN_THREAD=1 starts a thread that sets errno to
 * 4242 and blocks in read() on stdin (the injection borrows it: a calm
 * thread, not the main one), and at the end prints "fake_cuda_app: stdin
 * read N bytes, errno E": an interrupted read() restarted as the kernel
 * would gives the bytes written later and errno 4242.
 *
 * FAKE_LAUNCH_GAP_US=N sleeps N microseconds after each launch (a
 * training loop's pace; tests/shell/launch_walk.sh). FAKE_TWO_SITES=1 makes
 * every third launch through app_launch_twin, whose frame is app_launch's:
 * two call paths whose launches start at the same stack pointer.
 * FAKE_DEPTHS=1 launches through app_deep, recursing i % 12 times first:
 * launches from a dozen depths (more starts than the launch walk's memo
 * keeps) that share their upper frames.
 * FAKE_COROUTINE=1 runs the launch loop on a stack of its own (makecontext,
 * 256 KB on the heap), as a coroutine or fiber library would: not the
 * thread's stack, so the launch walk must leave every launch to the marker.
 * FAKE_MAP_FILE=PATH[:PATH...] maps those files readable and executable, never loaded
 * (a host library with a fat binary, tests/data/pcsamp/libfake_kernel.so:
 * its kernel's lines for PC samples the trace has no cubin for).
 *
 * With FAKE_CUDA_DRIVER, FAKE_SECCOMP=process installs a seccomp filter
 * (classic BPF: openat kills the process with SIGSYS, all else allowed) on
 * the main thread once the driver is loaded, so every later thread has it;
 * FAKE_SECCOMP=thread installs it on a thread of its own that sleeps (the
 * main thread's /proc/PID/status shows none); FAKE_SECCOMP=strict puts a
 * thread in strict mode blocked in read() (any other call kills it). The
 * launch loop makes no openat: xpu-record -p must not inject, the loader's
 * openat would kill it (tests/shell/record_attach_seccomp.sh).
 *
 * FAKE_MAIN_EXIT=1 runs main again on a worker thread (all of the above,
 * its stacks app_worker;main;...) and ends the main thread with
 * pthread_exit(): a zombie main thread, whose /proc/PID/maps is empty; the
 * worker's exit() ends the process with main's status
 * (tests/shell/record_attach_main_exit.sh).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <semaphore.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

typedef int (*init_fn)(void);
typedef void (*launch_fn)(int);
typedef int (*nvtx_init_fn)(const void *(*)(unsigned));
typedef void (*push_fn)(const char *);
typedef void (*pop_fn)(void);
typedef void (*void_fn)(void);
typedef void (*int_fn)(int);
typedef int (*malloc_fn)(unsigned long long *, unsigned long long);
typedef int (*free_fn)(unsigned long long);
typedef int (*trim_fn)(void);

static push_fn nvtx_push;
static pop_fn nvtx_pop;

/* NVTX's extension module ABI (nvtxDetail/nvtxExtTypes.h) and the payload
 * module's slots as NVTX's header keeps them: 0 not set up, 1 disabled */
struct ext_segment {
	size_t id, count;
	intptr_t *slots;
};

struct ext_module {
	unsigned short version, size, module_id, compat_id;
	size_t nr_segments;
	struct ext_segment *segments;
	void *get_export;
	const void *info;
};

typedef int (*ext_init_fn)(struct ext_module *);
typedef int (*ext_pop_fn)(void *, const void *, size_t);
typedef unsigned long (*domain_create_fn)(const char *);
typedef void (*domain_push_fn)(unsigned long, const char *);
typedef void (*domain_pop_fn)(unsigned long);

#define EXT_SLOTS		63	/* NVTX_EXT_PAYLOAD_SLOT_COUNT */
#define EXT_POP_PAYLOAD		4	/* NVTX3EXT_CBID_nvtxRangePopPayload */
static intptr_t ext_slots[EXT_SLOTS];
static domain_push_fn domain_push;
static domain_pop_fn domain_pop;
static unsigned long nccl_domain;

static volatile unsigned long sink;
static volatile sig_atomic_t nr_signals;

static char stdin_buf[64];
static ssize_t stdin_got = -2;
static int stdin_errno;

static void *app_stdin_thread(void *arg)
{
	errno = 4242;
	stdin_got = read(0, stdin_buf, sizeof(stdin_buf));
	stdin_errno = errno;
	return arg;
}

/* FAKE_SECCOMP's filter: openat kills the process, all else allowed */
static int app_seccomp_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
		perror("fake_cuda_app: seccomp filter");
		return -1;
	}
	return 0;
}

static sem_t seccomp_ready;
static int seccomp_err;

/* FAKE_SECCOMP=thread: the filter on this thread alone, which sleeps */
static void *app_seccomp_thread(void *arg)
{
	seccomp_err = app_seccomp_filter();
	sem_post(&seccomp_ready);
	for (;;)
		sleep(1);
	return arg;
}

static int strict_pipe[2], strict_ready[2];

/* FAKE_SECCOMP=strict: this thread in strict mode (read, write, exit,
 * sigreturn only: no futex, so it says it is there through a pipe),
 * blocked in a read() of a pipe no one writes */
static void *app_strict_thread(void *arg)
{
	char c = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) ? 'e' : 'x';

	syscall(SYS_write, strict_ready[1], &c, 1);
	if (c == 'e')
		return arg;
	for (;;)
		syscall(SYS_read, strict_pipe[0], &c, 1);
	return arg;
}

/* FAKE_SECCOMP=process|thread|strict (see the top) */
static int app_seccomp(const char *how)
{
	pthread_t t;

	if (!strcmp(how, "process"))
		return app_seccomp_filter();
	if (strcmp(how, "thread") && strcmp(how, "strict")) {
		fprintf(stderr, "fake_cuda_app: FAKE_SECCOMP=%s: process, thread or strict\n", how);
		return -1;
	}
	if (!strcmp(how, "strict")) {
		char c = 0;

		if (pipe(strict_pipe) || pipe(strict_ready) ||
		    pthread_create(&t, NULL, app_strict_thread, NULL) ||
		    read(strict_ready[0], &c, 1) != 1 || c != 'x') {
			fprintf(stderr, "fake_cuda_app: no thread in seccomp strict mode\n");
			return -1;
		}
		pthread_detach(t);
		return 0;
	}
	sem_init(&seccomp_ready, 0, 0);
	if (pthread_create(&t, NULL, app_seccomp_thread, NULL)) {
		fprintf(stderr, "fake_cuda_app: cannot start the seccomp thread\n");
		return -1;
	}
	pthread_detach(t);
	sem_wait(&seccomp_ready);
	if (seccomp_err)
		perror("fake_cuda_app: seccomp");
	return seccomp_err;
}

static void app_on_signal(int sig)
{
	nr_signals++;
	(void)sig;
}

__attribute__((noinline)) static void app_launch(launch_fn launch, int i)
{
	launch(i);
	sink++;
}

/* app_launch's twin (FAKE_TWO_SITES): the same frame, so a launch from
 * either finds the same stack pointer, and another return address */
__attribute__((noinline)) static void app_launch_twin(launch_fn launch, int i)
{
	launch(i);
	sink += 2;
}

static int two_sites, depths;

/* FAKE_DEPTHS: depth more frames before the launch (not a tail call) */
__attribute__((noinline)) static void app_deep(launch_fn launch, int i, int depth)
{
	if (depth > 0)
		app_deep(launch, i, depth - 1);
	else
		app_launch(launch, i);
	sink++;
}

static int slow_step = -1;		/* FAKE_SLOW_STEP */

__attribute__((noinline)) static void app_slow_step(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 10000; k++)
			sink++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 300);
}

__attribute__((noinline)) static void app_step(launch_fn launch, int i)
{
	if (nvtx_push)
		nvtx_push("step");
	if (two_sites && (i % 3) == 2)
		app_launch_twin(launch, i);
	else if (depths)
		app_deep(launch, i, i % 12);
	else
		app_launch(launch, i);
	if (i == slow_step)
		app_slow_step();
	if (nvtx_pop)
		nvtx_pop();
	sink++;
}

/* SECS of this thread's CPU time, not of the clock: on a loaded machine a
 * 0.3 s wall-clock spin got 10-20 ms of CPU, 0-2 samples at 99 Hz (and a
 * test that wants samples of it failed); CPU time gives SECS * Hz samples
 * whatever the load. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void app_spin(double secs)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

__attribute__((noinline)) static void app_phase(double secs)
{
	if (nvtx_push)
		nvtx_push("phase");
	app_spin(secs);
	if (nvtx_pop)
		nvtx_pop();
	sink++;
}

__attribute__((noinline)) static void graph_capture_site(int_fn capture)
{
	capture(3);
	sink++;
}

/* not the same code as graph_replay_site: GCC would fold the two (ICF) */
__attribute__((noinline)) static void graph_build_site(void_fn add)
{
	add();
	sink += 2;
}

__attribute__((noinline)) static void graph_replay_site(void_fn launch)
{
	launch();
	sink++;
}

__attribute__((noinline)) static void app_graph(void *cuda, int n)
{
	int_fn capture = (int_fn)dlsym(cuda, "xpu_fake_graph_capture");
	void_fn add = (void_fn)dlsym(cuda, "xpu_fake_graph_add");
	void_fn inst = (void_fn)dlsym(cuda, "xpu_fake_graph_instantiate");
	void_fn launch = (void_fn)dlsym(cuda, "xpu_fake_graph_launch");

	if (!capture || !add || !inst || !launch) {
		fprintf(stderr, "fake_cuda_app: the library has no graph calls\n");
		exit(1);
	}
	graph_capture_site(capture);
	graph_build_site(add);
	inst();
	for (int i = 0; i < n; i++)
		graph_replay_site(launch);
}

/* "mem": the allocation sites, each its own frame */
static struct {
	malloc_fn malloc, malloc_async;
	free_fn free, free_async;
	trim_fn trim;
	unsigned long long a, b, c;
} mem;

__attribute__((noinline)) static void mem_sync_site(void)
{
	mem.malloc(&mem.a, 1ull << 20);
	mem.malloc(&mem.b, 3ull << 20);
	sink++;
}

__attribute__((noinline)) static void mem_async_site(void)
{
	mem.malloc_async(&mem.c, 64ull << 10);
	sink += 2;
}

__attribute__((noinline)) static void mem_free_site(void)
{
	mem.free(mem.a);
	mem.free_async(mem.c);
	mem.trim();
	sink += 3;
}

__attribute__((noinline)) static void mem_oom_site(void)
{
	unsigned long long p, want = 100ull << 30;
	int ret = mem.malloc(&p, want);

	printf("fake_cuda_app: cudaMalloc(%llu) returned %d\n", want, ret);
	fflush(stdout);
	sink += 4;
}

static void app_memory(void *cuda)
{
	mem.malloc = (malloc_fn)dlsym(cuda, "xpu_fake_cuda_malloc");
	mem.free = (free_fn)dlsym(cuda, "xpu_fake_cuda_free");
	mem.malloc_async = (malloc_fn)dlsym(cuda, "xpu_fake_cuda_malloc_async");
	mem.free_async = (free_fn)dlsym(cuda, "xpu_fake_cuda_free_async");
	mem.trim = (trim_fn)dlsym(cuda, "xpu_fake_cuda_pool_trim");
	if (!mem.malloc || !mem.free || !mem.malloc_async || !mem.free_async || !mem.trim) {
		fprintf(stderr, "fake_cuda_app: the library has no allocation calls\n");
		exit(1);
	}
	mem_sync_site();
	mem_async_site();
	mem_free_site();
	mem_oom_site();
}

/* NVTX's side: without NVTX_INJECTION64_PATH its calls are no-ops. */
static void app_nvtx(void *cuda)
{
	const char *lib = getenv("NVTX_INJECTION64_PATH");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_GLOBAL) : NULL;
	nvtx_init_fn init = h ? (nvtx_init_fn)dlsym(h, "InitializeInjectionNvtx2") : NULL;

	if (!init || !init(NULL))
		return;
	nvtx_push = (push_fn)dlsym(cuda, "xpu_fake_nvtx_push");
	nvtx_pop = (pop_fn)dlsym(cuda, "xpu_fake_nvtx_pop");
}

/* NCCL's domain, and the payload extension the way an NVTX instance sets it
 * up: the injection library's InitializeInjectionNvtxExtension fills slots */
static void app_nccl_nvtx(void *cuda)
{
	const char *lib = getenv("NVTX_INJECTION64_PATH");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_GLOBAL) : NULL;
	ext_init_fn init = h ? (ext_init_fn)dlsym(h, "InitializeInjectionNvtxExtension") : NULL;
	domain_create_fn create = (domain_create_fn)dlsym(cuda, "xpu_fake_nvtx_domain_create");
	struct ext_segment seg = { 0, EXT_SLOTS, ext_slots };
	struct ext_module m = { 3, sizeof(m), 2, 0x0104, 1, &seg, NULL, NULL };

	if (!nvtx_push || !create)
		return;
	domain_push = (domain_push_fn)dlsym(cuda, "xpu_fake_nvtx_domain_push");
	domain_pop = (domain_pop_fn)dlsym(cuda, "xpu_fake_nvtx_domain_pop");
	nccl_domain = create("NCCL");
	/* what NVTX does after: a failed init or a slot not set is disabled */
	int ok = init && init(&m);

	for (int i = 0; i < EXT_SLOTS; i++)
		if (!ok || !ext_slots[i])
			ext_slots[i] = 1;
}

/* nvtxRangePopPayload(domain, payload, 1) */
static void nccl_pop_payload(void)
{
	static const unsigned long payload[4] = { 0x1234, 2, 0, 0 };

	if (ext_slots[EXT_POP_PAYLOAD] > 1)
		((ext_pop_fn)ext_slots[EXT_POP_PAYLOAD])((void *)nccl_domain, payload, 1);
}

__attribute__((noinline)) static void app_comm_init(double secs)
{
	if (domain_push)
		domain_push(nccl_domain, "ncclCommInitRankConfig");
	app_spin(secs);
	nccl_pop_payload();
	sink++;
}

__attribute__((noinline)) static void app_allreduce(launch_fn launch, int i)
{
	if (domain_push)
		domain_push(nccl_domain, "AllReduce");
	app_launch(launch, i);
	if (domain_pop)
		domain_pop(nccl_domain);
	sink++;
}

__attribute__((noinline)) static void app_comm_finalize(void)
{
	if (domain_push)
		domain_push(nccl_domain, "ncclCommFinalize");
	sink++;
}

static launch_fn loop_launch;
static int loop_n;
static struct timespec loop_pause;

/* the coroutine's body (main has the same loop: its stacks stay
 * main;app_step;app_launch) */
static void app_loop(void)
{
	for (int i = 0; loop_launch && i < loop_n; i++) {
		app_step(loop_launch, i);
		if (loop_pause.tv_nsec)
			nanosleep(&loop_pause, NULL);
	}
}

/* app_loop on a heap stack (FAKE_COROUTINE), back to main when it ends */
static int app_coroutine(void)
{
	static ucontext_t back, co;
	size_t size = 256 * 1024;
	void *stack = malloc(size);

	if (!stack || getcontext(&co))
		return -1;
	co.uc_stack.ss_sp = stack;
	co.uc_stack.ss_size = size;
	co.uc_link = &back;
	makecontext(&co, app_loop, 0);
	if (swapcontext(&back, &co))
		return -1;
	free(stack);
	return 0;
}

static int worker_argc;
static char **worker_argv;

int main(int argc, char **argv);

/* FAKE_MAIN_EXIT: main on a worker, whose exit() ends the process */
static void *app_worker(void *arg)
{
	exit(main(worker_argc, worker_argv));
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	double secs = argc > 2 ? atof(argv[2]) : 0.2;
	const char *lib = getenv("CUDA_INJECTION64_PATH");
	launch_fn launch = NULL;
	int driver = 0, count_signals = 0;
	pthread_t reader;
	int have_reader = 0;

	if (!worker_argv && getenv("FAKE_MAIN_EXIT") && !strcmp(getenv("FAKE_MAIN_EXIT"), "1")) {
		pthread_t worker;

		worker_argc = argc;
		worker_argv = argv;
		if (pthread_create(&worker, NULL, app_worker, NULL)) {
			fprintf(stderr, "fake_cuda_app: cannot start the worker\n");
			return 1;
		}
		pthread_exit(NULL);
	}

	if (getenv("FAKE_MAP_FILE")) {
		char *paths = strdup(getenv("FAKE_MAP_FILE")), *save = NULL;

		for (char *path = strtok_r(paths, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			struct stat st;

			if (fd < 0 || fstat(fd, &st) ||
			    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
			    MAP_FAILED) {
				perror(path);
				return 1;
			}
			close(fd);
		}
		free(paths);
	}
	if (lib) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
		init_fn init;

		if (!h) {
			fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
			return 1;
		}
		init = (init_fn)dlsym(h, "InitializeInjection");
		if (!init || !init()) {
			fprintf(stderr, "fake_cuda_app: InitializeInjection missing or failed\n");
			return 1;
		}
		launch = (launch_fn)dlsym(h, "xpu_fake_launch");
		if (argc > 3 && (!strcmp(argv[3], "nvtx") || !strcmp(argv[3], "nccl")))
			app_nvtx(h);
		if (argc > 3 && !strcmp(argv[3], "nccl")) {
			app_nccl_nvtx(h);
			app_comm_init(secs / 2);
			for (int i = 0; launch && i < n; i++)
				app_allreduce(launch, i);
			app_comm_finalize();
			launch = NULL;
		}
		if (argc > 3 && !strcmp(argv[3], "mem"))
			app_memory(h);
		if (argc > 3 && !strcmp(argv[3], "graph")) {
			app_graph(h, n);
			launch = NULL;
		}
	} else if (getenv("FAKE_CUDA_DRIVER")) {
		void *h = dlopen(getenv("FAKE_CUDA_DRIVER"), RTLD_NOW | RTLD_GLOBAL);

		launch = h ? (launch_fn)dlsym(h, "xpu_fake_cuda_launch") : NULL;
		if (!launch) {
			fprintf(stderr, "fake_cuda_app: %s\n", h ? "no xpu_fake_cuda_launch" : dlerror());
			return 1;
		}
		driver = 1;
		if (getenv("FAKE_COUNT_SIGNALS") && !strcmp(getenv("FAKE_COUNT_SIGNALS"), "1")) {
			struct sigaction sa = { .sa_handler = app_on_signal, .sa_flags = SA_RESTART };

			sigemptyset(&sa.sa_mask);
			sigaction(SIGRTMIN, &sa, NULL);
			count_signals = 1;
		}
		if (getenv("FAKE_STDIN_THREAD") && !strcmp(getenv("FAKE_STDIN_THREAD"), "1"))
			have_reader = !pthread_create(&reader, NULL, app_stdin_thread, NULL);
		if (getenv("FAKE_SECCOMP") && app_seccomp(getenv("FAKE_SECCOMP")))
			return 1;
	}
	const char *gap = getenv("FAKE_LAUNCH_GAP_US");

	two_sites = getenv("FAKE_TWO_SITES") && !strcmp(getenv("FAKE_TWO_SITES"), "1");
	depths = getenv("FAKE_DEPTHS") && !strcmp(getenv("FAKE_DEPTHS"), "1");
	slow_step = getenv("FAKE_SLOW_STEP") ? atoi(getenv("FAKE_SLOW_STEP")) : -1;
	loop_pause.tv_nsec = gap ? atol(gap) * 1000 : 0;
	loop_launch = launch;
	loop_n = n;
	if (getenv("FAKE_COROUTINE") && !strcmp(getenv("FAKE_COROUTINE"), "1")) {
		if (app_coroutine()) {
			fprintf(stderr, "fake_cuda_app: cannot run the coroutine\n");
			return 1;
		}
	} else {
		const char *until = getenv("FAKE_UNTIL_FILE");
		int i;

		for (i = 0; launch && (until ? access(until, F_OK) != 0 : i < n); i++) {
			app_step(launch, i);
			if (loop_pause.tv_nsec)
				nanosleep(&loop_pause, NULL);
		}
		if (until)
			n = i;
	}
	app_phase(secs);
	if (driver)
		printf("fake_cuda_app: %d launches done\n", n);
	if (count_signals)
		printf("fake_cuda_app: signals %d\n", (int)nr_signals);
	if (have_reader) {
		pthread_join(reader, NULL);
		printf("fake_cuda_app: stdin read %zd bytes, errno %d\n", stdin_got, stdin_errno);
	}
	return (int)(sink & 0);
}

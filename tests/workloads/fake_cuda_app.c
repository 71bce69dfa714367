// SPDX-License-Identifier: MIT
/*
 * fake_cuda_app [LAUNCHES] [SECONDS]: does what libcuda does with
 * CUDA_INJECTION64_PATH (dlopen the library, call its InitializeInjection),
 * then "launches" LAUNCHES times through a fixed call chain
 * main -> app_step -> app_launch -> xpu_fake_launch(i) (see
 * libfake_cupti.c and libmarker_test.c for what the library does), and
 * spins for SECONDS so CPU samples land too. Without the variable it only
 * spins. Built -O2 -fomit-frame-pointer like the code users profile.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*init_fn)(void);
typedef void (*launch_fn)(int);

static volatile unsigned long sink;

__attribute__((noinline)) static void app_launch(launch_fn launch, int i)
{
	launch(i);
	sink++;
}

__attribute__((noinline)) static void app_step(launch_fn launch, int i)
{
	app_launch(launch, i);
	sink++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void app_spin(double secs)
{
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	double secs = argc > 2 ? atof(argv[2]) : 0.2;
	const char *lib = getenv("CUDA_INJECTION64_PATH");
	launch_fn launch = NULL;

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
	}
	for (int i = 0; launch && i < n; i++)
		app_step(launch, i);
	app_spin(secs);
	return (int)(sink & 0);
}

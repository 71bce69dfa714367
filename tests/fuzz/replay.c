// SPDX-License-Identifier: MIT
/*
 * Regression driver: runs a fuzz target's LLVMFuzzerTestOneInput over every
 * file of a corpus directory, so every input a fuzzer once found stays fixed.
 * Usage: fuzz_NAME DIR [DIR...]. Fails when a directory holds no file.
 * Files named pending-* reproduce a bug not fixed yet (in code the fuzzing
 * helper could not change): they are listed, not run; rename one when its
 * fix lands so it is replayed from then on.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay__file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;
	size_t got;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	/* An exact-size heap copy, so ASan builds catch reads past the end. */
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	got = fread(buf, 1, st.st_size, f);
	fclose(f);
	if (got != (size_t)st.st_size) {
		fprintf(stderr, "replay: %s: short read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

static int replay__dir(const char *dir)
{
	struct dirent **names;
	int n, i, files = 0, bad = 0, pending = 0;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: cannot read corpus directory %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (!strncmp(names[i]->d_name, "pending-", 8)) {
			printf("not replayed (bug not fixed yet): %s\n", path);
			pending++;
		} else if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			if (replay__file(path))
				bad++;
			files++;
		}
		free(names[i]);
	}
	free(names);
	if (!files) {
		fprintf(stderr, "replay: corpus directory %s is empty: add seed inputs\n", dir);
		return -1;
	}
	printf("replayed %d inputs from %s", files, dir);
	if (pending)
		printf(" (%d pending)", pending);
	printf("\n");
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	int i, err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (replay__dir(argv[i]))
			err = 1;
	return err;
}

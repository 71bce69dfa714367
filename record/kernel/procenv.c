// SPDX-License-Identifier: MIT
/*
 * The rank variables of a process, as XPU_REC_PROC_ENV: after each exec of a
 * process of the tree (and for -p), the variables of /proc/PID/environ that
 * say which rank of a parallel job it is. Launchers (torchrun, mpirun, srun)
 * set them in the workers they start, not in themselves, so they are read
 * per process. Only the keys below are copied: the rest of an environment
 * (tokens, paths) never enters the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "format/writer.h"
#include "common/file.h"
#include "common/xalloc.h"
#include "record/kernel/procenv.h"

const char *const procenv_keys[] = {
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMIX_RANK",
	"SLURM_PROCID", "SLURM_LOCALID", "CUDA_VISIBLE_DEVICES", NULL,
};

/* Values longer than this are cut (CUDA_VISIBLE_DEVICES of UUIDs is the
 * longest a sane job has: 8 x 41 bytes). */
#define PROCENV_VALUE_MAX	1024

static bool procenv__wanted(const char *entry, size_t keylen)
{
	for (const char *const *k = procenv_keys; *k; k++)
		if (strlen(*k) == keylen && !memcmp(*k, entry, keylen))
			return true;
	return false;
}

size_t procenv__pick(const char *env, size_t len, char *out, size_t cap)
{
	size_t n = 0;

	for (size_t pos = 0; pos < len; ) {
		const char *e = env + pos, *end = memchr(e, 0, len - pos), *eq;
		size_t elen = end ? (size_t)(end - e) : len - pos;
		size_t klen, vlen;

		pos += elen + 1;
		if (!end)
			break;		/* cut by the size limit: not a whole entry */
		eq = memchr(e, '=', elen);
		if (!eq || eq == e || !procenv__wanted(e, eq - e))
			continue;
		klen = eq - e;
		vlen = elen - klen - 1;
		if (vlen > PROCENV_VALUE_MAX)
			vlen = PROCENV_VALUE_MAX;
		if (n + klen + vlen + 2 > cap)
			break;
		memcpy(out + n, e, klen);
		out[n + klen] = '\0';
		memcpy(out + n + klen + 1, eq + 1, vlen);
		out[n + klen + 1 + vlen] = '\0';
		n += klen + vlen + 2;
	}
	return n;
}

int procenv__write(struct xpu_writer *w, pid_t pid, uint64_t time)
{
	struct xpu_proc_env rec = { .time = time, .pid = pid };
	size_t len = 0, cap = 16384, n;
	char path[64], *buf, *pairs;
	struct iovec iov[2];
	ssize_t got;
	int fd, err = 0, mm = file__proc_live_tid(pid);	/* an exited main thread shows none */

	snprintf(path, sizeof(path), "/proc/%d/environ", mm > 0 ? mm : pid);
	fd = file__open_regular(path, 0, FILE_TEXT_MAX, NULL);
	if (fd < 0)
		return fd;		/* gone already: the report uses its parent's */
	buf = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap >= PROCENV_READ_MAX) {
				rec.flags |= XPU_PROC_ENV_TRUNCATED;
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = -errno;
		if (got <= 0)
			break;
		len += got;
	}
	close(fd);
	/* An exec that has not set up its stack yet reads as empty: nothing
	 * to say then, rather than "no rank". */
	if (err || !len) {
		free(buf);
		return err ? err : -ENODATA;
	}
	pairs = xmalloc(PROCENV_PAIRS_MAX);
	n = procenv__pick(buf, len, pairs, PROCENV_PAIRS_MAX);
	free(buf);
	iov[0] = (struct iovec){ &rec, sizeof(rec) };
	iov[1] = (struct iovec){ pairs, n };
	err = xpu_writer__addv(w, XPU_REC_PROC_ENV, 0, iov, n ? 2 : 1);
	free(pairs);
	return err;
}

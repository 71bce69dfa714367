// SPDX-License-Identifier: MIT
/*
 * --dump prints every record type through its printer (format/record_print.c,
 * one per row of the record-type table): a trace of tests/unit/test_format_records.h's records (one of each
 * type) and the fuzz corpus's all-types trace must each give, for every row
 * of the table, a line "NAME fields (chunk N, M bytes)" with fields.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/writer.h"
#include "report/output/output.h"
#include "test.h"
#include "test_format_records.h"

/* --dump of path into a malloc'ed string, or NULL. */
static char *dump__file(const char *path)
{
	struct session s;
	char *out = NULL;
	size_t len = 0;
	FILE *fp;
	int err;

	if (session__open(&s, path))
		return NULL;
	fp = open_memstream(&out, &len);
	if (!fp) {
		session__close(&s);
		return NULL;
	}
	err = output__dump(&s, fp);
	fclose(fp);
	session__close(&s);
	if (err) {
		free(out);
		return NULL;
	}
	return out;
}

/* Every line is "NAME<pad> fields (chunk N, M bytes)" with a known NAME and
 * non-empty fields; every type of the table has a line. Says which are
 * missing. */
static int dump__check(const char *out, const char *what, const char *hint)
{
	bool seen[XPU_REC_MAX] = { false };
	int bad = 0;

	for (const char *p = out; *p; ) {
		const char *eol = strchr(p, '\n'), *chunk;
		size_t n = strcspn(p, " "), len = eol ? (size_t)(eol - p) : strlen(p);
		bool found = false;

		for (unsigned t = 0; t < XPU_REC_MAX; t++) {
			const struct xpu_rectype *row = xpu_rectype__get(t);

			if (row && strlen(row->name) == n && !strncmp(p, row->name, n)) {
				seen[t] = found = true;
				/* fields start at column 11 (the name is padded to 10) */
				chunk = strstr(p, " (chunk ");
				if (!chunk || chunk > p + len || chunk - p <= 11 ||
				    p[n > 10 ? n : 10] != ' ' || p[(n > 10 ? n : 10) + 1] == ' ') {
					fprintf(stderr, "  %s: no fields in '%.*s': its printer in "
						"format/record_print.c printed nothing\n", what, (int)len, p);
					bad++;
				}
			}
		}
		if (!found) {
			fprintf(stderr, "  %s: unknown line '%.*s'\n", what, (int)len, p);
			bad++;
		}
		p += len + (eol != NULL);
	}
	for (unsigned t = 0; t < XPU_REC_MAX; t++) {
		if (xpu_rectype__get(t) && !seen[t]) {
			fprintf(stderr, "  %s has no %s record: %s\n", what,
				xpu_record__type_name(t), hint);
			bad++;
		}
	}
	return bad;
}

/* One record of each type of test_format_records.h: its --dump has a line
 * per table row, each with the fields the printer knows. */
static void test_dump_every_type(void)
{
	char path[] = "/tmp/xpu-test-dump-XXXXXX";
	struct xpu_writer_opts wo = { 0 };
	struct tf_rec recs[TF_NR_RECORDS];
	struct xpu_writer *w;
	int n = tf__make_records(recs, 1), fd = mkstemp(path), bad;
	char *out;

	TEST_ASSERT(fd >= 0);
	close(fd);
	w = xpu_writer__open(path, &wo);
	TEST_ASSERT(w);
	for (int i = 0; i < n; i++)
		TEST_ASSERT_EQ(xpu_writer__add(w, recs[i].type, recs[i].body, recs[i].len), 0);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	out = dump__file(path);
	unlink(path);
	TEST_ASSERT(out);
	bad = dump__check(out, "the trace of test_format_records.h",
			  "add one to tf__make_records()");
	/* a few fields of the printers, as --dump showed them before the table */
	TEST_ASSERT(strstr(out, "\nMMAP       time=1000001004 pid=100 tid=100 "
			   "[0x7f0000000000-0x7f0000021000) pgoff=0x1000 prot=0x5 "
			   "build-id=a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4 "
			   "/usr/lib/x86_64-linux-gnu/libfoo.so.1 (chunk 0, 112 bytes)\n"));
	TEST_ASSERT(strstr(out, "\nLOST       time=1000001007 source=samples pid=0 count=42 "));
	TEST_ASSERT(strstr(out, " kips=3 uips=6 regs=0 stack=0 flags=0x2 k0=0x"));
	TEST_ASSERT(strstr(out, "\nGPU_DEVICE pid=100 id=0 sm=132 cc=9.0 mem=85899345920 "
			   "NVIDIA H100 80GB HBM3 (chunk 0, "));
	free(out);
	TEST_ASSERT_EQ(bad, 0);
}

/* Strings from the trace reach --dump as text: a name read from freed
 * memory (seen in a DDP recording: a 0xf0 lead byte without its
 * continuation) and control characters are escaped, valid UTF-8 is kept,
 * and a backslash is escaped so the escapes are unambiguous. */
static void test_dump_escapes(void)
{
	char path[] = "/tmp/xpu-test-dump-XXXXXX";
	struct xpu_writer_opts wo = { 0 };
	const char name[] = "ok\xf0(\t\\caf\xc3\xa9\x7f";
	unsigned char body[sizeof(struct xpu_string) + sizeof(name)];
	struct xpu_string str = { .pid = 7, .id = 3 };
	struct xpu_writer *w;
	int fd = mkstemp(path);
	char *out;

	TEST_ASSERT(fd >= 0);
	close(fd);
	memcpy(body, &str, sizeof(str));
	memcpy(body + sizeof(str), name, sizeof(name));
	w = xpu_writer__open(path, &wo);
	TEST_ASSERT(w);
	TEST_ASSERT_EQ(xpu_writer__add(w, XPU_REC_STRING, body, sizeof(body)), 0);
	TEST_ASSERT_EQ(xpu_writer__close(w), 0);
	out = dump__file(path);
	unlink(path);
	TEST_ASSERT(out);
	TEST_ASSERT(strstr(out, " pid=7 id=3 ok\\xf0(\\x09\\x5ccaf\xc3\xa9\\x7f (chunk 0, "));
	free(out);
}

/* The corpus trace of every type, as fuzz_reader's seed. */
static void test_dump_corpus(void)
{
	const char *top = getenv("XPU_TOP");
	char path[4096];
	char *out;
	int bad;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/reader/valid-all-types-zstd",
		 top ? top : ".");
	out = dump__file(path);
	TEST_ASSERT(out);
	bad = dump__check(out, "tests/fuzz/corpus/reader/valid-all-types-zstd",
			  "regenerate the seeds with make fuzz-corpus");
	free(out);
	TEST_ASSERT_EQ(bad, 0);
}

int main(void)
{
	TEST_RUN(test_dump_every_type);
	TEST_RUN(test_dump_corpus);
	TEST_RUN(test_dump_escapes);
	TEST_EXIT();
}

// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpus of fuzz_reader: valid traces of several shapes
 * (every record type, raw and zstd chunks, many chunks, an oversized record,
 * unknown types, a newer minor version) and damaged ones (truncated at
 * several points, bit flips in a payload and in a chunk header, chunk
 * headers with a valid CRC around wrong sizes, hand-made chunks with bad
 * record structure). Seeds stay small so the fuzzer mutates
 * them fast. Also the seeds of fuzz_encoded (batches of encoded records as
 * the CUPTI library sends them), of fuzz_channel (the byte stream one CUDA
 * process sends: framed messages, good and bad), and, given ELF files (small
 * stripped builds of tests/workloads), the seeds of fuzz_elf (each file and
 * damaged copies: cut short, section or program headers out of the file,
 * garbage CFI, lying symbols and notes) and of fuzz_archive (archives of
 * those files, whole and damaged), and of fuzz_stack_delta (batches of
 * stack records, in full and STACK_DELTA-coded). Regenerate with `make O=build
 * fuzz-corpus` (writes CORPUS_ROOT/{reader,encoded,channel,elf,archive,
 * stack_delta});
 * inputs the fuzzer found are added beside these and must be kept, and so
 * must reader/v1.3-*: traces of format 1.3, kept as they are so that the
 * suite keeps reading an older minor version (test_stack_delta, the report
 * goldens).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <elf.h>
#include <gelf.h>
#include "cupti/channel/wire.h"
#include "format/stack_delta.h"
#include "format/writer.h"
#include "report/symbols/dso.h"
#include "report/files/archive.h"
#include "tests/unit/test_format_records.h"

static char dir[2048];
static char tmp[4096];

static void corpus__save(const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "make_corpus: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static uint8_t *corpus__load(size_t *len)
{
	FILE *f = fopen(tmp, "rb");
	uint8_t *buf;

	if (!f || fseek(f, 0, SEEK_END))
		goto fail;
	*len = ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	if (!buf || fread(buf, 1, *len, f) != *len)
		goto fail;
	fclose(f);
	return buf;
fail:
	fprintf(stderr, "make_corpus: cannot read back %s\n", tmp);
	exit(1);
}

static struct xpu_writer *corpus__open(size_t chunk, int level)
{
	struct xpu_writer_opts o = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_GPU,
				     .chunk_size = chunk, .zstd_level = level };
	struct xpu_writer *w = xpu_writer__open(tmp, &o);

	if (!w) {
		fprintf(stderr, "make_corpus: %s: %s\n", tmp, strerror(errno));
		exit(1);
	}
	return w;
}

static void corpus__records(struct xpu_writer *w, uint64_t seed)
{
	struct tf_rec recs[TF_NR_RECORDS];
	int n = tf__make_records(recs, seed);

	for (int i = 0; i < n; i++) {
		struct iovec iov = { recs[i].body, recs[i].len };

		xpu_writer__addv(w, recs[i].type, recs[i].flags, &iov, 1);
	}
}

/* Writes a trace with fill(), returns its bytes. */
static uint8_t *corpus__trace(size_t chunk, int level, int rounds, size_t *len)
{
	struct xpu_writer *w = corpus__open(chunk, level);

	for (int i = 0; i < rounds; i++)
		corpus__records(w, i);
	xpu_writer__close(w);
	return corpus__load(len);
}

/* A hand-made raw chunk with correct CRCs around arbitrary record bytes. */
static size_t corpus__raw_chunk(uint8_t *out, const void *recs, size_t len, uint32_t nr)
{
	struct xpu_chunk_header ch = { .magic = XPU_CHUNK_MAGIC, .header_size = sizeof(ch),
				       .comp_size = len, .raw_size = len, .nr_records = nr };

	memcpy(out + sizeof(ch), recs, len);
	ch.payload_crc = crc32(0, out + sizeof(ch), len);
	ch.header_crc = crc32(0, (const Bytef *)&ch, offsetof(struct xpu_chunk_header, header_crc));
	memcpy(out, &ch, sizeof(ch));
	return sizeof(ch) + len;
}

/* Copies of a multi-chunk trace with one size field of one chunk changed and
 * the header CRC redone: damage, not a truncated tail, unless nothing follows
 * (the reader rules, step 3). */
static void corpus__sizes(const uint8_t *trace, size_t len)
{
	static const struct {
		int chunk;		/* -1: the last one */
		size_t field;
		uint32_t value;		/* 0 with add: the old value plus add */
		int32_t add;
	} v[] = {
		{ 0, offsetof(struct xpu_chunk_header, comp_size), 0x4000000, 0 },
		{ 4, offsetof(struct xpu_chunk_header, header_size), 0x80000000u, 0 },
		{ 1, offsetof(struct xpu_chunk_header, comp_size), 0, 1 },
		{ 2, offsetof(struct xpu_chunk_header, comp_size), 0, -1 },
		{ 1, offsetof(struct xpu_chunk_header, comp_size), 0, 3 * 256 },
		{ 3, offsetof(struct xpu_chunk_header, header_size), 40, 0 },
		{ 2, offsetof(struct xpu_chunk_header, raw_size), XPU_CHUNK_MAX_RAW + 1, 0 },
		{ 0, offsetof(struct xpu_chunk_header, comp_size), 0xffffffffu, 0 },
		{ -1, offsetof(struct xpu_chunk_header, comp_size), 0x10000, 0 },
	};
	uint8_t *buf = malloc(len);
	char name[64];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int c = v[i].chunk;
		struct xpu_chunk_header ch;
		size_t off;
		uint32_t val;

		if (c < 0)
			for (c = 0; test_format__chunk_at(trace, len, c + 1) < len; c++)
				;
		off = test_format__chunk_at(trace, len, c);
		memcpy(buf, trace, len);
		memcpy(&ch, buf + off, sizeof(ch));
		memcpy(&val, (uint8_t *)&ch + v[i].field, 4);
		val = v[i].value ? v[i].value : val + v[i].add;
		memcpy((uint8_t *)&ch + v[i].field, &val, 4);
		ch.header_crc = crc32(0, (const Bytef *)&ch,
				      offsetof(struct xpu_chunk_header, header_crc));
		memcpy(buf + off, &ch, sizeof(ch));
		snprintf(name, sizeof(name), "damaged-sizes-chunk%d-%s-%#x", c,
			 v[i].field == offsetof(struct xpu_chunk_header, comp_size) ? "comp" :
			 v[i].field == offsetof(struct xpu_chunk_header, raw_size) ? "raw" : "header",
			 val);
		corpus__save(name, buf, len);
	}
	free(buf);
}

/* Header of a valid file followed by hand-made chunks. */
static void corpus__crafted(const char *name, const void *recs, size_t len, uint32_t nr)
{
	uint8_t buf[4096];
	size_t flen;
	uint8_t *valid = corpus__trace(0, -1, 1, &flen);
	size_t n = sizeof(struct xpu_file_header);

	memcpy(buf, valid, n);
	n += corpus__raw_chunk(buf + n, recs, len, nr);
	/* and a good chunk after it, which must still be read */
	memcpy(buf + n, valid + sizeof(struct xpu_file_header),
	       flen - sizeof(struct xpu_file_header) < sizeof(buf) - n ?
	       flen - sizeof(struct xpu_file_header) : 0);
	n += flen - sizeof(struct xpu_file_header) < sizeof(buf) - n ?
	     flen - sizeof(struct xpu_file_header) : 0;
	corpus__save(name, buf, n);
	free(valid);
}

static void corpus__put_rec(uint8_t **p, uint16_t type, uint32_t size, const void *body, size_t blen)
{
	struct xpu_record_header rh = { .type = type, .size = size };

	memcpy(*p, &rh, sizeof(rh));
	memset(*p + sizeof(rh), 0, size > sizeof(rh) ? size - sizeof(rh) : 0);
	memcpy(*p + sizeof(rh), body, blen);
	*p += size;
}

/* fuzz_encoded seeds: record batches exactly as on the channel. */
static void corpus__encoded(const char *root)
{
	struct tf_rec recs[TF_NR_RECORDS];
	uint8_t buf[8192];
	size_t n = 0, one = 0;
	int nr = tf__make_records(recs, 5);

	snprintf(dir, sizeof(dir), "%s/encoded", root);
	mkdir(dir, 0755);
	for (int i = 0; i < nr; i++) {
		struct xpu_record_header rh = { .type = recs[i].type,
						.size = (8 + recs[i].len + 7) & ~7u };

		memset(buf + n, 0, rh.size);
		memcpy(buf + n, &rh, sizeof(rh));
		memcpy(buf + n + sizeof(rh), recs[i].body, recs[i].len);
		n += rh.size;
		if (i == 11)			/* GPU_KERNEL alone */
			one = n;
	}
	corpus__save("all-types", buf, n);
	corpus__save("gpu-kernel", buf + one - (8 + sizeof(struct xpu_gpu_kernel)),
		     8 + sizeof(struct xpu_gpu_kernel));
	corpus__save("cut-short", buf, n - 4);
	buf[4] ^= 1;					/* first record's size unaligned */
	corpus__save("bad-size", buf, n);
}

/* ---- fuzz_channel: streams of framed messages -------------------------------- */

struct out {
	uint8_t *p;
	size_t len;
};

static void out__add(struct out *o, const void *data, size_t len)
{
	o->p = realloc(o->p, o->len + len + 1);
	if (!o->p)
		exit(1);
	memcpy(o->p + o->len, data, len);
	o->len += len;
}

static void out__msg(struct out *o, uint32_t magic, const void *recs, uint32_t len)
{
	struct xpu_channel_msg m = { .magic = magic, .len = len };

	out__add(o, &m, sizeof(m));
	out__add(o, recs, len);
}

/* --gpu-memory's records as the library sends them (record/gpu/channel.c
 * checks each), then the same with an allocation whose op is out of range */
static void corpus__channel_memory(struct out *o)
{
	struct xpu_gpu_memory m = { .time = 10, .correlation_id = 3, .address = 0x7f0040000000ull,
				    .bytes = 1 << 20, .pid = 42, .stream = XPU_GPU_MEMORY_NO_STREAM,
				    .op = XPU_MEMORY_ALLOC, .memory_kind = XPU_MEMKIND_DEVICE };
	struct xpu_gpu_mempool p = { .time = 11, .correlation_id = 4, .address = 0xb00,
				     .size = 2 << 20, .pid = 42, .op = XPU_MEMPOOL_CREATED,
				     .pool_type = 1 };
	struct xpu_gpu_mem_state st = { .time = 9, .free = 1000, .total = 4000, .used_before = 3000,
					.pid = 42 };
	struct xpu_gpu_oom oom = { .time = 12, .bytes = 1ull << 40, .correlation_id = 5, .pid = 42,
				   .tid = 42, .device = -1, .source = XPU_OOM_CUDA,
				   .domain = XPU_API_RUNTIME, .cbid = 20, .ret = 2 };
	uint8_t batch[512], *q = batch;

	corpus__put_rec(&q, XPU_REC_GPU_MEM_STATE, 8 + sizeof(st), &st, sizeof(st));
	corpus__put_rec(&q, XPU_REC_GPU_MEMORY, 8 + sizeof(m), &m, sizeof(m));
	corpus__put_rec(&q, XPU_REC_GPU_MEMPOOL, 8 + sizeof(p), &p, sizeof(p));
	corpus__put_rec(&q, XPU_REC_GPU_OOM, 8 + sizeof(oom), &oom, sizeof(oom));
	out__msg(o, XPU_CHANNEL_MAGIC, batch, (uint32_t)(q - batch));
	corpus__save("memory", o->p, o->len);
	m.op = 7;
	q = batch;
	corpus__put_rec(&q, XPU_REC_GPU_MEMORY, 8 + sizeof(m), &m, sizeof(m));
	out__msg(o, XPU_CHANNEL_MAGIC, batch, (uint32_t)(q - batch));
	corpus__save("memory-bad-op-second", o->p, o->len);
}

static void corpus__channel(const char *root)
{
	struct tf_rec recs[TF_NR_RECORDS];
	uint8_t batch[8192], meta[64] = { 0 };
	struct out o = { 0 };
	size_t n = 0;
	int nr = tf__make_records(recs, 9);
	struct xpu_record_header rh = { .type = XPU_REC_META, .size = sizeof(meta) };

	snprintf(dir, sizeof(dir), "%s/channel", root);
	mkdir(dir, 0755);
	for (int i = 0; i < nr; i++) {
		struct xpu_record_header h = { .type = recs[i].type,
					       .size = (8 + recs[i].len + 7) & ~7u };

		memset(batch + n, 0, h.size);
		memcpy(batch + n, &h, sizeof(h));
		memcpy(batch + n + sizeof(h), recs[i].body, recs[i].len);
		n += h.size;
	}
	memcpy(meta, &rh, sizeof(rh));
	memcpy(meta + 8, "gpu.subscriber_conflict", 24);
	memcpy(meta + 32, "nsys", 5);

	out__msg(&o, XPU_CHANNEL_MAGIC, batch, n);
	corpus__save("one-message", o.p, o.len);
	out__msg(&o, XPU_CHANNEL_MAGIC, meta, sizeof(meta));
	out__msg(&o, XPU_CHANNEL_MAGIC, batch, 0);		/* empty message */
	out__msg(&o, XPU_CHANNEL_MAGIC, batch, n);
	corpus__save("three-messages-conflict", o.p, o.len);
	corpus__save("cut-inside-message", o.p, o.len - 20);
	o.len = 0;
	out__msg(&o, XPU_CHANNEL_MAGIC, meta, sizeof(meta));
	batch[4] ^= 8;						/* a record size off */
	out__msg(&o, XPU_CHANNEL_MAGIC, batch, n);
	batch[4] ^= 8;
	out__msg(&o, XPU_CHANNEL_MAGIC, batch, n);		/* never read */
	corpus__save("bad-records-second", o.p, o.len);
	o.len = 0;
	out__msg(&o, XPU_CHANNEL_MAGIC, meta, sizeof(meta));
	out__msg(&o, 0x314e4844u, batch, n);			/* bad magic */
	corpus__save("bad-magic-second", o.p, o.len);
	o.len = 0;
	out__msg(&o, XPU_CHANNEL_MAGIC, batch, 64);
	{
		struct xpu_channel_msg m = { XPU_CHANNEL_MAGIC, XPU_CHANNEL_MAX_MSG + 1 };

		out__add(&o, &m, sizeof(m));
	}
	corpus__save("too-long", o.p, o.len);
	o.len = 0;
	corpus__channel_memory(&o);
	free(o.p);
}

/* ---- fuzz_elf: small real ELF files and damaged copies -------------------------- */

static uint8_t *corpus__read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;

	if (!f || fseek(f, 0, SEEK_END))
		goto fail;
	*len = ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	if (!buf || fread(buf, 1, *len, f) != *len)
		goto fail;
	fclose(f);
	return buf;
fail:
	fprintf(stderr, "make_corpus: cannot read %s\n", path);
	exit(1);
}

/* File range of the section called name, or false. */
static bool corpus__section(const uint8_t *buf, size_t len, const char *name,
			    size_t *off, size_t *size, size_t *entsize)
{
	Elf *elf = elf_memory((char *)buf, len);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name) || sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size > len)
			continue;
		*off = sh.sh_offset;
		*size = sh.sh_size;
		*entsize = sh.sh_entsize;
		found = true;
	}
out:
	if (elf)
		elf_end(elf);
	return found;
}

static void corpus__elf_variant(const char *base, const char *what, const uint8_t *buf,
				size_t len)
{
	char name[256];

	snprintf(name, sizeof(name), "%s-%s", base, what);
	corpus__save(name, buf, len);
}

static void corpus__elf(const char *base, const uint8_t *orig, size_t len)
{
	uint8_t *buf = malloc(len);
	Elf64_Ehdr eh;
	size_t off, size, ent;

	corpus__save(base, orig, len);
	if (len < sizeof(eh))
		return;
	corpus__elf_variant(base, "cut-half", orig, len / 2);
	corpus__elf_variant(base, "cut-headers", orig, 400 < len ? 400 : len);

#define RESET()	(memcpy(buf, orig, len), memcpy(&eh, buf, sizeof(eh)))
#define PUT_EH() memcpy(buf, &eh, sizeof(eh))
	RESET();
	eh.e_shoff = len + 4096;				/* section headers past the end */
	PUT_EH();
	corpus__elf_variant(base, "shoff-past-end", buf, len);
	RESET();
	eh.e_phnum = 0xffff;					/* program headers past the end */
	PUT_EH();
	corpus__elf_variant(base, "phnum-huge", buf, len);
	RESET();
	eh.e_type = eh.e_type == ET_EXEC ? ET_DYN : ET_EXEC;	/* relocation rules flipped */
	PUT_EH();
	corpus__elf_variant(base, "type-flipped", buf, len);
	RESET();
	for (int i = 0; i < eh.e_phnum; i++) {			/* PT_LOAD sizes lie */
		Elf64_Phdr ph;
		size_t o = eh.e_phoff + i * sizeof(ph);

		if (o + sizeof(ph) > len)
			break;
		memcpy(&ph, buf + o, sizeof(ph));
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			ph.p_filesz = ph.p_memsz = 0x7fffffffffffULL;
			ph.p_offset += 0x1000000;
		}
		memcpy(buf + o, &ph, sizeof(ph));
	}
	corpus__elf_variant(base, "load-sizes-lie", buf, len);
	/* garbage CFI: .eh_frame_hdr and .eh_frame overwritten */
	RESET();
	if (corpus__section(buf, len, ".eh_frame", &off, &size, &ent)) {
		for (size_t i = 0; i < size; i++)
			buf[off + i] = (uint8_t)(i * 37 + 11);
		corpus__elf_variant(base, "eh-frame-garbage", buf, len);
		RESET();
		for (size_t i = 8; i + 4 <= size; i += 24)	/* CIE/FDE lengths lie */
			memcpy(buf + off + i, "\xf0\xff\xff\x7f", 4);
		corpus__elf_variant(base, "eh-frame-lengths", buf, len);
	}
	RESET();
	if (corpus__section(buf, len, ".eh_frame_hdr", &off, &size, &ent) && size > 12) {
		memset(buf + off + 4, 0xff, size - 4);		/* table pointing anywhere */
		corpus__elf_variant(base, "eh-frame-hdr-garbage", buf, len);
	}
	/* symbols that lie: names past the string table, sizes past everything */
	RESET();
	if ((corpus__section(buf, len, ".symtab", &off, &size, &ent) ||
	     corpus__section(buf, len, ".dynsym", &off, &size, &ent)) && ent == sizeof(Elf64_Sym)) {
		for (size_t i = 1; i * ent + ent <= size; i++) {
			Elf64_Sym sym;

			memcpy(&sym, buf + off + i * ent, sizeof(sym));
			if (i % 2)
				sym.st_name += 0x100000;
			else
				sym.st_size = 0xffffffffffffULL;
			memcpy(buf + off + i * ent, &sym, sizeof(sym));
		}
		corpus__elf_variant(base, "symbols-lie", buf, len);
	}
	/* MiniDebugInfo that is not xz (a byte run in its middle), or cut short */
	RESET();
	if (corpus__section(buf, len, ".gnu_debugdata", &off, &size, &ent) && size > 64) {
		memset(buf + off + size / 2, 0x5a, 16);
		corpus__elf_variant(base, "debugdata-garbage", buf, len);
		RESET();
		memset(buf + off + size - 24, 0, 24);	/* the xz footer and index */
		corpus__elf_variant(base, "debugdata-cut", buf, len);
	}
	/* a build-id note whose sizes run past its section */
	RESET();
	if (corpus__section(buf, len, ".note.gnu.build-id", &off, &size, &ent) && size >= 12) {
		memcpy(buf + off + 4, "\xff\xff\xff\x7f", 4);
		corpus__elf_variant(base, "note-too-long", buf, len);
	}
#undef RESET
#undef PUT_EH
	free(buf);
}

/* ---- fuzz_archive: archives of those files ----------------------------------- */

static void corpus__archive_entry(struct out *o, uint8_t kind, const char *path,
				  const uint8_t *id, size_t id_size, const void *file, size_t len)
{
	struct archive_entry e = { .kind = kind, .build_id_size = (uint8_t)id_size,
				   .file_size = len };
	size_t cap = ZSTD_compressBound(len);
	uint8_t *z = malloc(cap), h[ARCHIVE_ENTRY_HDR_SIZE];
	size_t zlen = ZSTD_compress(z, cap, file, len, 19);

	if (ZSTD_isError(zlen))
		exit(1);
	memcpy(e.build_id, id, id_size);
	e.data_size = zlen;
	e.data_crc = (uint32_t)crc32(0, z, (uInt)zlen);
	e.file_crc = (uint32_t)crc32(0, file, (uInt)len);
	archive__encode_entry(h, &e, path);
	out__add(o, h, sizeof(h));
	out__add(o, path, strlen(path) + 1);
	out__add(o, z, zlen);
	free(z);
}

static void corpus__archive_end(struct out *o, uint64_t n)
{
	struct archive_entry e = { .kind = ARCHIVE_KIND_END, .file_size = n };
	uint8_t h[ARCHIVE_ENTRY_HDR_SIZE];

	archive__encode_entry(h, &e, "");
	out__add(o, h, sizeof(h));
	out__add(o, "", 1);
}

static size_t corpus__build_id(const uint8_t *buf, size_t len, uint8_t *id)
{
	Elf *elf = elf_memory((char *)buf, len);
	size_t n = elf ? elf__build_id(elf, id, XPU_MMAP_BUILD_ID_MAX) : 0;

	if (elf)
		elf_end(elf);
	return n;
}

/* elfs[0..n): files to pack; names: their base names. */
static void corpus__archives(const char *root, uint8_t **elfs, size_t *lens, char **names, int n)
{
	uint8_t h[ARCHIVE_FILE_HDR_SIZE], id[XPU_MMAP_BUILD_ID_MAX];
	char path[256];
	struct out o = { 0 };
	size_t first_data, id_size;

	snprintf(dir, sizeof(dir), "%s/archive", root);
	mkdir(dir, 0755);
	archive__encode_file_header(h);

	/* every file by build-id, the first once more as a debug file, the
	 * second once more without a build-id */
	out__add(&o, h, sizeof(h));
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/usr/lib/fuzz/%s", names[i]);
		id_size = corpus__build_id(elfs[i], lens[i], id);
		corpus__archive_entry(&o, ARCHIVE_KIND_ELF, path, id, id_size, elfs[i], lens[i]);
	}
	first_data = sizeof(h) + ARCHIVE_ENTRY_HDR_SIZE + strlen("/usr/lib/fuzz/") +
		     strlen(names[0]) + 1;
	id_size = corpus__build_id(elfs[0], lens[0], id);
	corpus__archive_entry(&o, ARCHIVE_KIND_DEBUG, "", id, id_size, elfs[0], lens[0]);
	if (n > 1)
		corpus__archive_entry(&o, ARCHIVE_KIND_ELF, "/opt/fuzz/plain", id, 0,
				      elfs[1], lens[1]);
	corpus__archive_end(&o, n + 1 + (n > 1));
	corpus__save("archive-whole", o.p, o.len);
	corpus__save("archive-cut-inside-data", o.p, first_data + 100);
	corpus__save("archive-no-end", o.p, o.len - ARCHIVE_ENTRY_HDR_SIZE - 1);
	o.p[first_data + 50] ^= 0x55;				/* data damaged: CRCs catch it */
	corpus__save("archive-data-flipped", o.p, o.len);

	/* one small file, then an unknown kind and an end entry counting wrong */
	o.len = 0;
	out__add(&o, h, sizeof(h));
	corpus__archive_entry(&o, ARCHIVE_KIND_ELF, "/usr/lib/fuzz/small", id, 0,
			      elfs[n - 1], lens[n - 1] < 2048 ? lens[n - 1] : 2048);
	corpus__archive_entry(&o, 7, "/later/kind", id, 0, "abc", 3);
	corpus__archive_end(&o, 5);
	corpus__save("archive-unknown-kind-bad-end", o.p, o.len);
	free(o.p);
}

/* ---- fuzz_stack_delta and coded traces ------------------------------------------ */

/* Stack records of two threads whose stacks change a little each time (the
 * shape STACK_DELTA codes), a COMM between them, as one batch; *nr: how many. */
static uint8_t *corpus__stack_batch(size_t *len, uint32_t *nr)
{
	uint8_t *buf = calloc(1, 1 << 16), *p = buf;
	uint64_t words[2][64];

	for (int t = 0; t < 2; t++)
		for (int i = 0; i < 64; i++)
			words[t][i] = 0x401000 + 16 * i + t;
	*nr = 0;
	for (int k = 0; k < 8; k++) {
		uint32_t tid = 100 + k % 2, depth = 40 + (k * 7) % 24;
		struct xpu_sample s = { .time = 1000 + k, .pid = 100, .tid = tid, .weight = 1,
					.stack = { .nr_kernel_ips = k % 3 == 0, .nr_regs = 17,
						   .arch = XPU_ARCH_X86_64, .stack_size = 8 * depth } };
		struct xpu_record_header rh = { .type = k == 5 ? XPU_REC_OFFCPU : XPU_REC_SAMPLE };
		uint64_t regs[17] = { 0 }, kip = 0xffffffff81000000ull + k;
		uint8_t body[2048];
		size_t n = 0;

		words[k % 2][64 - depth] = k * 977;	/* a local changed */
		for (int i = 0; i < 17; i++)
			regs[i] = i == XPU_X86_RSP ? 0x7ffd0000f000ull - 8 * depth + 0x100000 * (k % 2)
						   : (uint64_t)(i * 3 + k % 4);
		if (rh.type == XPU_REC_OFFCPU) {
			struct xpu_offcpu o = { .start = 990, .end = 1000 + k, .off_ns = 10,
						.pid = 100, .tid = tid, .stack = s.stack };

			memcpy(body, &o, sizeof(o));
			n = sizeof(o);
		} else {
			memcpy(body, &s, sizeof(s));
			n = sizeof(s);
		}
		if (s.stack.nr_kernel_ips) {
			memcpy(body + n, &kip, 8);
			n += 8;
		}
		memcpy(body + n, regs, sizeof(regs));
		n += sizeof(regs);
		memcpy(body + n, &words[k % 2][64 - depth], 8 * depth);
		n += 8 * depth;
		corpus__put_rec(&p, rh.type, 8 + n, body, n);
		(*nr)++;
		if (k == 3) {
			struct xpu_comm c = { .time = 1003, .pid = 100, .tid = 101, .comm = "w" };

			corpus__put_rec(&p, XPU_REC_COMM, 8 + sizeof(c), &c, sizeof(c));
			(*nr)++;
		}
	}
	*len = p - buf;
	return buf;
}

static void corpus__stack_delta(const char *root)
{
	struct xpu_delta_enc *e = xpu_delta_enc__new();
	size_t len, off = 0, clen = 0;
	uint32_t nr;
	uint8_t *plain = corpus__stack_batch(&len, &nr), *coded = calloc(1, len);
	struct xpu_writer_opts o = { .features = XPU_FEAT_CPU_SAMPLES | XPU_FEAT_DWARF_STACKS,
				     .stack_delta = true };
	struct xpu_writer *w;
	uint8_t *buf;
	size_t flen;

	snprintf(dir, sizeof(dir), "%s/stack_delta", root);
	mkdir(dir, 0755);
	corpus__save("plain", plain, len);
	for (uint32_t k = 0; k < nr; k++) {
		struct xpu_record_header rh;
		size_t c;

		memcpy(&rh, plain + off, sizeof(rh));
		c = xpu_delta__encode(e, k, rh.type, rh.flags, plain + off + 8, rh.size - 8,
				      coded + clen, rh.size);
		if (!c)
			memcpy(coded + clen, plain + off, rh.size);
		clen += c ? c : rh.size;
		off += rh.size;
	}
	corpus__save("coded", coded, clen);
	corpus__save("coded-cut", coded, clen - 24);

	/* a coded trace for fuzz_reader, in one chunk and in several */
	snprintf(dir, sizeof(dir), "%s/reader", root);
	for (int chunk = 0; chunk < 2; chunk++) {
		struct xpu_record rec;

		o.chunk_size = chunk ? 1200 : 0;
		w = xpu_writer__open(tmp, &o);
		if (!w)
			exit(1);
		off = 0;
		while (xpu_batch__next(plain, len, &off, &rec) == 1) {
			struct iovec iov = { (void *)rec.body, rec.body_size };

			xpu_writer__addv(w, rec.type, rec.flags, &iov, 1);
		}
		xpu_writer__close(w);
		buf = corpus__load(&flen);
		corpus__save(chunk ? "valid-stack-delta-chunks" : "valid-stack-delta", buf, flen);
		free(buf);
	}
	unlink(tmp);
	xpu_delta_enc__free(e);
	free(plain);
	free(coded);
}

int main(int argc, char **argv)
{
	struct xpu_file_header fh;
	uint8_t *buf, recs[2048], *p;
	size_t len, off;
	char name[64];

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_ROOT [ELF...]\n", argv[0]);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/reader", argv[1]);
	mkdir(dir, 0755);
	snprintf(tmp, sizeof(tmp), "%s/.make_corpus.tmp", dir);

	/* Valid shapes. */
	buf = corpus__trace(0, -1, 0, &len);
	corpus__save("valid-header-only", buf, len);
	free(buf);
	buf = corpus__trace(0, -1, 1, &len);
	corpus__save("valid-all-types-raw", buf, len);
	free(buf);
	buf = corpus__trace(0, 0, 1, &len);
	corpus__save("valid-all-types-zstd", buf, len);

	/* Version variants of the same file. */
	memcpy(&fh, buf, sizeof(fh));
	fh.minor = XPU_VERSION_MINOR + 1;
	memcpy(buf, &fh, sizeof(fh));
	corpus__save("valid-newer-minor", buf, len);
	fh.minor = XPU_VERSION_MINOR;
	fh.major = XPU_VERSION_MAJOR + 1;
	memcpy(buf, &fh, sizeof(fh));
	corpus__save("refused-newer-major", buf, len);
	fh.major = XPU_VERSION_MAJOR;
	fh.header_size = sizeof(fh) + 8;	/* a longer header from a future minor */
	memcpy(buf, &fh, sizeof(fh));
	corpus__save("bad-header-size", buf, len);
	free(buf);

	/* Many chunks, raw and compressed, then damaged copies. */
	buf = corpus__trace(700, -1, 6, &len);
	corpus__save("valid-multichunk-raw", buf, len);
	free(buf);
	buf = corpus__trace(700, 0, 6, &len);
	corpus__save("valid-multichunk-zstd", buf, len);
	for (int i = 1; i <= 4; i++) {
		off = test_format__chunk_at(buf, len, i) - 5 * i;
		snprintf(name, sizeof(name), "truncated-multichunk-%zu", off);
		corpus__save(name, buf, off);
	}
	off = test_format__chunk_at(buf, len, 2);
	buf[off + sizeof(struct xpu_chunk_header) + 9] ^= 0x10;
	corpus__save("damaged-payload-chunk2", buf, len);
	buf[off + sizeof(struct xpu_chunk_header) + 9] ^= 0x10;
	off = test_format__chunk_at(buf, len, 1);
	buf[off + 8] ^= 0x01;			/* comp_size: header CRC fails */
	corpus__save("damaged-header-chunk1", buf, len);
	buf[off + 8] ^= 0x01;
	corpus__sizes(buf, len);
	free(buf);

	/* A record larger than the chunk size: its chunk grows to hold it. */
	{
		struct xpu_writer *w = corpus__open(256, 0);
		uint8_t big[3000];
		struct iovec iov = { big, 0 };

		iov.iov_len = offsetof(struct xpu_sample, stack) +
			      tf__stack(big + offsetof(struct xpu_sample, stack), 2, 40, 17, 2000, 0, 9);
		memset(big, 0, offsetof(struct xpu_sample, stack));
		corpus__records(w, 1);
		xpu_writer__addv(w, XPU_REC_SAMPLE, 0, &iov, 1);
		corpus__records(w, 2);
		xpu_writer__close(w);
		buf = corpus__load(&len);
		corpus__save("valid-large-record", buf, len);
		free(buf);
	}

	/* Types this reader does not know (a newer minor's), skipped by size. */
	{
		struct xpu_writer *w = corpus__open(0, 0);
		uint8_t body[40] = { 1, 2, 3 };

		corpus__records(w, 3);
		xpu_writer__add(w, 50, body, sizeof(body));
		xpu_writer__add(w, XPU_REC_MAX - 1, body, 3);
		xpu_writer__add(w, 999, body, 0);
		corpus__records(w, 4);
		xpu_writer__close(w);
		buf = corpus__load(&len);
		corpus__save("valid-unknown-types", buf, len);
		free(buf);
	}

	/* Records whose typed parts lie: the chunk is sound, the helpers must
	 * refuse (stack counts past the body, strings without a NUL). */
	{
		struct xpu_writer *w = corpus__open(0, -1);
		uint8_t body[256];
		struct xpu_stack st = { .nr_user_ips = 1000, .nr_regs = 17, .stack_size = 1 << 30 };

		memset(body, 'A', sizeof(body));
		memcpy(body + offsetof(struct xpu_sample, stack), &st, sizeof(st));
		xpu_writer__add(w, XPU_REC_SAMPLE, body, 96);
		memcpy(body + offsetof(struct xpu_gpu_corr, stack), &st, sizeof(st));
		xpu_writer__add(w, XPU_REC_GPU_CORR, body, 96);
		memset(body, 'A', sizeof(body));
		xpu_writer__add(w, XPU_REC_MMAP, body, 80);
		xpu_writer__add(w, XPU_REC_KSYM, body, 24);
		xpu_writer__add(w, XPU_REC_PERF_MAP, body, 32);
		xpu_writer__add(w, XPU_REC_STRING, body, 16);
		xpu_writer__add(w, XPU_REC_GPU_DEVICE, body, 40);
		xpu_writer__add(w, XPU_REC_META, body, 8);
		body[3] = 0;
		xpu_writer__add(w, XPU_REC_META, body, 8);	/* key, unterminated value */
		xpu_writer__close(w);
		buf = corpus__load(&len);
		corpus__save("lying-typed-parts", buf, len);
		free(buf);
	}

	/* Hand-made chunks with bad record structure, each followed by a good one. */
	corpus__crafted("crafted-empty-chunk", recs, 0, 0);
	p = recs;
	corpus__put_rec(&p, XPU_REC_FORK, 8 + 24, "\1\2\3", 3);
	corpus__crafted("crafted-count-mismatch", recs, p - recs, 2);
	p = recs;
	corpus__put_rec(&p, XPU_REC_FORK, 8 + 20, "\1\2\3", 3);	/* size % 8 */
	corpus__crafted("crafted-unaligned-size", recs, 32, 1);
	p = recs;
	corpus__put_rec(&p, XPU_REC_COMM, 8 + 16, "\1", 1);	/* shorter than COMM */
	corpus__crafted("crafted-short-record", recs, p - recs, 1);
	p = recs;
	corpus__put_rec(&p, XPU_REC_FORK, 8 + 24, "\1", 1);
	memcpy(recs + 4, "\xf8\xff\xff\xff", 4);		/* size runs off the chunk */
	corpus__crafted("crafted-size-overrun", recs, 32, 1);
	p = recs;
	corpus__put_rec(&p, 0, 8, "", 0);			/* type 0, empty body */
	corpus__crafted("crafted-type-zero", recs, p - recs, 1);

	corpus__stack_delta(argv[1]);
	unlink(tmp);
	corpus__encoded(argv[1]);
	corpus__channel(argv[1]);

	/* ELF seeds, and archives of them */
	if (argc > 2) {
		int n = argc - 2;
		uint8_t **elfs = calloc(n, sizeof(*elfs));
		size_t *lens = calloc(n, sizeof(*lens));
		char **names = calloc(n, sizeof(*names));

		elf_version(EV_CURRENT);
		snprintf(dir, sizeof(dir), "%s/elf", argv[1]);
		mkdir(dir, 0755);
		for (int i = 0; i < n; i++) {
			names[i] = strrchr(argv[i + 2], '/') ? strrchr(argv[i + 2], '/') + 1 : argv[i + 2];
			elfs[i] = corpus__read(argv[i + 2], &lens[i]);
			corpus__elf(names[i], elfs[i], lens[i]);
		}
		corpus__archives(argv[1], elfs, lens, names, n);
		for (int i = 0; i < n; i++)
			free(elfs[i]);
		free(elfs);
		free(lens);
		free(names);
	}
	return 0;
}

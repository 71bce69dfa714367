#!/usr/bin/env python3
# Writes damaged copies of a trace, the same ones for the same seed, for
# tests/shell/damage_outputs.sh. Kinds (Documentation/data-format.md has the
# layout: a 64-byte file header, then chunks of a 32-byte header "XCHK",
# header_size, comp_size, raw_size, nr_records, flags, payload_crc,
# header_crc, and a payload, zstd or raw):
#   cut     the file cut at a random offset
#   flip    a few random bytes flipped anywhere (the CRCs catch most)
#   header  one field of one chunk header set to a random or edge value,
#           the header CRC made right again (the reader must not trust it)
#   record  bytes of one chunk's records changed (sizes, types, fields),
#           the chunk stored raw with both CRCs right: this reaches the
#           record parsers, the session and every output
# Usage: damage_traces.py TRACE OUTDIR COUNT SEED (COUNT files of each kind;
# zstd payloads are decompressed with the zstd command).
import os
import random
import struct
import subprocess
import sys
import zlib

src, outdir, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(src, "rb").read()
rng = random.Random(seed)
FILE_HDR, CHUNK_HDR, MAGIC, ZSTD = 64, 32, 0x4B484358, 1


def chunks(buf):
    """(offset, header fields, payload) of each chunk, in order."""
    out, off = [], FILE_HDR
    while off + CHUNK_HDR <= len(buf):
        h = list(struct.unpack_from("<8I", buf, off))
        if h[0] != MAGIC:
            break
        end = off + h[1] + h[2]
        out.append((off, h, buf[off + h[1]:end]))
        off = end
    return out


def header(h):
    h = list(h)
    h[7] = zlib.crc32(struct.pack("<7I", *h[:7])) & 0xFFFFFFFF
    return struct.pack("<8I", *h)


def raw_payload(h, payload):
    if not h[5] & ZSTD:
        return payload
    return subprocess.run(["zstd", "-dc"], input=payload, capture_output=True,
                          check=True).stdout


def rebuild(parts):
    return data[:FILE_HDR] + b"".join(parts)


cs = chunks(data)
if not cs:
    sys.exit(f"{src}: no chunk")
raw = [raw_payload(h, p) for _, h, p in cs]
os.makedirs(outdir, exist_ok=True)


def write(kind, i, buf):
    with open(os.path.join(outdir, f"{kind}-{i:02d}.data"), "wb") as f:
        f.write(buf)


for i in range(count):
    write("cut", i, data[:rng.randrange(FILE_HDR // 2, len(data))])

    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    write("flip", i, bytes(buf))

    k = rng.randrange(len(cs))
    parts = [data[o:o + h[1] + h[2]] for o, h, _ in cs]
    h = list(cs[k][1])
    field = rng.choice([1, 2, 3, 4, 5])
    h[field] = rng.choice([0, 1, 7, 8, 31, 32, 33, 0xFFFFFFFF, 0x7FFFFFFF, 64 << 20,
                           (64 << 20) + 1, rng.getrandbits(32), h[field] + 8,
                           max(h[field] - 8, 0)])
    parts[k] = header(h) + cs[k][2]
    write("header", i, rebuild(parts))

    k = rng.randrange(len(cs))
    payload = bytearray(raw[k])
    for _ in range(rng.randint(1, 6)):
        if not payload:
            break
        at = rng.randrange(len(payload))
        how = rng.randrange(3)
        if how == 0:                    # a byte
            payload[at] = rng.getrandbits(8)
        elif how == 1:                  # a little-endian word: sizes, ids, counts
            at -= at % 4
            v = rng.choice([0, 1, 8, 0xFFFFFFFF, 0x80000000, rng.getrandbits(32)])
            payload[at:at + 4] = struct.pack("<I", v)[:len(payload) - at]
        else:                           # a record header's type or size
            at -= at % 8
            payload[at:at + 8] = struct.pack("<HHI", rng.randrange(0, 24), 0,
                                             rng.choice([0, 8, 16, 24, 4096, 1 << 20,
                                                         rng.getrandbits(16) * 8]))[:len(payload) - at]
    payload = bytes(payload)
    parts = [data[o:o + h[1] + h[2]] for o, h, _ in cs]
    h = list(cs[k][1])
    h[2], h[3], h[5] = len(payload), len(payload), h[5] & ~ZSTD
    h[6] = zlib.crc32(payload) & 0xFFFFFFFF
    parts[k] = header(h) + payload
    write("record", i, rebuild(parts))

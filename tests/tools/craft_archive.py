#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes an xpu.data.archive whose one entry states a size its data may not
hold: a decompression bomb, for tests/shell/archive_limits.sh and the fuzz
corpus (tests/fuzz/corpus/archive). The layout is report/files/archive.h's
(Documentation/design-offline.md).

  craft_archive.py -o OUT [--from ARCHIVE] --stated N --stream M

The entry's data is one zstd frame of M zero bytes made of RLE blocks (4 bytes
for each 128 KiB: 3 GiB in 98 KB), written by hand; file_size states N. With
--from, the entry keeps the kind, build-id and path of ARCHIVE's first entry
(so that a report looks it up for the trace's file), else it is an ELF entry
"/bomb" without build-id. data_crc is right; file_crc is the CRC of M zeros
when M <= 1 GiB (else 0), so that an entry with N == M is a valid archive.
"""
import argparse
import struct
import zlib

FILE_MAGIC = b"XPUARCH\0"
ENTRY_MAGIC = 0x31454158
KIND_ELF, KIND_END = 1, 0xFF
BLOCK = 128 << 10


def zstd_zeros(n):
    """One zstd frame of n zero bytes: content size given, 128 KiB window,
    RLE blocks of at most 128 KiB (RFC 8878 3.1.1)."""
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    out.append(0xC0)                    # 8-byte content size, not single segment
    out.append((17 - 10) << 3)          # window 2^17
    out += struct.pack("<Q", n)
    if n == 0:
        out += (1).to_bytes(3, "little")    # last, raw, empty
        return bytes(out)
    while n:
        size = min(n, BLOCK)
        n -= size
        out += (int(n == 0) | 1 << 1 | size << 3).to_bytes(3, "little") + b"\0"
    return bytes(out)


def zeros_crc(n):
    crc, chunk = 0, bytes(1 << 20)
    while n:
        k = min(n, len(chunk))
        crc = zlib.crc32(chunk[:k], crc)
        n -= k
    return crc


def entry(kind, bid, path, file_size, data, file_crc):
    p = path + b"\0"
    h = struct.pack("<IBBH", ENTRY_MAGIC, kind, len(bid), len(p)) + bid.ljust(20, b"\0")
    h += b"\0" * 4 + struct.pack("<QQII", file_size, len(data), zlib.crc32(data), file_crc)
    h += b"\0" * 4
    crc = zlib.crc32(p, zlib.crc32(h))
    return h + struct.pack("<I", crc) + p + data


def first_entry(path):
    with open(path, "rb") as f:
        a = f.read()
    h = a[16:80]
    kind, bid_size, path_len = struct.unpack_from("<BBH", h, 4)
    return kind, h[8:8 + bid_size], a[80:80 + path_len - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", required=True)
    ap.add_argument("--from", dest="src")
    ap.add_argument("--stated", type=int, required=True)
    ap.add_argument("--stream", type=int, required=True)
    o = ap.parse_args()
    kind, bid, path = first_entry(o.src) if o.src else (KIND_ELF, b"", b"/bomb")
    hdr = FILE_MAGIC + struct.pack("<HH", 1, 0)
    hdr += struct.pack("<I", zlib.crc32(hdr))
    data = zstd_zeros(o.stream)
    crc = zeros_crc(o.stream) if o.stream <= 1 << 30 else 0
    body = entry(kind, bid, path, o.stated, data, crc)
    end = entry(KIND_END, b"", b"", 1, b"", 0)
    with open(o.o, "wb") as f:
        f.write(hdr + body + end)


if __name__ == "__main__":
    main()

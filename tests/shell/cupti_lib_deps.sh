#!/usr/bin/env bash
# libxpu-cupti.so runs inside the profiled process: it must carry cupti/ and
# the record encoder only. No reader, no writer, no die() (which would exit
# the application), and no libzstd/libz to load into it; it exports exactly
# InitializeInjection, InitializeInjectionNvtx2 (NVTX's entry point, handed
# to libcupti), InitializeInjectionNvtxExtension (NVTX's extensions: the
# payload pops CUPTI does not report), xpu_cupti_attach (xpu-record -p's
# entry, cupti/attach.h) and xpu_cupti_marker.
. "$(dirname "$0")/lib/e2e.sh"
LIB=$XPU_BIN/libxpu-cupti.so
[ -f "$LIB" ] || skip "$LIB not built (no CUDA toolkit at build time)"
command -v readelf >/dev/null && command -v nm >/dev/null || skip "readelf/nm not found (binutils)"

readelf -d "$LIB" >"$T/dynamic" || fail "readelf -d $LIB failed"
grep -q 'NEEDED.*\[libcupti\.so' "$T/dynamic" || { cat "$T/dynamic" >&2; fail "no NEEDED libcupti in readelf -d output"; }
if grep -E 'NEEDED.*\[(libzstd|libz|libelf|libdw|libbpf)\.so' "$T/dynamic"; then
	fail "$LIB needs compression/ELF libraries inside the profiled process"
fi

nm -D --defined-only "$LIB" | awk '{ print $NF }' | sort >"$T/exported"
printf '%s\n' InitializeInjection InitializeInjectionNvtx2 InitializeInjectionNvtxExtension \
	xpu_cupti_attach xpu_cupti_marker >"$T/want_exported"
diff -u "$T/want_exported" "$T/exported" ||
	fail "$LIB exports other symbols than InitializeInjection, InitializeInjectionNvtx2, InitializeInjectionNvtxExtension, xpu_cupti_attach and xpu_cupti_marker"
if nm -D --undefined-only "$LIB" | grep -E ' (ZSTD_|crc32|deflate|inflate)'; then
	fail "$LIB calls compression functions"
fi
# Every function it calls comes from a NEEDED library (versioned: libc, libcupti).
if nm -D --undefined-only "$LIB" | awk '$1 == "U" && $2 !~ /@/' | grep .; then
	fail "$LIB calls functions no library it needs defines"
fi

# The static symbol table of the unstripped build: what was linked in.
nm --defined-only "$LIB" | awk '{ print $NF }' >"$T/symbols"
grep -qx 'xpu_record__encode' "$T/symbols" || fail "no symbol table in $LIB, or the encoder is missing"
if grep -E '^(xpu_reader__|xpu_writer__|die$|warn$|error$|xpu_log_init$|xmalloc$|xzalloc$|ZSTD_)' "$T/symbols"; then
	fail "$LIB carries common/ or format/ code beyond the encoder (reader, writer, die)"
fi
echo "ok: $LIB needs $(grep -c NEEDED "$T/dynamic") libraries, exports 5 symbols, no reader/writer/die"

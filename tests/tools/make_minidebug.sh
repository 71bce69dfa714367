#!/usr/bin/env bash
# make_minidebug.sh IN OUT: OUT is IN stripped the way Fedora and RHEL ship
# binaries, with MiniDebugInfo (gdb's recipe): the function symbols .dynsym
# lacks, in a symbol-only ELF, xz-compressed into .gnu_debugdata. The
# build-id is unchanged. Used by tests/shell/offline_minidebug.sh and the
# fuzz_elf seed corpus.
set -euo pipefail
in=$1 out=$2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
nm -D "$in" --format=posix --defined-only | awk '{ print $1 }' | sort >"$w/dynsyms"
nm "$in" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort >"$w/funcs"
comm -13 "$w/dynsyms" "$w/funcs" >"$w/keep"
objcopy --only-keep-debug "$in" "$w/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$w/keep" \
	"$w/debug" "$w/mini"
xz -f "$w/mini"
strip --strip-all -R .comment -R .gnu_debuglink -o "$w/out" "$in"
objcopy --add-section .gnu_debugdata="$w/mini.xz" "$w/out" "$out"

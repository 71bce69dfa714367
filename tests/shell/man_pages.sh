#!/usr/bin/env bash
# `make install` installs a man page per command, generated from
# Documentation/ by pandoc; each renders with `man -l`, `man NAME` finds it
# under PREFIX/share/man, groff prints no warning at 80 columns, it documents every long option the command's
# --help lists, and --help ends with three examples of the command.
. "$(dirname "$0")/lib/e2e.sh"
command -v pandoc >/dev/null || skip "pandoc not installed (scripts/setup.sh): no man pages"
command -v man >/dev/null || skip "man not installed (man-db, scripts/setup.sh)"
make -s -C "$XPU_TOP" O="$XPU_BUILD" install DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "make install failed"; }
M=$T/root/usr/share/man/man1
for page in xpu-record xpu-report xpu-report-tui xpu-archive; do
	[ -f "$M/$page.1" ] || fail "make install did not install $page.1: $(ls "$M" 2>&1)"
	MANWIDTH=100 man -l "$M/$page.1" >"$T/$page.txt" 2>"$T/$page.err" ||
		fail "man -l $page.1 failed: $(cat "$T/$page.err")"
	# at 80 columns groff says nothing: no "table wider than line width",
	# no "cannot adjust line" (Documentation/man.lua)
	MANWIDTH=80 man -l "$M/$page.1" >/dev/null 2>"$T/$page.err80" ||
		fail "MANWIDTH=80 man -l $page.1 failed: $(cat "$T/$page.err80")"
	[ ! -s "$T/$page.err80" ] || fail "man -l $page.1 at 80 columns warns: $(head -3 "$T/$page.err80")"
	head -1 "$T/$page.txt" | grep -q "^$page(1) " || fail "$page.1: title line $(head -1 "$T/$page.txt")"
	grep -q '^NAME$' "$T/$page.txt" || fail "$page.1 has no NAME section"
	grep -q "^       $page — " "$T/$page.txt" || fail "$page.1: NAME is not '$page — ...'"
	[ "$(MANPATH=$T/root/usr/share/man man -w "$page")" = "$M/$page.1" ] ||
		fail "man -w $page does not find the installed page"
done
for cmd in xpu-record xpu-report xpu-archive; do
	grep -q '^SYNOPSIS$' "$T/$cmd.txt" || fail "$cmd.1 has no SYNOPSIS"
	"$XPU_BIN/$cmd" --help >"$T/$cmd.help" 2>&1 || fail "$cmd --help exited $?"
	for opt in $(sed '/^examples:$/,$d' "$T/$cmd.help" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -q -- "$opt" "$T/$cmd.txt" || fail "$cmd.1 does not document $opt (listed by --help)"
	done
	ex=$(sed -n '/^examples:$/,$p' "$T/$cmd.help" | tail -n +2)
	[ "$(echo "$ex" | grep -c "^  .*$cmd")" -eq 3 ] ||
		fail "$cmd --help does not end with three examples of $cmd: $ex"
done
exit 0

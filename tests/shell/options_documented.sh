#!/usr/bin/env bash
# Each command's --help, generated from its option table (common/
# opt_table.h), names exactly the options its page in Documentation/
# documents (tests/shell/lib/doc_options.py: definition terms and table
# rows): none undocumented, none documented that the command lacks. Then
# the check is shown to catch both: a page with one definition taken out,
# and one with a made-up option added.
. "$(dirname "$0")/lib/e2e.sh"
DOC=$XPU_TOP/Documentation
LIB=$XPU_TOP/tests/shell/lib/doc_options.py

# help_options CMD: -X and --NAME at the start of --help's option lines
help_options() {
	"$XPU_BIN/$1" --help 2>&1 | sed '/^examples:$/,$d' |
		grep -oE -- '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' |
		grep -oE -- '(^| )-[a-zA-Z]$|(^| )-[a-zA-Z],|--[a-z0-9-]+' | tr -d ' ,' | sort -u
}
# differ HELP_FILE PAGE: the options only one side has, as "help-only X" / "doc-only X"
differ() {
	python3 "$LIB" "$2" >"$T/doc" || fail "doc_options.py $2 failed"
	comm -23 "$1" "$T/doc" | sed 's/^/help-only /'
	comm -13 "$1" "$T/doc" | sed 's/^/doc-only /'
}
for cmd in xpu-record xpu-report xpu-archive; do
	[ -x "$XPU_BIN/$cmd" ] || fail "$XPU_BIN/$cmd not built: run make"
	help_options "$cmd" >"$T/$cmd.help"
	[ "$(wc -l <"$T/$cmd.help")" -ge 6 ] || fail "$cmd --help lists $(wc -l <"$T/$cmd.help") options"
	d=$(differ "$T/$cmd.help" "$DOC/$cmd.md")
	[ -z "$d" ] || fail "$cmd: --help and Documentation/$cmd.md differ: $(echo $d)"
	echo "ok    $cmd: $(wc -l <"$T/$cmd.help") options in --help, all documented, nothing more"
done
# the check catches a missing definition and an extra one
awk 'BEGIN { gone = 0 } /^`--no-kernel`$/ && !gone { gone = 1; getline; next } { print }' \
	"$DOC/xpu-report.md" >"$T/missing.md"
differ "$T/xpu-report.help" "$T/missing.md" | grep -qx 'help-only --no-kernel' ||
	fail "a page without --no-kernel's definition was not caught"
{ cat "$DOC/xpu-report.md"; printf '\n`--no-such-option`\n: Made up.\n'; } >"$T/extra.md"
differ "$T/xpu-report.help" "$T/extra.md" | grep -qx 'doc-only --no-such-option' ||
	fail "a page documenting --no-such-option was not caught"
echo "ok    a missing and a made-up definition are both caught"

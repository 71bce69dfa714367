#!/usr/bin/env bash
# The XPU_* environment knobs, the table of them (common/knobs.c) and their
# page (Documentation/environment.md) agree:
# 1. every XPU_* name the C sources outside tests/ hold as a whole string
#    ("XPU_NAME": what getenv is given, directly or through a macro such as
#    cupti/channel/wire.h's) is a row of the table;
# 2. outside cupti/ (the CUDA library links no knobs.o) no getenv is given
#    an XPU_* name, directly or through a macro, but by the table, besides
#    inject.c's pass-on of the library's knobs to an attach, which copies
#    the environment as it is then;
# 3. the page's table is the one tests/tools/knobs_doc generates from the
#    rows (`make env-doc` rewrites it), so every row is on the page with its
#    type, default, range, programs and help;
# 4. the page names every row and no XPU_* variable that is no row.
# Then each check is shown to catch what it is for, on planted copies.
. "$(dirname "$0")/lib/e2e.sh"
DOC=$XPU_TOP/Documentation/environment.md
GEN=$XPU_BUILD/tests/tools/knobs_doc
[ -x "$GEN" ] || fail "$GEN not built: run make tests-build"
cd "$XPU_TOP"
git rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout: the sources are listed with git"

"$GEN" --names | sort >"$T/rows"
[ "$(wc -l <"$T/rows")" -ge 20 ] || fail "knobs_doc --names gave $(wc -l <"$T/rows") rows"

# not_rows FILE: the names of FILE (one a line) that are no row
not_rows() { sort -u "$1" | comm -23 - "$T/rows"; }

# 1. names in the sources (knobs.c's rows aside)
src_names() {	# [extra file]: the "XPU_NAME" strings of the C sources outside tests/
	{ git grep -ho '"XPU_[A-Z0-9_]*"' -- '*.c' '*.h' ':!tests' ':!common/knobs.c'
	  [ $# -eq 0 ] || cat "$1"; } |
		grep -oE '"XPU_[A-Z0-9_]+"' | tr -d '"' | sort -u
}
src_names >"$T/src"
[ "$(wc -l <"$T/src")" -ge 10 ] || fail "only $(wc -l <"$T/src") XPU_* names found in the sources"
d=$(not_rows "$T/src")
[ -z "$d" ] || fail "read in the sources but no row of common/knobs.c: $(echo $d)"
echo "ok    $(wc -l <"$T/src") XPU_* names in the sources besides the table, each a row"

# 2. getenv of an XPU_* name, or of a macro standing for one
git grep -hE '^#define [A-Z0-9_]+[[:space:]]+"XPU_' -- '*.h' ':!tests' |
	awk '{ print $2 }' | sort -u >"$T/macros"
[ -s "$T/macros" ] || fail "no #define of an XPU_* name found (cupti/channel/wire.h has several)"
raw_getenv() {	# [extra file]
	local hit m
	{ git grep -nE 'getenv\(("XPU_|XPU_)' -- '*.c' ':!tests' ':!cupti' ':!common/knobs.c'
	  [ $# -eq 0 ] || grep -nHE 'getenv\(("XPU_|XPU_)' "$1"; } |
	while IFS= read -r hit; do
		m=$(echo "$hit" | grep -oE 'getenv\(XPU_[A-Z0-9_]+\)' | head -n 1 | sed 's/^getenv(//; s/)$//')
		if [ -n "$m" ] && ! grep -qx "$m" "$T/macros"; then
			continue	# a macro of another name (NVTX_INJECTION64_PATH)
		fi
		case $hit in	# the pass-on to an attach (inject__config says why)
		record/gpu/inject.c:*'getenv(XPU_CUPTI_MARKER_ENV)'*) continue ;;
		esac
		echo "$hit"
	done
}
d=$(raw_getenv)
[ -z "$d" ] || fail "an XPU_* knob read with getenv, not through common/knobs.h: $d"
echo "ok    outside cupti/, XPU_* knobs are read through common/knobs.h"

# 3. the page's table is the generated one
page_table() {	# PAGE: the lines between the markers
	awk '/^<!-- KNOBS_TABLE end/ { p = 0 } p { print } /^<!-- KNOBS_TABLE begin/ { p = 1 }' "$1"
}
"$GEN" >"$T/table"
page_table "$DOC" >"$T/page_table"
[ -s "$T/page_table" ] || fail "$DOC has no table between its KNOBS_TABLE lines"
cmp -s "$T/table" "$T/page_table" || fail "$DOC's table is not the rows' (make env-doc" \
	"rewrites it): $(diff "$T/table" "$T/page_table" | head -n 5)"
echo "ok    the page's table is generated from the $(wc -l <"$T/rows") rows"

# 4. names on the page
page_names() { grep -oE 'XPU_[A-Z0-9_]+' "$1" | sort -u; }
d=$(not_rows <(page_names "$DOC"))
[ -z "$d" ] || fail "$DOC names variables that are no row: $(echo $d)"
d=$(page_names "$DOC" | comm -13 - "$T/rows")
[ -z "$d" ] || fail "rows not on $DOC: $(echo $d)"
echo "ok    the page names every row and nothing else"

# The checks catch what they are for.
printf '%s\n' 'x = getenv("XPU_MADE_UP");' 'y = getenv(XPU_CUPTI_APIS_ENV);' \
	'z = getenv(XPU_NVTX_INJECTION_ENV);' >"$T/planted.c"
[ "$(not_rows <(src_names "$T/planted.c"))" = XPU_MADE_UP ] ||
	fail "a source reading XPU_MADE_UP was not caught"
[ "$(raw_getenv "$T/planted.c" | wc -l)" -eq 2 ] ||
	fail "getenv of XPU_MADE_UP and XPU_CUPTI_APIS_ENV not caught, or NVTX's taken for ours"
grep -v '^| `XPU_STACK_DELTA`' "$DOC" >"$T/missing.md"
page_table "$T/missing.md" | cmp -s "$T/table" - && fail "a page without XPU_STACK_DELTA's row was not caught"
page_names "$T/missing.md" | comm -13 - "$T/rows" | grep -qx XPU_STACK_DELTA ||
	fail "a page not naming XPU_STACK_DELTA was not caught"
sed 's/^| `XPU_NO_PROGRESS` | bool | 0 /| `XPU_NO_PROGRESS` | bool | 1 /' "$DOC" >"$T/wrong.md"
cmp -s "$DOC" "$T/wrong.md" && fail "the planted wrong default changed nothing"
page_table "$T/wrong.md" | cmp -s "$T/table" - && fail "a page with a wrong default was not caught"
{ cat "$DOC"; echo 'Also `XPU_NO_SUCH_KNOB=1`.'; } >"$T/extra.md"
[ "$(not_rows <(page_names "$T/extra.md"))" = XPU_NO_SUCH_KNOB ] ||
	fail "a page naming XPU_NO_SUCH_KNOB was not caught"
echo "ok    a made-up knob in the sources or on the page, a missing row and a wrong default are caught"

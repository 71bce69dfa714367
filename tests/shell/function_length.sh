#!/usr/bin/env bash
# No function of the tree is over MAX (150) lines: a function that long does
# several things over one set of locals, and reads better as its steps, each
# a function named for what it does. Scanned: every tracked .c file outside
# tests/ (XPU_TOP: the tree to check, default this one); a function is a
# body that opens with "{" alone at column 0 and closes with "}" alone at
# column 0 (the kernel style the tree is written in), its length the lines
# from that "{" to that "}", both counted; its name the identifier before
# the first "(" of the last line at column 0 above the "{" (its signature;
# __attribute__((...)) skipped, BPF_PROG(name, ...) and the like: name).
# Each function over MAX is named in one FAIL line.
#
# ALLOW lists the functions that may be longer, each with its reason: an
# opcode switch, one short case per opcode over one state, reads as a table
# of the opcodes, and split it would only pass that state around. An entry
# whose function is gone or no longer over MAX fails too, so that the list
# stays the list of what is long today.
#
# First the check is shown to catch what it is there for, over a generated
# tree: a function of MAX + 1 lines is named, one of MAX lines is not, nor
# one in tests/, nor one in an untracked file, nor an allowed one; then the
# tree itself is checked.
set -u
top=$(cd "${XPU_TOP:-$(dirname "$0")/../..}" && pwd)
MAX=150

# file                function   why it may be longer than MAX
ALLOW='
common/unwind_cfi.c   cfi__eval  the DWARF expression interpreter (after libdwfl'"'"'s expr_eval()): one switch, a case of a few lines per DW_OP, over one operand stack whose PUSH and POP return from it on overflow and underflow
'

# lengths DIR: "LINES FILE FUNCTION" for each function of DIR's tracked .c
# files outside tests/
lengths() {
	(cd "$1" && git ls-files -z -- '*.c' ':!:tests/' | xargs -0 -r awk '
		FNR == 1 { open = 0; sig = "" }
		/^[A-Za-z_]/ && !open { sig = $0 }
		$0 == "{" && !open {
			open = FNR
			s = sig
			gsub(/__attribute__[ \t]*\(\([^)]*\)\)/, "", s)
			name = "?"
			if (match(s, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/))
				name = substr(s, RSTART, RLENGTH)
			sub(/[ \t]*\($/, "", name)
			# bpf/: BPF_PROG(name, ...) and the like name it first
			if (name ~ /^BPF_/ && match(s, /\([ \t]*[A-Za-z_][A-Za-z0-9_]*/))
				name = substr(s, RSTART + 1, RLENGTH - 1)
			sub(/^[ \t]*/, "", name)
		}
		$0 == "}" && open { print FNR - open + 1, FILENAME, name; open = 0 }')
}

# check DIR ALLOW STALE: a FAIL line for each function of DIR over MAX not
# in ALLOW ("file function reason" lines) and, STALE=1, for each entry of
# ALLOW not over MAX in DIR; returns 1 when it printed one
check() {
	lengths "$1" | awk -v max=$MAX -v allow="$2" -v stale="$3" '
		BEGIN {
			n = split(allow, rows, "\n")
			for (i = 1; i <= n; i++)
				if (split(rows[i], f, " ") >= 3)
					ok[f[1] " " f[2]] = 1
				else if (rows[i] ~ /[^ \t]/)
					bad[rows[i]] = 1
		}
		$1 > max {
			k = $2 " " $3
			if (k in ok)
				seen[k] = 1
			else
				print "FAIL: " $2 ": " $3 "() is " $1 " lines (at most " max \
					"; split it into its steps)"
		}
		END {
			for (r in bad)
				print "FAIL: allow-list entry without its reason: " r
			if (stale)
				for (k in ok)
					if (!(k in seen))
						print "FAIL: allow-list entry " k \
							"() is not over " max " lines: take it out"
		}' | sort | awk '{ print } END { exit NR > 0 }'
}

fail() { echo "FAIL: $*"; exit 1; }

# body NAME LINES: a function NAME whose body is LINES lines, braces counted
body() {
	printf 'static int\n%s(int x)\n{\n' "$1"
	for ((i = 0; i < $2 - 2; i++)); do
		echo '	x++;'
	done
	printf '}\n\n'
}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/tree/src" "$T/tree/tests" "$T/tree/common"
{ body at_max $MAX; body over_max $((MAX + 1)); } >"$T/tree/src/long.c"
body in_tests $((MAX + 50)) >"$T/tree/tests/t.c"
{ body cfi__eval $((MAX + 30)); body cfi__other $((MAX + 1)); } >"$T/tree/common/unwind_cfi.c"
git -C "$T/tree" init -q && git -C "$T/tree" add -A
body untracked $((MAX + 1)) >"$T/tree/src/new.c"
out=$(check "$T/tree" "$ALLOW" 0) &&
	fail "planted: the check passed over functions of $((MAX + 1)) lines: $out"
want="FAIL: common/unwind_cfi.c: cfi__other() is $((MAX + 1)) lines (at most $MAX; split it into its steps)
FAIL: src/long.c: over_max() is $((MAX + 1)) lines (at most $MAX; split it into its steps)"
[ "$out" = "$want" ] || fail "planted: expected
$want
got
$out"
echo "ok: planted functions of $((MAX + 1)) lines named, of $MAX lines, in tests/, untracked and allowed not"

out=$(check "$T/tree" "common/unwind_cfi.c cfi__eval" 0) &&
	fail "planted: an allow-list entry without its reason passed: $out"
grep -qF "FAIL: allow-list entry without its reason: common/unwind_cfi.c cfi__eval" <<<"$out" ||
	fail "planted: no line for the allow-list entry without its reason: $out"
out=$(check "$T/tree" "src/long.c at_max  planted" 1) &&
	fail "planted: a stale allow-list entry passed: $out"
grep -qF "FAIL: allow-list entry src/long.c at_max() is not over $MAX lines" <<<"$out" ||
	fail "planted: no line for the stale allow-list entry: $out"
echo "ok: an allow-list entry without a reason, and one not over $MAX lines, fail"

check "$top" "$ALLOW" 1 || exit 1
echo "ok: no function of the tree over $MAX lines but the allowed ($(lengths "$top" | wc -l) functions)"

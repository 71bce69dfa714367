#!/usr/bin/env bash
# tests/shell/layering.sh catches what it is there for: run over a copy of the
# tree (XPU_TOP) with one planted fault at a time, a wrong-way include, an
# include between two folders of the same rank, one into report/ from below,
# wrong-way includes in cupti/, a folder with no row in its table and an
# include cycle, it fails and names the fault; over the copy as it is, it
# passes.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

copy() {	# a fresh copy of the tracked sources in $T/tree, as a git repo
	rm -rf "$T/tree" && mkdir -p "$T/tree"
	(cd "$top" && git ls-files -z 'common/*.[ch]' 'format/*.[ch]' 'cupti/*.[ch]' \
		'record/*.[ch]' 'record/**/*.[ch]' 'bpf/*.[ch]' 'report/*.[ch]' 'report/**/*.[ch]' 'archive/*.[ch]' |
		xargs -0 cp --parents -t "$T/tree")
	git -C "$T/tree" init -q && git -C "$T/tree" add -A
}
check() {	# name, expected line (a fixed string) or "" for a pass
	local out rc
	out=$(XPU_TOP=$T/tree bash "$top/tests/shell/layering.sh" 2>&1)
	rc=$?
	if [ -z "$2" ]; then
		[ $rc -eq 0 ] || fail "$1: the checker failed on a clean copy: $out"
	else
		[ $rc -ne 0 ] || fail "$1: the checker passed: $out"
		grep -qF -- "$2" <<<"$out" || fail "$1: no \"$2\" in: $out"
	fi
	echo "ok: $1"
}
plant() {	# file, line appended to it (and the new file added to git)
	echo "$2" >> "$T/tree/$1"
	git -C "$T/tree" add -A
}

copy
check "clean copy" ""

copy
plant report/profile/profile.c '#include "report/output/output.h"'
check "wrong-way include" \
	'FAIL: report/profile/profile.c includes "report/output/output.h"'

copy
plant report/machine/machine.c '#include "report/finders/find_chain.h"'
check "include between folders of one rank" \
	'FAIL: report/machine/machine.c includes "report/finders/find_chain.h"'

copy
plant format/reader.c '#include "report/session/session.h"'
check "a lower layer includes report/" \
	'FAIL: format/reader.c includes "report/session/session.h"'

copy
plant record/files/buildid.c '#include "record/kernel/bpf.h"'
check "a wrong-way include in record/" \
	'FAIL: record/files/buildid.c includes "record/kernel/bpf.h"'

copy
plant record/target/synth.c '#include "record/gpu/channel.h"'
check "include between record/ folders of one rank" \
	'FAIL: record/target/synth.c includes "record/gpu/channel.h"'

copy
mkdir -p "$T/tree/report/newroom"
plant report/newroom/new.c '#include "report/profile/profile.h"'
check "a folder with no row" \
	'FAIL: report/newroom/new.c: its folder has no row'

copy
plant report/files/path.h '#include "report/files/archive.h"'
check "include cycle" \
	'FAIL: include cycle: report/files/archive -> report/files/path -> report/files/archive'

copy
plant report/files/path.c '#include "out_file.h"'
plant report/files/out_file.h '#include "report/files/archive.h"'
check "include cycle over three units, a same-folder include among them" \
	'FAIL: include cycle: report/files/archive -> report/files/path -> report/files/out_file -> report/files/archive'

copy
plant cupti/channel/client.c '#include "cupti/walk/walk_probe.h"'
check "a wrong-way include in cupti/" \
	'FAIL: cupti/channel/client.c includes "cupti/walk/walk_probe.h"'

copy
plant cupti/nvtx/nvtx.c '#include "cupti/pcsamp/pcsamp.h"'
check "include between cupti/ folders of one rank" \
	'FAIL: cupti/nvtx/nvtx.c includes "cupti/pcsamp/pcsamp.h"'

copy
plant cupti/walk/walk_probe.c '#include "record/gpu/channel.h"'
check "the library includes the recorder" \
	'FAIL: cupti/walk/walk_probe.c includes "record/gpu/channel.h"'

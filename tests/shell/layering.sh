#!/usr/bin/env bash
# The folders are the layers, and includes only go down:
#   common  <  format  <  cupti, record  (record also: bpf/, cupti/wire.h;
#   cupti: of common/, only the launch walk's unwind_{frame,simple,table}.h)
#   report/{files,phase,profile,symbols,finders,machine,unwind,session,annotate}
#     <  report/gpu  <  report/output  <  report/tui  <  report/*.c
#   archive (xpu-archive) sits above those first report/ folders.
# Nothing below report/ includes it, and no file in report/ includes one from
# a layer above its own. Prints every violation.
set -u
cd "${XPU_TOP:-$(dirname "$0")/../..}"
bad=0
violation() { echo "FAIL: $1 includes \"$2\" ($3)"; bad=1; }

# allowed FOLDER_OF_FILE: the include prefixes a file there may use.
rank() {	# report layer rank of a path
	case $1 in
	report/files/*|report/phase/*|report/profile/*|report/symbols/*|report/finders/*|\
	report/machine/*|report/unwind/*|report/session/*|report/annotate/*) echo 0;;
	report/gpu/*) echo 1;; report/output/*) echo 2;;
	report/tui/*) echo 3;; report/*) echo 4;; *) echo 9;;
	esac
}

while IFS= read -r f; do
	while IFS= read -r inc; do
		case $inc in */*) ;; *) continue;; esac	# same-folder includes
		case $f in
		common/*)
			[[ $inc == common/* ]] || violation "$f" "$inc" "common/ includes only common/";;
		format/*)
			[[ $inc == format/* || $inc == common/* ]] ||
				violation "$f" "$inc" "format/ stands on common/ only";;
		cupti/*)
			# and the launch walk's common/ files, libc only (cupti_lib_deps.sh)
			[[ $inc == cupti/* || $inc == format/* || $inc == common/unwind_frame.h ||
			   $inc == common/unwind_simple.h || $inc == common/unwind_simple_walk.h ||
			   $inc == common/unwind_table.h ]] ||
				violation "$f" "$inc" "the CUPTI library uses only cupti/, format/ and the launch walk's common/unwind_{frame,simple,table}.h";;
		record/*|bpf/*)
			[[ $inc == report/* ]] && violation "$f" "$inc" "the recorder never uses the report";;
		report/*)
			if [[ $inc == report/* ]] && [ "$(rank "$inc")" -gt "$(rank "$f")" ]; then
				violation "$f" "$inc" "report layers include only their own or lower ones"
			fi
			[[ $inc == archive/* || $inc == record/* ]] &&
				violation "$f" "$inc" "the report does not use the commands above it";;
		esac
	done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
done < <(git ls-files 'common/*.[ch]' 'format/*.[ch]' 'cupti/*.[ch]' 'record/*.[ch]' \
	'bpf/*.[ch]' 'report/*.[ch]' 'report/**/*.[ch]')

# the issue's own check, spelled out
if grep -rn 'include "report/' cupti record format common; then
	echo "FAIL: a lower layer includes report/"
	bad=1
fi
[ $bad -eq 0 ] && echo "ok: every include goes down a layer"
exit $bad

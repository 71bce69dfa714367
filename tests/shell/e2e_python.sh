#!/usr/bin/env bash
# End to end, the interpreter walk (--python-frames=walk, the default): record
# tests/workloads/py_demo.py (recursion, a thread, a callback run by sorted()'s
# C code) under each CPython 3.10-3.13 the system ships in /usr/bin (and
# those pyenv built under $PYENV_ROOT or ~/.pyenv, when present), and check
# with tests/tools/py_chain_check.py that at least 99% of the samples taken
# in its functions show the exact Python chain, module to hot function, with
# line numbers (and without under --no-py-lines), with C frames between
# pyd_sort_with_c and the key callback sorted() runs, the python feature bit
# and PY_CODE records; then that --python-frames=off leaves the native
# stacks (with their _PyEval_EvalFrameDefault frames) and writes no PY_ record.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf

DEMO=$XPU_TOP/tests/workloads/py_demo.py
CHECK=$XPU_TOP/tests/tools/py_chain_check.py
command -v python3 >/dev/null || skip "no python3 to check the chains with"

pythons=()
for p in /usr/bin/python3.1[0-3] "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[0-3].*/bin/python3.1[0-3]; do
	[ -x "$p" ] && [ ! -L "$p" ] && pythons+=("$p")
done
[ ${#pythons[@]} -gt 0 ] || skip "no CPython 3.10-3.13 in /usr/bin"

# check_chains NAME [--no-lines]: the chain check of $T/NAME.folded.
check_chains() {
	local name=$1 out total ok sorts cframes startup; shift
	out=$(python3 "$CHECK" "$@" <"$T/$name.folded")
	read -r _ total _ ok _ sorts _ cframes _ startup <<<"$(head -n 1 <<<"$out")"
	note "$name: $ok of $total samples in the workload's functions have the exact chain" \
	     "($sorts in the key callback, $cframes of them with C frames before it;" \
	     "$startup of the interpreter's start without Python frames, left out)"
	[ "$total" -ge 300 ] || skip "$name: only $total samples in Python code: machine too busy"
	# the interpreter's start before the recorder walks its frames: about
	# a millisecond since the exec wakes the reader (17 of 2994 samples on
	# the development VM before; a launcher linked to libpython: about 1 ms more)
	in_range "$(ratio "$startup" "$total")" 0 0.05 ||
		fail "$name: $startup samples of the interpreter's start without Python frames (of $total)"
	in_range "$(ratio "$ok" "$total")" 0.99 1 ||
		fail "$name: $ok of $total samples have the exact Python chain: $(tail -n +2 <<<"$out")"
	[ "$sorts" -ge 30 ] || fail "$name: only $sorts samples in the sorted() key callback"
	# all but a rare one: a sample taken inside the vDSO (clock_gettime) now
	# and then does not unwind past it (1 in ~1000, under load)
	in_range "$(ratio "$cframes" "$sorts")" 0.995 1 ||
		fail "$name: $cframes of $sorts key-callback samples have C frames between it and pyd_sort_with_c"
}

for py in "${pythons[@]}"; do
	v=$(basename "$py")
	case $py in /usr/bin/*) ;; *) v=$v-$(basename "$(dirname "$(dirname "$py")")");; esac
	"$RECORD" -o "$T/$v.data" -F 999 --no-gpu -- "$py" "$DEMO" 3 >"$T/$v.out" 2>"$T/$v.err" ||
		{ cat "$T/$v.err" >&2; fail "$v: xpu-record failed"; }
	grep -q "^py_demo: cpu" "$T/$v.out" || fail "$v: the workload did not finish: $(cat "$T/$v.out")"
	report "$T/$v.folded" -i "$T/$v.data" --folded
	folded_check_syntax <"$T/$v.folded" || fail "$v: malformed folded output"
	check_chains "$v"
	# the eval loop's frames were replaced where Python frames are
	n=$(folded_sum 'py::pyd_.*_PyEval_EvalFrameDefault|_PyEval_EvalFrameDefault[^;]*;py::pyd_' <"$T/$v.folded")
	[ "$n" -eq 0 ] || fail "$v: $n samples keep _PyEval_EvalFrameDefault beside the workload's Python frames"
	# function grouping: no line numbers, the same chains
	report "$T/$v-nolines.folded" -i "$T/$v.data" --folded --no-py-lines
	check_chains "$v-nolines" --no-lines
	report "$T/$v.header" -i "$T/$v.data" --header
	grep -q '^# features:.* python' "$T/$v.header" || fail "$v: the python feature bit is not set"
	grep -q 'PY_CODE' "$T/$v.header" || fail "$v: --header counts no PY_CODE record"
	# each PY_STACK right before the record it belongs to (same tid and
	# time): a side-band drain during the sample's pruning once wrote
	# MMAPs between them (2-4 a run here), and the record lost its frames
	report "$T/$v.dump" -i "$T/$v.data" --dump
	read -r stacks paired < <(awk '
		function kv(s, k) { return match(s, " " k "=[0-9]+") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
		{ tm = kv($0, "time"); if (tm == "") tm = kv($0, "start"); tid = kv($0, "tid") }
		pend { ok += tm == pt && tid == ptid; pend = 0 }
		$1 == "PY_STACK" { n++; pend = 1; pt = tm; ptid = tid }
		END { print n + 0, ok + 0 }' "$T/$v.dump")
	[ "$stacks" -gt 100 ] && [ "$paired" -eq "$stacks" ] ||
		fail "$v: $paired of $stacks PY_STACK records right before their record"
done

# --python-frames=off: no Python frames, no PY records.
py=${pythons[0]}
"$RECORD" -o "$T/off.data" -F 499 --no-gpu --python-frames=off -- "$py" "$DEMO" 1 >/dev/null 2>"$T/off.err" ||
	fail "--python-frames=off: xpu-record failed: $(cat "$T/off.err")"
report "$T/off.folded" -i "$T/off.data" --folded
[ "$(folded_sum 'py::' <"$T/off.folded")" -eq 0 ] || fail "--python-frames=off still has py:: frames"
[ "$(folded_sum '_PyEval_EvalFrameDefault' <"$T/off.folded")" -gt 0 ] ||
	fail "--python-frames=off: no _PyEval_EvalFrameDefault frame in the native stacks"
report "$T/off.dump" -i "$T/off.data" --dump
! grep -q '^PY_' "$T/off.dump" || fail "--python-frames=off wrote PY_ records"
grep -q 'python_frames=off' "$T/off.dump" || fail "META python_frames is not off"
exit 0

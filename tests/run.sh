#!/usr/bin/env bash
# Runs the whole suite: unit programs, fuzz corpus replays (plain and under
# ASan+UBSan), shell end-to-end tests. A shell test exits 0 (pass), 2 (skip,
# says why) or anything else (fail). Prints one line per test and ends with
# "N passed, N failed, N skipped".
# TESTS=pattern runs only matching tests.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
export XPU_TOP=$PWD XPU_BUILD=$PWD/$O XPU_BIN=${XPU_BIN:-$PWD}
pass=0 fail=0 skip=0 failed=()
log_dir=$O/tests/logs
mkdir -p "$log_dir"

run() {	# name, command...
	local name=$1; shift
	[[ -n "${TESTS:-}" && "$name" != *${TESTS}* ]] && return
	local log=$log_dir/$(echo "$name" | tr '/ ' '__').log start=$SECONDS rc
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); printf 'ok    %-50s %3ss\n' "$name" $((SECONDS - start))
	elif [ $rc -eq 2 ] && [[ "$name" == shell/* ]]; then
		skip=$((skip + 1)); printf 'skip  %-50s (%s)\n' "$name" "$(tail -n 1 "$log")"
	else
		fail=$((fail + 1)); failed+=("$name")
		printf 'FAIL  %-50s (exit %d, log %s)\n' "$name" $rc "$log"
		tail -n 20 "$log" | sed 's/^/      | /'
	fi
}

for t in "$O"/tests/unit/test_*; do
	[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
for t in "$O"/tests/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	run "fuzz/$name" "$t" "tests/fuzz/corpus/${name#fuzz_}"
done
# The same replays built with ASan+UBSan (tests/Makefile.tests). Leaks are
# left to the libFuzzer runs: LeakSanitizer needs ptrace, which CI may lack.
for t in "$O"/asan/tests/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	run "fuzz-asan/$name" env ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1 "$t" "tests/fuzz/corpus/${name#fuzz_}"
done
for t in tests/shell/*.sh; do
	[ -f "$t" ] && run "shell/$(basename "$t" .sh)" bash "$t"
done

echo
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Kernel frames are named the same way in every recording: three identical
# recordings of a program that spends its time in the kernel (dd copying
# /dev/zero to /dev/null: read() clears pages) at -F 99, the case where one
# run once came out all [unknown]_[k]. Each must hold KSYM records, name the
# kernel's copy/clear functions, have at most 1% of its kernel-frame weight
# unnamed, and print no "kernel addresses stayed unnamed" warning.
. "$(dirname "$0")/lib/e2e.sh"
need_tools
need_bpf
grep -q '^[0-9a-f]*[1-9a-f][0-9a-f]* [Tt] ' /proc/kallsyms ||
	skip "/proc/kallsyms shows no addresses here (kernel.kptr_restrict): nothing to name kernel frames with"
for i in 1 2 3; do
	"$RECORD" -q -o "$T/run$i.data" -F 99 -- dd if=/dev/zero of=/dev/null bs=1M count=30000 \
		>"$T/run$i.out" 2>"$T/run$i.err" || { cat "$T/run$i.err" >&2; fail "xpu-record dd failed"; }
	report "$T/f$i" -i "$T/run$i.data" --folded
	grep -q 'kernel addresses stayed unnamed' "$T/f$i.err" && fail "run $i: $(cat "$T/f$i.err")"
	ksyms=$("$REPORT" -i "$T/run$i.data" --header 2>/dev/null | awk '$2 == "KSYM" { print $3 }')
	[ "${ksyms:-0}" -gt 0 ] || fail "run $i: no KSYM records in the trace"
	kall=$(grep -o '[^;]*_\[k\]' "$T/f$i" | wc -l)
	kunk=$(grep -o '\[unknown\]_\[k\]' "$T/f$i" | wc -l)
	ksum=$(folded_sum '_\[k\]' <"$T/f$i")
	kunk_w=$(folded_sum '\[unknown\]_\[k\]' <"$T/f$i")
	note "run $i: $ksyms KSYM records, $kall kernel frames in $(wc -l <"$T/f$i") stacks, $kunk [unknown]_[k]; weight $kunk_w of $ksum"
	[ "$ksum" -gt 0 ] || fail "run $i: no kernel frames at all in dd's profile"
	[ $((kunk_w * 100)) -le "$ksum" ] || fail "run $i: $kunk_w of $ksum kernel-frame samples unnamed"
	grep -Eq '(clear|copy|zero|read_iter|ksys_read)[a-z_]*_\[k\]' "$T/f$i" ||
		fail "run $i: dd's read path is not named: $(sort -k2 -nr "$T/f$i" | head -2)"
done
exit 0

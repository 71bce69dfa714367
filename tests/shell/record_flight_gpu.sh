#!/usr/bin/env bash
# GPU records reach flight-recorder windows and rotated files in time
# (Documentation/xpu-record.md "Bounded capture"). The fake CUPTI library
# holds its activity records as CUPTI does while the GPU is always busy
# (XPU_FAKE_CUPTI_HOLD=1: a buffer is handed over only once full; 4 MB
# buffers, unless xpu-record's bounded capture told the library a flush
# period, and the real library's sizing, cupti/activity/bufsize.c, makes them fill
# within it). fake_cuda_app launches a 0.9 ms kernel every ~1 ms for 2 s,
# after 1.5 s of sleep under sh.
#  - a SIGUSR2 before the app started: the window says that no CUDA process
#    had connected by its end (--header);
#  - a SIGUSR2 1 s into the loop: the window's kernels cover its time in
#    the loop with no hole, up to the lag bound (0.6 s) before its end, under
#    the launch path; --header's gpu lag line says how far, within it;
#  - --switch-output=1s over the same loop: every file's kernels lie in its
#    window, and those of the loop's middle files cover it up to the bound.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
[ -x "$APP" ] && [ -f "$LIB" ] || skip "fake CUDA pieces not built ($APP, $LIB): make tests-build"
need_tools
need_bpf
LAG_NS=600000000	# 3 flush periods of 200 ms: what a window waits for

# kernels FILE: "start" of every GPU_KERNEL, sorted
kernels() { "$REPORT" -i "$1" --dump 2>/dev/null |
	awk '$1=="GPU_KERNEL"{for (i = 2; i <= NF; i++) if ($i ~ /^start=/) { sub("start=", "", $i); print $i }}' |
	sort -n; }
meta() { "$REPORT" -i "$1" --header 2>/dev/null | sed -nE "s/^#   $2: (.*)/\\1/p"; }
# covered FILE FROM TO: its kernels run from FROM to TO with no hole over 0.3 s (a
# loaded CI machine may leave the app off CPU that long)
covered() {
	kernels "$1" | awk -v a="$2" -v b="$3" '
		$1 >= a && $1 < b { if (!n++) first = $1; else if ($1 - last > 3e8) hole = $1 - last; last = $1 }
		END { if (!n) { print "no kernel"; exit 1 }
		      if (first - a > 3e8) { printf "first kernel %.3f s after the start\n", (first - a) / 1e9; exit 1 }
		      if (b - last > 3e8) { printf "last kernel %.3f s before the end\n", (b - last) / 1e9; exit 1 }
		      if (hole) { printf "a %.3f s hole\n", hole / 1e9; exit 1 } }'
}

export XPU_FAKE_CUPTI_HOLD=1 XPU_FAKE_KERNEL_NS=900000 FAKE_LAUNCH_GAP_US=1000
D=$T/fr && mkdir -p "$D"
"$RECORD" --flight-recorder=3 --cupti-lib "$LIB" -o "$D/g.data" -- \
	sh -c "sleep 1.5; exec '$APP' 2000 0.05" >"$T/rec.out" 2>"$T/rec.err" &
rec=$!
sleep 0.7; kill -USR2 $rec
sleep 1.8; kill -USR2 $rec
wait $rec || { cat "$T/rec.err" >&2; fail "xpu-record exited $?"; }
ls "$D" >"$T/files"
[ "$(wc -l <"$T/files")" -eq 3 ] || { cat "$T/rec.err" >&2; fail "$(wc -l <"$T/files") windows, want 3"; }
set -- $(cat "$T/files")
before=$D/$1 mid=$D/$2 last=$D/$3

report "$T/before.header" -i "$before" --header
grep -q '^#   gpu lag: none: no CUDA process had connected by the window.s end' "$T/before.header" ||
	{ grep -A3 '^# window' "$T/before.header" >&2; fail "the window before CUDA started does not say why it has no GPU records"; }

report "$T/mid.header" -i "$mid" --header
ws=$(meta "$mid" window.start) we=$(meta "$mid" window.end)
# the loop: from the first kernel of the whole recording on
first=$( (kernels "$before"; kernels "$mid"; kernels "$last") | sort -n | head -1)
[ -n "$first" ] || fail "no kernel in any window"
from=$(( first > ws ? first : ws ))
why=$(covered "$mid" "$from" $((we - LAG_NS))) ||
	{ cat "$T/rec.err" >&2; fail "the SIGUSR2 window's kernels do not cover [$from, end - 0.6 s): $why"; }
lag=$(sed -nE "s/^#   gpu lag: newest GPU record ([0-9.]+) s before the window's end, flush period 0\.200 s$/\1/p" "$T/mid.header")
[ -n "$lag" ] || { grep -A3 '^# window' "$T/mid.header" >&2; fail "no gpu lag line in the SIGUSR2 window"; }
in_range "$lag" 0 0.6 || fail "the SIGUSR2 window's GPU records lag its end by $lag s, over the 0.6 s bound"
report "$T/mid.folded" -i "$mid" --folded --gpu-only
[ "$(folded_sum ';main;app_step;app_launch;cudaLaunchKernel;\[GPU_Kernel\]fake_kernel\(int\)$' <"$T/mid.folded")" -gt 0 ] ||
	{ cat "$T/mid.folded" >&2; fail "the SIGUSR2 window's kernels are not under their launch path"; }
note "SIGUSR2 window: $(kernels "$mid" | wc -l) kernels, gpu lag $lag s"

# --switch-output=1s: each file's kernels in its window, the middle ones covered
R=$T/rot && mkdir -p "$R"
"$RECORD" --switch-output=1s --cupti-lib "$LIB" -o "$R/s.data" -- "$APP" 2500 0.05 \
	>"$T/rot.out" 2>"$T/rot.err" || { cat "$T/rot.err" >&2; fail "xpu-record --switch-output exited $?"; }
ls "$R" >"$T/rot.files"
n=$(wc -l <"$T/rot.files")
[ "$n" -ge 3 ] || fail "$n rotated files, want 3 or more"
i=0 all=0
for f in $(cat "$T/rot.files"); do
	i=$((i + 1))
	ws=$(meta "$R/$f" window.start) we=$(meta "$R/$f" window.end)
	k=$(kernels "$R/$f" | wc -l)
	all=$((all + k))
	out=$(kernels "$R/$f" | awk -v a="$ws" -v b="$we" '$1 < a || $1 >= b' | wc -l)
	[ "$out" -eq 0 ] || fail "$f: $out of its $k kernels lie outside its window"
	if [ $i -gt 1 ] && [ $i -lt "$n" ]; then
		why=$(covered "$R/$f" "$ws" $((we - LAG_NS))) || fail "$f: its kernels do not cover its window: $why"
	fi
	note "$f: $k kernels in its window"
done
[ "$all" -eq 2500 ] || fail "the rotated files hold $all kernels, the app launched 2500"
note "ok: windows and rotated files hold their GPU records up to the lag bound"

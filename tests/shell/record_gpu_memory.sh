#!/usr/bin/env bash
# xpu-record --gpu-memory with the fake CUPTI library (libfake_cupti/
# fake_memory.c): fake_cuda_app's "mem" mode cudaMallocs 1 MiB and 3 MiB,
# cudaMallocAsyncs 64 KiB (its pool created), frees the 1 MiB and the
# 64 KiB, trims the pool and asks for 100 GiB, which fails (2). The trace
# must hold each of them with its size and address (GPU_MEMORY,
# GPU_MEMPOOL), the device's memory at the start (GPU_MEM_STATE) and the
# failure (GPU_OOM, 100 GiB), each joined to a GPU_CORR of its call by
# correlation ID (the cbid of the call); the app's own output unchanged.
# Without --gpu-memory: no memory record and no memory call marked. Then
# --trigger oom with --flight-recorder: the window written holds the OOM;
# with --switch-output, the file switched holds it. Then -p: the attached
# library's GPU_MEM_STATE is flagged attached.
. "$(dirname "$0")/lib/e2e.sh"

APP=$XPU_BUILD/tests/workloads/fake_cuda_app
LIB=$XPU_BUILD/tests/workloads/libfake_cupti.so
DRV=$XPU_BUILD/tests/workloads/fake_cuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$LIB" ] && [ -f "$DRV" ] ||
	skip "fake CUDA pieces not built ($APP, $LIB, $DRV): make tests-build"
need_tools
need_bpf

# dump NAME FILE: the memory records and GPU_CORRs of FILE as "TYPE k=v ..."
dump() {
	"$REPORT" -i "$2" --dump 2>"$T/$1.dump.err" |
		grep -E '^GPU_(MEMORY|MEMPOOL|MEM_STATE|OOM|CORR) ' >"$T/$1.dump" ||
		true
}
# field FILE TYPE KEY [MATCH]: KEY's values of TYPE's records (that contain MATCH)
field() {
	grep -E "^$2 " "$1" | grep -e "${4:-}" | tr ' ' '\n' | sed -nE "s/^$3=//p"
}

"$RECORD" -v --gpu-memory --cupti-lib "$LIB" -o "$T/m.data" -- "$APP" 3 0.1 mem \
	>"$T/m.out" 2>"$T/m.err" || { cat "$T/m.err" >&2; fail "xpu-record exited $?"; }
grep -qx 'fake_cuda_app: cudaMalloc(107374182400) returned 2' "$T/m.out" ||
	{ cat "$T/m.out" >&2; fail "the app's own OOM line changed"; }
grep -q 'memory records: 5 allocations and releases, 2 pool events, 1 device states, 1 out-of-memory' \
	"$T/m.err" || { grep -i memory "$T/m.err" >&2; fail "-v: not the memory records' counts"; }
dump m "$T/m.data"
D=$T/m.dump
[ "$(grep -c '^GPU_MEMORY ' "$D")" -eq 5 ] || { cat "$D" >&2; fail "not 5 GPU_MEMORY records"; }
# the allocations, sizes and addresses as the fake device handed them out
[ "$(field "$D" GPU_MEMORY bytes 'op=1' | tr '\n' ' ')" = "1048576 3145728 65536 " ] ||
	fail "allocation sizes: $(field "$D" GPU_MEMORY bytes 'op=1' | tr '\n' ' ')"
[ "$(field "$D" GPU_MEMORY address 'op=1' | tr '\n' ' ')" = "0x7f0040000000 0x7f0040100000 0x7f0040400000 " ] ||
	fail "allocation addresses: $(field "$D" GPU_MEMORY address 'op=1' | tr '\n' ' ')"
# the releases: the 1 MiB and the 64 KiB (async, from the pool); the 3 MiB stays
[ "$(field "$D" GPU_MEMORY address 'op=2' | tr '\n' ' ')" = "0x7f0040000000 0x7f0040400000 " ] ||
	fail "releases: $(field "$D" GPU_MEMORY address 'op=2' | tr '\n' ' ')"
[ "$(field "$D" GPU_MEMORY flags 'pool=0x7f00a0000000' | tr '\n' ' ')" = "0x1 0x1 " ] ||
	fail "the async ones are not flagged async from the pool"
[ "$(field "$D" GPU_MEMPOOL op | tr '\n' ' ')" = "1 3 " ] || fail "pool: not created then trimmed"
# the device's memory at the start: 80 GiB, 512 MiB in use, not attached
[ "$(field "$D" GPU_MEM_STATE total)" = 85899345920 ] && [ "$(field "$D" GPU_MEM_STATE used_before)" = 536870912 ] &&
	[ "$(field "$D" GPU_MEM_STATE flags)" = 0x0 ] || fail "GPU_MEM_STATE: $(grep '^GPU_MEM_STATE' "$D")"
[ "$(field "$D" GPU_OOM bytes)" = 107374182400 ] && [ "$(field "$D" GPU_OOM ret)" = 2 ] &&
	[ "$(field "$D" GPU_OOM cbid)" = 20 ] && [ "$(field "$D" GPU_OOM source)" = 1 ] ||
	fail "GPU_OOM: $(grep '^GPU_OOM' "$D")"
# every memory record's correlation ID is a GPU_CORR's of its call (cbid:
# cudaMalloc 20, cudaFree 22, cudaMallocAsync 373, cudaFreeAsync 375,
# cudaMemPoolTrimTo 377)
n=0
while read -r type corr; do
	cbids=$(grep -E "^GPU_CORR .* corr=$corr " "$D" | tr ' ' '\n' | sed -nE 's/^cbid=//p')
	[ "$(echo "$cbids" | wc -w)" -eq 1 ] || fail "$type corr=$corr: $(echo $cbids | wc -w) GPU_CORRs"
	case "$cbids" in 20|22|373|375|377) ;; *) fail "$type corr=$corr: the stack of cbid $cbids" ;; esac
	n=$((n + 1))
done < <(grep -E '^GPU_(MEMORY|MEMPOOL|OOM) ' "$D" | sed -nE 's/^(GPU_[A-Z_]+) .* corr=([0-9]+).*/\1 \2/p')
[ $n -eq 8 ] || fail "$n memory records with a correlation ID, want 8"
"$REPORT" -i "$T/m.data" --header >"$T/m.header" 2>&1 || fail "--header failed"
grep -q 'finished cleanly: yes' "$T/m.header" || fail "no FINISH"
note "5 allocations and releases, 2 pool events, the device state and the OOM, each with its call's stack"

# without --gpu-memory: nothing of it, and the memory calls are not marked
"$RECORD" --cupti-lib "$LIB" -o "$T/n.data" -- "$APP" 3 0.1 mem >"$T/n.out" 2>"$T/n.err" ||
	{ cat "$T/n.err" >&2; fail "xpu-record (no --gpu-memory) exited $?"; }
dump n "$T/n.data"
! grep -qE '^GPU_(MEMORY|MEMPOOL|MEM_STATE|OOM) ' "$T/n.dump" || fail "memory records without --gpu-memory"
[ "$(grep -c '^GPU_CORR ' "$T/n.dump")" -eq 3 ] && ! grep -qE '^GPU_CORR .* cbid=(20|22|373|375|377) ' "$T/n.dump" ||
	fail "without --gpu-memory: memory calls marked ($(grep -c '^GPU_CORR ' "$T/n.dump") GPU_CORRs)"
note "without --gpu-memory: no memory record, only the 3 launches marked"

# --trigger oom: the flight recorder's window holds the failure
mkdir -p "$T/fl"
FAKE_LAUNCH_GAP_US=20000 "$RECORD" --gpu-memory --flight-recorder=3 --trigger oom --cupti-lib "$LIB" \
	-o "$T/fl/f.data" -- "$APP" 100 0.1 mem >"$T/f.out" 2>"$T/f.err" ||
	{ cat "$T/f.err" >&2; fail "xpu-record --trigger oom exited $?"; }
grep 'flight recorder: oom:' "$T/f.err" >"$T/fired" || { cat "$T/f.err" >&2; fail "--trigger oom did not fire"; }
[ "$(wc -l <"$T/fired")" -eq 1 ] || fail "oom fired $(wc -l <"$T/fired") times"
grep -q 'oom: pid [0-9]* asked for 107374182400 bytes (a CUDA call, correlation [0-9]*)' "$T/fired" ||
	fail "not the OOM: $(cat "$T/fired")"
f=$(sed -E 's/.* written to //' "$T/fired")
[ -f "$f" ] || fail "no window file $f"
dump fw "$f"
[ "$(field "$T/fw.dump" GPU_OOM bytes)" = 107374182400 ] || fail "$f: no GPU_OOM of 100 GiB"
corr=$(field "$T/fw.dump" GPU_OOM corr)
grep -qE "^GPU_CORR .* corr=$corr .*cbid=20 " "$T/fw.dump" || fail "$f: the OOM's GPU_CORR is not there"
# the live 3 MiB allocation before it is in the window too
field "$T/fw.dump" GPU_MEMORY bytes 'op=1' | grep -qx 3145728 || fail "$f: not the allocations before the OOM"
note "--trigger oom: $f holds the OOM, its stack and the allocations before it"

# a program that ends less than the trigger's second after its OOM: the
# last window is the trigger's, named for it
mkdir -p "$T/fe"
"$RECORD" --gpu-memory --flight-recorder=3 --trigger oom --cupti-lib "$LIB" \
	-o "$T/fe/f.data" -- "$APP" 2 0.01 mem >"$T/fe.out" 2>"$T/fe.err" ||
	{ cat "$T/fe.err" >&2; fail "xpu-record --trigger oom (short) exited $?"; }
grep -q 'flight recorder: oom: pid [0-9]* asked for 107374182400 bytes' "$T/fe.err" ||
	{ cat "$T/fe.err" >&2; fail "an OOM just before the end: the last window is not named for it"; }
f=$(grep 'flight recorder: oom:' "$T/fe.err" | sed -E 's/.* written to //')
dump fe "$f"
[ "$(field "$T/fe.dump" GPU_OOM bytes)" = 107374182400 ] || fail "$f: no GPU_OOM in the last window"
[ "$(ls "$T/fe" | wc -l)" = 1 ] || fail "an OOM just before the end: $(ls "$T/fe" | wc -l) windows, want 1"
note "--trigger oom just before the end: the last window is the OOM's"

# --switch-output: the trigger switches the file; the one it ends holds the OOM
mkdir -p "$T/sw"
FAKE_LAUNCH_GAP_US=20000 "$RECORD" --gpu-memory --switch-output=1G --trigger oom --cupti-lib "$LIB" \
	-o "$T/sw/s.data" -- "$APP" 150 0.1 mem >"$T/s.out" 2>"$T/s.err" ||
	{ cat "$T/s.err" >&2; fail "xpu-record --switch-output --trigger oom exited $?"; }
grep -q 'switch-output: oom: pid [0-9]* asked for 107374182400 bytes' "$T/s.err" ||
	{ cat "$T/s.err" >&2; fail "--switch-output: the trigger did not switch"; }
files=$(ls "$T/sw"/s.data.* 2>/dev/null | sort)
[ "$(echo "$files" | wc -w)" -ge 2 ] || fail "--switch-output: $(echo "$files" | wc -w) files, want 2"
first=$(echo "$files" | head -1)
dump sw "$first"
[ "$(field "$T/sw.dump" GPU_OOM bytes)" = 107374182400 ] || fail "$first: the OOM is not in the file it switched"
note "--switch-output --trigger oom: $(basename "$first") holds the OOM"

# -p: the attached library's device state is flagged attached
STOP=$T/stop
FAKE_CUDA_DRIVER=$DRV FAKE_UNTIL_FILE=$STOP FAKE_LAUNCH_GAP_US=2000 "$APP" 1 0.05 \
	>"$T/app.out" 2>"$T/app.err" &
app=$!
trap 'touch "$STOP"; sleep 0.2; kill -9 $app 2>/dev/null' EXIT
sleep 0.3
"$RECORD" -p $app -d 1 --gpu-memory -o "$T/p.data" --cupti-lib "$LIB" >"$T/p.out" 2>"$T/p.err" ||
	{ cat "$T/p.err" >&2; fail "xpu-record -p --gpu-memory exited $?"; }
touch "$STOP"
wait $app
dump p "$T/p.data"
[ "$(field "$T/p.dump" GPU_MEM_STATE flags)" = 0x1 ] ||
	{ cat "$T/p.dump" >&2; fail "-p: GPU_MEM_STATE not flagged attached: $(grep '^GPU_MEM_STATE' "$T/p.dump")"; }
note "-p --gpu-memory: the device's state flagged attached"

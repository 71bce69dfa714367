#!/usr/bin/env bash
# xpu-record --gpu-memory on PyTorch's caching allocator, without a GPU:
# tests/workloads/alloc_blocks dlopen()s a fake libc10_cuda.so
# (tests/workloads/fake_c10_cuda.cpp), waits for the probes, and hands out
# and frees blocks of known sizes from named functions (alloc_weights 1 MiB,
# alloc_activations 3 x 256 KiB on device 1, alloc_temp 64 KiB + 8, freed
# at once), printing each pointer. Both builds of the library:
#  - usdt: PyTorch's USDT notes pytorch:malloc/free with semaphores in
#    .probes: the probes set them (the library sees them non-zero), blocks
#    have source=1;
#  - uprobe: no notes, NativeCachingAllocator::malloc/free by demangled
#    name: source=2, the pointer read at malloc's return.
# Checks, each: the GPU_BLOCK mallocs and frees are exactly the program's
# (count, pointer, size, device, stream, in order; the uprobe fallback
# misses the warm-up malloc, which teaches it malloc's return site, and
# counts it lost); an out-of-memory exception thrown through the probed
# malloc reaches the program's catch; each malloc's stack_id
# is a GPU_CORR of domain XPU_API_ALLOC (5) of the same pid, unique, whose
# stack holds the function that allocated the block and not the others
# (tests/record_check hits: a return address into it); a LOST gpu-blocks
# record (0 by USDT, 1 by uprobes), also in a --switch-output file. -p on a process that mapped the
# library before: all its blocks. A process using the same library, not recorded, keeps its
# semaphores at zero. Without --gpu-memory: no GPU_BLOCK, no allocation stack, the
# semaphores never set and no int3 placed.
. "$(dirname "$0")/lib/e2e.sh"
W=$XPU_BUILD/tests/workloads
CHECK=$XPU_BUILD/tests/record_check
APP=$W/alloc_blocks
for f in "$APP" "$CHECK" "$W/fake_c10_usdt/libc10_cuda.so" "$W/fake_c10_uprobe/libc10_cuda.so"; do
	[ -x "$f" ] || [ -f "$f" ] || skip "$f not built: make tests-build"
done
need_tools
need_bpf
ROUNDS=20

# rec NAME VARIANT WAIT_MS OPTIONS...: the workload recorded into $T/NAME.data
rec() {
	local name=$1 lib=$W/fake_c10_$2/libc10_cuda.so wait=$3
	shift 3
	"$RECORD" -F 99 "$@" -o "$T/$name.data" -- "$APP" "$lib" $ROUNDS "$wait" \
		>"$T/$name.out" 2>"$T/$name.err" ||
		{ cat "$T/$name.err" >&2; fail "$name: xpu-record failed"; }
	grep -q '^alloc_blocks: done' "$T/$name.out" || fail "$name: the workload did not finish"
	report "$T/$name.dump" -i "$T/$name.data" --dump
}

# func_hits NAME FUNCTION: the ids of the allocation stacks (GPU_CORR,
# domain 5) that hold an address of FUNCTION of the workload, one a line
func_hits() {
	local addr size
	read -r addr size < <(nm -S "$APP" | awk -v f="$2" '$4 == f { print "0x"$1, "0x"$2 }')
	[ -n "$addr" ] || fail "no $2 in $APP"
	"$CHECK" "$T/$1.data" hits "$APP" "$addr" "$size" >"$T/$1.hits.$2" || fail "record_check hits $2"
	awk 'FNR == NR { if ($1 == "corr_miss") { sub("id=", "", $2); miss[$2] = 1 }; next }
	     !($1 in miss) { print $1 }' "$T/$1.hits.$2" "$T/$1.allocs" | sort -n
}

check_variant() {
	local v=$1 source=$2 name=$1 pid got want f n lost
	rec "$name" "$v" 10000 --gpu-memory
	grep -q 'done probed=1' "$T/$name.out" || fail "$v: the library never saw the probes in"
	grep -q '^oom caught' "$T/$name.out" || fail "$v: the allocator's out-of-memory exception was not caught"
	pid=$(awk '$1 == "GPU_BLOCK" { sub("pid=", "", $3); print $3; exit }' "$T/$name.dump")
	[ -n "$pid" ] || fail "$v: no GPU_BLOCK record"
	# the blocks, in the order of the program's own log: the warm-up
	# block's malloc only by USDT (the uprobe fallback learns malloc's
	# return site from it: counted lost), its free either way
	awk '$1 == "GPU_BLOCK" { for (i = 2; i <= NF; i++) { split($i, kv, "="); r[kv[1]] = kv[2] }
	     if (r["op"] == 1) print "malloc", r["size"], r["ptr"], r["device"], r["stream"], r["source"]
	     else print "free", r["ptr"], r["size"], r["device"], r["source"] }' \
		"$T/$name.dump" >"$T/$name.blocks"
	awk -v s="$source" '$1 == "malloc" { dev = $2 == "alloc_activations" ? 1 : 0
	     print "malloc", $3, $4, dev, dev ? "0x5000" : "0x0", s }
	     $1 == "warmup" && s == 1 { print "malloc", 512, $2, 0, "0x0", s }
	     $1 == "free" || $1 == "warmup" { print "free", $2, 0, -1, s }' "$T/$name.out" >"$T/$name.want"
	want=$((ROUNDS * 9 + 1 + (source == 1)))
	n=$(wc -l <"$T/$name.want")
	[ "$n" -eq "$want" ] || fail "$v: the workload logged $n blocks, not $want"
	cmp -s "$T/$name.blocks" "$T/$name.want" ||
		{ diff "$T/$name.want" "$T/$name.blocks" | head -20 >&2; fail "$v: GPU_BLOCK records differ from the program's blocks"; }
	# each malloc's stack: a GPU_CORR of domain 5 of that pid, its id
	# unique; one more stack than blocks: the warm-up's (USDT) or the
	# request that ran out of memory (uprobe: taken at malloc's entry)
	awk '$1 == "GPU_BLOCK" && / op=1 / { for (i = 2; i <= NF; i++) { split($i, kv, "="); r[kv[1]] = kv[2] }
	     print r["stack"], r["size"] }' "$T/$name.dump" >"$T/$name.stacks"
	awk -v p="$pid" '$1 == "GPU_CORR" && $3 == "pid=" p && $6 == "domain=5" && $7 == "cbid=1" { sub("corr=", "", $5); print $5 }' \
		"$T/$name.dump" | sort >"$T/$name.allocs"
	n=$(wc -l <"$T/$name.allocs")
	[ "$n" -eq $((ROUNDS * 5 + 1)) ] || fail "$v: $n allocation stacks for $((ROUNDS * 5 + 1)) mallocs"
	[ "$(sort -u "$T/$name.allocs" | wc -l)" -eq "$n" ] || fail "$v: allocation stack ids repeat"
	awk '$1 == 0' "$T/$name.stacks" | grep -q . && fail "$v: a malloc without a stack"
	got=$(comm -12 <(awk '{ print $1 }' "$T/$name.stacks" | sort) "$T/$name.allocs" | wc -l)
	[ "$got" -eq "$(wc -l <"$T/$name.stacks")" ] ||
		fail "$v: $got of $(wc -l <"$T/$name.stacks") mallocs' stack ids are GPU_CORR XPU_API_ALLOC ids"
	# each under the function that allocated it, and not under the others
	for f in alloc_weights alloc_activations alloc_temp; do
		func_hits "$name" "$f" >"$T/$name.ids.$f"
	done
	for f in alloc_weights:1048576:1 alloc_activations:262144:3 alloc_temp:65544:1; do
		local fn size each ids
		IFS=: read -r fn size each <<<"$f"
		ids=$(awk -v s="$size" '$2 == s { print $1 }' "$T/$name.stacks" | sort)
		want=$(echo "$ids" | wc -l)
		[ "$want" -eq $((each * ROUNDS)) ] || fail "$v: $want blocks of $fn, not $((each * ROUNDS))"
		got=$(comm -12 <(echo "$ids") <(sort "$T/$name.ids.$fn") | wc -l)
		note "$v: $got of $want blocks of $size bytes have $fn on their stack"
		[ "$got" -eq "$want" ] || fail "$v: $((want - got)) of $want blocks of $fn without it on their stack"
		for other in alloc_weights alloc_activations alloc_temp; do
			[ "$other" = "$fn" ] && continue
			got=$(comm -12 <(echo "$ids") <(sort "$T/$name.ids.$other") | wc -l)
			[ "$got" -eq 0 ] || fail "$v: $got blocks of $fn have $other on their stack"
		done
	done
	# lost: the warm-up malloc of the uprobe fallback, nothing by USDT
	lost=$((source == 2))
	grep -Eq "^LOST .* source=gpu-blocks pid=0 count=$lost " "$T/$name.dump" ||
		fail "$v: no LOST gpu-blocks record of $lost"
}

# a process using the same library, not recorded, running all along: no
# probes in it (they are placed per recorded process)
"$APP" "$W/fake_c10_usdt/libc10_cuda.so" 1 4000 >"$T/other.out" 2>&1 &
bg=$!
trap 'kill $bg 2>/dev/null' EXIT
check_variant usdt 1
check_variant uprobe 2
wait $bg || fail "the process not recorded failed: $(cat "$T/other.out")"
grep -q 'done probed=0' "$T/other.out" || fail "a process not recorded saw the semaphores set"

# -p on a process that mapped the library before the recorder came: the
# probes go on from /proc/PID/maps, and its blocks are all there
"$APP" "$W/fake_c10_usdt/libc10_cuda.so" $ROUNDS 20000 >"$T/p.out" 2>&1 &
ppid=$!
for _ in $(seq 200); do
	grep -q libc10_cuda "/proc/$ppid/maps" 2>/dev/null && break
	sleep 0.05
done
"$RECORD" -F 99 --gpu-memory --no-gpu -p "$ppid" -o "$T/p.data" >"$T/p.rec" 2>&1 ||
	{ cat "$T/p.rec" >&2; fail "-p: xpu-record failed"; }
wait $ppid || fail "-p: the workload failed"
grep -q 'done probed=1' "$T/p.out" || fail "-p: the probes were not placed in the running process"
report "$T/p.dump" -i "$T/p.data" --dump
n=$(grep -c '^GPU_BLOCK .* op=1 source=1 ' "$T/p.dump")
[ "$n" -eq $((ROUNDS * 5 + 1)) ] || fail "-p: $n mallocs recorded, not $((ROUNDS * 5 + 1))"

# --switch-output: the uprobe fallback's lost warm-up malloc is counted in
# the file of its time, as in one trace
mkdir -p "$T/sw"
"$RECORD" -F 99 --gpu-memory --switch-output=1G -o "$T/sw/s.data" -- "$APP" \
	"$W/fake_c10_uprobe/libc10_cuda.so" 2 10000 >"$T/sw.out" 2>"$T/sw.err" ||
	{ cat "$T/sw.err" >&2; fail "--switch-output: xpu-record failed"; }
n=0
for f in "$T"/sw/s.data.*; do
	report "$T/sw.dump" -i "$f" --dump
	c=$(sed -nE 's/^LOST .* source=gpu-blocks pid=0 count=([0-9]+) .*/\1/p' "$T/sw.dump" | head -1)
	n=$((n + ${c:-0}))
done
[ "$n" -eq 1 ] || fail "--switch-output: $n gpu-blocks lost in the files, the recording lost 1"

# without --gpu-memory: nothing placed, nothing recorded
for v in usdt uprobe; do
	rec "off_$v" "$v" 300
	grep -q 'done probed=0' "$T/off_$v.out" || fail "off: $v probes placed without --gpu-memory"
	grep -q '^GPU_BLOCK' "$T/off_$v.dump" && fail "off: $v GPU_BLOCK records without --gpu-memory"
	grep -Eq '^GPU_CORR .* domain=5 ' "$T/off_$v.dump" && fail "off: $v allocation stacks without --gpu-memory"
	grep -q 'source=gpu-blocks' "$T/off_$v.dump" && fail "off: $v a LOST gpu-blocks record without --gpu-memory"
done
exit 0

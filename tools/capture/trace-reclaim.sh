#!/bin/bash
# Record what the kernel's reclaim does while one memtouch program runs: like ../shared/tools/capture-swap.sh
# (swap on a loop device, a cgroup-v1 memory limit), but the raw tracefs log of the block requests
# (issue and completion, with their CPU), memcg reclaim invocations, every shrink_inactive/active call
# (priority, scanned, reclaimed, activated, referenced) and memtouch's CPU migrations; with --sched also
# the wake-ups of the kworkers (sched_waking, sched_wakeup) and every context switch.
#
#   tools/capture/trace-reclaim.sh OUT LIMIT_MIB DISCARD(none|pages) [--pin CPU] [--sched] -- PAGES OPS PATTERN WRITE_PCT SEED
#
# Writes OUT.trace.gz; `python3 tools/capture/analyze-trace.py OUT.trace.gz` summarises it. Needs root,
# cgroup v1's memory controller, losetup, gcc. The per-CPU trace buffer is 256 MiB.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=${NANDSTACK_SHARED:-$here/../../../shared}
out=${1:?usage}; limit=${2:?usage}; discard=${3:?usage}; shift 3
pin=()
if [ "${1:-}" = --pin ]; then pin=(taskset -c "$2"); shift 2; fi
sched=0
if [ "${1:-}" = --sched ]; then sched=1; shift; fi
[ "${1:-}" = -- ] || { echo "trace-reclaim.sh: expected -- PAGES OPS PATTERN WRITE_PCT SEED" >&2; exit 2; }
shift
[ "$(id -u)" = 0 ] || { echo "trace-reclaim.sh: needs root" >&2; exit 2; }
work=$(mktemp -d); T=/sys/kernel/tracing; cg=/sys/fs/cgroup/memory/nandstack-trace
events=(block/block_rq_issue block/block_rq_complete vmscan/mm_vmscan_memcg_reclaim_begin
        vmscan/mm_vmscan_memcg_reclaim_end vmscan/mm_vmscan_lru_shrink_inactive
        vmscan/mm_vmscan_lru_shrink_active sched/sched_migrate_task)
if [ $sched = 1 ]; then events+=(sched/sched_waking sched/sched_wakeup sched/sched_switch); fi
cleanup() {
  set +e
  echo 0 > $T/tracing_on
  for e in "${events[@]}"; do echo 0 > $T/events/$e/enable; echo 0 > $T/events/$e/filter; done
  echo > $T/trace
  [ -n "${loop:-}" ] && { swapoff "$loop"; losetup -d "$loop"; }
  [ -d $cg ] && rmdir $cg
  rm -rf "$work"
}
trap cleanup EXIT
gcc -O2 -o "$work/memtouch" "$shared/tools/memtouch.c" -lm
dd if=/dev/zero of="$work/swap.img" bs=1M count=512 status=none
loop=$(losetup -f --show "$work/swap.img"); mkswap "$loop" > /dev/null
if [ "$discard" = pages ]; then swapon --discard=pages "$loop"; else swapon "$loop"; fi
mountpoint -q $T || mount -t tracefs nodev $T
major=$(( 0x$(stat -c %t "$loop") )); minor=$(( 0x$(stat -c %T "$loop") ))
echo 262144 > $T/buffer_size_kb
for e in block/block_rq_issue block/block_rq_complete; do
  echo "dev == $(( (major << 20) | minor ))" > $T/events/$e/filter
done
echo 'comm == "memtouch"' > $T/events/sched/sched_migrate_task/filter
if [ $sched = 1 ]; then
  for e in sched_waking sched_wakeup; do echo 'comm ~ "kworker*"' > $T/events/sched/$e/filter; done
fi
for e in "${events[@]}"; do echo 1 > $T/events/$e/enable; done
echo > $T/trace
mkdir -p $cg; echo $((limit * 1024 * 1024)) > $cg/memory.limit_in_bytes
echo 1 > $T/tracing_on
sh -c 'echo $$ > '"$cg"'/cgroup.procs; exec "$@"' sh "${pin[@]}" "$work/memtouch" "$@" > "$work/out" 2>&1 \
  || echo "trace-reclaim.sh: memtouch ended with an error (OOM-killed? see dmesg)" >&2
echo 0 > $T/tracing_on
grep -o 'entries-written: [0-9/]*' $T/trace || true
cat $T/trace | gzip -c > "$out.trace.gz"
echo "wrote $out.trace.gz"

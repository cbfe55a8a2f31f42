#!/bin/bash
# Capture what the running Linux kernel does with swap for a list of memtouch programs: ground truth
# beside ../shared/traces/kernel-swap, for programs that folder does not hold.
#
#   tools/capture/capture-programs.sh OUT_DIR PROGRAMS.txt [REPS] [--pin CPU]
#
# Each line of PROGRAMS.txt: NAME PAGES LIMIT_MIB PATTERN WRITE_PCT SEED DISCARD(none|pages)
# ('#' starts a comment). Every program runs REPS times (default 3) as OUT_DIR/kswap_NAME_rN.{csv.gz,json},
# through ../shared/tools/capture-swap.sh (swap on a loop device, a cgroup-v1 memory limit, tracefs) —
# the recorder of the shared captures, so the files have their format and
# `nandstack reproduce kernel-swap --captures OUT_DIR` compares the model with them.
# A run the kernel OOM-kills writes nothing; it is tried again (up to 3 attempts per repetition), as
# the shared captures' recorder did, and the kills are counted in OUT_DIR/capture-log.txt.
# --pin CPU runs memtouch under `taskset -c CPU` (no migration between CPUs; see
# docs/kernel-swap-comparison.md, "Captures of other programs").
# Needs root, cgroup v1's memory controller at /sys/fs/cgroup/memory, losetup, gcc; it swaps on a
# loop device while it runs and cleans up after each run. Existing captures are kept (delete to redo).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=${NANDSTACK_SHARED:-$here/../../../shared}
out=${1:?usage: capture-programs.sh OUT_DIR PROGRAMS.txt [REPS] [--pin CPU]}
list=${2:?usage: capture-programs.sh OUT_DIR PROGRAMS.txt [REPS] [--pin CPU]}
reps=${3:-3}
pin=()
if [ "${4:-}" = --pin ]; then pin=(taskset -c "${5:?--pin needs a CPU}"); fi
[ "$(id -u)" = 0 ] || { echo "capture-programs.sh: needs root (cgroups, loop devices, tracefs)" >&2; exit 2; }
[ -d /sys/fs/cgroup/memory ] || { echo "capture-programs.sh: no cgroup-v1 memory controller at /sys/fs/cgroup/memory" >&2; exit 2; }
[ -f "$shared/tools/capture-swap.sh" ] || { echo "capture-programs.sh: $shared/tools/capture-swap.sh not found (set NANDSTACK_SHARED)" >&2; exit 2; }
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
gcc -O2 -o "$bin/memtouch" "$shared/tools/memtouch.c" -lm
export PATH="$bin:$PATH"
log="$out/capture-log.txt"
kills() { dmesg 2>/dev/null | grep -c "Killed process .*(memtouch)" || true; }
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  line=${line%%#*}
  [ -z "${line// }" ] && continue
  read -r name pages limit pattern wpct seed discard extra <<< "$line"
  if [ -z "${discard:-}" ] || [ -n "${extra:-}" ] || { [ "$discard" != none ] && [ "$discard" != pages ]; }; then
    echo "capture-programs.sh: $list line $lineno: expected NAME PAGES LIMIT_MIB PATTERN WRITE_PCT SEED none|pages, got: $line" >&2
    exit 2
  fi
  for r in $(seq 1 "$reps"); do
    stem="$out/kswap_${name}_r$r"
    [ -f "$stem.json" ] && continue
    for attempt in 1 2 3; do
      before=$(kills)
      if bash "$shared/tools/capture-swap.sh" "$stem" "$limit" 512 "$discard" -- \
           "${pin[@]}" memtouch "$pages" 300000 "$pattern" "$wpct" "$seed" > "$stem.log" 2>&1; then
        gzip -f "$stem.csv"; rm -f "$stem.log"
        if [ ${#pin[@]} -gt 0 ]; then
          # The command as the loaders read it (memtouch ...); the pinning recorded beside it.
          python3 - "$stem.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["command"]
if c[:2] == ["taskset", "-c"]:
    d["command"], d["pinned_cpus"] = c[3:], c[2]
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
        fi
        echo "$name r$r: captured (attempt $attempt)" | tee -a "$log"
        break
      fi
      rm -f "$stem.csv" "$stem.json"
      if [ "$(kills)" -gt "$before" ]; then
        echo "$name r$r: OOM-killed by the kernel (attempt $attempt)" | tee -a "$log"
      else
        echo "$name r$r: failed (attempt $attempt), see $stem.log" | tee -a "$log"; break
      fi
    done
  done
done < "$list"

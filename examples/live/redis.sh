#!/bin/sh
# A real Debian application swapping onto the simulated SSD (docs/live.md):
#   sudo nandstack live --memory-limit 64 --swap-size 512 -- sh examples/live/redis.sh [REQUESTS] [KEYS]
# Starts redis-server (no persistence, on a Unix socket in a private folder), fills it with KEYS values of
# 1 KiB (about 90 MiB with redis' overhead: over the 64 MiB limit) and reads REQUESTS of them back at
# random with redis-benchmark (apt-get install redis-server redis-tools); both run in the run's memory
# cgroup, so the kernel swaps redis' pages onto the drive. Prints redis-benchmark's throughput (CSV) and
# redis' memory use.
set -eu
requests=${1:-50000}
keys=${2:-80000}
dir=$(mktemp -d)
trap 'redis-cli -s "$dir/redis.sock" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' --appendonly no --dir "$dir" \
    --logfile "$dir/redis.log" &
tries=0
until redis-cli -s "$dir/redis.sock" ping >/dev/null 2>&1; do
    tries=$((tries + 1)); [ "$tries" -lt 200 ] || { echo "redis-server did not start" >&2; exit 1; }
    sleep 0.05
done
redis-benchmark -s "$dir/redis.sock" -t set -n "$keys" -r "$keys" -d 1024 --csv
redis-benchmark -s "$dir/redis.sock" -t get -n "$requests" -r "$keys" -d 1024 --csv
redis-cli -s "$dir/redis.sock" info memory | grep -E '^used_memory(_rss)?_human'

#!/usr/bin/env python3
"""Where a swap capture's discards come from, cluster by cluster.

    python3 tools/capture/cluster-lifetimes.py CAPTURE.csv[.gz] [CAPTURE.csv ...]

Each file is a capture in `capture-swap.sh`'s format (`time_s,op,sector,sectors,comm`; sectors of 512
bytes from the swap device's start) — a kernel capture, or the model's run of one written by
`cargo run --release -p nandstack-kernel --example kswap_trace NAME OUT.csv`. Clusters are 512 slots of
4 KiB. For the first 64 clusters in the order they were first written, it prints how many of the slots
written there were never read back after their last write (a slot freed without a read was freed by a
swap-cache hit: its page was faulted back before reclaim freed it; one still held at the end is a page
left in swap), and marks with `*` the clusters discarded while the program ran (up to its last read or
write; the discards of the program's exit come after). Comparing a kernel capture with the model's run
of it shows which clusters the two empty differently, and why.
"""

from __future__ import annotations

import gzip
import sys

SLOTS_PER_CLUSTER = 512


def load(path: str) -> list[tuple[float, str, int, int]]:
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    with opener(path, "rt") as f:
        next(f)
        for line in f:
            t, op, sector, sectors = line.split(",")[:4]
            rows.append((float(t), op, int(sector) // 8, int(sectors) // 8))
    return rows


def main(path: str) -> None:
    rows = load(path)
    if not rows:
        print(f"{path}: no requests")
        return
    last = max(t for t, op, _, _ in rows if op != "D")
    order: list[int] = []
    seen: set[int] = set()
    written_at: dict[int, float] = {}
    read_back: set[int] = set()
    discarded: set[int] = set()
    for t, op, first, n in rows:
        if op == "D":
            if t <= last:
                end = first + max(n, 1) - 1
                discarded.update(range(first // SLOTS_PER_CLUSTER, end // SLOTS_PER_CLUSTER + 1))
            continue
        for s in range(first, first + n):
            c = s // SLOTS_PER_CLUSTER
            if op == "W":
                if c not in seen:
                    seen.add(c)
                    order.append(c)
                written_at[s] = t
                read_back.discard(s)
            elif op == "R" and s in written_at:
                read_back.add(s)
    unread: dict[int, int] = {}
    for s in written_at:
        if s not in read_back:
            unread[s // SLOTS_PER_CLUSTER] = unread.get(s // SLOTS_PER_CLUSTER, 0) + 1
    name = path.rsplit("/", 1)[-1]
    print(
        f"{name}: {len(order)} clusters written, {len(discarded)} discarded while the program ran "
        f"({last - rows[0][0]:.2f} s)"
    )
    cells = [f"{rank}:{unread.get(c, 0)}{'*' if c in discarded else ''}" for rank, c in enumerate(order[:64])]
    print("  slots never read back after their last write, by cluster in first-write order (* discarded):")
    for i in range(0, len(cells), 16):
        print("   ", " ".join(cells[i : i + 16]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        main(p)

"""The ZNSwap paper's platform (issue #35; docs/platforms/swap-on-flash-sources.md §3 and §5): each way
the paper's evaluation differs from today's platform, as a named difference with its source, and how it
changes one run's configuration. `_znswap_runs` applies a set of them to the runs it builds; the claims
(`_znswap_claims`) measure every claim with all of them (the paper platform) and with each alone.

No setting here is fitted to a paper number: each comes from a kernel source, a benchmark source or the
paper's setup section; where none gives a value (the TRIM cost), several are swept and none is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Difference:
    """One paper-platform difference: `key` (the name in task params), the change, its source, and
    whether it belongs to the paper platform (`paper`) or is a sensitivity row only."""

    key: str
    change: str
    source: str
    paper: bool = True


#: Swap written during the memcached ramp-up, in swap partitions (Z-K4). §6 ramps each experiment up
#: "until steady state" (SNIA PTS) without saying how long. Measured (docs/znswap.md): under today's
#: memory ratio the servers' swap traffic dies out after the first few million requests (the hot keys
#: settle in memory), so one partition's worth of requests already reaches the state where the
#: measured requests barely fault; a longer ramp only costs run time. The redis runs
#: need no ramp-up: they already write about 12 partitions (2.8 M pages, seed 1, full mode). The quick
#: run ramps up over half a partition only (a smoke test of the mechanism, not a steady state).
RAMP_PARTITIONS = {True: 0.5, False: 1.0}
#: Swap-outs per memcached request measured on today's runs (full mode, seeds 1-2, 10%): 276-283 MiB
#: over 4 × 2 M requests, about 0.0086 pages per request; used only to size the ramp-up in requests.
MC_PAGES_PER_REQUEST = 0.0086
#: TRIM costs of the sweep (device `trim_command_overhead_us`): no source gives this drive's (§3.1.1
#: only says 8-slot TRIMs cost 32% of a core), so the rows show the curve instead of choosing one.
TRIM_COSTS_US = (10.0, 50.0, 200.0)

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "ramp_up",
        "ramp-up before measuring (each memcached server first issues unmeasured requests that write "
        f"about {RAMP_PARTITIONS[False]:g} swap partitions on today's memory ratio; quick: "
        f"{RAMP_PARTITIONS[True]:g})",
        "paper §6 Setup (formatted drive, rest filled, ramp-up to steady state per SNIA PTS); Z-K4",
    ),
    Difference(
        "used_drive",
        "memcached on a used block SSD: the swap partition written through before the run (every LBA "
        "mapped, in order), the state a TRIM-less ramp-up under the 5.x allocator's walk leaves",
        "paper §6 Setup (ramp-up; WAF 2.5 at 10% use implies it) and 5.12 mm/swapfile.c cluster walk; Z-K4",
    ),
    Difference(
        "trunk_redraw",
        "Linux 5.12 allocator: scan base re-drawn at random on crossing a 64 MiB trunk",
        "Linux 5.12 mm/swapfile.c set_cluster_next (869-895), include/linux/swap.h 601-602; Z-K1",
    ),
    Difference(
        "cow_copy",
        "Linux 5.12 fault path: a write to a page read from swap copies it (the old page stays in the swap "
        "cache, its slot held until reclaim); the copy gets a fresh slot",
        "Linux 5.12 mm/memory.c do_wp_page (3146-3165, page count 2 in the swap cache); host.fault."
        "swapin_write; Z-K3",
    ),
    Difference(
        "memory_ratio",
        "memcached: RAM = swap partition size, so 10% utilisation swaps ~9% of the working set",
        "paper §6.2.1 (swap = RAM = 512 GiB; 51 GiB of a 563 GB working set swapped at 10%); Z-K5",
    ),
    Difference(
        "trim_5_12",
        "8-slot TRIM as the artefact's trim_4k: a group whose cluster empties is not trimmed",
        "ZNSwap artefact (Linux 5.12) mm/swapfile.c dec_cluster_info_page 679-693; Z-K6",
    ),
    Difference(
        "swapin_heat",
        "hot/cold history: a swap-in read counts as an accessed sample",
        "ZNSwap artefact (Linux 5.12) mm/page_io.c end_swap_bio_read 127-135; Z-K7",
    ),
    Difference(
        "fb_value",
        "memcached values: mutilate's fb_value mixture (0-14 B head over a Pareto at 15 B)",
        "mutilate Generator.cc createFacebookValue; Z-K10",
    ),
    *(
        Difference(
            f"trim_cost_{int(c)}",
            f"TRIM costs the block SSD {c:g} us per command (sensitivity)",
            "unsourced: no data sheet gives the drive's TRIM latency; a sweep, never chosen; Z-K6",
            paper=False,
        )
        for c in TRIM_COSTS_US
    ),
    Difference(
        "random_history",
        "memcached on a used block SSD whose partition was then rewritten at random once (sensitivity)",
        "unsourced: no source says the ramp-up's history was random; shows what a random one does; Z-K4",
        paper=False,
    ),
    Difference(
        "zones_1024",
        "1,024 zones of 1 MiB instead of 256 of 4 MiB (14 open: 1.4% of zones, paper's drive ~1.5%)"
        " (sensitivity)",
        "paper §6 Hardware (1077 MiB zones on 1 TB); ZN540 open-zone limit unsourced; Z-K8",
        paper=False,
    ),
    Difference(
        "plane_parallel",
        "the planes of a die program and read independently (sensitivity)",
        "paper §6 Hardware gives random read/write 1.4 / 1 GiB/s; the drives' scheduling is unsourced; Z-K9",
        paper=False,
    ),
)
BY_KEY = {d.key: d for d in DIFFERENCES}
PAPER_KEYS = frozenset(d.key for d in DIFFERENCES if d.paper)


def check(keys: frozenset[str]) -> None:
    unknown = sorted(keys - set(BY_KEY))
    if unknown:
        raise ValueError(f"unknown ZNSwap platform difference(s) {unknown}: known {sorted(BY_KEY)}")


def apply(keys: frozenset[str], group: str, kind: str, overrides: dict[str, Any], quick: bool) -> None:
    """Switch on the differences `keys` in one run's config overrides (in place): `host`, `device`,
    `workload.processes`, and `precondition` for a used drive. `kind` is the scheme's device kind.
    `memory_ratio` and the item density of `fb_value` are applied by the memcached builder (they
    change the footprint)."""
    check(keys)
    host, device = overrides["host"], overrides["device"]
    processes = overrides["workload"]["processes"]
    swap = host["swap"]
    discard = swap.get("discard", {}).get("mode", "off")
    # Only the KV servers read a swapped-in page and then write it; the claims' vm-scalability and
    # pmbench runs only read or only write, so the fault path's setting cannot change them.
    if "cow_copy" in keys and group in ("memcached", "redis"):
        host["fault"] = {"swapin_write": "cow_copy"}
    if "trunk_redraw" in keys and swap.get("allocator") == "cluster_v5":
        swap["cluster_v5"] = {"trunk_redraw": True}
    if "trim_5_12" in keys and discard == "fine":
        swap["discard"]["fine_skips_emptied_clusters"] = True
    if "swapin_heat" in keys and swap.get("backend", {}).get("kind") == "znswap":
        swap["backend"]["swapin_heat_sample"] = True
    cost = next((c for c in TRIM_COSTS_US if f"trim_cost_{int(c)}" in keys), None)
    if cost is not None and kind == "block" and discard != "off":
        device.setdefault("controller", {})["trim_command_overhead_us"] = cost
    # The sensitivity rows run where sources doc §5 expects them to matter (zones: Z4/Z5's hot/cold
    # runs; planes: Z1 and Z2's block-SSD timing), to keep the full run within its time budget.
    if "zones_1024" in keys and kind == "zoned" and group in ("skew", "redis"):
        device["zoned"]["blocks_per_zone"] = 4
    if "plane_parallel" in keys and group in ("memcached", "random_reads"):
        timing = device["zoned"] if kind == "zoned" else device
        timing.setdefault("timing", {})["plane_parallelism"] = True
    used = {"used_drive", "random_history"} & keys
    if used and group == "memcached" and kind == "block" and discard == "off":
        warm = 1.0 if "random_history" in keys else 0.0
        overrides["precondition"] = {
            "fill_fraction": 1.0,
            "fill_order": "sequential",
            "warmup_capacity_multiples": warm,
        }
    for p in processes:
        w = p["workload"]
        if "fb_value" in keys and w["type"] == "memcached_etc":
            w["value_sizes"] = "mutilate"
        if "ramp_up" in keys and w["type"] == "memcached_etc":
            w["ramp_up_requests"] = ramp_requests(runs_logical(quick), len(processes), quick)


def runs_logical(quick: bool) -> int:
    from ._znswap_runs import sizes

    return sizes(quick)[1]


def ramp_requests(logical_mib: int, servers: int, quick: bool) -> int:
    """Unmeasured requests per server so that the ramp-up writes RAMP_PARTITIONS partitions of swap."""
    pages = RAMP_PARTITIONS[quick] * logical_mib * 256
    return int(pages / MC_PAGES_PER_REQUEST / servers)

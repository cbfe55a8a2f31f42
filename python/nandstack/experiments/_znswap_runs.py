"""The runs of the `znswap` experiment (see `znswap.py`): the two stacks on the same media and the
workloads of each figure, scaled down. Not an experiment module itself (the leading underscore keeps
it out of the registry).

Same media: one TLC die array — 4 channels × 2 chips × 1 die × 2 planes (8 dies, 16 planes), 256 blocks
per plane of 16 pages of 16 KiB (8 pages in the quick run). As a zoned device a zone is one block on
every plane (4 MiB; 2 MiB quick), 256 zones, 14 open; as a block SSD the FTL writes at a dynamic frontier
(round robin over the planes, as a controller's write pointer) with 12% over-provisioning, and the swap
partition is its whole logical space — the paper's *effective* OP of the swap partition. ZNSwap gets
every zone and the same logical swap size, so its spare space is the same 12%.

The block baseline is the paper's kernel: Linux 5.x's slot allocator (`cluster_v5`: per-CPU clusters
from the free-cluster list before freed slots are reused) with the per-CPU slot cache (64), TRIM off
(distribution default), whole-cluster TRIM (512 slots, `swapon --discard=pages`) or the paper's 8-slot
fine TRIM. ZNSwap runs the ≥ 6.12 swap layer with its own backend (no discard, no reclamation cutoff).
"""

from __future__ import annotations

import math
from typing import Any

from ..sweep.spec import Task
from . import _znswap_platform as platform
from .base import make_task

OP = 0.12
#: Each run writes (or, for readers, reads) about this many times the device's raw capacity, so the
#: block SSD reaches its steady state (the second half of each run is what the figures report).
VOLUME = {True: 2.0, False: 3.0}

SCHEMES: dict[str, dict[str, Any]] = {
    "block_off": {"kind": "block", "discard": "off"},
    "block_cluster": {"kind": "block", "discard": "cluster"},
    "block_fine": {"kind": "block", "discard": "fine"},
    "znswap": {"kind": "zoned", "policy": {"kind": "per_core"}},
    "znswap_hot_cold": {"kind": "zoned", "policy": {"kind": "hot_cold"}},
    "znswap_cgroup": {"kind": "zoned", "policy": {"kind": "cgroup"}},
}
LABEL = {
    "block_off": "Block SSD, TRIM off",
    "block_cluster": "Block SSD, 512-slot TRIM",
    "block_fine": "Block SSD, 8-slot TRIM",
    "znswap": "ZNSwap (per-core)",
    "znswap_hot_cold": "ZNSwap (hot/cold)",
    "znswap_cgroup": "ZNSwap (cgroup)",
}

#: Per mode: the points of each figure.
PLAN: dict[bool, dict[str, Any]] = {
    True: {
        "pages_per_block": 8,
        "write_utils": (0.1, 0.4, 0.8),
        "read_utils": (0.3, 0.7),
        "cutoffs": (0.25, 0.75),
        "skew": (0.8, 0.9),
        "mc_utils": (0.1, 0.5),
        "mc_requests": 300_000,
        "mc_seeds": (1, 2, 3, 4),
        "redis_ram": (0.3, 0.15),
        "redis_requests": 300_000,
        "seeds": (1,),
    },
    False: {
        "pages_per_block": 16,
        "write_utils": (0.1, 0.2, 0.4, 0.6, 0.8),
        "read_utils": (0.2, 0.4, 0.6, 0.8),
        "cutoffs": (0.25, 0.5, 0.75, 0.9),
        "skew": (0.7, 0.8, 0.9),
        "mc_utils": (0.1, 0.3, 0.5, 0.7),
        "mc_requests": 2_000_000,
        "mc_seeds": tuple(range(1, 31)),
        "redis_ram": (0.3, 0.2, 0.1),
        "redis_requests": 1_500_000,
        "seeds": (1,),
    },
}


def sizes(quick: bool) -> tuple[int, int]:
    """(raw capacity, logical swap size) in MiB."""
    raw = 16 * 256 * PLAN[quick]["pages_per_block"] * 16 // 1024
    return raw, int(raw / (1 + OP))


def device(kind: str, quick: bool) -> dict[str, Any]:
    geometry = {
        "channels": 4,
        "chips_per_channel": 2,
        "dies_per_chip": 1,
        "planes_per_die": 2,
        "blocks_per_plane": 256,
        "pages_per_block": PLAN[quick]["pages_per_block"],
        "page_size_bytes": 16384,
        "cell_mode": "tlc",
    }
    if kind == "zoned":
        return {"kind": "zoned", "zoned": {"geometry": geometry, "blocks_per_zone": 16}}
    return {"kind": "block", "geometry": geometry, "ftl": {"over_provisioning": OP, "allocation": "dynamic"}}


def host(
    scheme: str,
    quick: bool,
    cgroups: list[dict[str, Any]],
    full_ratio: float = 0.5,
    swap_slots: dict[str, int] | None = None,
) -> dict[str, Any]:
    s = SCHEMES[scheme]
    _, logical = sizes(quick)
    if s["kind"] == "zoned":
        policy = dict(s["policy"])
        if swap_slots and policy["kind"] == "cgroup":
            policy["swap_slots"] = swap_slots
        swap: dict[str, Any] = {"size_mib": logical, "backend": {"kind": "znswap", "policy": policy}}
    else:
        swap = {
            "size_mib": logical,
            "allocator": "cluster_v5",
            "slot_cache": 64,
            "full_ratio": full_ratio,
            "discard": {"mode": s["discard"], "slots": 8},
        }
    # Linux 5.12 (the paper's kernel) read the cgroups' LRU statistics live; 6.x reclaim reads them as of
    # the 2 s rstat flush (host.reclaim.stats_flush_ms), under which a cgroup whose inactive anon list
    # empties between flushes cannot age its active list and runs out of memory (docs/model-host.md).
    reclaim = {"stats_flush_ms": 0}
    return {"ram_mib": 4096, "cpus": 8, "swap": swap, "cgroups": cgroups, "reclaim": reclaim}


#: A set of paper-platform differences (`_znswap_platform`) and its name in the task params.
Platform = tuple[str, frozenset[str]]
TODAY: Platform = ("today", frozenset())


def _task(
    group: str,
    scheme: str,
    quick: bool,
    point: dict[str, Any],
    processes: list[dict[str, Any]],
    cgroups: list[dict[str, Any]],
    seed: int,
    on: Platform = TODAY,
    **host_kw: Any,
) -> Task:
    overrides = {
        "workload": {"kind": "host", "processes": processes},
        "host": host(scheme, quick, cgroups, **host_kw),
        "device": device(SCHEMES[scheme]["kind"], quick),
        "run": {"interval_sim_seconds": 0.25},
    }
    platform.apply(on[1], group, SCHEMES[scheme]["kind"], overrides, quick)
    params = {"group": group, "scheme": scheme, **point, "seed": seed}
    if on[1]:
        params["platform"] = on[0]
    return make_task(overrides, params)


def _vms(
    name: str, cgroup: str, size_mib: int, write_ratio: float, accesses: float, threads: int = 16
) -> dict:
    """vm-scalability random accesses: `accesses` in total over the region (after its populate pass)."""
    passes = accesses / (size_mib * 256)
    return {
        "name": name,
        "cgroup": cgroup,
        "workload": {
            "type": "vm_scalability",
            "size_mib": size_mib,
            "threads": threads,
            "pattern": "rand",
            "write_ratio": write_ratio,
            "passes": round(passes, 4),
        },
    }


def random_access(
    quick: bool, util: float, scheme: str, write_ratio: float, seed: int, on: Platform = TODAY
) -> Task:
    """Figs. 1/10 (writes) and 3 (reads): vm-scalability over `util` of the swap space plus a 64 MiB
    cgroup, 16 threads; enough accesses that the misses move VOLUME × the raw capacity."""
    raw, logical = sizes(quick)
    limit = 64
    swapped = util * logical
    region = math.ceil(limit + swapped)
    misses = VOLUME[quick] * raw * 256
    accesses = misses * region / swapped
    group = "random_writes" if write_ratio > 0 else "random_reads"
    p = _vms("vm-scalability", "vm", region, write_ratio, accesses)
    return _task(group, scheme, quick, {"util": util}, [p], [{"name": "vm", "limit_mib": limit}], seed, on)


#: Fig. 4's working set: twice this fraction of the swap space, half of it in memory. The paper uses 80%;
#: without a cutoff every page of such a working set eventually keeps a slot (1.6× the swap space), so
#: here the working set is 0.8× the swap space and the copies kept in the swap cache fill the rest.
CUTOFF_USE = 0.4


def cutoff(quick: bool, full_ratio: float, scheme: str, write_ratio: float, seed: int) -> Task:
    """Fig. 4: the working set is swapped out to CUTOFF_USE of the swap space and half of it fits in
    memory; random reads (swap-in) or 50/50 reads and writes (swap-out) under a given reclamation
    cutoff (the fraction of swap in use above which swap-cache copies are dropped)."""
    raw, logical = sizes(quick)
    region = math.ceil(2 * CUTOFF_USE * logical)
    limit = region // 2
    accesses = VOLUME[quick] * raw * 256 * 2
    p = _vms("vm-scalability", "vm", region, write_ratio, accesses)
    point = {"cutoff": full_ratio, "mix": "read" if write_ratio == 0 else "read_write"}
    return _task(
        "cutoff", scheme, quick, point, [p], [{"name": "vm", "limit_mib": limit}], seed, full_ratio=full_ratio
    )


def skew(quick: bool, swapped_fraction: float, scheme: str, seed: int, on: Platform = TODAY) -> Task:
    """§6.1.2: pmbench-like skewed writes (normal, sigma = working set / 12) over a working set whose cold
    80% fills half of the swap space; memory limited so that `swapped_fraction` of it is swapped out.
    Four instances of a quarter each (the paper runs one big pmbench; the distribution per page is the
    same)."""
    raw, logical = sizes(quick)
    ws = int(0.625 * logical)
    limit = max(8, int((1 - swapped_fraction) * ws))
    # Misses of a centred normal whose middle (1 − f) is resident: P(|Z| > 6 (1 − f)).
    miss = max(0.01, math.erfc(6 * (1 - swapped_fraction) / math.sqrt(2)))
    refs = int(VOLUME[quick] * raw * 256 / miss / 4)
    procs = [
        {
            "name": f"pmbench{i}",
            "cgroup": "pm",
            "workload": {
                "type": "pmbench",
                "working_set_mib": ws // 4,
                "read_ratio": 0.0,
                "references": refs,
            },
        }
        for i in range(4)
    ]
    return _task(
        "skew",
        scheme,
        quick,
        {"swapped": swapped_fraction},
        procs,
        [{"name": "pm", "limit_mib": limit}],
        seed,
        on,
    )


#: Fig. 11's tenants: the writer uses 30% of the swap space, the reader 10%; each cgroup's swap reads and
#: writes are throttled (the paper: 300 MiB/s of a 1 GiB/s drive; here about 30% of the device's write
#: bandwidth).
CG_LIMIT_MIB_S = 40.0


def cgroups(quick: bool, scheme: str, seed: int) -> Task:
    raw, logical = sizes(quick)
    limit = 64
    w_mib, r_mib = math.ceil(limit + 0.3 * logical), math.ceil(limit + 0.1 * logical)
    # Each tenant misses about the same number of pages (both are throttled alike).
    misses = VOLUME[quick] * raw * 256 / 2
    procs = [
        _vms("writer", "writer", w_mib, 1.0, misses * w_mib / (0.3 * logical)),
        _vms("reader", "reader", r_mib, 0.0, misses * r_mib / (0.1 * logical)),
    ]
    cgs = [
        {
            "name": n,
            "limit_mib": limit,
            "swap_read_mib_per_s": CG_LIMIT_MIB_S,
            "swap_write_mib_per_s": CG_LIMIT_MIB_S,
        }
        for n in ("writer", "reader")
    ]
    # Swap-slot allocations (the cgroup policy): each tenant's data with a quarter to spare.
    slots = {"writer": int(1.25 * 0.3 * logical * 256), "reader": int(1.25 * 0.1 * logical * 256)}
    return _task("cgroups", scheme, quick, {}, procs, cgs, seed, swap_slots=slots)


#: ETC items per MiB with the slab classes, by value sizes (generalized Pareto / mutilate's fb_value):
#: measured from the workload's own pages (4 × 95,535 keys touch 43,948 / 30,080 pages).
ITEMS_PER_MIB = {False: 2200, True: 3250}


def memcached(quick: bool, util: float, scheme: str, seed: int, on: Platform = TODAY) -> Task:
    """Fig. 12: memcached-ETC-like servers (four instances) loaded until `util` of the swap space holds
    their data beyond a 128 MiB memory limit (the swap partition's size with the paper platform's
    `memory_ratio`); then GET/SET requests (30:1, 90% on 10% of the keys)."""
    _, logical = sizes(quick)
    limit = logical if "memory_ratio" in on[1] else 128
    footprint = limit + util * logical
    keys = int(footprint * ITEMS_PER_MIB["fb_value" in on[1]] / 4)
    reqs = PLAN[quick]["mc_requests"]
    procs = [
        {
            "name": f"memcached{i}",
            "cgroup": "kv",
            "workload": {"type": "memcached_etc", "keys": keys, "requests": reqs},
        }
        for i in range(4)
    ]
    return _task(
        "memcached", scheme, quick, {"util": util}, procs, [{"name": "kv", "limit_mib": limit}], seed, on
    )


def redis(quick: bool, ram_fraction: float, scheme: str, seed: int, on: Platform = TODAY) -> Task:
    """Fig. 13: redis-like YCSB servers (four shards of 1 KiB records), 50% reads / 50% updates, 20/80
    hotspot, a dataset whose size is that of the pmbench working set; memory limited to `ram_fraction`
    of it."""
    _, logical = sizes(quick)
    data = int(0.625 * logical)
    records = data * 1024 // 4
    limit = max(8, int(ram_fraction * data))
    reqs = PLAN[quick]["redis_requests"]
    procs = [
        {
            "name": f"redis{i}",
            "cgroup": "kv",
            "workload": {
                "type": "ycsb",
                "records": records,
                "record_bytes": 1024,
                "distribution": "hotspot",
                "hot_data_fraction": 0.2,
                "hot_op_fraction": 0.8,
                "read_ratio": 0.5,
                "requests": reqs,
            },
        }
        for i in range(4)
    ]
    return _task(
        "redis", scheme, quick, {"ram": ram_fraction}, procs, [{"name": "kv", "limit_mib": limit}], seed, on
    )


def tasks(quick: bool) -> list[Task]:
    plan = PLAN[quick]
    out: list[Task] = []
    for seed in plan["seeds"]:
        for u in plan["write_utils"]:
            for s in ("block_off", "block_cluster", "block_fine", "znswap"):
                out.append(random_access(quick, u, s, 1.0, seed))
        for u in plan["read_utils"]:
            for s in ("block_off", "znswap"):
                out.append(random_access(quick, u, s, 0.0, seed))
        for c in plan["cutoffs"]:
            out.append(cutoff(quick, c, "block_off", 0.0, seed))
            out.append(cutoff(quick, c, "block_off", 0.5, seed))
            out.append(cutoff(quick, c, "block_fine", 0.5, seed))
        out.append(cutoff(quick, 1.0, "znswap", 0.0, seed))
        out.append(cutoff(quick, 1.0, "znswap", 0.5, seed))
        for f in plan["skew"]:
            for s in ("block_off", "znswap", "znswap_hot_cold"):
                out.append(skew(quick, f, s, seed))
        for s in ("block_off", "znswap", "znswap_cgroup"):
            out.append(cgroups(quick, s, seed))
        for r in plan["redis_ram"]:
            for s in ("block_off", "znswap", "znswap_hot_cold"):
                out.append(redis(quick, r, s, seed))
    # Many seeds at the lowest memcached utilisation: there its four instances either share the
    # cgroup until the end or two finish early and leave their memory to the others, and which happens
    # moves one run's throughput and p99 by up to 1.6x either way on the same stack; the higher points
    # vary by at most ±4% between seeds (docs/znswap.md). The tables show the mean over the seeds.
    low = min(plan["mc_utils"])
    for u in plan["mc_utils"]:
        for seed in plan["mc_seeds"] if u == low else plan["seeds"]:
            for s in ("block_off", "block_fine", "znswap"):
                out.append(memcached(quick, u, s, seed))
    return out

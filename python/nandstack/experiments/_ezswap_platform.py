"""The ezswap paper's platform (issue #36): each way the paper's evaluation (§IV-A, Table 1) differs from
today's platform, as a named difference with its source, and how it changes one configuration's run.
`_ezswap_claims` measures every claim with all of them (the paper platform) and with each alone.

Today's platform is Linux 6.18's compressed swap on the `host-ezswap` launch cycle: zswap on zsmalloc
with its LRU of entries, a store at the limit refused (`full_pool = "reject"`), incompressible pages
stored as they are, the swap layer's zero map, memory statistics flushed every 2 s; zram with lzo-rle.
ezswap's lottery (CA) ranks pool pages of up to three objects and is not defined on zsmalloc
(docs/ezswap.md), so configurations with CA run on z3fold on both platforms (today's z3fold as last
shipped; on the paper's, z3fold as first merged in 4.8, and CA as the authors' code has it).

The paper (§IV-A, Table 1): Linux 3.10.9 with the zswap and zpool modules of Linux 4.7, z3fold, lzo, a
100 MB pool of a 2 GB board (Odroid-XU4) with 32 GB of eMMC 5.0, the low-memory killer disabled. What
the workload keeps on both platforms (the `host-ezswap` preset at 1/8 scale: 144 MiB of RAM, a pool of
at most 9% of it = the paper's 100 MB / 8, the 14 apps of Table 2 with sizes the paper does not give,
docs/ezswap.md) and the drive's geometry (planes, pages, capacity) are not differences. The board's
eMMC part is not named anywhere public; its timing on the paper platform (`emmc_timing`) is an eMMC 5.0
class part's: the figures Samsung published for the first eMMC 5.0 parts of the board's size. The
launch time is the paper's metric on the paper platform only (`startup_cpu`: the apps' start-up CPU
work on top of their faults); today's launch time is the faults' alone. Nothing here is fitted to a
paper number: every setting is what its kernel source, the storage standard or a data sheet does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The configurations: (name, admission, replacement, apa); `swap` has zswap off, `zram` swaps to zram.
CONFIGS: tuple[tuple[str, str, str, bool], ...] = (
    ("swap", "all", "lru", False),
    ("zswap", "all", "lru", False),
    ("sa_ca", "entropy", "lottery", False),
    ("apa", "all", "lru", True),
    ("apa_sa", "entropy", "lru", True),
    ("apa_ca", "all", "lottery", True),
    ("ezswap", "entropy", "lottery", True),
    ("zram", "all", "lru", False),
)
NAMES = tuple(c[0] for c in CONFIGS)
#: The authors' code's age threshold for re-filing a pool page at its list's head (stores, for its
#: 100 MB pool; `ca_code` scales it with the plan, as the pool is scaled).
CODE_AGE_STORES = 150_000
#: The apps' start-up CPU work per launch at scale 1, ms (the `startup_cpu` difference: derivation in
#: its source; measured once, never tuned to a paper number).
STARTUP_CPU_MS = 360.0
#: An eMMC 5.0 class part (`emmc_timing`): Samsung's eMMC PRO, the first eMMC 5.0 parts (mass production
#: announced 2013-07; Tom's Hardware, "Samsung Now Mass-Producing eMMC 5.0"): the 32 GB and 64 GB parts
#: read and write 4 KiB at random at 7,000 IOPS each, read 250 MB/s and write 90 MB/s sequentially, over
#: the HS400 interface (400 MB/s, JEDEC JESD84-B50). eMMC 5.0 has no command queue, so every rate is at
#: one command in flight.
EMMC_RANDOM_IOPS = 7000.0
EMMC_SEQ_READ_MB_S = 250.0
EMMC_SEQ_WRITE_MB_S = 90.0
EMMC_BUS_MB_S = 400.0


def _preset_drive() -> tuple[int, int, int]:
    """The host-ezswap preset's drive: page size in bytes, channels, chips per channel."""
    from .. import _core
    from .._toml import loads

    g = loads(_core.preset_toml("host-ezswap"))["device"]["geometry"]
    return g["page_size_bytes"], g["channels"], g["chips_per_channel"]


#: The preset's drive (the eMMC's one bus carries every transfer: the same dies on one channel).
PRESET_PAGE_BYTES, PRESET_CHANNELS, PRESET_CHIPS = _preset_drive()


def emmc_times(page_bytes: int = PRESET_PAGE_BYTES) -> tuple[float, float]:
    """(tR, tPROG) in µs such that, at one command in flight on one 400 MB/s bus, a 4 KiB random read
    and a 4 KiB random write each take 1/7,000 s on average (the published IOPS; the controller's own
    time is lumped into the array times, as the published figures are end to end). A read is tR plus
    4 KiB over the bus; a write is 4 KiB over the bus, and one write in page/4 KiB waits for the program
    of the page it fills (docs/model-timing.md, a partly filled page's register holds the data)."""
    array_us = 1e6 / EMMC_RANDOM_IOPS - 4096 / EMMC_BUS_MB_S  # bytes / (MB/s) = µs on the bus
    return round(array_us, 3), round(array_us * page_bytes / 4096, 3)


EMMC_READ_US, EMMC_PROGRAM_US = emmc_times()
#: Linux 6.18's memory-cgroup statistics flush period (mm/memcontrol.c FLUSH_TIME = 2 s), as the
#: kernel-capture setups run it.
TODAY_FLUSH_MS = 2000


@dataclass(frozen=True)
class Difference:
    """One paper-platform difference: `key`, the change, its source, the dotted config keys it sets,
    and which configurations it touches (`where`: a predicate name, see `touches`)."""

    key: str
    change: str
    source: str
    overrides: dict[str, Any] = field(default_factory=dict)
    where: str = "zswap"
    #: Keys of the launch cycle's workload table (`workload.processes[0].workload`) it sets.
    launch: dict[str, Any] = field(default_factory=dict)
    #: Dotted keys set only on configurations whose replacement is zswap's LRU.
    lru_only: dict[str, Any] = field(default_factory=dict)
    #: Dotted keys set to a full-size value × the workload's scale, rounded (sizes in the pool's units).
    scaled: dict[str, float] = field(default_factory=dict)


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "zpool_4_7",
        "zswap of Linux 4.7 on z3fold as first merged (z3fold_4_8: only a lone middle object is "
        "compacted, no gap slides, no moving a lone object to another page); zswap's own LRU replaced "
        "by the allocator's LRU of pool pages (every object of the tail page written back); CA keeps "
        "its lottery, on the same z3fold",
        "paper §IV-A (zswap and zpool of 4.7, z3fold); z3fold v4 patch (linux-mm, May 2016, merged in "
        "4.8) z3fold_compact_page, z3fold_free, z3fold_reclaim_page; v4.7 mm/zswap.c zswap_shrink → "
        "zpool_shrink; BIG_CHUNK_GAP came in 4.10, compact_single_buddy in 5.x",
        {"host.zswap.zpool": "z3fold_4_8"},
        lru_only={"host.zswap.ezswap.replacement": "page_lru"},
    ),
    Difference(
        "shrink_sync",
        "Linux 4.7's store at a full pool: the storing task writes one pool page back, then stores",
        "v4.7 mm/zswap.c zswap_frontswap_store (zswap_is_full → zswap_shrink); docs/ezswap.md",
        {"host.zswap.full_pool": "shrink_sync"},
    ),
    Difference(
        "reject_incompressible",
        "Linux 4.x store format: an 8-byte zswap_header per object; an object over a page is refused "
        "(reject_compress_poor) and the page goes to the swap device (a file page is dropped)",
        "v4.7 mm/zswap.c zswap_frontswap_store (len = dlen + sizeof(struct zswap_header); -ENOSPC → "
        "zswap_reject_compress_poor), mm/z3fold.c z3fold_alloc (size > PAGE_SIZE → -ENOSPC)",
        {"host.zswap.incompressible": "reject"},
    ),
    Difference(
        "shared_loads",
        "Linux 4.7's loads: a page loaded from zswap keeps its entry and stays clean in the swap cache "
        "(evicted unchanged, it costs no new store); the entry cannot be written back meanwhile",
        "v4.7 mm/zswap.c zswap_frontswap_load (the entry is kept; frontswap_tmem_exclusive_gets was "
        "removed in 3.x) and zswap_writeback_entry (ZSWAP_SWAPCACHE_EXIST); exclusive loads: an option "
        "from 6.5 (CONFIG_ZSWAP_EXCLUSIVE_LOADS), the only mode from 6.9",
        {"host.zswap.exclusive_loads": False},
    ),
    Difference(
        "no_zero_map",
        "no zero map: a zero page is compressed into zswap (no same-filled handling before 4.14) or "
        "written to the swap device like any other",
        "the zero map came with Linux 6.12 (mm/swapfile.c si->zeromap); zswap's same-filled pages with "
        "4.14 (mm/zswap.c zswap_is_page_same_filled, a85f878b443f); 3.10 mm/page_io.c swap_writepage "
        "writes every page",
        {"host.swap.zero_map": False},
        where="all",
    ),
    Difference(
        "live_stats",
        "memory-cgroup statistics read live by reclaim (no 2 s flush)",
        "the rstat flush 6.x reclaim reads came in 5.13; 3.10's memcg counters are per-CPU batches of "
        "at most 32 pages (mm/memcontrol.c); docs/ezswap.md",
        {"host.reclaim.stats_flush_ms": 0},
        where="all",
    ),
    Difference(
        "emmc_qd1",
        "eMMC 5.0 storage: one command in flight at the device (the block layer issues a request when "
        "the one before it completes; the submitter waits); the NAND timing is a separate difference, "
        "emmc_timing",
        "paper Table 1 (Odroid-XU4, 32 GB eMMC 5.0 HS400); JEDEC JESD84-B50 (eMMC 5.0: no command "
        "queue), JESD84-B51 (CMDQ, up to 32 tasks, came in eMMC 5.1); host.block.queue_depth = 1",
        {"host.block.queue_depth": 1},
        where="all",
    ),
    Difference(
        "emmc_timing",
        f"eMMC 5.0 class NAND timing: every transfer on one 400 MB/s bus (HS400; the drive's dies on one "
        f"channel), tR {EMMC_READ_US:g} µs and tPROG {EMMC_PROGRAM_US:g} µs, so that a 4 KiB random read and "
        f"write at one command in flight each take 1/{EMMC_RANDOM_IOPS:,.0f} s (array and controller time "
        "lumped); sequential rates follow (docs/ezswap.md, the data-sheet check); erase time stays today's",
        "Samsung eMMC PRO, the first eMMC 5.0 (32/64 GB: 7,000 random read and write IOPS, 250/90 MB/s "
        "sequential; Tom's Hardware, 2013-07); HS400 400 MB/s, JEDEC JESD84-B50; the board's own part is "
        "not public; paper Table 1 (32 GB eMMC 5.0)",
        {
            "device.geometry.channels": 1,
            "device.geometry.chips_per_channel": PRESET_CHANNELS * PRESET_CHIPS,
            "device.timing.channel_mb_per_s": EMMC_BUS_MB_S,
            "device.timing.read_us": EMMC_READ_US,
            "device.timing.program_us": EMMC_PROGRAM_US,
        },
        where="all",
    ),
    Difference(
        "ca_code",
        "CA as the authors' code has it (replacement = lottery_code): 19 lists (one-object pages in four "
        "free-space bins, two-object pages in two, three-object pages by file count, one list of pages "
        "with 32 free chunks or more), the code's weights, tickets = list share x 1000 x weight, head or "
        "tail by the objects' mean age against 150,000 stores x the plan's scale (the code's threshold "
        "is for its 100 MB pool)",
        "J-S-Kim/ezswap 37586286 mm/z3fold.c (lists L317-349, weights L1022-1024, tickets and draw "
        "L1026-1075, head/tail L560-600 and L684-720), read for docs/platforms/ezswap-sources.md; the "
        "paper (§III-C) describes 18 categories instead",
        {"host.zswap.ezswap.replacement": "lottery_code"},
        where="lottery",
        scaled={"host.zswap.ezswap.lottery_code_age": CODE_AGE_STORES},
    ),
    Difference(
        "startup_cpu",
        f"launch time as the paper measures it (launch to first frame): the app's own start-up CPU work "
        f"({STARTUP_CPU_MS:g} ms per launch at scale 1, x the plan's scale, spread over the launch's "
        "references) on top of its faults",
        "paper §IV-B (launch time); the CPU share is a bound from Nguyen et al., MobiSys 2014 (SmartIO "
        "poster, 1009 Android devices: I/O wait is at most 58 % of CPU active time, so CPU work is at "
        "least 42/58 of the I/O wait), applied to the launch time of today's `swap` configuration at "
        "seed 42 (62.3 ms at scale 1/8): 0.724 x 62.3 ms / 0.125 = 361 ms, taken as 360; docs/ezswap.md",
        where="all",
        launch={"startup_cpu_ms": STARTUP_CPU_MS},
    ),
    Difference(
        "zram_lzo",
        "zram compresses with lzo (lzo-rle came in 5.1)",
        "3.10 drivers/staging/zram (lzo only); lzo-rle: 5.1 crypto/lzo-rle.c",
        {"host.swap.backend.comp_algorithm": "lzo"},
        where="zram",
    ),
)
BY_KEY = {d.key: d for d in DIFFERENCES}
PAPER_KEYS = tuple(d.key for d in DIFFERENCES)


def check(keys: tuple[str, ...] | frozenset[str]) -> None:
    unknown = sorted(set(keys) - set(BY_KEY))
    if unknown:
        raise ValueError(f"unknown ezswap platform difference(s) {unknown}: known {sorted(BY_KEY)}")


def touches(d: Difference, name: str) -> bool:
    """Whether difference `d` changes configuration `name`'s run."""
    zswap = name not in ("swap", "zram")
    if d.where == "all":
        return True
    if d.where == "lottery":
        return next(c for c in CONFIGS if c[0] == name)[2] == "lottery"
    if d.where == "zram":
        return name == "zram"
    return zswap


def configure(cfg: dict[str, Any], name: str, keys: tuple[str, ...] | frozenset[str]) -> None:
    """Set configuration `name` on today's platform in `cfg` (the `host-ezswap` preset, in place), then
    switch on the differences `keys`."""
    check(keys)
    _, admission, replacement, apa = next(c for c in CONFIGS if c[0] == name)
    host = cfg["host"]
    z = host["zswap"]
    z["enabled"] = name not in ("swap", "zram")
    # Today's zswap (Linux 6.18): zsmalloc, LRU of entries, refuse at the limit. CA needs z3fold.
    z["zpool"] = "z3fold" if replacement == "lottery" else "zsmalloc"
    z["full_pool"] = "reject"
    z["ezswap"].update(admission=admission, replacement=replacement, apa=apa)
    host.setdefault("reclaim", {})["stats_flush_ms"] = TODAY_FLUSH_MS
    if name == "zram":
        # Android sets a disksize and no mem_limit: here the swap partition's size (512 MiB), so zram
        # takes as much RAM as its compressed pages need. (A mem_limit at the zswap pool's 13 MiB made
        # every write past it fail and reclaim spin on the dirty pages: over 60 CPU s per run.)
        host["swap"]["backend"] = {"kind": "zram"}
    for d in DIFFERENCES:
        if d.key in keys and touches(d, name):
            # The era's replacement stands in for zswap's LRU only; CA keeps its own.
            lru = d.lru_only if replacement == "lru" else {}
            for dotted, value in {**d.overrides, **lru}.items():
                _set(cfg, dotted, value)
            launch = cfg["workload"]["processes"][0]["workload"]
            # The launch cycle's default scale is 1/8 (workload.scale, config-reference.md).
            for dotted, full in d.scaled.items():
                _set(cfg, dotted, round(full * launch.get("scale", 0.125)))
            launch.update(d.launch)


def _set(cfg: dict[str, Any], dotted: str, value: Any) -> None:
    *path, last = dotted.split(".")
    node = cfg
    for p in path:
        node = node.setdefault(p, {})
    node[last] = value


def describe() -> str:
    """The paper platform's settings with their sources (the report's setup)."""
    return "; ".join(f"{d.key}: {d.change} [{d.source}]" for d in DIFFERENCES)


def emmc_datasheet_check(requests: int = 20_000) -> list[dict[str, Any]]:
    """The `emmc_timing` drive against the published figures it was set from and those it was not: 4 KiB
    random reads and writes and 512 KiB sequential reads and writes, one command in flight (eMMC 5.0 has
    no queue), on the preset's drive with `emmc_timing`'s overrides. Rows: figure, unit, published, model."""
    from .. import _api, _core
    from .._toml import loads

    cfg = loads(_core.preset_toml("host-ezswap"))
    for dotted, value in BY_KEY["emmc_timing"].overrides.items():
        _set(cfg, dotted, value)
    rows = []
    for figure, read, size, pattern, published, unit in (
        ("random 4 KiB read", True, 4096, "uniform", EMMC_RANDOM_IOPS, "IOPS"),
        ("random 4 KiB write", False, 4096, "uniform", EMMC_RANDOM_IOPS, "IOPS"),
        ("sequential read (512 KiB requests)", True, 1 << 19, "sequential", EMMC_SEQ_READ_MB_S, "MB/s"),
        ("sequential write (512 KiB requests)", False, 1 << 19, "sequential", EMMC_SEQ_WRITE_MB_S, "MB/s"),
    ):
        run_cfg = {
            "seed": 1,
            "device": cfg["device"],
            "precondition": {"warmup_capacity_multiples": 0.0},
            "workload": {
                "kind": "synthetic",
                "pattern": pattern,
                "requests": requests,
                "read_fraction": 1.0 if read else 0.0,
                "request_size_bytes": size,
                "align_bytes": size,
                "io": {"queue_depth": 1},
            },
        }
        iops = float(_api.run(run_cfg, record=False)["iops"])
        model = iops if unit == "IOPS" else iops * size / 1e6
        rows.append({"figure": figure, "unit": unit, "published": published, "model": round(model, 1)})
    return rows


if __name__ == "__main__":
    print("| figure | unit | published | model |\n|---|---|---:|---:|")
    for row in emmc_datasheet_check():
        print(f"| {row['figure']} | {row['unit']} | {row['published']:,.0f} | {row['model']:,.1f} |")

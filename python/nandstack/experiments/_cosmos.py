"""The SUP-GC paper's platform: the Cosmos+ OpenSSD (8 channels × 8 ways, Hynix MLC run in SLC mode)
with its GreedyFTL firmware, and fio through ext4 on it — as documented configuration overrides, each
naming its source. Read from the public firmware, Cosmos-OpenSSD/Cosmos-plus-OpenSSD @ 7860148,
`project/Prebuild/8Ch8Way-3.0.0/GreedyFTL-3.0.0/` (file:line below are in that folder).

`DIFFERENCES` lists, in order, every way the paper's platform differs from today's `sup-gc` device; the
paper platform is today's device with all of them switched on, and each ablation switches on one.
Nothing here is fitted to the paper's numbers; where the paper and the firmware are silent the setting
is today's, and `SILENT` says which.

Scaling: the drive keeps the firmware's 64 dies, page and block shape, over-provisioning formula, GC
schedule and write buffer; only the blocks per die shrink (8,192 → `blocks_per_die`), so the capacity
and, with it, the I/O volume (70% of the logical capacity, as 700 GB is of the 1 TB drive) shrink by the
same factor. What GC does per die depends on the free-block threshold (an absolute 1 block per die in
the firmware, which the scaled drive keeps), on the valid fraction of victims (set by the volume relative
to the capacity and the over-provisioning, both kept) and on the 64-way parallelism under 10 outstanding
requests (kept); the firmware's reserve of one block per die is a larger share of a smaller die, which is
why the over-provisioning is the firmware's at its real size (below) and why the `sup-gc` report re-runs
the 75% point of the paper platform at 4× the blocks per die (its `ablations` table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DIFFERENCES", "FIRMWARE", "SILENT", "Difference", "cosmos_overrides", "firmware_op"]

FIRMWARE = "Cosmos-OpenSSD/Cosmos-plus-OpenSSD @ 7860148, project/Prebuild/8Ch8Way-3.0.0/GreedyFTL-3.0.0"

#: Blocks per die of the real drive (ftl_config.h:186 USER_BLOCKS_PER_LUN 4096 × LUNS_PER_DIE 2; the
#: paper's Table 1: 8,192 + 88 × 2 extended blocks, which the firmware keeps for bad-block remapping).
REAL_BLOCKS_PER_DIE = 8192
DIES = 64  # ftl_config.h:197 USER_DIES = USER_CHANNELS (8) × USER_WAYS (8); paper §5.1: 64 dies


def firmware_op(blocks_per_die: int = REAL_BLOCKS_PER_DIE) -> float:
    """The firmware's over-provisioning as this model counts it (physical / logical − 1): the logical
    capacity is all blocks less 10% (MB_PER_OVER_PROVISION_BLOCK_SPACE, ftl_config.h:219) and one free
    block per die (MB_PER_MIN_FREE_BLOCK_SPACE, ftl_config.h:217; ftl_config.c:70; no bad blocks in a
    model). At 8,192 blocks per die: 0.1113."""
    return 1.0 / (0.9 - 1.0 / blocks_per_die) - 1.0


@dataclass(frozen=True)
class Difference:
    """One way the paper's platform differs from today's: a name, its overrides (dotted config keys over
    today's sup-gc task) and where the setting comes from."""

    key: str
    change: str
    source: str
    overrides: dict[str, Any]


def _geometry(blocks_per_die: int) -> dict[str, Any]:
    return {
        "device.geometry": {
            "channels": 8,
            "chips_per_channel": 8,
            "dies_per_chip": 1,
            "planes_per_die": 1,
            "blocks_per_plane": blocks_per_die,
            "pages_per_block": 128,
            "page_size_bytes": 16384,
            "cell_mode": "mlc",
        }
    }


def differences(blocks_per_die: int) -> list[Difference]:
    """Every documented difference, for a drive of `blocks_per_die` blocks per die."""
    return [
        Difference(
            "dies",
            "64 dies of one plane (8 ch × 8 ways), GC and free blocks per die",
            "ftl_config.h:153,188,197 (NSC_MAX_WAYS 8, USER_WAYS 8, USER_DIES); paper §5.1, Table 1",
            _geometry(blocks_per_die),
        ),
        Difference(
            "gc_schedule",
            "GC when a die's current block is full and it has ≤ 1 free block; one greedy victim per GC",
            "address_translation.c:661-700 (FindFreeVirtualSlice), :840 + address_translation.h:67 "
            "(RESERVED_FREE_BLOCK_COUNT 1); garbage_collection.c:71-131 (one victim), :152-181 (greedy, "
            "head of the fullest invalid-count list)",
            {
                "device.ftl.gc.trigger": "block_open",
                "device.ftl.gc.burst": "one_victim",
                "device.ftl.gc.start_free_blocks": 2,
                "device.ftl.gc.stop_free_blocks": 2,
            },
        ),
        Difference(
            "striping",
            "host slices striped round robin over dies, channel first, whatever their address",
            "address_translation.c:736-752 (FindDieForFreeSliceAllocation)",
            {
                "device.ftl.allocation": "dynamic",
                "device.ftl.striping_order": ["channel", "chip", "die", "plane"],
            },
        ),
        Difference(
            "op",
            f"over-provisioning 10% of blocks + 1 block per die ({firmware_op():.4f})",
            "ftl_config.h:217-219, ftl_config.c:70 (storageCapacity_L)",
            {"device.ftl.over_provisioning": round(firmware_op(), 5)},
        ),
        Difference(
            "slc_mode",
            "the MLC chips run in SLC mode (LSB pages only, 128 of 256 rows): SLC-mode tR/tPROG/tBERS",
            "ftl_config.h:124-125,185,199 (BITS_PER_FLASH_CELL SLC_MODE); times: the model's SLC "
            "defaults (nand/cell.rs) — the H27Q1T8YEB9R data sheet is not public",
            {"device.geometry.cell_mode": "slc"},
        ),
        Difference(
            "fio_layout",
            "fio lays out its files before randrw (sequential writes of the footprint), ext4 extents "
            "contiguous, O_DIRECT overwrites add no journal writes",
            "fio: a job with reads on a missing file writes it first ('Laying out IO file'); paper §5.3.2 "
            "(libaio, 10 jobs, 700 GB)",
            {
                "precondition": {
                    "fill_fraction": 0.7,
                    "fill_order": "sequential",
                    "warmup_capacity_multiples": 0.0,
                },
                "workload.footprint_fraction": 0.7,
            },
        ),
    ]


#: What today's device already shares with the firmware (so it is no difference) and where the paper and
#: the firmware are silent (so the setting stays today's).
SILENT = (
    "shared: 16 KiB pages and mapping slices (ftl_config.h:156,191), 128 pages per block (ftl_config.h:"
    "124,199; Table 1), a 16 MiB LRU write-back buffer (data_buffer.h:52: 16 × 64 entries of 16 KiB), "
    "greedy victims FIFO within a valid-count list (garbage_collection.c:152-181), GC copies within the "
    "victim's die (FindFreeVirtualSliceForGc), fio's 10 jobs at iodepth 1 (§5.3.2); silent: the "
    "controller's per-command CPU time (5 µs, today's input) and the fio file size (taken as the I/O "
    "volume, fio's io_size default = size)"
)


def cosmos_overrides(blocks_per_die: int, only: str | None = None, streams: int = 1) -> dict[str, Any]:
    """The overrides that turn today's sup-gc device into the paper's platform (all differences), or into
    today's with one difference switched on (`only` = its key). `streams`: open blocks per die the
    placement keeps (SUP-GC: 2, hot and cold). The firmware reserves one free block per die for its one
    open block; the paper does not say how its SUP-GC reserved room for two, so with 2 streams GC starts
    at the smallest threshold that guarantees every migration room (`start_free_blocks` = streams + 1 =
    3, GC at ≤ 2 free blocks per die) — one block per die more reserve than the baseline's."""
    diffs = differences(blocks_per_die)
    keys = [d.key for d in diffs]
    if only is not None and only not in keys:
        raise ValueError(f"unknown platform difference `{only}`; known: {', '.join(keys)}")
    out: dict[str, Any] = {}
    for d in diffs:
        if only is None or d.key == only:
            out.update(d.overrides)
    if "device.ftl.gc.start_free_blocks" in out and streams > 1:
        out["device.ftl.gc.start_free_blocks"] = out["device.ftl.gc.stop_free_blocks"] = streams + 1
    if only is None:  # the SLC override refines the geometry table set by `dies`
        out["device.geometry"] = {**out["device.geometry"], "cell_mode": "slc"}
        out.pop("device.geometry.cell_mode")
    return out


DIFFERENCES = differences(REAL_BLOCKS_PER_DIE)

#: BF-Optimized and GCaR-Optimized on the paper platform, as the paper tuned them, over `sup_gc.SCHEMES`.
#: What the paper gives (§5.2, §5.3.1–5.3.2): GCaR's buffer traversal "only 1%" of the cache — 10 of the
#: firmware's 1,024 buffer entries (data_buffer.h:52, 16 × 64 entries of 16 KiB) examined per eviction;
#: BF-Optimized's hashing costs "about 5%" of the throughput with no GC (1% writes), which today's 25 ns
#: per hash already gives (sup_gc.py). Not given, so today's: the Bloom filters' shape (Park & Du's
#: multiple Bloom filters, docs/sup-gc.md) and GCaR's CPU time per examined entry (500 ns). With the
#: firmware's round-robin die allocation every buffered slice goes to the same next die, so GCaR's
#: "skip entries bound for a die in GC" cannot choose: only its scan cost remains.
OTHER_SCHEMES: dict[str, dict[str, Any]] = {
    # BF-Optimized classifies GC copies too, so one victim's copies may open a block in either stream and
    # free less than they take: under the firmware's one victim per GC a die then runs out of blocks
    # (measured: DeviceFullError at 99% writes with GC at <= 3 free blocks; on the quick drive at <= 2).
    # So BF-Optimized's GC collects until the die again has its 3 free blocks (`to_start`): the one
    # setting here that is not the firmware's; the paper does not say how its BF-Optimized kept room.
    "BF-Optimized": {"device.ftl.gc.burst": "to_start"},
    "GCaR-like": {"device.controller.write_buffer.gc_aware_scan": 10},
}


def streams(scheme: str) -> int:
    """Open blocks per die a scheme's placement keeps: hot and cold for SUP-GC and BF-Optimized."""
    return 2 if scheme in ("SUP-GC", "BF-Optimized") else 1

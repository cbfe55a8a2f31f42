//! The host section: RAM, watermarks, reclaim, swap, readahead, page cache, cgroups and CPU costs.
//! Defaults are Linux 6.x defaults where Linux has one (named in each field's doc).

use nandstack_core::{ensure_config, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::backend::loopdev::LoopConfig;
use crate::backend::znswap::ZnswapConfig;
use crate::backend::zram::ZramConfig;

/// The host machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// RAM managed by the page allocator, MiB. Default 1024.
    #[serde(default = "d_ram")]
    pub ram_mib: u64,
    /// CPUs. Threads run on CPU (thread index mod cpus); each CPU has its own current swap cluster.
    /// Default 2.
    #[serde(default = "d_cpus")]
    pub cpus: u32,
    /// `vm.min_free_kbytes`, KiB. Default: Linux's formula, 4·√(RAM in KiB) clamped to [128, 262144].
    #[serde(default)]
    pub min_free_kbytes: Option<u64>,
    /// `vm.watermark_scale_factor`, in 1/10000 of RAM: the gap min→low and low→high is
    /// max(min/4, RAM·factor/10000). Default 10.
    #[serde(default = "d_wsf")]
    pub watermark_scale_factor: u32,
    /// `vm.swappiness`, 0–200: relative cost weight of anon vs file reclaim. Default 60.
    #[serde(default = "d_swappiness")]
    pub swappiness: u32,
    #[serde(default)]
    pub reclaim: ReclaimConfig,
    #[serde(default)]
    pub swap: SwapConfig,
    #[serde(default)]
    pub readahead: ReadaheadConfig,
    #[serde(default)]
    pub pagecache: PageCacheConfig,
    /// Memory cgroups (flat, all children of the root). Default none: every process in the root.
    #[serde(default)]
    pub cgroups: Vec<CgroupConfig>,
    #[serde(default)]
    pub costs: CostConfig,
    /// zswap, the compressed cache in front of the swap backend. Default off.
    #[serde(default)]
    pub zswap: crate::zswap::ZswapConfig,
    /// CPU time of compressing and decompressing pages (zswap, zram).
    #[serde(default)]
    pub compression: crate::compressor::CompressionCosts,
    /// Kernel-version differences of the fault path.
    #[serde(default)]
    pub fault: crate::vm::fault::FaultConfig,
    /// The block layer's path to the device (queue depth). Left out of the resolved configuration
    /// while it is the default, so configurations without it keep their hash.
    #[serde(default, skip_serializing_if = "BlockConfig::is_default")]
    pub block: BlockConfig,
}

/// The host's block layer in front of the device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockConfig {
    /// Commands in flight at the device at once; a request that finds them all busy is issued when the
    /// earliest completes (its submitter waits). 1 = eMMC up to 5.0, which has no command queue
    /// (JEDEC JESD84-B50; CMDQ with up to 32 tasks came in eMMC 5.1, JESD84-B51). Unset (the default):
    /// no limit, every request is issued when it arrives. (The host model's block layer; a block
    /// workload's issuer has its own, `workload.io.queue_depth`.)
    #[serde(default)]
    pub queue_depth: Option<u32>,
}
impl BlockConfig {
    fn is_default(&self) -> bool {
        *self == BlockConfig::default()
    }
}
fn d_ram() -> u64 {
    1024
}
fn d_cpus() -> u32 {
    2
}
fn d_wsf() -> u32 {
    10
}
fn d_swappiness() -> u32 {
    60
}
impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            ram_mib: d_ram(),
            cpus: d_cpus(),
            min_free_kbytes: None,
            watermark_scale_factor: d_wsf(),
            swappiness: d_swappiness(),
            reclaim: ReclaimConfig::default(),
            swap: SwapConfig::default(),
            readahead: ReadaheadConfig::default(),
            pagecache: PageCacheConfig::default(),
            cgroups: Vec::new(),
            costs: CostConfig::default(),
            zswap: Default::default(),
            compression: Default::default(),
            fault: Default::default(),
            block: Default::default(),
        }
    }
}

/// Which pages reclaim evicts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimPolicyKind {
    /// Linux's split LRU (anon/file × inactive/active, reference bits and PG_referenced second chance,
    /// refault activation, swappiness cost balance, priority scan) — `mm/vmscan.c` without MGLRU.
    Linux,
    /// Textbook FIFO: evict the oldest resident page.
    Fifo,
    /// Textbook CLOCK (second chance): a referenced page loses its bit and goes round again.
    Clock,
}

/// Page reclaim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReclaimConfig {
    /// `linux`, `fifo` or `clock`. Default `linux`.
    #[serde(default = "d_policy")]
    pub policy: ReclaimPolicyKind,
    /// `SWAP_CLUSTER_MAX`: pages isolated per batch and the target of one direct reclaim, pages.
    /// Default 32.
    #[serde(default = "d_scm")]
    pub swap_cluster_max: u32,
    /// Memory cgroup v1 semantics: limit reclaim waits for the writeback of pages it already marked
    /// for reclaim (`writeback_throttling_sane()` is false), and charges are not batched. Default true
    /// (the kernel captures used cgroup v1).
    #[serde(default = "d_true")]
    pub cgroup_v1: bool,
    /// `MAX_RECLAIM_RETRIES`: failed reclaim rounds before an allocation is declared out of memory.
    /// Default 16.
    #[serde(default = "d_retries")]
    pub max_reclaim_retries: u32,
    /// Workingset detection (`mm/workingset.c`): evicted pages leave shadow entries and a refault
    /// within the workingset size is activated. Default true.
    #[serde(default = "d_true")]
    pub workingset: bool,
    /// Period of the memory-cgroup statistics flush, ms (Linux 6.18's `FLUSH_TIME` is 2000). With a
    /// period, reclaim's heuristics read the cgroups' LRU sizes and workingset activations as of the
    /// last flush (6.18 flushes them for reclaim only when the periodic flusher is late): whether the
    /// active lists are aged (`inactive_is_low`, new activations), the workingset size a refault is
    /// compared with, the LRU size that decays reclaim costs; zswap's shrinker, when enabled, flushes a
    /// cgroup's statistics on each of its reclaims. 0 reads the live values (kernels before 5.13 read
    /// per-CPU batched counters). Default 0, so that runs do not depend on the flush's phase; the
    /// kernel-capture setups use 2000, which matches the 6.18 captures (a stale view can leave a cgroup
    /// with everything active and nothing aged, which runs it out of memory at some phases, as the
    /// kernel's memory controller OOM-kills such runs: docs/kernel-swap-comparison.md).
    #[serde(default = "d_stats_flush")]
    pub stats_flush_ms: u64,
    /// When the first statistics flush comes, ms after the start (the kernel's flusher runs from boot,
    /// so a program starts anywhere in its period). Default: one period (`stats_flush_ms`).
    #[serde(default)]
    pub stats_flush_first_ms: Option<u64>,
}
fn d_stats_flush() -> u64 {
    0
}
fn d_policy() -> ReclaimPolicyKind {
    ReclaimPolicyKind::Linux
}
fn d_scm() -> u32 {
    32
}
fn d_true() -> bool {
    true
}
fn d_retries() -> u32 {
    16
}
impl Default for ReclaimConfig {
    fn default() -> Self {
        ReclaimConfig {
            policy: d_policy(),
            swap_cluster_max: d_scm(),
            cgroup_v1: true,
            max_reclaim_retries: d_retries(),
            workingset: true,
            stats_flush_ms: d_stats_flush(),
            stats_flush_first_ms: None,
        }
    }
}

/// Discard (TRIM) of freed swap space.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscardMode {
    /// No discard (the distribution default: `swapon` without `--discard`).
    Off,
    /// `swapon --discard=pages`: a cluster whose last slot is freed is discarded whole before it is
    /// reused, and the allocator prefers free clusters.
    Cluster,
    /// Fine-grained: discard each aligned group of `slots` slots as soon as all its slots are free
    /// (not in Linux; the DISS-style alternative).
    Fine,
    /// iTRIM (DISS baseline): freed slots are queued and TRIMmed when the device is idle
    /// (`[host.swap.discard.idle]`).
    Itrim,
    /// STRIM (DISS): the slots of swapped-in pages are TRIMmed in batches of `strim_slots`, contiguous
    /// slots merged into one command; freed slots as iTRIM does (needs `host.swap.clean_data_handler`,
    /// or swapped-in pages evicted clean are lost).
    Strim,
}

/// Discard policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscardConfig {
    /// `off`, `cluster`, `fine`, `itrim` or `strim`. Default `off`.
    #[serde(default = "d_discard")]
    pub mode: DiscardMode,
    /// Group size of `fine` discard, slots (4 KiB each). Default 8.
    #[serde(default = "d_fine")]
    pub slots: u32,
    /// `fine`: a group whose cluster is emptied by the free is not discarded (the cluster returns to
    /// the free list), as the ZNSwap artefact's `trim_4k` path in Linux 5.12 `dec_cluster_info_page`.
    /// Default false: every emptied group is discarded.
    #[serde(default)]
    pub fine_skips_emptied_clusters: bool,
    /// `strim`: swapped-in slots per batch of TRIMs. Default 512 (2 MiB).
    #[serde(default = "d_strim")]
    pub strim_slots: u32,
    /// Idle-time TRIM of freed slots (`itrim`, `strim`).
    #[serde(default)]
    pub idle: crate::swap::discard::IdleTrimConfig,
}
fn d_strim() -> u32 {
    512
}
fn d_discard() -> DiscardMode {
    DiscardMode::Off
}
fn d_fine() -> u32 {
    8
}
impl Default for DiscardConfig {
    fn default() -> Self {
        DiscardConfig {
            mode: d_discard(),
            slots: d_fine(),
            fine_skips_emptied_clusters: false,
            strim_slots: d_strim(),
            idle: Default::default(),
        }
    }
}

/// Swap slot allocator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwapAllocatorKind {
    /// Linux's cluster allocator (per-CPU current cluster, free / nonfull / frag lists).
    Cluster,
    /// One cursor taking the next free slot (old Linux on rotational disks; textbook).
    NextFit,
    /// Linux 5.x–6.11 (`scan_swap_map_slots`): per-CPU clusters taken from the free-cluster list
    /// (FIFO) before any freed slot is reused, then a linear scan — the kernel of the ZNSwap paper's
    /// baseline.
    ClusterV5,
}

/// The swap partition and its slot allocator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapConfig {
    /// Size of the swap partition, MiB (slot 0 is the swap header). 0 = no swap. Default 512.
    #[serde(default = "d_swap")]
    pub size_mib: u64,
    /// Start of the swap partition on the device, MiB. Default 0.
    #[serde(default)]
    pub offset_mib: u64,
    /// `cluster` (Linux ≥ 6.12), `cluster_v5` (Linux 5.x–6.11) or `next_fit`. Default `cluster`.
    #[serde(default = "d_alloc")]
    pub allocator: SwapAllocatorKind,
    /// `SWAPFILE_CLUSTER`: slots per cluster, 512 (x86-64 with THP) or 256. Default 512.
    #[serde(default = "d_cluster")]
    pub cluster_slots: u32,
    /// `SWP_SOLIDSTATE`: a non-rotational device gets a current cluster per CPU; otherwise one global
    /// cluster. Default true.
    #[serde(default = "d_true")]
    pub solid_state: bool,
    #[serde(default)]
    pub discard: DiscardConfig,
    /// `vm_swap_full()` cutoff: swap counts as full when more than this fraction of slots is used;
    /// then swap-cache copies are dropped at fault and activation. Linux: 0.5. Default 0.5.
    #[serde(default = "d_full")]
    pub full_ratio: f64,
    /// Per-CPU swap slot cache of Linux ≤ 6.14 (`SWAP_SLOTS_CACHE_SIZE`): slots are taken from the
    /// allocator and freed back in batches of this many; 0 = none (Linux ≥ 6.15). Default 0.
    #[serde(default)]
    pub slot_cache: u32,
    /// Largest block request (`max_sectors_kb`), KiB; contiguous swap pages of one batch merge up to
    /// it. Default 512.
    #[serde(default = "d_maxreq")]
    pub max_request_kib: u32,
    /// Where swapped-out pages are stored (the swap device and its I/O path). Default
    /// `{ kind = "block" }`.
    #[serde(default)]
    pub backend: SwapBackendConfig,
    /// DISS SDR: at swapon, register the partition's LBA range with the device (the cross-layer
    /// `register_swap_range` command; a device without it is an error). Default false.
    #[serde(default)]
    pub register_range: bool,
    /// DISS CDH (clean-data handler): every page read from swap is marked dirty, so it is written again
    /// if evicted (needed when swapped-in data is invalidated on the device: CL-SDI, STRIM). Default false.
    #[serde(default)]
    pub clean_data_handler: bool,
    /// `cluster_v5` only: where its linear scan starts (`[host.swap.cluster_v5]`).
    #[serde(default)]
    pub cluster_v5: ClusterV5Config,
    /// The swap layer's zero map (`si->zeromap`, Linux ≥ 6.12): a zero-filled page becomes a bit and is
    /// neither compressed nor written. `false`: Linux before 6.12 — the page goes to zswap (which before
    /// 4.14 had no same-filled handling either and compresses it) or to the backend like any other
    /// (zram keeps its own same-filled check). Default true.
    #[serde(default = "d_true")]
    pub zero_map: bool,
}

/// `[host.swap.cluster_v5]`: the scan base of the 5.x allocator. The defaults are Linux 5.8–6.11 without
/// the trunk re-draw (what the allocator modelled before these keys existed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterV5Config {
    /// One scan base for every CPU (`si->cluster_next`, Linux before 5.8) instead of one per CPU
    /// (`cluster_next_cpu`, 5.8+). Default false.
    #[serde(default)]
    pub global_scan_base: bool,
    /// Linux 5.8+ `set_cluster_next`: every allocation moves the scan base past its slot, and when that
    /// crosses a 64 MiB trunk (16,384 slots, `SWAP_ADDRESS_SPACE_PAGES`) the base is re-drawn at random
    /// between the lowest and highest free slot, aligned down to a trunk (seeded). Default false: the
    /// base moves only with the linear scan.
    #[serde(default)]
    pub trunk_redraw: bool,
}

/// `[host.swap.backend]`: the swap backend (`crates/nandstack-host/src/backend/`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum SwapBackendConfig {
    /// Linux swap on a partition of the block device (`[host.swap] offset_mib`, `size_mib`): slot `s` is
    /// the 4 KiB at offset + s × 4096; consecutive slots of one submission merge into one request.
    #[default]
    Block,
    /// Linux swap on a loop device over a file in RAM (tmpfs), as in the kernel captures
    /// (`capture-swap.sh`): requests are formed as for `block`, then served in order by the loop
    /// worker, which copies each 4 KiB page to or from the file; no SSD is involved. Completions run
    /// on the worker's CPU.
    Loop(LoopConfig),
    /// zram: a compressed RAM disk of `size_mib` (`disksize`) holding the swap area, a synchronous device
    /// (swap-ins bypass the swap cache and free their slot); see `ZramConfig`.
    Zram(ZramConfig),
    /// ZNSwap on a zoned device (`device.kind = "zoned"`): slots live in zones, swap-outs are zone
    /// appends through swap-zones chosen by a placement policy, a host-side GC (ZNGC) reclaims zones;
    /// no discard and no swap-cache cutoff (docs/znswap.md).
    Znswap(ZnswapConfig),
}
fn d_alloc() -> SwapAllocatorKind {
    SwapAllocatorKind::Cluster
}
fn d_swap() -> u64 {
    512
}
fn d_cluster() -> u32 {
    512
}
fn d_full() -> f64 {
    0.5
}
fn d_maxreq() -> u32 {
    512
}
impl Default for SwapConfig {
    fn default() -> Self {
        SwapConfig {
            size_mib: d_swap(),
            offset_mib: 0,
            allocator: d_alloc(),
            cluster_slots: d_cluster(),
            solid_state: true,
            discard: DiscardConfig::default(),
            full_ratio: d_full(),
            slot_cache: 0,
            max_request_kib: d_maxreq(),
            backend: SwapBackendConfig::default(),
            register_range: false,
            clean_data_handler: false,
            cluster_v5: ClusterV5Config::default(),
            zero_map: true,
        }
    }
}

/// Swap readahead policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadaheadPolicyKind {
    /// `swap_vma_readahead`: pages around the fault address in the same VMA and 2 MiB region, window
    /// from the per-VMA hit count (Linux default when no rotational swap device is active).
    Vma,
    /// `swap_cluster_readahead`: an aligned block of slots around the faulting slot, window from the
    /// global hit count (Linux with a rotational swap device, or `vma_ra_enabled=false`).
    Cluster,
    /// No readahead: read only the faulting page.
    Off,
}

/// Swap readahead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadaheadConfig {
    /// `vma`, `cluster` or `off`. Default `vma`.
    #[serde(default = "d_ra")]
    pub policy: ReadaheadPolicyKind,
    /// `vm.page-cluster`: the window is at most 2^page_cluster pages. Default 3.
    #[serde(default = "d_pc")]
    pub page_cluster: u32,
}
fn d_ra() -> ReadaheadPolicyKind {
    ReadaheadPolicyKind::Vma
}
fn d_pc() -> u32 {
    3
}
impl Default for ReadaheadConfig {
    fn default() -> Self {
        ReadaheadConfig {
            policy: d_ra(),
            page_cluster: d_pc(),
        }
    }
}

/// The page cache and the file partition holding mapped files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageCacheConfig {
    /// Start of the file partition on the device, MiB. Default: right after the swap partition.
    #[serde(default)]
    pub offset_mib: Option<u64>,
    /// Read-around window of an mmap fault (`read_ahead_kb`), KiB. Default 128.
    #[serde(default = "d_rakb")]
    pub read_ahead_kb: u32,
    /// `vm.dirty_expire_centisecs` in ms: the flusher writes dirty file pages older than this.
    /// Default 30000.
    #[serde(default = "d_expire")]
    pub dirty_expire_ms: u64,
    /// `vm.dirty_writeback_centisecs` in ms: period of the flusher. Default 5000.
    #[serde(default = "d_wb")]
    pub dirty_writeback_ms: u64,
    /// `vm.dirty_background_ratio`, percent of RAM: above this many dirty file pages the flusher writes
    /// them all. Default 10.
    #[serde(default = "d_bg")]
    pub dirty_background_ratio: u32,
}
fn d_rakb() -> u32 {
    128
}
fn d_expire() -> u64 {
    30_000
}
fn d_wb() -> u64 {
    5_000
}
fn d_bg() -> u32 {
    10
}
impl Default for PageCacheConfig {
    fn default() -> Self {
        PageCacheConfig {
            offset_mib: None,
            read_ahead_kb: d_rakb(),
            dirty_expire_ms: d_expire(),
            dirty_writeback_ms: d_wb(),
            dirty_background_ratio: d_bg(),
        }
    }
}

/// A memory cgroup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CgroupConfig {
    /// Name, referenced by `processes[].cgroup`.
    pub name: String,
    /// `memory.limit_in_bytes` (v1) / `memory.max` (v2), MiB. Default: no limit.
    #[serde(default)]
    pub limit_mib: Option<u64>,
    /// The same limit in 4 KiB pages, for small examples (exclusive with `limit_mib`). Default: none.
    #[serde(default)]
    pub limit_pages: Option<u64>,
    /// The cgroup's own `memory.swappiness` (v1). Default: `host.swappiness`.
    #[serde(default)]
    pub swappiness: Option<u32>,
    /// blk-throttle `read_bps_device` on the swap partition, MiB/s. Default: unlimited.
    #[serde(default)]
    pub swap_read_mib_per_s: Option<f64>,
    /// blk-throttle `write_bps_device` on the swap partition, MiB/s. Default: unlimited.
    #[serde(default)]
    pub swap_write_mib_per_s: Option<f64>,
}

/// CPU time of host work (the simulated clock of each thread). Kernel work is charged to the thread
/// that does it; I/O waits come from the device model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostConfig {
    /// CPU time of one memory reference that hits RAM (the program's own work), ns. Default 10.
    #[serde(default = "d_ref")]
    pub ns_per_reference: u64,
    /// Kernel time of a minor fault (first touch, swap-cache or page-cache hit), ns. Default 1000.
    #[serde(default = "d_minor")]
    pub minor_fault_ns: u64,
    /// Kernel time of a major fault besides the device wait (allocation, I/O submission, mapping), ns.
    /// Default 3000.
    #[serde(default = "d_major")]
    pub major_fault_ns: u64,
    /// Reclaim CPU time per page scanned (isolation, reference check, unmap), ns. Default 300.
    #[serde(default = "d_scan")]
    pub reclaim_scan_ns: u64,
    /// Reclaim CPU time per page written out, on top of the scan (`add_to_swap`, `try_to_unmap` with
    /// its TLB flush, bio allocation and submission), ns. Default 0 (counted in `reclaim_scan_ns`).
    #[serde(default)]
    pub reclaim_write_ns: u64,
}
fn d_ref() -> u64 {
    10
}
fn d_minor() -> u64 {
    1000
}
fn d_major() -> u64 {
    3000
}
fn d_scan() -> u64 {
    300
}
impl Default for CostConfig {
    fn default() -> Self {
        CostConfig {
            ns_per_reference: d_ref(),
            minor_fault_ns: d_minor(),
            major_fault_ns: d_major(),
            reclaim_scan_ns: d_scan(),
            reclaim_write_ns: 0,
        }
    }
}

/// `key`'s value `v` lies in `[lo, hi]`, or a config error saying so.
fn in_range(key: &str, v: u64, lo: u64, hi: u64) -> Result<()> {
    ensure_config!(v >= lo && v <= hi, key, "is {v}: must be in [{lo}, {hi}]");
    Ok(())
}

impl HostConfig {
    /// Every key's range, section by section. Errors name the key.
    pub fn validate(&self) -> Result<()> {
        self.validate_machine()?;
        self.validate_reclaim()?;
        self.validate_swap()?;
        self.zswap.validate()?;
        self.compression.validate()?;
        if let SwapBackendConfig::Zram(z) = &self.swap.backend {
            z.validate()?;
        }
        self.validate_pagecache()?;
        self.validate_cgroups()?;
        if let Some(d) = self.block.queue_depth {
            in_range("host.block.queue_depth", d as u64, 1, 65536)?;
        }
        Ok(())
    }

    /// RAM, CPUs, swappiness and watermarks.
    fn validate_machine(&self) -> Result<()> {
        let ram = self.ram_mib;
        in_range("host.ram_mib", ram, 1, 1 << 20)?;
        in_range("host.cpus", self.cpus as u64, 1, 1024)?;
        in_range("host.swappiness", self.swappiness as u64, 0, 200)?;
        in_range(
            "host.watermark_scale_factor",
            self.watermark_scale_factor as u64,
            1,
            3000,
        )?;
        if let Some(m) = self.min_free_kbytes {
            ensure_config!(
                m != 0 && m < ram * 1024 / 4,
                "host.min_free_kbytes",
                "is {m}: must be ≥ 1 and below a quarter of RAM"
            );
        }
        Ok(())
    }

    /// `[host.reclaim]` (the statistics flush's keys are checked with the page cache's, in the order
    /// they were always checked).
    fn validate_reclaim(&self) -> Result<()> {
        let r = &self.reclaim;
        in_range(
            "host.reclaim.swap_cluster_max",
            r.swap_cluster_max as u64,
            1,
            4096,
        )?;
        in_range(
            "host.reclaim.max_reclaim_retries",
            r.max_reclaim_retries as u64,
            1,
            1000,
        )
    }

    /// `[host.swap]` with its discard, and `host.readahead.page_cluster`.
    fn validate_swap(&self) -> Result<()> {
        let s = &self.swap;
        let cs = s.cluster_slots;
        ensure_config!(
            cs == 256 || cs == 512,
            "host.swap.cluster_slots",
            "is {cs}: must be 256 or 512"
        );
        let size = s.size_mib;
        ensure_config!(
            size <= 1 << 21,
            "host.swap.size_mib",
            "is {size}: at most 2 TiB (2097152 MiB) of swap"
        );
        let fr = s.full_ratio;
        ensure_config!(
            fr.is_finite() && fr > 0.0 && fr <= 1.0,
            "host.swap.full_ratio",
            "is {fr}: must be in (0, 1]"
        );
        in_range("host.swap.slot_cache", s.slot_cache as u64, 0, 4096)?;
        let kib = s.max_request_kib;
        ensure_config!(
            kib >= 4 && kib.is_multiple_of(4) && kib <= 65536,
            "host.swap.max_request_kib",
            "is {kib}: must be a multiple of 4 in [4, 65536]"
        );
        let d = &s.discard;
        ensure_config!(
            d.mode != DiscardMode::Fine || (d.slots != 0 && d.slots <= cs),
            "host.swap.discard.slots",
            "is {}: must be in [1, cluster_slots = {cs}]",
            d.slots
        );
        if d.mode == DiscardMode::Strim {
            in_range(
                "host.swap.discard.strim_slots",
                d.strim_slots as u64,
                1,
                1 << 20,
            )?;
        }
        d.idle.validate()?;
        let pc = self.readahead.page_cluster;
        ensure_config!(
            pc <= 5,
            "host.readahead.page_cluster",
            "is {pc}: must be in [0, 5] (SWAP_RA_ORDER_CEILING)"
        );
        Ok(())
    }

    /// `[host.pagecache]` and the statistics flush.
    fn validate_pagecache(&self) -> Result<()> {
        let p = &self.pagecache;
        let ra = p.read_ahead_kb;
        ensure_config!(
            ra.is_multiple_of(4) && ra <= 65536,
            "host.pagecache.read_ahead_kb",
            "is {ra}: must be a multiple of 4 in [0, 65536]"
        );
        let period = self.reclaim.stats_flush_ms;
        ensure_config!(
            period <= 86_400_000,
            "host.reclaim.stats_flush_ms",
            "is {period}: must be in [0, 86400000] (0 reads live statistics)"
        );
        if let Some(first) = self.reclaim.stats_flush_first_ms {
            ensure_config!(
                first <= period,
                "host.reclaim.stats_flush_first_ms",
                "is {first}: must be in [0, stats_flush_ms = {period}] (the first flush comes within \
                 one period)"
            );
        }
        ensure_config!(
            p.dirty_writeback_ms != 0,
            "host.pagecache.dirty_writeback_ms",
            "must be ≥ 1"
        );
        in_range(
            "host.pagecache.dirty_background_ratio",
            p.dirty_background_ratio as u64,
            1,
            100,
        )
    }

    /// `[[host.cgroups]]`: unique names, limits, throttles.
    fn validate_cgroups(&self) -> Result<()> {
        ensure_config!(
            self.cgroups.len() <= 1000,
            "host.cgroups",
            "at most 1000 cgroups"
        );
        for (i, c) in self.cgroups.iter().enumerate() {
            let key = |k: &str| format!("host.cgroups[{i}].{k}");
            ensure_config!(
                !c.name.is_empty() && !self.cgroups[..i].iter().any(|o| o.name == c.name),
                key("name"),
                "`{}` must be non-empty and unique",
                c.name
            );
            ensure_config!(
                c.limit_mib != Some(0) && c.limit_pages != Some(0),
                key("limit_mib"),
                "must be ≥ 1"
            );
            ensure_config!(
                c.limit_mib.is_none() || c.limit_pages.is_none(),
                key("limit_pages"),
                "give the limit in MiB or in pages, not both"
            );
            if let Some(sw) = c.swappiness {
                in_range(&key("swappiness"), sw as u64, 0, 200)?;
            }
            for (k, v) in [
                ("swap_read_mib_per_s", c.swap_read_mib_per_s),
                ("swap_write_mib_per_s", c.swap_write_mib_per_s),
            ] {
                if let Some(v) = v {
                    ensure_config!(v.is_finite() && v > 0.0, key(k), "is {v}: must be > 0");
                }
            }
        }
        Ok(())
    }

    /// Watermarks (min, low, high) in pages, as `__setup_per_zone_wmarks` computes them for one zone.
    pub fn watermarks(&self) -> (u64, u64, u64) {
        let ram_kib = self.ram_mib * 1024;
        let min_kib = self
            .min_free_kbytes
            .unwrap_or_else(|| ((ram_kib * 16) as f64).sqrt() as u64)
            .clamp(128, 262_144);
        let pages = ram_kib / 4;
        let min = (min_kib / 4).max(1);
        let gap = (min / 4).max(pages * self.watermark_scale_factor as u64 / 10_000);
        (min, min + gap, min + 2 * gap)
    }
}

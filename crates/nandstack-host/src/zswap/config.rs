//! `[host.zswap]`: zswap's settings (the compressed cache in front of the swap backend) and what a store
//! does at the pool's limit. Defaults are Linux 6.18's where the kernel has one.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compressor::CompressorKind;
use crate::zpool::ZpoolKind;

/// What a store does when the pool is at its limit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FullPoolPolicy {
    /// Linux ≥ 5.8 (6.18's `zswap_store`): a store at the limit is refused before compression and queues
    /// the asynchronous writeback worker; stores stay refused until the pool is back at
    /// `accept_threshold_percent` of the limit.
    Reject,
    /// Linux 4.7 (`zswap_frontswap_store`, the ezswap paper's kernel): when the pool is over its limit
    /// the storing task shrinks it synchronously by one pool page (`zswap_shrink` → `zpool_shrink` →
    /// `z3fold_reclaim_page`/`zbud_reclaim_page`: every object of the allocator's victim page written
    /// back, up to 8 victim pages tried), its CPU time charged to that task, then compresses and stores
    /// the page; the store is refused only when no page could be freed. No hysteresis, no worker.
    ShrinkSync,
}

/// What a store does with a page that does not compress.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IncompressiblePolicy {
    /// Linux 6.18 (`zswap_compress`): a page whose compressed length is not below a page is stored as
    /// it is, a whole page of the pool (if the allocator takes objects of a page).
    StoreAsIs,
    /// Linux 3.11–4.x (`zswap_frontswap_store`, e.g. v4.7, the ezswap paper's zswap): every object
    /// carries an 8-byte `struct zswap_header` (the swap entry) before the compressed bytes, and an
    /// object larger than a page is refused by the allocator (`z3fold_alloc`/`zbud_alloc`: size >
    /// PAGE_SIZE → -ENOSPC), counted in `reject_compress_poor`: the page goes to the swap device.
    Reject,
}

/// `[host.zswap]`: zswap, the compressed cache that `swap_writeout` tries before the swap backend
/// (`mm/zswap.c`). Its parameters are the module's (`/sys/module/zswap/parameters/*`); the worker costs
/// are the model's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZswapConfig {
    /// `enabled`. Default false (`CONFIG_ZSWAP_DEFAULT_ON` is off).
    #[serde(default)]
    pub enabled: bool,
    /// `compressor`: `lzo`, `lzo-rle`, `lz4`, `deflate` or `zstd`. Default `lzo`
    /// (`CONFIG_ZSWAP_COMPRESSOR_DEFAULT`).
    #[serde(default = "d_lzo")]
    pub compressor: CompressorKind,
    /// `zpool`: `zsmalloc` (Linux 6.18's only allocator), `z3fold` or `zbud`. Default `zsmalloc`.
    #[serde(default = "d_zsmalloc")]
    pub zpool: ZpoolKind,
    /// `max_pool_percent`: the pool may hold at most this percentage of RAM (pages of the pool, holes
    /// included). Default 20.
    #[serde(default = "d_max_pool")]
    pub max_pool_percent: u32,
    /// `accept_threshold_percent`: once the pool hit its limit, stores are refused until it is back
    /// at or below this percentage of the limit. Default 90.
    #[serde(default = "d_accept")]
    pub accept_threshold_percent: u32,
    /// What a store does at the pool limit: `reject` (Linux 6.18: refuse, hysteresis, asynchronous
    /// worker) or `shrink_sync` (Linux 4.7: write back one pool page on the storing task, then store;
    /// `accept_threshold_percent` and the worker settings are then unused). Default `reject`.
    #[serde(default = "d_full_pool")]
    pub full_pool: FullPoolPolicy,
    /// What a store does with a page that does not compress: `store_as_is` (Linux 6.18) or `reject`
    /// (Linux 3.11–4.x: 8-byte header per object, objects over a page refused). Default `store_as_is`.
    #[serde(default = "d_incompressible")]
    pub incompressible: IncompressiblePolicy,
    /// A load frees the entry and dirties the page (`true`: Linux ≥ 6.9, "mm/zswap: only support
    /// zswap_exclusive_loads_enabled"; 6.5–6.8 an option, `CONFIG_ZSWAP_EXCLUSIVE_LOADS`). `false`:
    /// Linux 3.11–6.4 (frontswap loads, e.g. v4.7 `zswap_frontswap_load`): the entry stays and the page is clean in the swap cache, so evicting it
    /// unchanged costs no new store; the entry goes when the slot is freed or the page is written and
    /// stored again, and cannot be written back while the page is in the swap cache
    /// (`zswap_writeback_entry`'s `ZSWAP_SWAPCACHE_EXIST`). Default true.
    #[serde(default = "d_true")]
    pub exclusive_loads: bool,
    /// `shrinker_enabled`: memory reclaim may also write zswap entries back (`zswap_shrinker_scan`).
    /// It scales by the entries charged to a cgroup, which cgroup v1 never charges: under v1 (the
    /// model's) it never writes anything back; zswap under cgroup v2 is not modelled. Its count still
    /// runs on each reclaim of a cgroup that has had a zswap entry and flushes that cgroup's memory
    /// statistics, so with `host.reclaim.stats_flush_ms` set reclaim reads them nearly live. Default
    /// false (`CONFIG_ZSWAP_SHRINKER_DEFAULT_ON` is off).
    #[serde(default)]
    pub shrinker_enabled: bool,
    /// Delay between a store that queues the idle writeback worker and the worker running (`queue_work`
    /// on an unbound workqueue: wake-up and scheduling of a kworker on an idle CPU), ns. Work queued
    /// while the worker runs starts as soon as the run ends. Default 5000.
    #[serde(default = "d_wakeup")]
    pub worker_wakeup_ns: u64,
    /// Worker CPU time to look at one LRU entry (`list_lru_walk_one` of one item: a second-chance
    /// rotation, or the start of a writeback), ns. Default 100.
    #[serde(default = "d_rotate")]
    pub worker_entry_ns: u64,
    /// Worker CPU time of writing one entry back besides decompression and the memory-cgroup charge
    /// (swap-cache folio allocation, tree and pool updates, bio submission), ns. Default 3000.
    #[serde(default = "d_writeback")]
    pub writeback_ns: u64,
    /// ezswap's policies (selective admission, lottery replacement, all-page accommodation). Default
    /// zswap's own.
    #[serde(default)]
    pub ezswap: super::policy::config::EzswapConfig,
}
fn d_lzo() -> CompressorKind {
    CompressorKind::Lzo
}
fn d_zsmalloc() -> ZpoolKind {
    ZpoolKind::Zsmalloc
}
fn d_max_pool() -> u32 {
    20
}
fn d_accept() -> u32 {
    90
}
fn d_full_pool() -> FullPoolPolicy {
    FullPoolPolicy::Reject
}
fn d_true() -> bool {
    true
}
fn d_incompressible() -> IncompressiblePolicy {
    IncompressiblePolicy::StoreAsIs
}
fn d_wakeup() -> u64 {
    5_000
}
fn d_rotate() -> u64 {
    100
}
fn d_writeback() -> u64 {
    3000
}
impl Default for ZswapConfig {
    fn default() -> Self {
        ZswapConfig {
            enabled: false,
            compressor: d_lzo(),
            zpool: d_zsmalloc(),
            max_pool_percent: d_max_pool(),
            accept_threshold_percent: d_accept(),
            full_pool: d_full_pool(),
            incompressible: d_incompressible(),
            exclusive_loads: true,
            shrinker_enabled: false,
            worker_wakeup_ns: d_wakeup(),
            worker_entry_ns: d_rotate(),
            writeback_ns: d_writeback(),
            ezswap: Default::default(),
        }
    }
}

impl ZswapConfig {
    pub fn validate(&self) -> Result<()> {
        self.ezswap.validate(self.zpool)?;
        if self.max_pool_percent == 0 || self.max_pool_percent > 100 {
            return Err(Error::config(
                "host.zswap.max_pool_percent",
                format!("is {}: must be in [1, 100]", self.max_pool_percent),
            ));
        }
        if self.accept_threshold_percent > 100 {
            return Err(Error::config(
                "host.zswap.accept_threshold_percent",
                format!("is {}: must be in [0, 100]", self.accept_threshold_percent),
            ));
        }
        for (k, v) in [
            ("worker_wakeup_ns", self.worker_wakeup_ns),
            ("worker_entry_ns", self.worker_entry_ns),
            ("writeback_ns", self.writeback_ns),
        ] {
            if v > 10_000_000_000 {
                return Err(Error::config(
                    format!("host.zswap.{k}"),
                    format!("is {v}: at most 10 s"),
                ));
            }
        }
        Ok(())
    }
}

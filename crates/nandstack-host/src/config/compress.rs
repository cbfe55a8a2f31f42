//! Compressed swap: `[host.zswap]` (the compressed cache in front of the swap backend), the zram backend's
//! settings (`[host.swap.backend] kind = "zram"`) and `[host.compression]` (the CPU time of compressing and
//! decompressing a page). Defaults are Linux 6.18's where the kernel has one.

use nandstack_compress::Algorithm;
use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A compressor, named as the kernel names it (`/sys/module/zswap/parameters/compressor`,
/// `/sys/block/zram0/comp_algorithm`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CompressorKind {
    /// LZO1X-1 (`lib/lzo`).
    #[serde(rename = "lzo")]
    Lzo,
    /// The kernel's LZO1X-1 variant with zero-run encoding (zram's default).
    #[serde(rename = "lzo-rle")]
    LzoRle,
    /// LZ4 at the default acceleration.
    #[serde(rename = "lz4")]
    Lz4,
    /// Raw deflate, level 6, 2 KiB window (`crypto/deflate.c`).
    #[serde(rename = "deflate")]
    Deflate,
    /// zstd level 3 with the kernel's parameters.
    #[serde(rename = "zstd")]
    Zstd,
}

impl CompressorKind {
    pub fn algorithm(self) -> Algorithm {
        match self {
            CompressorKind::Lzo => Algorithm::Lzo,
            CompressorKind::LzoRle => Algorithm::LzoRle,
            CompressorKind::Lz4 => Algorithm::Lz4,
            CompressorKind::Deflate => Algorithm::Deflate,
            CompressorKind::Zstd => Algorithm::Zstd,
        }
    }
}

/// The allocator holding compressed pages.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ZpoolKind {
    /// zsmalloc (the only allocator of Linux ≥ 6.15): size classes over zspages of 1–8 pages.
    Zsmalloc,
    /// z3fold (up to three objects per page; removed from Linux in 6.15, ezswap's pool).
    Z3fold,
    /// zbud (up to two objects per page; removed in 6.15).
    Zbud,
}

impl ZpoolKind {
    pub fn name(self) -> &'static str {
        match self {
            ZpoolKind::Zsmalloc => "zsmalloc",
            ZpoolKind::Z3fold => "z3fold",
            ZpoolKind::Zbud => "zbud",
        }
    }
}

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
    pub ezswap: super::ezswap::EzswapConfig,
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
            shrinker_enabled: false,
            worker_wakeup_ns: d_wakeup(),
            worker_entry_ns: d_rotate(),
            writeback_ns: d_writeback(),
            ezswap: Default::default(),
        }
    }
}

/// What zram writes back to its backing device (`echo MODE > /sys/block/zram0/writeback`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ZramWritebackMode {
    /// No backing device (the default zram).
    Off,
    /// Pages stored uncompressed (`huge`).
    Huge,
    /// Pages not written since the previous pass (`idle`, after `echo all > idle`).
    Idle,
    /// Pages both huge and idle (`huge_idle`).
    HugeIdle,
}

/// zram writeback to a backing device (`CONFIG_ZRAM_WRITEBACK`): every `interval_ms` the model does what a
/// user-space agent does — write the selected pages back, then mark every stored page idle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZramWritebackConfig {
    /// `off`, `huge`, `idle` or `huge_idle`. Default `off`.
    #[serde(default = "d_wb_mode")]
    pub mode: ZramWritebackMode,
    /// Period of the writeback passes, simulated ms. Default 1000.
    #[serde(default = "d_wb_interval")]
    pub interval_ms: f64,
}
fn d_wb_mode() -> ZramWritebackMode {
    ZramWritebackMode::Off
}
fn d_wb_interval() -> f64 {
    1000.0
}
impl Default for ZramWritebackConfig {
    fn default() -> Self {
        ZramWritebackConfig {
            mode: d_wb_mode(),
            interval_ms: d_wb_interval(),
        }
    }
}

/// zram (`drivers/block/zram/`): the swap area is a compressed RAM disk of `host.swap.size_mib`
/// (`disksize`), a synchronous device; its backing device, when writeback is on, is the swap partition's
/// range of the SSD (`host.swap.offset_mib`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZramConfig {
    /// `comp_algorithm`: `lzo`, `lzo-rle`, `lz4`, `deflate` or `zstd`. Default `lzo-rle`.
    #[serde(default = "d_lzo_rle")]
    pub comp_algorithm: CompressorKind,
    /// `mem_limit`: most memory the pool may hold, MiB; a write beyond it fails (the page stays dirty
    /// in memory). 0 = no limit. Default 0.
    #[serde(default)]
    pub mem_limit_mib: u64,
    /// Writeback of stored pages to the backing device. Default off.
    #[serde(default)]
    pub writeback: ZramWritebackConfig,
}
fn d_lzo_rle() -> CompressorKind {
    CompressorKind::LzoRle
}
impl Default for ZramConfig {
    fn default() -> Self {
        ZramConfig {
            comp_algorithm: d_lzo_rle(),
            mem_limit_mib: 0,
            writeback: ZramWritebackConfig::default(),
        }
    }
}

/// CPU cost of one algorithm, cycles per byte of the page (4096 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmCost {
    /// Compressing a page, cycles per input byte.
    pub compress_cycles_per_byte: f64,
    /// Decompressing a page, cycles per output byte.
    pub decompress_cycles_per_byte: f64,
}

/// `[host.compression]`: the CPU time of compression, charged to the thread that compresses (the
/// reclaiming task, the zswap writeback worker) or decompresses (the faulting task). Defaults measured
/// by `cargo run --release -p nandstack-compress --example compress_bench` on Silesia pages at 2.6 GHz
/// (docs/kernel-compressed-swap.md): compression on a quiet machine; decompression on a loaded one,
/// scaled by the compression rate of the same run (LZO through this project's checking decoder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompressionCosts {
    /// Clock of the modelled CPU, MHz. Default 2600.
    #[serde(default = "d_mhz")]
    pub cpu_mhz: f64,
    /// Copying a page stored uncompressed (zswap's incompressible pages, zram's huge pages), cycles per
    /// byte. Default 0.25.
    #[serde(default = "d_copy")]
    pub copy_cycles_per_byte: f64,
    /// Default 6.51 / 3.6.
    #[serde(default = "d_lzo_cost")]
    pub lzo: AlgorithmCost,
    /// Default 6.53 / 3.6.
    #[serde(default = "d_lzo_rle_cost")]
    pub lzo_rle: AlgorithmCost,
    /// Default 4.06 / 0.8.
    #[serde(default = "d_lz4_cost")]
    pub lz4: AlgorithmCost,
    /// Default 54.08 / 7.0.
    #[serde(default = "d_deflate_cost")]
    pub deflate: AlgorithmCost,
    /// Default 11.25 / 2.0.
    #[serde(default = "d_zstd_cost")]
    pub zstd: AlgorithmCost,
}
fn d_mhz() -> f64 {
    2600.0
}
fn d_copy() -> f64 {
    0.25
}
fn cost(c: f64, d: f64) -> AlgorithmCost {
    AlgorithmCost {
        compress_cycles_per_byte: c,
        decompress_cycles_per_byte: d,
    }
}
fn d_lzo_cost() -> AlgorithmCost {
    cost(6.51, 3.6)
}
fn d_lzo_rle_cost() -> AlgorithmCost {
    cost(6.53, 3.6)
}
fn d_lz4_cost() -> AlgorithmCost {
    cost(4.06, 0.8)
}
fn d_deflate_cost() -> AlgorithmCost {
    cost(54.08, 7.0)
}
fn d_zstd_cost() -> AlgorithmCost {
    cost(11.25, 2.0)
}
impl Default for CompressionCosts {
    fn default() -> Self {
        CompressionCosts {
            cpu_mhz: d_mhz(),
            copy_cycles_per_byte: d_copy(),
            lzo: d_lzo_cost(),
            lzo_rle: d_lzo_rle_cost(),
            lz4: d_lz4_cost(),
            deflate: d_deflate_cost(),
            zstd: d_zstd_cost(),
        }
    }
}

impl CompressionCosts {
    pub fn of(&self, c: CompressorKind) -> AlgorithmCost {
        match c {
            CompressorKind::Lzo => self.lzo,
            CompressorKind::LzoRle => self.lzo_rle,
            CompressorKind::Lz4 => self.lz4,
            CompressorKind::Deflate => self.deflate,
            CompressorKind::Zstd => self.zstd,
        }
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |k: &str, v: f64| {
            Error::config(
                format!("host.compression.{k}"),
                format!("is {v}: must be finite and ≥ 0"),
            )
        };
        if !(self.cpu_mhz.is_finite() && self.cpu_mhz >= 1.0) {
            return Err(Error::config(
                "host.compression.cpu_mhz",
                format!("is {}: must be ≥ 1", self.cpu_mhz),
            ));
        }
        let ok = |v: f64| (0.0..1e6).contains(&v);
        if !ok(self.copy_cycles_per_byte) {
            return Err(bad("copy_cycles_per_byte", self.copy_cycles_per_byte));
        }
        for (name, c) in [
            ("lzo", self.lzo),
            ("lzo_rle", self.lzo_rle),
            ("lz4", self.lz4),
            ("deflate", self.deflate),
            ("zstd", self.zstd),
        ] {
            if !ok(c.compress_cycles_per_byte) {
                return Err(bad(
                    &format!("{name}.compress_cycles_per_byte"),
                    c.compress_cycles_per_byte,
                ));
            }
            if !ok(c.decompress_cycles_per_byte) {
                return Err(bad(
                    &format!("{name}.decompress_cycles_per_byte"),
                    c.decompress_cycles_per_byte,
                ));
            }
        }
        Ok(())
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

impl ZramConfig {
    pub fn validate(&self) -> Result<()> {
        let i = self.writeback.interval_ms;
        if !(i.is_finite() && i >= 1.0) {
            return Err(Error::config(
                "host.swap.backend.writeback.interval_ms",
                format!("is {i}: must be ≥ 1"),
            ));
        }
        if self.mem_limit_mib > 1 << 30 {
            return Err(Error::config(
                "host.swap.backend.mem_limit_mib",
                format!("is {}: too large", self.mem_limit_mib),
            ));
        }
        Ok(())
    }
}

/// CPU time of `cycles_per_byte` over a 4 KiB page at `mhz`, ns (zswap's and zram's compression costs).
pub fn page_ns(cycles_per_byte: f64, mhz: f64) -> u64 {
    (cycles_per_byte * 4096.0 * 1000.0 / mhz).round() as u64
}

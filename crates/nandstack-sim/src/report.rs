//! The run report: a JSON document with stable keys (documented in docs/metrics.md).
//!
//! Units: bytes are bytes; "pages" in `flash_*` keys are flash pages of `device.page_size_bytes`; the
//! migrated/trimmed/unmapped "pages" are 4 KiB logical pages (mapping units). Wall-clock keys start with
//! `wall_` and are the only keys that differ between two runs of the same config and seed.

use nandstack_core::histogram::Percentiles;
use nandstack_core::stats::Summary;
use nandstack_device::ftl::UnitCensus;
use nandstack_device::ssd::BlockSsd;
use serde::Serialize;

use crate::config::SimConfig;
use crate::host::Measured;
use crate::series::TimeSeries;

#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    pub preset: String,
    pub raw_bytes: u64,
    pub logical_bytes: u64,
    pub page_size_bytes: u32,
    pub units_per_page: u32,
    pub planes: u32,
    pub blocks: u32,
    pub pages_per_block: u32,
    pub cell_mode: &'static str,
    pub endurance_pe_cycles: u32,
    pub over_provisioning: f64,
    /// (blocks that can hold data − average free reserve − half the open blocks) × units ÷ logical − 1.
    pub effective_over_provisioning: f64,
    pub streams: u32,
    pub victim_policy: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct ByCause {
    pub host: f64,
    pub gc: f64,
    pub wear_leveling: f64,
    pub padding: f64,
    pub translation: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReadsByCause {
    pub host: u64,
    pub gc: u64,
    pub wear_leveling: u64,
    pub read_modify_write: u64,
    pub translation: u64,
}

/// Controller DRAM caches.
#[derive(Clone, Debug, Serialize)]
pub struct CacheStats {
    pub write_buffer_read_hit_pages: u64,
    pub write_buffer_absorbed_pages: u64,
    pub write_buffer_evicted_pages: u64,
    pub write_buffer_flushed_pages: u64,
    pub mapping_cache_hits: u64,
    pub mapping_cache_misses: u64,
    pub mapping_cache_dirty_evictions: u64,
    /// Evictions where GC-aware replacement passed over the LRU unit because its die was in GC.
    pub write_buffer_gc_aware_skips: u64,
}

/// What the blocks sealed in the measured phase hold: only host writes, only GC/wear-levelling survivors,
/// or both. Shares are of all sealed blocks (0 when none was sealed). A single write frontier mixes the
/// two; a host/GC split or a GC schedule that fills blocks with one kind shows up here.
#[derive(Clone, Debug, Serialize)]
pub struct SealedBlocks {
    pub host_only: u64,
    pub migrated_only: u64,
    pub mixed: u64,
    pub host_only_share: f64,
    pub migrated_only_share: f64,
}

impl SealedBlocks {
    pub fn from_counters(c: &nandstack_device::ftl::Counters) -> SealedBlocks {
        let n = c.sealed_blocks_host_only + c.sealed_blocks_migrated_only + c.sealed_blocks_mixed;
        let share = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        SealedBlocks {
            host_only: c.sealed_blocks_host_only,
            migrated_only: c.sealed_blocks_migrated_only,
            mixed: c.sealed_blocks_mixed,
            host_only_share: share(c.sealed_blocks_host_only),
            migrated_only_share: share(c.sealed_blocks_migrated_only),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct ErasesByCause {
    pub gc: u64,
    pub wear_leveling: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub nandstack_version: &'static str,
    pub seed: u64,
    pub device: DeviceInfo,
    /// flash_program_pages ÷ host_write_pages.
    pub waf: Option<f64>,
    pub host_write_requests: u64,
    pub host_read_requests: u64,
    pub host_trim_requests: u64,
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub host_trim_bytes: u64,
    /// host_write_bytes ÷ page_size_bytes.
    pub host_write_pages: f64,
    pub flash_program_pages: u64,
    /// Programmed flash pages attributed by cause (units of the cause ÷ units per page).
    pub flash_program_pages_by_cause: ByCause,
    pub flash_read_pages: u64,
    pub flash_read_pages_by_cause: ReadsByCause,
    pub flash_erases: u64,
    pub flash_erases_by_cause: ErasesByCause,
    pub gc_invocations: u64,
    pub gc_victim_blocks: u64,
    /// 4 KiB logical pages moved by GC.
    pub gc_migrated_pages: u64,
    pub wear_leveling_invocations: u64,
    pub wear_leveling_migrated_pages: u64,
    /// Composition of the blocks sealed in the measured phase.
    pub sealed_blocks: SealedBlocks,
    pub partial_page_writes: u64,
    pub trimmed_pages: u64,
    pub unmapped_read_pages: u64,
    /// Erases per block during the measured phase.
    pub erase_count: Summary,
    /// Erases per block over the device's life (preconditioning included).
    pub erase_count_lifetime: Summary,
    pub blocks_past_endurance: u32,
    pub free_blocks: u32,
    /// Bytes of FTL metadata (mapping tables, block table, victim-policy index).
    pub metadata_bytes: u64,
    /// Where every physical 4 KiB unit is at the end (valid + invalid + free = total).
    pub units: UnitCensus,
    pub verified: bool,
    pub caches: CacheStats,
    /// Latency objects and rates exist only when timing is modelled (`device.timing.enabled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_latency_us: Option<Percentiles>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_latency_us: Option<Percentiles>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim_latency_us: Option<Percentiles>,
    /// Requests per simulated second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    /// Host bytes read + written per simulated second, in MB/s (10^6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_mb_per_s: Option<f64>,
    /// Simulated time of the measured phase (first issue to last completion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim_seconds: Option<f64>,
    /// Fraction of the measured time the dies' arrays (or planes') and the channels were busy, averaged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die_utilization: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_utilization: Option<f64>,
    pub requests: u64,
    /// 4 KiB units written into each placement stream's blocks (SUP-GC / MBF: stream 0 hot, 1 cold).
    pub units_by_stream: Vec<u64>,
    /// Controller CPU time spent on host commands (firmware cost model), ns.
    pub firmware_ns: u64,
    pub wall_seconds_precondition: f64,
    pub wall_seconds: f64,
    /// Flash page programs per wall-clock second in the measured phase.
    pub wall_flash_programs_per_second: f64,
    /// CPU seconds (user + system) of the measured phase, when the OS tells (Linux).
    pub wall_cpu_seconds: Option<f64>,
    /// Wall-clock host requests per second in the measured phase.
    pub wall_requests_per_second: f64,
    pub config: SimConfig,
    /// Interval time series (also written as timeseries.csv by the CLI).
    pub timeseries: TimeSeries,
}

impl Report {
    pub fn build(
        cfg: &SimConfig,
        ssd: &BlockSsd,
        m: &Measured,
        verified: bool,
        wall_pre: f64,
        wall: f64,
    ) -> Report {
        let ftl = &ssd.ftl;
        let c = ftl.counters();
        let h = ssd.counters();
        let g = ftl.geometry();
        let upp = g.units_per_page() as f64;
        let waf = ssd.waf();
        let timed = ssd.timed();
        let sim_s = m.sim_ns as f64 / 1e9;
        let lat = |hist: &nandstack_core::Histogram| {
            (timed && !hist.is_empty()).then(|| hist.percentiles(1e-3))
        };
        let rate = |x: f64| (timed && sim_s > 0.0).then(|| x / sim_s);
        let (die_util, chan_util) = match ssd.timelines() {
            Some(t) if m.sim_ns > 0 => {
                let arrays = if cfg.device.timing().plane_parallelism {
                    g.planes()
                } else {
                    g.dies()
                } as f64;
                (
                    Some(t.array_busy_ns as f64 / (arrays * m.sim_ns as f64)),
                    Some(t.channel_busy_ns as f64 / (g.channels as f64 * m.sim_ns as f64)),
                )
            }
            _ => (None, None),
        };
        let mc = ftl.mapping_cache();
        Report {
            nandstack_version: env!("CARGO_PKG_VERSION"),
            seed: cfg.seed,
            device: DeviceInfo {
                preset: cfg.device.preset.clone(),
                raw_bytes: g.raw_bytes(),
                logical_bytes: ftl.logical_bytes(),
                page_size_bytes: g.page_size_bytes,
                units_per_page: g.units_per_page(),
                planes: g.planes(),
                blocks: g.total_blocks(),
                pages_per_block: g.pages_per_block,
                cell_mode: g.cell_mode.name(),
                endurance_pe_cycles: g.cell_mode.endurance_pe_cycles(),
                over_provisioning: ftl.config().over_provisioning,
                effective_over_provisioning: ftl.effective_over_provisioning(),
                streams: ftl.streams(),
                victim_policy: ftl.victim_policy_name(),
            },
            waf: waf.is_finite().then_some(waf),
            host_write_requests: h.write_requests,
            host_read_requests: h.read_requests,
            host_trim_requests: h.trim_requests,
            host_write_bytes: h.write_bytes,
            host_read_bytes: h.read_bytes,
            host_trim_bytes: h.trim_bytes,
            host_write_pages: h.write_bytes as f64 / g.page_size_bytes as f64,
            flash_program_pages: c.flash_program_pages,
            flash_program_pages_by_cause: ByCause {
                host: c.program_units_host as f64 / upp,
                gc: c.program_units_gc as f64 / upp,
                wear_leveling: c.program_units_wear_leveling as f64 / upp,
                padding: c.padding_units as f64 / upp,
                translation: c.translation_program_pages as f64,
            },
            flash_read_pages: c.host_read_pages
                + c.gc_read_pages
                + c.wear_leveling_read_pages
                + c.rmw_read_pages
                + c.translation_read_pages,
            flash_read_pages_by_cause: ReadsByCause {
                host: c.host_read_pages,
                gc: c.gc_read_pages,
                wear_leveling: c.wear_leveling_read_pages,
                read_modify_write: c.rmw_read_pages,
                translation: c.translation_read_pages,
            },
            flash_erases: c.gc_erases + c.wear_leveling_erases,
            flash_erases_by_cause: ErasesByCause {
                gc: c.gc_erases,
                wear_leveling: c.wear_leveling_erases,
            },
            gc_invocations: c.gc_invocations,
            gc_victim_blocks: c.gc_victim_blocks,
            gc_migrated_pages: c.gc_migrated_units,
            wear_leveling_invocations: c.wear_leveling_invocations,
            wear_leveling_migrated_pages: c.wear_leveling_migrated_units,
            sealed_blocks: SealedBlocks::from_counters(c),
            partial_page_writes: c.partial_unit_writes + h.buffer_partial_merges,
            trimmed_pages: c.trimmed_units,
            unmapped_read_pages: c.unmapped_read_units,
            erase_count: ftl.erase_summary(),
            erase_count_lifetime: ftl.lifetime_erase_summary(),
            blocks_past_endurance: ftl.blocks_past_endurance(),
            free_blocks: ftl.free_blocks(),
            metadata_bytes: ftl.metadata_bytes(),
            units: ftl.census(),
            verified,
            caches: CacheStats {
                write_buffer_read_hit_pages: h.buffer_read_hit_units,
                write_buffer_absorbed_pages: h.buffer_absorbed_units,
                write_buffer_evicted_pages: h.buffer_evicted_units,
                write_buffer_flushed_pages: h.buffer_flushed_units,
                mapping_cache_hits: mc.map_or(0, |m| m.hits),
                mapping_cache_misses: mc.map_or(0, |m| m.misses),
                mapping_cache_dirty_evictions: mc.map_or(0, |m| m.dirty_evictions),
                write_buffer_gc_aware_skips: h.buffer_gc_aware_skips,
            },
            read_latency_us: lat(&m.reads),
            write_latency_us: lat(&m.writes),
            trim_latency_us: lat(&m.trims),
            iops: rate(m.requests as f64),
            throughput_mb_per_s: rate((h.read_bytes + h.write_bytes) as f64 / 1e6),
            sim_seconds: timed.then_some(sim_s),
            die_utilization: die_util,
            channel_utilization: chan_util,
            requests: m.requests,
            units_by_stream: c.units_by_stream.clone(),
            firmware_ns: h.firmware_ns,
            wall_seconds_precondition: wall_pre,
            wall_seconds: wall,
            wall_flash_programs_per_second: if wall > 0.0 {
                c.flash_program_pages as f64 / wall
            } else {
                0.0
            },
            wall_cpu_seconds: m.cpu_seconds,
            wall_requests_per_second: if wall > 0.0 {
                m.requests as f64 / wall
            } else {
                0.0
            },
            config: cfg.clone(),
            timeseries: m.series.clone(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }
}

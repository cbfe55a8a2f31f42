//! The one summary (`summary.json`): common keys for every stack (documented in docs/metrics.md), then a
//! section per layer — `device` (with `kind`, what every device reports and the model's own details),
//! `host` (host programs: the OS model's counters, `pswpin`/`pswpout` …) and `workload`. Block devices
//! also keep their FTL keys at the top level, as they always had.
//!
//! Units: bytes are bytes; "pages" in `flash_*` keys are flash pages of `device.page_size_bytes`; the
//! migrated/trimmed/unmapped "pages" are 4 KiB logical pages (mapping units). Wall-clock keys start with
//! `wall_` and are the only keys that differ between two runs of the same config and seed.

use nandstack_core::histogram::Percentiles;
use nandstack_core::stats::Summary;
use nandstack_device::ftl::UnitCensus;
use nandstack_device::ssd::BlockSsd;
use nandstack_device::Device;
use serde::Serialize;
use serde_json::Value;

use crate::config::SimConfig;
use crate::drive::Measured;
use crate::series::TimeSeries;

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
    /// DISS CL-SDI: swap-range pages read from the buffer and dropped there (never flushed).
    pub write_buffer_swap_dropped_pages: u64,
    pub mapping_cache_hits: u64,
    pub mapping_cache_misses: u64,
    pub mapping_cache_dirty_evictions: u64,
    /// Evictions where GC-aware replacement passed over the LRU unit because its die was in GC.
    pub write_buffer_gc_aware_skips: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ErasesByCause {
    pub gc: u64,
    pub wear_leveling: u64,
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

/// The block FTL's keys (top level, block devices only).
#[derive(Clone, Debug, Serialize)]
pub struct BlockKeys {
    /// Programmed flash pages attributed by cause (units of the cause ÷ units per page).
    pub flash_program_pages_by_cause: ByCause,
    pub flash_read_pages_by_cause: ReadsByCause,
    pub flash_erases_by_cause: ErasesByCause,
    pub gc_invocations: u64,
    pub gc_victim_blocks: u64,
    pub wear_leveling_invocations: u64,
    pub wear_leveling_migrated_pages: u64,
    /// Composition of the blocks sealed in the measured phase.
    pub sealed_blocks: SealedBlocks,
    pub partial_page_writes: u64,
    pub trimmed_pages: u64,
    /// DISS CL-SDI: flash copies of swap-range 4 KiB pages invalidated by the read that swapped them in
    /// (buffered ones dropped: `caches.write_buffer_swap_dropped_pages`).
    pub swap_invalidated_pages: u64,
    /// GC-migrated 4 KiB pages in the registered swap range (DISS; 0 without a registered range).
    pub gc_migrated_swap_pages: u64,
    pub unmapped_read_pages: u64,
    /// Erases per block over the device's life (preconditioning included).
    pub erase_count_lifetime: Summary,
    pub blocks_past_endurance: u32,
    pub free_blocks: u32,
    /// Bytes of FTL metadata (mapping tables, block table, victim-policy index).
    pub metadata_bytes: u64,
    /// Where every physical 4 KiB unit is at the end (valid + invalid + free = total).
    pub units: UnitCensus,
    pub caches: CacheStats,
    /// 4 KiB units written into each placement stream's blocks (SUP-GC / MBF: stream 0 hot, 1 cold).
    pub units_by_stream: Vec<u64>,
    /// Controller CPU time spent on host commands (firmware cost model), ns.
    pub firmware_ns: u64,
    /// Fraction of the measured time the dies' arrays (or planes') and the channels were busy, averaged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die_utilization: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_utilization: Option<f64>,
}

/// What drove the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkloadInfo {
    pub kind: &'static str,
    /// Trace path or stand-in name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Trace requests whose length was clipped to the device's capacity (`lba = wrap | scale`).
    pub clipped_requests: u64,
    /// A trace replay's row counts (the report's top-level `trace` section).
    #[serde(skip)]
    pub trace: Option<crate::source::TraceCounts>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub nandstack_version: &'static str,
    pub seed: u64,
    /// The device as built: `kind`, capacity, page size and the model's own section.
    pub device: Value,
    pub workload: WorkloadInfo,
    /// Trace replays: rows put in time order, too late for the reorder window, malformed (lenient) or
    /// skipped on purpose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::source::TraceCounts>,
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
    pub flash_read_pages: u64,
    pub flash_erases: u64,
    /// 4 KiB logical pages moved by device GC or migration.
    pub gc_migrated_pages: u64,
    /// Erases per block during the measured phase (block devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erase_count: Option<Summary>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockKeys>,
    pub verified: bool,
    /// The run was stopped (Ctrl-C) during the measured phase: every figure covers what ran until then.
    pub interrupted: bool,
    /// Latency objects and rates exist only when the device is timed.
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
    pub requests: u64,
    /// The host OS model's section (host programs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<Value>,
    /// Hybrid RL pre-training: one line per workload of the chain.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pretraining: Vec<Value>,
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

/// The `device` section: what every device reports, then the model's own keys.
fn device_section(cfg: &SimConfig, dev: &dyn Device) -> Value {
    let s = dev.stats();
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), Value::from(dev.kind().name()));
    m.insert("logical_bytes".into(), Value::from(dev.capacity_bytes()));
    m.insert("page_size_bytes".into(), Value::from(s.page_size_bytes));
    if let Some(b) = dev.as_any().downcast_ref::<BlockSsd>() {
        let g = b.ftl.geometry();
        let ftl = &b.ftl;
        for (k, v) in [
            ("preset", Value::from(cfg.device.preset.clone())),
            ("raw_bytes", Value::from(g.raw_bytes())),
            ("units_per_page", Value::from(g.units_per_page())),
            ("planes", Value::from(g.planes())),
            ("blocks", Value::from(g.total_blocks())),
            ("pages_per_block", Value::from(g.pages_per_block)),
            ("cell_mode", Value::from(g.cell_mode.name())),
            (
                "endurance_pe_cycles",
                Value::from(g.cell_mode.endurance_pe_cycles()),
            ),
            (
                "over_provisioning",
                Value::from(ftl.config().over_provisioning),
            ),
            (
                "effective_over_provisioning",
                Value::from(ftl.effective_over_provisioning()),
            ),
            ("streams", Value::from(ftl.streams())),
            ("victim_policy", Value::from(ftl.victim_policy_name())),
        ] {
            m.insert(k.into(), v);
        }
    } else if let Value::Object(d) = dev.details() {
        for (k, v) in d {
            m.entry(k).or_insert(v);
        }
    }
    Value::Object(m)
}

fn block_keys(b: &BlockSsd, sim_ns: u64, timing_planes: bool) -> BlockKeys {
    let ftl = &b.ftl;
    let c = ftl.counters();
    let h = b.counters();
    let g = ftl.geometry();
    let upp = g.units_per_page() as f64;
    let (die_util, chan_util) = match b.timelines() {
        Some(t) if sim_ns > 0 => {
            let arrays = if timing_planes { g.planes() } else { g.dies() } as f64;
            (
                Some(t.array_busy_ns as f64 / (arrays * sim_ns as f64)),
                Some(t.channel_busy_ns as f64 / (g.channels as f64 * sim_ns as f64)),
            )
        }
        _ => (None, None),
    };
    let mc = ftl.mapping_cache();
    BlockKeys {
        flash_program_pages_by_cause: ByCause {
            host: c.program_units_host as f64 / upp,
            gc: c.program_units_gc as f64 / upp,
            wear_leveling: c.program_units_wear_leveling as f64 / upp,
            padding: c.padding_units as f64 / upp,
            translation: c.translation_program_pages as f64,
        },
        flash_read_pages_by_cause: ReadsByCause {
            host: c.host_read_pages,
            gc: c.gc_read_pages,
            wear_leveling: c.wear_leveling_read_pages,
            read_modify_write: c.rmw_read_pages,
            translation: c.translation_read_pages,
        },
        flash_erases_by_cause: ErasesByCause {
            gc: c.gc_erases,
            wear_leveling: c.wear_leveling_erases,
        },
        gc_invocations: c.gc_invocations,
        gc_victim_blocks: c.gc_victim_blocks,
        wear_leveling_invocations: c.wear_leveling_invocations,
        wear_leveling_migrated_pages: c.wear_leveling_migrated_units,
        sealed_blocks: SealedBlocks::from_counters(c),
        partial_page_writes: c.partial_unit_writes + h.buffer_partial_merges,
        trimmed_pages: c.trimmed_units,
        swap_invalidated_pages: c.swap_invalidated_units,
        gc_migrated_swap_pages: c.gc_migrated_swap_units,
        unmapped_read_pages: c.unmapped_read_units,
        erase_count_lifetime: ftl.lifetime_erase_summary(),
        blocks_past_endurance: ftl.blocks_past_endurance(),
        free_blocks: ftl.free_blocks(),
        metadata_bytes: ftl.metadata_bytes(),
        units: ftl.census(),
        caches: CacheStats {
            write_buffer_read_hit_pages: h.buffer_read_hit_units,
            write_buffer_absorbed_pages: h.buffer_absorbed_units,
            write_buffer_evicted_pages: h.buffer_evicted_units,
            write_buffer_flushed_pages: h.buffer_flushed_units,
            write_buffer_swap_dropped_pages: h.buffer_swap_dropped_units,
            mapping_cache_hits: mc.map_or(0, |m| m.hits),
            mapping_cache_misses: mc.map_or(0, |m| m.misses),
            mapping_cache_dirty_evictions: mc.map_or(0, |m| m.dirty_evictions),
            write_buffer_gc_aware_skips: h.buffer_gc_aware_skips,
        },
        units_by_stream: c.units_by_stream.clone(),
        firmware_ns: h.firmware_ns,
        die_utilization: die_util,
        channel_utilization: chan_util,
    }
}

/// Whether the device models time (a block SSD with timing off answers every command at once).
fn timed(dev: &dyn Device) -> bool {
    dev.as_any()
        .downcast_ref::<BlockSsd>()
        .is_none_or(|b| b.timed())
}

/// Everything the report needs from a run.
pub struct RunFacts<'a> {
    pub cfg: &'a SimConfig,
    pub dev: &'a dyn Device,
    pub measured: &'a Measured,
    pub workload: WorkloadInfo,
    pub host: Option<Value>,
    pub pretraining: Vec<Value>,
    pub verified: bool,
    pub wall_pre: f64,
    pub wall: f64,
}

impl Report {
    pub fn build(f: RunFacts<'_>) -> Report {
        let RunFacts {
            cfg,
            dev,
            measured: m,
            ..
        } = f;
        let s = dev.stats();
        let waf = s.waf();
        let timed = timed(dev);
        let sim_s = m.sim_ns as f64 / 1e9;
        let lat = |hist: &nandstack_core::Histogram| {
            (timed && !hist.is_empty()).then(|| hist.percentiles(1e-3))
        };
        let rate = |x: f64| (timed && sim_s > 0.0).then(|| x / sim_s);
        let block = dev.as_any().downcast_ref::<BlockSsd>();
        Report {
            nandstack_version: env!("CARGO_PKG_VERSION"),
            seed: cfg.seed,
            device: device_section(cfg, dev),
            trace: f.workload.trace,
            workload: f.workload,
            waf: waf.is_finite().then_some(waf),
            host_write_requests: s.host_write_requests,
            host_read_requests: s.host_read_requests,
            host_trim_requests: s.host_trim_requests,
            host_write_bytes: s.host_write_bytes,
            host_read_bytes: s.host_read_bytes,
            host_trim_bytes: s.host_trim_bytes,
            host_write_pages: s.host_write_bytes as f64 / s.page_size_bytes.max(1) as f64,
            flash_program_pages: s.flash_program_pages,
            flash_read_pages: s.flash_read_pages,
            flash_erases: s.erase_count,
            gc_migrated_pages: s.gc_migrated_units,
            erase_count: block.map(|b| b.ftl.erase_summary()),
            block: block.map(|b| block_keys(b, m.sim_ns, cfg.device.timing().plane_parallelism)),
            verified: f.verified,
            interrupted: m.interrupted,
            read_latency_us: lat(&m.reads),
            write_latency_us: lat(&m.writes),
            trim_latency_us: lat(&m.trims),
            iops: rate(m.requests as f64),
            throughput_mb_per_s: rate((s.host_read_bytes + s.host_write_bytes) as f64 / 1e6),
            sim_seconds: timed.then_some(sim_s),
            requests: m.requests,
            host: f.host,
            pretraining: f.pretraining,
            wall_seconds_precondition: f.wall_pre,
            wall_seconds: f.wall,
            wall_flash_programs_per_second: if f.wall > 0.0 {
                s.flash_program_pages as f64 / f.wall
            } else {
                0.0
            },
            wall_cpu_seconds: m.cpu_seconds,
            wall_requests_per_second: if f.wall > 0.0 {
                m.requests as f64 / f.wall
            } else {
                0.0
            },
            config: cfg.clone(),
            timeseries: m.series.clone(),
        }
    }

    /// The block FTL's keys (panics for another device kind: for tests and Rust callers that know).
    pub fn blk(&self) -> &BlockKeys {
        self.block.as_ref().expect("a block device's report")
    }

    /// A number from the `device` section (0 when absent).
    pub fn device_num(&self, key: &str) -> f64 {
        self.device.get(key).and_then(Value::as_f64).unwrap_or(0.0)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }
}

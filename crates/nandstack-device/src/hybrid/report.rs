//! The hybrid device's own section of the summary (`device` in summary.json, next to the keys every
//! device reports): geometry, the paper's write-cost throughput and its breakdown by cause (Fig. 7),
//! flash and erase totals, the SLC region, the manager's report. docs/hybrid.md lists every key.

use nandstack_core::histogram::Percentiles;
use serde::Serialize;

use super::cost::{CostBreakdown, CostKind, OpCost};
use super::device::{DeviceStats, HybridSsd};
use super::ftl::FtlCounters;
use super::managers::ManagerReport;

const MIB: f64 = 1024.0 * 1024.0;

/// Values per Fig. 7 category.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Breakdown<T> {
    pub host_to_slc: T,
    pub host_to_qlc: T,
    pub slc_to_qlc: T,
    pub qlc_to_qlc: T,
    pub slc_to_slc: T,
}

impl<T: Clone> Breakdown<T> {
    fn from_fn(f: impl Fn(CostKind) -> T) -> Breakdown<T> {
        Breakdown {
            host_to_slc: f(CostKind::HostToSlc),
            host_to_qlc: f(CostKind::HostToQlc),
            slc_to_qlc: f(CostKind::SlcToQlc),
            qlc_to_qlc: f(CostKind::QlcToQlc),
            slc_to_slc: f(CostKind::SlcToSlc),
        }
    }
}

/// The chip as built.
#[derive(Clone, Debug, Serialize)]
pub struct Geometry {
    pub total_blocks: u32,
    pub page_bytes: u32,
    pub slc_block_bytes: u64,
    pub qlc_block_bytes: u64,
    pub over_provisioning: f64,
    pub write_buffer_bytes: u64,
    pub slc_free_threshold_blocks: u32,
    pub qlc_free_threshold_blocks: u32,
}

/// Flash program totals.
#[derive(Clone, Debug, Serialize)]
pub struct FlashReport {
    pub slc_page_programs: u64,
    pub qlc_page_programs: u64,
    pub programmed_bytes: u64,
}

/// Erase counts (lifetime, preconditioning included).
#[derive(Clone, Debug, Serialize)]
pub struct EraseReport {
    pub slc_mode_erases: u64,
    pub qlc_mode_erases: u64,
    pub max_per_block: u32,
    pub mean_per_block: f64,
    /// Fraction of rated life used by the most worn block: SLC erases ÷ 100,000 + QLC erases ÷ 1,000.
    pub max_wear_fraction: f64,
    pub mean_wear_fraction: f64,
}

/// The SLC region.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SlcReport {
    pub final_blocks: u32,
    pub final_used_blocks: u32,
    /// SLC region size (at each host write request) averaged over host bytes written.
    pub mean_blocks: f64,
    /// Smallest and largest size after a host write request (the final size when nothing was written).
    pub min_blocks: u32,
    pub max_blocks: u32,
    /// Final θ in bytes; null = every write goes to SLC (UST).
    pub final_theta_bytes: Option<u64>,
}

/// The hybrid's section.
#[derive(Clone, Debug, Serialize)]
pub struct HybridDetails {
    /// `qlc_only`, `static`, `dwa`, `ust` or `rl`.
    pub manager: String,
    pub geometry: Geometry,
    /// Host bytes written ÷ total write cost time (MiB/s; the paper's throughput, Fig. 4).
    pub write_throughput_mib_per_s: f64,
    /// Total write cost (sum of `cost_breakdown`, the final flush included), ns.
    pub write_cost_ns: u64,
    /// Write cost by cause (Fig. 7), with each cause's flash operations.
    pub cost_breakdown: Breakdown<OpCost>,
    /// Share of the total write cost of each cause.
    pub cost_fraction: Breakdown<f64>,
    /// Write cost charged to each host write request (the operations it caused, serial), µs.
    pub write_cost_per_request_us: Percentiles,
    /// Host reads' flash time, ns (not part of the write cost).
    pub read_cost_ns: u64,
    pub flash: FlashReport,
    pub erases: EraseReport,
    pub slc: SlcReport,
    /// Host-side and resize counters.
    pub requests: DeviceStats,
    pub ftl: FtlCounters,
    /// The manager's own report (`rl`: the agent's statistics).
    pub manager_report: ManagerReport,
    pub reads_checked: u64,
    /// Victim policies of SLC→QLC migration and of QLC GC (the block FTL's).
    pub victim_policy: VictimPolicies,
    /// `single`, or `swap_file` (DISS SDS: swap and file data in separate blocks).
    pub placement: &'static str,
    /// DISS: the swap range the host registered, bytes `[start, end)`; null before a registration.
    pub swap_range_bytes: Option<[u64; 2]>,
    /// DISS CL-SDI: flash copies of swap-range 4 KiB pages invalidated by the read that swapped them in.
    pub swap_invalidated_pages: u64,
    /// DISS CL-SDI: swap-range 4 KiB pages read from the write buffer and dropped there (never flushed).
    pub write_buffer_swap_dropped_pages: u64,
}

/// Victim policy names per region.
#[derive(Clone, Debug, Serialize)]
pub struct VictimPolicies {
    pub slc: &'static str,
    pub qlc: &'static str,
}

/// θ as reported: null for "every write to SLC".
pub fn theta(t: u64) -> Option<u64> {
    (t != u64::MAX).then_some(t)
}

/// Bytes ÷ time, MiB/s (0 when no time passed).
pub fn throughput_mib_per_s(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / MIB / (ns as f64 * 1e-9)
    }
}

pub(crate) fn details(dev: &HybridSsd) -> HybridDetails {
    let f = dev.ftl();
    let p = f.params();
    let c: CostBreakdown = *f.costs();
    let host = dev.stats().host_write_bytes;
    let total = c.total_ns();
    let (se, qe) = f.erase_counts();
    let n = se.len().max(1) as f64;
    let per_block = se.iter().zip(&qe).map(|(a, b)| a + b);
    let wear = se
        .iter()
        .zip(&qe)
        .map(|(&a, &b)| a as f64 / 100_000.0 + b as f64 / 1_000.0);
    let programs = |slc: bool| {
        c.by_kind
            .iter()
            .map(|k| {
                if slc {
                    k.slc_page_programs
                } else {
                    k.qlc_page_programs
                }
            })
            .sum::<u64>()
    };
    let (lo, hi) = dev.slc_range;
    let (lo, hi) = if lo > hi {
        (f.slc_target(), f.slc_target())
    } else {
        (lo, hi)
    };
    HybridDetails {
        manager: dev.manager().name().into(),
        geometry: Geometry {
            total_blocks: p.total_blocks,
            page_bytes: p.page_bytes,
            slc_block_bytes: p.slc_block_bytes(),
            qlc_block_bytes: p.qlc_block_bytes(),
            over_provisioning: p.over_provisioning,
            write_buffer_bytes: p.write_buffer_units as u64 * 4096,
            slc_free_threshold_blocks: p.slc_free_threshold,
            qlc_free_threshold_blocks: p.qlc_free_threshold,
        },
        write_throughput_mib_per_s: throughput_mib_per_s(host, total),
        write_cost_ns: total,
        cost_breakdown: Breakdown::from_fn(|k| *c.get(k)),
        cost_fraction: Breakdown::from_fn(|k| c.get(k).ns as f64 / total.max(1) as f64),
        write_cost_per_request_us: dev.cost_hist.percentiles(1e-3),
        read_cost_ns: f.counters().read_ns,
        flash: FlashReport {
            slc_page_programs: programs(true),
            qlc_page_programs: programs(false),
            programmed_bytes: c.page_programs() * p.page_bytes as u64,
        },
        erases: EraseReport {
            slc_mode_erases: se.iter().map(|&x| x as u64).sum(),
            qlc_mode_erases: qe.iter().map(|&x| x as u64).sum(),
            max_per_block: per_block.clone().max().unwrap_or(0),
            mean_per_block: per_block.map(|x| x as f64).sum::<f64>() / n,
            max_wear_fraction: wear.clone().fold(0.0, f64::max),
            mean_wear_fraction: wear.sum::<f64>() / n,
        },
        slc: SlcReport {
            final_blocks: f.slc_target(),
            final_used_blocks: f.slc_used(),
            mean_blocks: dev.slc_byte_weighted / host.max(1) as f64,
            min_blocks: lo,
            max_blocks: hi,
            final_theta_bytes: theta(dev.theta_bytes()),
        },
        requests: dev.stats().clone(),
        ftl: f.counters().clone(),
        manager_report: dev.manager().report(),
        reads_checked: f.reads_checked(),
        victim_policy: VictimPolicies {
            slc: f.victim_policy_names().0,
            qlc: f.victim_policy_names().1,
        },
        placement: if f.params().kinds() == 2 {
            "swap_file"
        } else {
            "single"
        },
        swap_range_bytes: f
            .swap_range()
            .map(|(a, b)| [a as u64 * 4096, b as u64 * 4096]),
        swap_invalidated_pages: f.counters().swap_invalidated_units,
        write_buffer_swap_dropped_pages: f.counters().buffer_swap_dropped_units,
    }
}

//! The hybrid run's report (serialized as JSON with a fixed key order; docs/hybrid.md lists every key).

use nandstack_core::histogram::Percentiles;
use nandstack_core::Histogram;
use nandstack_device::hybrid::managers::QTable;
use nandstack_device::hybrid::{
    CostBreakdown, CostKind, DeviceStats, FtlCounters, HybridSsd, ManagerReport, OpCost,
};
use serde::Serialize;

use super::HybridRunConfig;

const MIB: f64 = 1024.0 * 1024.0;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct HybridReport {
    /// `qlc_only`, `static`, `dwa`, `ust` or `rl`.
    pub manager: String,
    pub seed: u64,
    pub workload: WorkloadReport,
    pub device: DeviceReport,
    /// Host bytes written ÷ total write cost time (MiB/s; Fig. 4 normalises it to QLC-only).
    pub write_throughput_mib_per_s: f64,
    /// Flash bytes programmed (every page program of every cause × page size) ÷ host bytes written.
    pub waf: f64,
    /// Total write cost (sum of `cost_breakdown`), ns.
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
    /// One sample every `report.sample_every_bytes` host bytes written (Figs. 5–6).
    pub series: Vec<Sample>,
    pub host: DeviceStats,
    pub ftl: FtlCounters,
    /// The manager's own report (`rl`: the agent's statistics).
    pub manager_report: ManagerReport,
    /// The final Q-table (RL with `report.include_q_table`), else null.
    pub q_table: Option<QTable>,
    /// One line per `pretrain` workload, in order (empty without pre-training).
    pub pretraining: Vec<PretrainLine>,
    pub verify: VerifyReport,
    /// Wall-clock seconds of the run (not deterministic).
    pub wall_seconds: f64,
}

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

/// What was run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkloadReport {
    /// `standin` or `trace`.
    pub kind: String,
    /// Stand-in name or trace path.
    pub name: String,
    pub scale: f64,
    /// Stand-in address space (bytes); 0 for traces.
    pub address_space_bytes: u64,
    /// Stand-in total to write (bytes); 0 for traces.
    pub target_write_bytes: u64,
    pub write_requests: u64,
    pub write_bytes: u64,
    pub read_requests: u64,
    pub read_bytes: u64,
    pub trim_requests: u64,
    pub mean_write_request_bytes: f64,
    /// Share of written bytes in requests ≤ 128 KiB, ≤ 256 KiB, ≤ 512 KiB, > 512 KiB (Table 4's rows).
    pub write_byte_share: [f64; 4],
    #[serde(skip)]
    class_bytes: [u64; 4],
}

impl WorkloadReport {
    pub(crate) fn add_write(&mut self, len: u64) {
        self.write_requests += 1;
        self.write_bytes += len;
        let c = match len {
            0..=131_072 => 0,
            131_073..=262_144 => 1,
            262_145..=524_288 => 2,
            _ => 3,
        };
        self.class_bytes[c] += len;
    }
    fn finish(&mut self) {
        let b = self.write_bytes.max(1) as f64;
        for c in 0..4 {
            self.write_byte_share[c] = self.class_bytes[c] as f64 / b;
        }
        self.mean_write_request_bytes = self.write_bytes as f64 / self.write_requests.max(1) as f64;
    }
}

/// The device as built.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceReport {
    pub total_blocks: u32,
    pub page_bytes: u32,
    pub slc_block_bytes: u64,
    pub qlc_block_bytes: u64,
    pub logical_bytes: u64,
    pub over_provisioning: f64,
    pub write_buffer_bytes: u64,
    pub slc_free_threshold_blocks: u32,
    pub qlc_free_threshold_blocks: u32,
    pub precondition_fill_fraction: f64,
}

/// Flash program totals.
#[derive(Clone, Debug, Serialize)]
pub struct FlashReport {
    pub slc_page_programs: u64,
    pub qlc_page_programs: u64,
    pub programmed_bytes: u64,
    /// Write cost of the final flush (padding and buffer write-back), ns; included in `write_cost_ns`.
    pub flush_cost_ns: u64,
}

/// Erase counts.
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
    /// SLC region size averaged over host bytes written.
    pub mean_blocks: f64,
    pub min_blocks: u32,
    pub max_blocks: u32,
    /// Final θ in bytes; null = every write goes to SLC (UST).
    pub final_theta_bytes: Option<u64>,
}

/// Read-after-write verification.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyReport {
    pub enabled: bool,
    pub invariant_checks: u64,
    pub reads_checked: u64,
}

/// One point of the time series.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub host_write_bytes: u64,
    pub slc_blocks: u32,
    pub slc_used_blocks: u32,
    /// θ in bytes; null = all writes to SLC.
    pub theta_bytes: Option<u64>,
    pub utilization: f64,
    pub waf_cumulative: f64,
    /// Host bytes ÷ write cost time since the previous sample (MiB/s).
    pub throughput_interval_mib_per_s: f64,
}

fn theta(t: u64) -> Option<u64> {
    (t != u64::MAX).then_some(t)
}

fn waf(c: &CostBreakdown, page_bytes: u32, host: u64) -> f64 {
    c.page_programs() as f64 * page_bytes as f64 / host.max(1) as f64
}

fn throughput(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / MIB / (ns as f64 * 1e-9)
    }
}

pub(crate) fn sample(dev: &HybridSsd, (bytes0, ns0): (u64, u64)) -> Sample {
    let f = dev.ftl();
    let host = dev.stats().host_write_bytes;
    Sample {
        host_write_bytes: host,
        slc_blocks: f.slc_target(),
        slc_used_blocks: f.slc_used(),
        theta_bytes: theta(dev.theta_bytes()),
        utilization: f.utilization(),
        waf_cumulative: waf(f.costs(), f.params().page_bytes, host),
        throughput_interval_mib_per_s: throughput(host - bytes0, f.costs().total_ns() - ns0),
    }
}

pub(crate) fn build(
    cfg: &HybridRunConfig,
    dev: &HybridSsd,
    mut workload: WorkloadReport,
    series: Vec<Sample>,
    hist: &Histogram,
    flush_ns: u64,
) -> HybridReport {
    workload.finish();
    let f = dev.ftl();
    let p = f.params();
    let c = *f.costs();
    let host = dev.stats().host_write_bytes;
    let total = c.total_ns();
    let (se, qe) = f.erase_counts();
    let n = se.len().max(1) as f64;
    let per_block = se.iter().zip(qe).map(|(a, b)| a + b);
    let wear = se
        .iter()
        .zip(qe)
        .map(|(&a, &b)| a as f64 / 100_000.0 + b as f64 / 1_000.0);
    let (mut min_b, mut max_b) = (f.slc_target(), f.slc_target());
    for s in &series {
        min_b = min_b.min(s.slc_blocks);
        max_b = max_b.max(s.slc_blocks);
    }
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
    HybridReport {
        manager: dev.manager().name().into(),
        seed: cfg.seed,
        workload,
        device: DeviceReport {
            total_blocks: p.total_blocks,
            page_bytes: p.page_bytes,
            slc_block_bytes: p.slc_block_bytes(),
            qlc_block_bytes: p.qlc_block_bytes(),
            logical_bytes: p.logical_bytes(),
            over_provisioning: p.over_provisioning,
            write_buffer_bytes: p.write_buffer_units as u64 * 4096,
            slc_free_threshold_blocks: p.slc_free_threshold,
            qlc_free_threshold_blocks: p.qlc_free_threshold,
            precondition_fill_fraction: cfg.precondition.fill_fraction,
        },
        write_throughput_mib_per_s: throughput(host, total),
        waf: waf(&c, p.page_bytes, host),
        write_cost_ns: total,
        cost_breakdown: Breakdown::from_fn(|k| *c.get(k)),
        cost_fraction: Breakdown::from_fn(|k| c.get(k).ns as f64 / total.max(1) as f64),
        write_cost_per_request_us: hist.percentiles(1e-3),
        read_cost_ns: f.counters().read_ns,
        flash: FlashReport {
            slc_page_programs: programs(true),
            qlc_page_programs: programs(false),
            programmed_bytes: c.page_programs() * p.page_bytes as u64,
            flush_cost_ns: flush_ns,
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
            mean_blocks: 0.0,
            min_blocks: min_b,
            max_blocks: max_b,
            final_theta_bytes: theta(dev.theta_bytes()),
        },
        series,
        host: dev.stats().clone(),
        ftl: f.counters().clone(),
        manager_report: dev.manager().report(),
        q_table: if cfg.report.include_q_table {
            dev.manager().q_table().cloned()
        } else {
            None
        },
        pretraining: Vec::new(),
        verify: VerifyReport::default(),
        wall_seconds: 0.0,
    }
}

/// A pre-training run, summarised.
#[derive(Clone, Debug, Serialize)]
pub struct PretrainLine {
    /// Stand-in name or trace path.
    pub workload: String,
    pub seed: u64,
    pub host_write_bytes: u64,
    pub write_throughput_mib_per_s: f64,
    pub waf: f64,
    /// RL steps taken and states with an updated entry in the table afterwards.
    pub rl_steps: u64,
    pub rl_states_visited: u64,
}

pub(crate) fn pretrain_line(dev: &HybridSsd, workload: WorkloadReport, seed: u64) -> PretrainLine {
    let f = dev.ftl();
    let c = *f.costs();
    let host = dev.stats().host_write_bytes;
    let rl = dev.manager().report().rl;
    PretrainLine {
        workload: workload.name,
        seed,
        host_write_bytes: host,
        write_throughput_mib_per_s: throughput(host, c.total_ns()),
        waf: waf(&c, f.params().page_bytes, host),
        rl_steps: rl.as_ref().map_or(0, |r| r.steps),
        rl_states_visited: rl.as_ref().map_or(0, |r| r.states_visited),
    }
}

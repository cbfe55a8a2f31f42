//! Host programs, the one runner of the host model: it builds the device the config describes, hands it
//! to the host (`nandstack_host::host::Host::build`), runs the processes' threads ([`sim`]), and reports.
//! The host's block I/O goes through the same `Device` interface as block workloads. The summary keeps
//! the common device keys at the top level and the host's own figures in `host` ([`report`]).

mod bench;
pub mod lockstep;
pub mod report;
pub mod series;
pub mod sim;

pub use bench::{bench_host, bench_host_value};
pub use series::Series;
pub use sim::{ProcInfo, Sim};

use std::time::Instant;

use nandstack_core::Result;
use nandstack_host::vm::page::LRU_NAMES;

use crate::config::SimConfig;
use crate::drive::Measured;
use crate::report::{Report, RunFacts, WorkloadInfo};
use crate::series::TimeSeries;
use crate::Progress;

/// Build the device (read-after-write version checks and FTL invariants in it too, under `verify`),
/// the host on it and the threads: the run before its first reference. `cfg` is checked.
pub fn build(
    cfg: &SimConfig,
    verify: bool,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<Sim> {
    let dev = nandstack_device::build(&cfg.device, cfg.seed, verify, None)?;
    Sim::build(cfg, dev, verify, progress)
}

/// Check `cfg`, build it and run every thread to its end (no preconditioning, no flush of the drive,
/// no summary): for tests and the kernel comparisons, which read the finished host.
pub fn simulate(cfg: &SimConfig, verify: bool) -> Result<Sim> {
    cfg.check()?;
    let mut sim = build(cfg, verify, &mut |_, _, _| true)?;
    sim.run(&mut |_, _, _| true)?;
    Ok(sim)
}

/// The host's interval series in the one time-series format.
fn series(sim: &Sim) -> TimeSeries {
    let s = &sim.series;
    let mut columns: Vec<String> = [
        "sim_seconds",
        "swap_used_pages",
        "pswpin",
        "pswpout",
        "major_faults",
        "minor_faults",
        "free_pages",
        "device_write_pages",
        "flash_write_pages",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let names: Vec<&str> = sim.host.vm.memcgs.iter().map(|m| m.name.as_str()).collect();
    for n in &names {
        for k in ["usage_pages", "swap_read_mib_per_s", "swap_write_mib_per_s"] {
            columns.push(format!("cgroup_{n}_{k}"));
        }
        for l in LRU_NAMES {
            columns.push(format!("cgroup_{n}_{l}_pages"));
        }
    }
    let rows = (0..s.t_ms.len())
        .map(|i| {
            let mut row = vec![
                s.t_ms[i] / 1e3,
                s.swap_used_pages[i] as f64,
                s.pswpin[i] as f64,
                s.pswpout[i] as f64,
                s.major_faults[i] as f64,
                s.minor_faults[i] as f64,
                s.free_pages[i] as f64,
                s.device_write_pages[i] as f64,
                s.flash_write_pages[i] as f64,
            ];
            for c in &s.cgroups {
                row.push(c.usage_pages[i] as f64);
                row.push(c.swap_read_mib_per_s[i]);
                row.push(c.swap_write_mib_per_s[i]);
                row.extend(c.lru_pages.iter().map(|l| l[i] as f64));
            }
            row
        })
        .collect();
    TimeSeries {
        columns,
        rows,
        path: None,
    }
}

/// An aged device for host programs: `[precondition]` fills and warms it up (untimed, with the
/// synthetic `[workload]` keys) only when asked — by default host programs start on a fresh device.
/// The swap range is already registered (swapon ran when the host was built); counters start at zero.
fn age(
    cfg: &SimConfig,
    sim: &mut Sim,
    verify: bool,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<()> {
    let p = &cfg.precondition;
    let fractions = (
        p.fill_fraction.unwrap_or(0.0),
        p.warmup_capacity_multiples.unwrap_or(0.0),
    );
    if fractions == (0.0, 0.0) {
        return Ok(());
    }
    if fractions.1 > 0.0 {
        let capacity = sim.host.device_mut().capacity_bytes();
        cfg.workload.synthetic.validate(capacity)?;
    }
    // What the device was told before aging: swapon's range registration (the backend names it).
    let told = sim.host.store.backend.report();
    let key = crate::aged::key(cfg, Some(fractions), told, verify)?;
    match key.as_deref().and_then(crate::aged::copy) {
        Some((copy, _)) => sim.host.io.dev = copy,
        None => {
            let dev = sim.host.device_mut();
            let mut ticker = crate::progress::Ticker::new("precondition", 0, cb)?;
            crate::precondition::prepare(cfg, dev, cfg.seed, verify, &mut ticker, Some(fractions))?;
            if let Some(key) = key {
                crate::aged::keep(key, sim.host.device_mut(), None);
            }
        }
    }
    if p.aged_data == crate::config::AgedData::Invalid {
        invalidate_aged(sim, fractions.0)?;
    }
    Ok(())
}

/// SSDSim's stock aging (`[precondition] aged_data = "invalid"`): TRIM every filled unit outside the
/// host's file partition, so the aged pages are programmed and invalid; then flush and zero the
/// counters again.
fn invalidate_aged(sim: &mut Sim, fill_fraction: f64) -> Result<()> {
    use nandstack_core::MAPPING_UNIT_BYTES;
    use nandstack_device::Command;
    let (files, file_len) = (sim.host.pc.base, sim.host.pc.pages() * 4096);
    let dev = sim.host.device_mut();
    let unit = MAPPING_UNIT_BYTES;
    let end = (dev.capacity_bytes() / unit) as f64 * fill_fraction;
    let end = end as u64 * unit;
    let keep = (files.min(end), (files + file_len).min(end));
    const CHUNK: u64 = 1 << 20;
    for (lo, hi) in [(0, keep.0), (keep.1, end)] {
        let mut at = lo;
        while at < hi {
            let len = CHUNK.min(hi - at);
            dev.precondition(Command::trim(at, len))?;
            at += len;
        }
    }
    dev.precondition(Command::Flush)?;
    dev.reset_counters();
    Ok(())
}

/// A host run built and aged, before its first reference.
pub(crate) struct Started {
    pub sim: Sim,
    wall_pre: f64,
    /// Wall seconds of the measured phase so far.
    pub wall: f64,
    /// CPU seconds this run has used so far (the process's, counted over the run's own phases).
    pub cpu: Option<f64>,
}

impl Started {
    /// Run `f` on the simulation, charging its CPU and wall seconds to this run's measured phase.
    pub(crate) fn charged<R>(&mut self, f: impl FnOnce(&mut Sim) -> R) -> R {
        let (cpu0, t0) = (crate::usage::cpu_seconds(), Instant::now());
        let r = f(&mut self.sim);
        self.cpu = charge(self.cpu, cpu0);
        self.wall += t0.elapsed().as_secs_f64();
        r
    }
}

/// Build and age the run of `cfg` (checked).
pub(crate) fn start(
    cfg: &SimConfig,
    opts: &crate::RunOptions,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Started> {
    let verify = opts.verify;
    let t0 = Instant::now();
    let cpu0 = crate::usage::cpu_seconds();
    let mut sim = build(cfg, verify, &mut |_, done, total| {
        cb(&Progress {
            phase: "build",
            done,
            total,
        })
    })?;
    age(cfg, &mut sim, verify, cb)?;
    Ok(Started {
        sim,
        wall_pre: t0.elapsed().as_secs_f64(),
        wall: 0.0,
        cpu: cpu0.zip(crate::usage::cpu_seconds()).map(|(a, b)| b - a),
    })
}

pub fn run(
    cfg: &SimConfig,
    opts: &crate::RunOptions,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Report> {
    let started = start(cfg, opts, cb)?;
    finish(cfg, opts, started, cb)
}

/// The measured phase of a started run on its own streams, then its end ([`conclude`]).
pub(crate) fn finish(
    cfg: &SimConfig,
    opts: &crate::RunOptions,
    mut started: Started,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Report> {
    let ran = started.charged(|sim| {
        sim.run(&mut |_, done, total| {
            cb(&Progress {
                phase: "measure",
                done,
                total,
            })
        })
    });
    let interrupted = match ran {
        Ok(()) => false,
        Err(nandstack_core::Error::Interrupted) => true,
        Err(e) => return Err(e),
    };
    conclude(cfg, opts, started, interrupted)
}

/// `cpu` plus the process's CPU seconds since `since` (`None` where /proc is not readable).
pub(crate) fn charge(cpu: Option<f64>, since: Option<f64>) -> Option<f64> {
    let now = crate::usage::cpu_seconds();
    cpu.zip(since.zip(now)).map(|(c, (a, b))| c + (b - a))
}

/// The run's end after its measured phase: the drive's flush, the final checks, the report.
pub(crate) fn conclude(
    cfg: &SimConfig,
    opts: &crate::RunOptions,
    started: Started,
    interrupted: bool,
) -> Result<Report> {
    let verify = opts.verify;
    let Started {
        mut sim,
        wall_pre,
        wall,
        cpu,
    } = started;
    let (cpu0, t1) = (crate::usage::cpu_seconds(), Instant::now());
    // The drive writes its buffer back and pads open pages, as after a block run (device-internal).
    let flush_done_ns = sim.host.device_mut().flush(sim.now)?.0;
    if verify && !interrupted {
        sim.host.device_mut().verify_all()?;
    }
    let t2 = Instant::now();
    let host = report::report(&sim);
    let lat = &sim.host.io.latency;
    let mut series = series(&sim);
    if let Some(path) = &opts.series_csv {
        series.stream_to(path)?;
    }
    let measured = Measured {
        requests: sim.host.io.counters.requests.iter().flatten().sum(),
        reads: lat[0].clone(),
        writes: lat[1].clone(),
        trims: lat[2].clone(),
        sim_ns: sim.now.0,
        series,
        cpu_seconds: charge(cpu, cpu0),
        flush_done_ns,
        interrupted,
    };
    Ok(Report::build(RunFacts {
        cfg,
        dev: sim.host.device(),
        measured: &measured,
        workload: WorkloadInfo {
            kind: "host",
            name: String::new(),
            clipped_requests: 0,
            trace: None,
            flows: Vec::new(),
        },
        host: Some(host),
        pretraining: Vec::new(),
        verified: verify,
        wall_pre,
        wall: wall + (t2 - t1).as_secs_f64(),
    }))
}

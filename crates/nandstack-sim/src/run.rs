//! The one runner: build the device a config describes, drive it with the workload, report.
//!
//! Block workloads (synthetic, trace, stand-in): precondition (fill + steady-state warm-up, untimed,
//! through `Device::precondition`) → reset counters → measured phase through the request issuer
//! ([`crate::drive`]) starting idle at t = 0. Host programs: the host model ([`crate::hostrun`]) on the
//! same device. The hybrid RL pre-training chain runs its workloads on fresh devices first.

use std::time::Instant;

use nandstack_core::{Error, Nanos, Result};
use nandstack_device::hybrid::{ManagerKind, QTable};
use nandstack_device::{Command, Device, ExtCommand};
use nandstack_workload::BlockGenerator;

use nandstack_device::spec::build_for_block_requests as build_device;

use crate::build::as_hybrid;
use crate::config::{
    DeviceKindName, FlowPriority, SimConfig, SwapRangeConfig, WorkloadKind, WorkloadSpec,
};
use crate::drive;
use crate::frontend::{drive_flows, FlowInput};
use crate::precondition::{periodic, prepare};
use crate::progress::Ticker;
use crate::report::{Report, RunFacts, WorkloadInfo};
use crate::series::{Intervals, SeriesSink};
use crate::source::Source;
use crate::{Progress, RunOptions};

/// Run one config to its report. The config is checked whole — values, the workload against the
/// device's capacity, the memory its tables need against the limit ([`crate::limits`]) — before anything
/// is allocated; a panic or an allocation failure anywhere below becomes an error
/// ([`nandstack_core::alloc::catch`]), so a caller never dies.
pub fn run(
    mut cfg: SimConfig,
    opts: &RunOptions,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Report> {
    if let Some(s) = opts.seed {
        cfg.seed = s;
    }
    cfg.check()?;
    check_output_paths(&cfg)?;
    crate::limits::ensure_fits(&cfg, opts.verify, opts.series_csv.is_none())?;
    nandstack_core::alloc::catch(|| run_checked(cfg, opts, cb))
}

/// A config of `run_many`: its position, itself, its estimated bytes.
type Member = (usize, SimConfig, u64);

/// Run several configs, one result each (in order), as [`run`] runs each — the same reports — but host
/// programs that read the same reference streams side by side ([`crate::hostrun::lockstep`]), each
/// stream generated once. Runs sharing streams go together while their estimated memory adds up to at
/// most half the limit ([`crate::limits::limit`]); the others run in turn. `keep_last`: the last run
/// keeps its aged device as every run before it does (`crate::aged`, the sweep runner's groups).
pub fn run_many(
    cfgs: Vec<SimConfig>,
    opts: &RunOptions,
    keep_last: bool,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Vec<Result<Report>> {
    use crate::hostrun::lockstep::{run_lockstep, stream_key, WINDOW};
    let n = cfgs.len();
    let mut out: Vec<Option<Result<Report>>> = (0..n).map(|_| None).collect();
    // Checked configs with their estimated bytes, grouped by stream key (first appearance first).
    let mut groups: Vec<(Option<String>, Vec<Member>)> = Vec::new();
    for (i, mut cfg) in cfgs.into_iter().enumerate() {
        if let Some(s) = opts.seed {
            cfg.seed = s;
        }
        let checked = cfg
            .check()
            .and_then(|()| check_output_paths(&cfg))
            .and_then(|()| {
                crate::limits::ensure_fits(&cfg, opts.verify, opts.series_csv.is_none())
            });
        let bytes = match checked {
            Ok(e) => e.total_bytes(),
            Err(e) => {
                out[i] = Some(Err(e));
                continue;
            }
        };
        let key = stream_key(&cfg).filter(|_| opts.series_csv.is_none());
        match groups.iter_mut().find(|g| key.is_some() && g.0 == key) {
            Some(g) => g.1.push((i, cfg, bytes)),
            None => groups.push((key, vec![(i, cfg, bytes)])),
        }
    }
    let budget = groups
        .first()
        .and_then(|g| crate::limits::limit(&g.1[0].1))
        .map_or(u64::MAX, |l| l.bytes / 2);
    let batches: Vec<Vec<(usize, SimConfig)>> = groups
        .into_iter()
        .flat_map(|(_, members)| {
            let mut batches: Vec<(u64, Vec<(usize, SimConfig)>)> = Vec::new();
            for (i, cfg, bytes) in members {
                match batches.last_mut() {
                    Some((sum, b)) if sum.saturating_add(bytes) <= budget => {
                        *sum += bytes;
                        b.push((i, cfg));
                    }
                    _ => batches.push((bytes, vec![(i, cfg)])),
                }
            }
            batches.into_iter().map(|(_, b)| b)
        })
        .collect();
    let last = batches.len();
    // Once `cb` has said stop, it says so for every later run too (Ctrl-C is seen once).
    let mut stopped = false;
    let cb = &mut |p: &Progress| {
        stopped = stopped || !cb(p);
        !stopped
    };
    for (b, batch) in batches.into_iter().enumerate() {
        let keep = keep_last || b + 1 < last;
        let (index, cfgs): (Vec<usize>, Vec<SimConfig>) = batch.into_iter().unzip();
        let results = if !cb(&Progress {
            phase: "measure",
            done: 0,
            total: 0,
        }) {
            cfgs.iter().map(|_| Err(Error::Interrupted)).collect()
        } else if cfgs.len() == 1 {
            crate::aged::set_keeping(keep);
            let cfg = cfgs.into_iter().next().expect("one");
            vec![nandstack_core::alloc::catch(|| run_checked(cfg, opts, cb))]
        } else {
            run_lockstep(&cfgs, opts, keep, WINDOW, cb)
        };
        for (i, r) in index.into_iter().zip(results) {
            out[i] = Some(r);
        }
    }
    out.into_iter()
        .map(|r| r.expect("every config ran or failed"))
        .collect()
}

/// Files the run will write (Q-table, host block trace, reference file) must have an existing folder:
/// found out now, not after the run.
fn check_output_paths(cfg: &SimConfig) -> Result<()> {
    let m = (cfg.device.kind == DeviceKindName::Hybrid).then(|| cfg.device.manager());
    let outputs = [
        (
            "device.manager.rl.save_q_table",
            m.as_ref().and_then(|m| m.rl.save_q_table.clone()),
        ),
        (
            "run.block_trace.path",
            cfg.run.block_trace.as_ref().map(|b| b.path.clone()),
        ),
        ("run.refs_out", cfg.run.refs_out.clone()),
    ];
    for (key, path) in outputs {
        let Some(path) = path else { continue };
        let parent = std::path::Path::new(&path)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if path.is_empty() || !parent.is_dir() {
            return Err(Error::config(
                key,
                format!("`{path}`: its folder does not exist, so the file cannot be written"),
            ));
        }
    }
    Ok(())
}

fn run_checked(
    cfg: SimConfig,
    opts: &RunOptions,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Report> {
    if cfg.workload.kind == WorkloadKind::Host {
        return crate::hostrun::run(&cfg, opts, cb);
    }
    let t0 = Instant::now();
    let mut ticker = Ticker::new("precondition", 0, cb)?;
    let (q_table, pretraining) =
        crate::pretrain::pretrain(&cfg, opts.verify, load_q_table(&cfg)?, &mut ticker, measure)?;
    // An aged device kept from an earlier run with the same aging (`aged`), else build and age one.
    let key = match q_table {
        None => crate::aged::key(&cfg, None, serde_json::Value::Null, opts.verify)?,
        Some(_) => None,
    };
    let (mut dev, gen) = match key.as_deref().and_then(crate::aged::copy) {
        Some((dev, Some(gen))) => (dev, gen),
        _ => {
            let mut dev = build_device(&cfg.device, cfg.seed, opts.verify, q_table)?;
            let gen = prepare(&cfg, dev.as_mut(), cfg.seed, opts.verify, &mut ticker, None)?;
            if let Some(key) = key {
                crate::aged::keep(key, dev.as_ref(), Some(&gen));
            }
            (dev, gen)
        }
    };
    let t1 = Instant::now();
    let (workload, measured) = measure(
        &cfg,
        &cfg.workload,
        dev.as_mut(),
        gen,
        cfg.seed,
        opts.series_csv.as_deref(),
        opts.verify,
        &mut ticker,
        "measure",
    )?;
    let t2 = Instant::now();
    save_q_table(&cfg, dev.as_ref())?;
    let mut report = Report::build(RunFacts {
        cfg: &cfg,
        dev: dev.as_ref(),
        measured: &measured,
        workload,
        host: None,
        pretraining,
        verified: opts.verify,
        wall_pre: (t1 - t0).as_secs_f64(),
        wall: (t2 - t1).as_secs_f64(),
    });
    if cfg.run.include_q_table {
        if let (Ok(h), serde_json::Value::Object(d)) = (as_hybrid(dev.as_ref()), &mut report.device)
        {
            let t = serde_json::to_value(h.manager().q_table()).expect("Q-table serializes");
            d.insert("q_table".into(), t);
        }
    }
    Ok(report)
}

/// The measured phase of one workload (`gen`: the synthetic generator to continue).
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure(
    cfg: &SimConfig,
    w: &WorkloadSpec,
    dev: &mut dyn Device,
    gen: BlockGenerator,
    seed: u64,
    series_csv: Option<&str>,
    verify: bool,
    ticker: &mut Ticker,
    phase: &'static str,
) -> Result<(WorkloadInfo, drive::Measured)> {
    let capacity = dev.capacity_bytes();
    let (source, name) = match w.kind {
        WorkloadKind::Synthetic => (Source::synthetic(gen, w.synthetic.requests), String::new()),
        WorkloadKind::Trace => {
            let t = w.trace.as_ref().expect("validated");
            if let Some(r) = &t.swap_range {
                register_swap_range(dev, r)?;
            }
            (Source::trace(t, capacity, ticker)?, t.path.clone())
        }
        WorkloadKind::Standin => {
            let s = w.standin.as_ref().expect("validated");
            let g = s.generator(seed).ok_or_else(|| {
                Error::config("workload.standin.name", "Table 4 numbers cannot be met")
            })?;
            (Source::standin(g), s.name.spec().name.to_string())
        }
        WorkloadKind::Host => unreachable!("host programs run in hostrun"),
    };
    let total = if w.flows.is_empty() {
        source.len_hint()
    } else {
        Some(w.flows.iter().map(|f| f.synthetic.requests).sum())
    };
    match ticker.phase(phase, total.unwrap_or(0)) {
        // Stopped as the phase begins: the issuer stops at its first request, with a partial summary.
        Err(Error::Interrupted) | Ok(()) => {}
        Err(e) => return Err(e),
    }
    let mut checks = periodic(cfg, total.unwrap_or(1 << 20), verify);
    let r = &cfg.run;
    let intervals = Intervals::new(
        r.interval_host_bytes,
        r.interval_written_bytes,
        r.interval_sim_seconds,
        total,
    );
    let mut source = source;
    let sink = series_csv.map(SeriesSink::create).transpose()?;
    let (measured, flows) = if dev.queued() || !w.flows.is_empty() || w.io.nvme.active() {
        // Flows, the NVMe front end or a scheduling device: the event-driven issuer.
        let mut own = if w.flows.is_empty() {
            Vec::new()
        } else {
            flow_sources(w, capacity, seed)?
        };
        let inputs = if w.flows.is_empty() {
            vec![FlowInput {
                name: "flow0".into(),
                source: &mut source,
                queue_depth: w.io.queue_depth,
                weight: 1,
                priority: FlowPriority::Normal,
            }]
        } else {
            w.flows
                .iter()
                .zip(own.iter_mut())
                .map(|(f, source)| FlowInput {
                    name: f.name.clone(),
                    source,
                    queue_depth: f.queue_depth,
                    weight: f.weight,
                    priority: f.priority,
                })
                .collect()
        };
        let (m, reports) = drive_flows(dev, inputs, &w.io, intervals, &mut checks, ticker, sink)?;
        (
            m,
            if w.flows.is_empty() {
                Vec::new()
            } else {
                reports
            },
        )
    } else {
        let m = drive::drive(
            dev,
            &mut source,
            &w.io,
            intervals,
            &mut checks,
            ticker,
            sink,
        )?;
        (m, Vec::new())
    };
    if verify && !measured.interrupted {
        dev.verify_all()?;
    }
    Ok((
        WorkloadInfo {
            kind: w.kind.name(),
            name,
            clipped_requests: source.clipped(),
            trace: source.trace_counts(),
            flows,
        },
        measured,
    ))
}

/// DISS SDR for a replayed swap trace: the host's swapon registration, before the first request.
fn register_swap_range(dev: &mut dyn Device, r: &SwapRangeConfig) -> Result<()> {
    let cmd = Command::Ext(ExtCommand::RegisterSwapRange {
        offset: r.offset_mib << 20,
        len: r.size_mib << 20,
    });
    let kind = dev.kind().name();
    dev.submit(Nanos::ZERO, cmd)
        .map(|_| ())
        .map_err(|e| match e {
            Error::Unsupported(_) => Error::config(
                "workload.trace.swap_range",
                format!(
                    "the {kind} device does not implement the register_swap_range command (DISS)"
                ),
            ),
            other => other,
        })
}

/// One seeded generator per `[[workload.flows]]` entry (flow i's seed: `seed + 7,919 × (i + 1)`).
fn flow_sources(w: &WorkloadSpec, capacity: u64, seed: u64) -> Result<Vec<Source>> {
    w.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let s = seed.wrapping_add(7_919 * (i as u64 + 1));
            let gen = BlockGenerator::new(&f.synthetic, capacity, s)?;
            Ok(Source::synthetic(gen, f.synthetic.requests))
        })
        .collect()
}

pub use crate::pretrain::pretrain_seed;

fn load_q_table(cfg: &SimConfig) -> Result<Option<QTable>> {
    if cfg.device.kind != DeviceKindName::Hybrid {
        return Ok(None);
    }
    let m = cfg.device.manager();
    let (ManagerKind::Rl, Some(path)) = (m.kind, m.rl.load_q_table.as_ref()) else {
        return Ok(None);
    };
    let key = "device.manager.rl.load_q_table";
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::config(key, format!("cannot read `{path}`: {e}")))?;
    let t: QTable =
        serde_json::from_str(&text).map_err(|e| Error::config(key, format!("`{path}`: {e}")))?;
    Ok(Some(t))
}

fn save_q_table(cfg: &SimConfig, dev: &dyn Device) -> Result<()> {
    if cfg.device.kind != DeviceKindName::Hybrid {
        return Ok(());
    }
    let m = cfg.device.manager();
    let (ManagerKind::Rl, Some(path)) = (m.kind, m.rl.save_q_table.as_ref()) else {
        return Ok(());
    };
    let t = as_hybrid(dev)?.manager().q_table().expect("rl has a table");
    let text = serde_json::to_string(t).map_err(|e| Error::Invariant(format!("Q-table: {e}")))?;
    std::fs::write(path, text).map_err(|e| Error::Io {
        path: path.clone(),
        source: e,
    })
}

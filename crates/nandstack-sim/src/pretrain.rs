//! The hybrid RL pre-training chain (`[[pretrain]]`): each workload learned on a fresh device, the
//! Q-table carried from one to the next, one summary line per workload.
//!
//! A chain is a pure function of the config without its measured workload (the device, precondition,
//! `[run]`, the chain, the seed; of `[workload]` only the synthetic table the warm-up draws from) and
//! of the verify flag. Experiments measure several workloads after the same chain (the RL paper's tpcc
//! and oltp after one pre-training), so the result of the last few chains is kept in the process and a
//! run whose chain is one of them takes it instead of learning again: the same Q-table and lines, so
//! the same report. Only chains of stand-ins from a fresh Q-table are kept: a trace or a saved Q-table
//! (`load_q_table`) is a file that may change between two runs.

use std::sync::Mutex;

use nandstack_core::{Error, Result};
use nandstack_device::hybrid::QTable;
use serde_json::Value;

use nandstack_device::spec::build_for_block_requests as build_device;

use nandstack_device::Device;
use nandstack_workload::BlockGenerator;

use crate::build::as_hybrid;
use crate::config::{SimConfig, WorkloadKind, WorkloadSpec};
use crate::drive::Measured;
use crate::precondition::prepare;
use crate::progress::Ticker;
use crate::report::WorkloadInfo;

/// The measured phase of one workload (`crate::run::measure`: config, workload, device, the
/// generator to continue, seed, series file, verify, ticker, phase name), handed in by the run so
/// that this module does not depend on it.
pub(crate) type Measure = fn(
    &SimConfig,
    &WorkloadSpec,
    &mut dyn Device,
    BlockGenerator,
    u64,
    Option<&str>,
    bool,
    &mut Ticker,
    &'static str,
) -> Result<(WorkloadInfo, Measured)>;

/// The seed of the `i`-th pre-training run (0-based): distinct from the measured run's and from each other.
pub fn pretrain_seed(seed: u64, i: usize) -> u64 {
    seed.wrapping_add(1_000_003 * (i as u64 + 1))
}

/// What a chain hands the measured run: the learned Q-table and the chain's summary lines.
pub(crate) type Trained = (Option<QTable>, Vec<Value>);

/// Chains kept per process (each a Q-table of a few thousand entries and a few summary lines).
const KEPT: usize = 4;

/// The last `KEPT` chains learned in this process, oldest first, by key (looked up by equality).
static MEMO: Mutex<Vec<(String, Trained)>> = Mutex::new(Vec::new());

/// Run `cfg`'s pre-training chain from `start` (the Q-table loaded from a file, if any), or take its
/// result from the memo.
pub(crate) fn pretrain(
    cfg: &SimConfig,
    verify: bool,
    start: Option<QTable>,
    ticker: &mut Ticker,
    measure: Measure,
) -> Result<Trained> {
    if cfg.pretrain.is_empty() {
        return Ok((start, Vec::new()));
    }
    // Stand-ins are generated from the config alone; a trace is a file that may change between runs.
    let kept = start.is_none() && cfg.pretrain.iter().all(|w| w.kind == WorkloadKind::Standin);
    let key = if kept {
        Some(memo_key(cfg, verify)?)
    } else {
        None
    };
    if let Some(k) = &key {
        if let Some(hit) = lock().iter().find(|(m, _)| m == k) {
            return Ok(hit.1.clone());
        }
    }
    let trained = learn(cfg, verify, start, ticker, measure)?;
    if let Some(k) = key {
        let mut memo = lock();
        if !memo.iter().any(|(m, _)| *m == k) {
            if memo.len() == KEPT {
                memo.remove(0);
            }
            memo.push((k, trained.clone()));
        }
    }
    Ok(trained)
}

/// Forget every kept chain (tests: the next run learns from scratch).
pub fn clear_memo() {
    lock().clear();
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(String, Trained)>> {
    // A panic while holding the lock leaves whole entries (a push or a remove): the data is still good.
    MEMO.lock().unwrap_or_else(|e| e.into_inner())
}

/// Everything a chain reads: the config with `[workload]` cut down to its synthetic generator (the
/// warm-up's), and the verify flag.
fn memo_key(cfg: &SimConfig, verify: bool) -> Result<String> {
    let mut chain = cfg.clone();
    chain.workload = WorkloadSpec {
        synthetic: cfg.workload.synthetic.clone(),
        ..WorkloadSpec::default()
    };
    let text = serde_json::to_string(&chain)
        .map_err(|e| Error::Invariant(format!("config does not serialize: {e}")))?;
    Ok(format!("verify={verify} {text}"))
}

/// The chain itself. Pre-training always learns, whatever `device.manager.rl.learn` says of the
/// measured run.
fn learn(
    cfg: &SimConfig,
    verify: bool,
    start: Option<QTable>,
    ticker: &mut Ticker,
    measure: Measure,
) -> Result<Trained> {
    let mut q_table = start;
    let mut lines = Vec::new();
    let mut learning = cfg.device.clone();
    let mut m = learning.manager();
    m.rl.learn = true;
    learning.manager = Some(m);
    for (i, w) in cfg.pretrain.iter().enumerate() {
        let seed = pretrain_seed(cfg.seed, i);
        let mut dev = build_device(&learning, seed, verify, q_table.take())?;
        let gen = prepare(cfg, dev.as_mut(), seed, verify, ticker, None)?;
        let (info, m) = measure(
            cfg,
            w,
            dev.as_mut(),
            gen,
            seed,
            None,
            verify,
            ticker,
            "pretrain",
        )?;
        let h = as_hybrid(dev.as_ref())?;
        q_table = h.manager().q_table().cloned();
        let rl = h.manager().report().rl;
        let d = dev.details();
        lines.push(serde_json::json!({
            "workload": info.name,
            "seed": seed,
            "requests": m.requests,
            "host_write_bytes": dev.stats().host_write_bytes,
            "write_throughput_mib_per_s": d["write_throughput_mib_per_s"],
            "waf": dev.stats().waf(),
            "sim_seconds": m.sim_ns as f64 / 1e9,
            "rl_steps": rl.as_ref().map_or(0, |r| r.steps),
            "rl_states_visited": rl.as_ref().map_or(0, |r| r.states_visited),
        }));
    }
    Ok((q_table, lines))
}

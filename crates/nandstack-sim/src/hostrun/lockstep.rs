//! Host runs that read the same reference streams, simulated side by side in one process.
//!
//! A host program's streams are a pure function of its processes' workload configs and the seed
//! (`workloads::build_with_contents`), and generating them can be half of a run (DISS's mobile
//! scenarios: Zipf draws over several regions per reference). Runs whose [`stream_key`]s are equal —
//! an experiment's schemes and platform ablations on one workload — are started one after another
//! (built and aged as alone), each thread's stream is [`tee`]d to all of them (the first run's own
//! stream is the source), and the runs take turns ([`Sim::step`]): each goes on until one of its
//! threads is `WINDOW` chunks ahead of the slowest reader of the same stream, then the next runs. A run
//! reads exactly the chunks it would have generated itself, so each report is the report of the run
//! alone (`tests/lockstep.rs`); only its `wall_*` figures differ (the shared generation is charged to
//! whichever run got there first).

use std::sync::atomic::{AtomicU64, Ordering};

use nandstack_core::{Error, Result};
use nandstack_host::workloads::tee::{tee, TeeReader};

use super::sim::Step;
use super::{conclude, finish, start, Started};
use crate::config::{SimConfig, WorkloadKind};
use crate::report::Report;
use crate::{Progress, RunOptions};

/// How many chunks (of the simulation's `CHUNK` references, ≈ 32 KiB each) a run may read ahead of the
/// slowest run on the same stream: 2 MiB per stream kept at most, and turns long enough that switching
/// between runs costs nothing measurable.
pub const WINDOW: u64 = 64;

/// Runs that have read their streams through a tee, since the process started (tests, diagnostics).
static SHARED: AtomicU64 = AtomicU64::new(0);

/// Times runs side by side all waited on each other and every window was widened.
static WIDENED: AtomicU64 = AtomicU64::new(0);
/// Steps that ended paused.
static PAUSES: AtomicU64 = AtomicU64::new(0);

/// How many runs have read shared streams in this process; how many steps paused; how many times the
/// windows were widened (tests, diagnostics).
pub fn runs_shared() -> (u64, u64, u64) {
    let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
    (l(&SHARED), l(&PAUSES), l(&WIDENED))
}

/// What decides a host run's reference streams: its processes' workloads (data folder filled in) and the
/// seed. `None` for runs that are not host programs or that write their references out
/// (`run.refs_out` reads the run's own stream).
pub fn stream_key(cfg: &SimConfig) -> Option<String> {
    if cfg.workload.kind != WorkloadKind::Host || cfg.run.refs_out.is_some() {
        return None;
    }
    let workloads: Vec<String> = cfg
        .host_processes()
        .iter()
        .map(|p| format!("{:?}", p.workload))
        .collect();
    Some(format!("seed {} {}", cfg.seed, workloads.join(" | ")))
}

/// Run `cfgs` (checked, equal [`stream_key`]s) side by side, a reader at most `window` chunks ahead
/// ([`WINDOW`] in `run_many`); one result per config, in order. An error
/// in one run (its build, a check under verification) ends that run alone. `cb` sees the sum of the
/// runs' references; `false` from it interrupts every run (each then reports what it ran, as a run
/// alone does). `keep_last`: the last run keeps its aged device too (as a group's members but the
/// last do, `crate::aged`).
pub fn run_lockstep(
    cfgs: &[SimConfig],
    opts: &RunOptions,
    keep_last: bool,
    window: u64,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Vec<Result<Report>> {
    let n = cfgs.len();
    let mut out: Vec<Option<Result<Report>>> = (0..n).map(|_| None).collect();
    let mut live: Vec<(usize, Started)> = Vec::new();
    for (i, cfg) in cfgs.iter().enumerate() {
        crate::aged::set_keeping(i + 1 < n || keep_last);
        match nandstack_core::alloc::catch(|| start(cfg, opts, cb)) {
            Ok(s) => live.push((i, s)),
            Err(e) => out[i] = Some(Err(e)),
        }
    }
    if share_streams(&mut live, window).is_err() {
        // Runs whose threads differ cannot share (a stream key that missed a difference); each runs
        // on its own streams instead.
        for (i, s) in live.drain(..) {
            out[i] = Some(nandstack_core::alloc::catch(|| {
                finish(&cfgs[i], opts, s, cb)
            }));
        }
        return out
            .into_iter()
            .map(|r| r.expect("every run ends"))
            .collect();
    }
    SHARED.fetch_add(live.len() as u64, Ordering::Relaxed);
    let mut done = vec![0u64; live.len()];
    let total: u64 = live.iter().map(|(_, s)| s.sim.total_hint()).sum();
    let mut interrupted = false;
    while !live.is_empty() {
        let turns: u64 = live.iter().map(|(_, s)| s.sim.turns()).sum();
        let mut k = 0;
        while k < live.len() {
            let (i, s) = &mut live[k];
            let step = if interrupted {
                Err(Error::Interrupted)
            } else {
                s.charged(|sim| {
                    nandstack_core::alloc::catch(|| {
                        sim.step(&mut |_, refs, _| {
                            done[k] = refs;
                            cb(&Progress {
                                phase: "measure",
                                done: done.iter().sum(),
                                total,
                            })
                        })
                    })
                })
            };
            let ended = match step {
                Ok(Step::Paused) => {
                    PAUSES.fetch_add(1, Ordering::Relaxed);
                    None
                }
                Ok(Step::Done) => Some(false),
                Err(Error::Interrupted) => {
                    interrupted = true;
                    Some(true)
                }
                Err(e) => {
                    out[*i] = Some(Err(e));
                    Some(false)
                }
            };
            let Some(stopped) = ended else {
                k += 1;
                continue;
            };
            let (i, s) = live.remove(k);
            done.remove(k);
            if out[i].is_none() {
                out[i] = Some(nandstack_core::alloc::catch(|| {
                    conclude(&cfgs[i], opts, s, stopped)
                }));
            }
            // Dropping the run detached its readers: the others no longer wait for it.
        }
        let moved = live.iter().map(|(_, s)| s.sim.turns()).sum::<u64>() != turns;
        if !moved && !live.is_empty() {
            // Every run waits on a stream another run is behind on, itself waiting elsewhere (runs of
            // several threads): let every reader run further ahead.
            WIDENED.fetch_add(1, Ordering::Relaxed);
            for (_, s) in &mut live {
                s.sim.widen_streams();
            }
        }
    }
    out.into_iter()
        .map(|r| r.expect("every run ends"))
        .collect()
}

/// Replace every run's streams by readers of the first run's streams.
fn share_streams(live: &mut [(usize, Started)], window: u64) -> Result<()> {
    let Some(((_, first), rest)) = live.split_first_mut() else {
        return Ok(());
    };
    let threads = first.sim.threads();
    if rest.iter().any(|(_, s)| s.sim.threads() != threads) {
        return Err(Error::Invariant(
            "runs with the same stream key have different threads".into(),
        ));
    }
    let readers = 1 + rest.len();
    for t in 0..threads {
        let mut tees: Vec<TeeReader> = Vec::new();
        first.sim.swap_stream(t, |own| {
            tees = tee(own, readers, window);
            Box::new(tees.remove(0))
        });
        for ((_, s), r) in rest.iter_mut().zip(tees) {
            s.sim.swap_stream(t, |_| Box::new(r));
        }
    }
    Ok(())
}

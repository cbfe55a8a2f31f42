//! Packing of the loop worker onto the CPU of the task that wakes it (`host.swap.backend.packing`), as
//! the capture VMs' scheduler does (`sched_vcpu_pack`, not upstream Linux; traced with
//! `tools/capture/trace-reclaim.sh --sched`, `analyze-trace.py`'s placement lines). A wake-up of the
//! idle worker that last ran on another CPU packs it with probability `enter_near_idle` when that CPU
//! went idle less than `near_idle_us` before, `enter` otherwise — and never while the task's and the
//! worker's utilisation (running shares decayed with PELT's 32 ms half-life) add up to `max_util` or
//! more. A wake-up of a packed worker keeps it packed with probability `stay`. A packed worker runs only
//! when the task sleeps or at the next scheduler tick (`tick_us`): writes held on it meanwhile are
//! given the tick's completion and re-timed when the task sleeps earlier ([`Retimed`]).

use std::collections::{BTreeSet, VecDeque};

use nandstack_core::rng::Rng;
use nandstack_core::{Histogram, Nanos};
use serde_json::json;

use super::LoopPacking;
use super::{work_ns, LoopSwap};
use crate::backend::Retimed;
use crate::block::IoKind;

/// The random stream label of the loop worker's packing decisions.
pub const LOOP_PACK_STREAM: u64 = 0x6c6f_6f70_7061_636b;

impl LoopPacking {
    /// `Err` names the field that is not a probability or a time.
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        for (k, v) in [
            ("enter_near_idle", self.enter_near_idle),
            ("enter", self.enter),
            ("stay", self.stay),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{k} must be a probability in [0, 1], got {v}"));
            }
        }
        if !(self.max_util.is_finite() && self.max_util >= 0.0) {
            return Err(format!("max_util must be ≥ 0, got {}", self.max_util));
        }
        if !(self.near_idle_us.is_finite() && self.near_idle_us >= 0.0) {
            return Err(format!(
                "near_idle_us must be a time ≥ 0 µs, got {}",
                self.near_idle_us
            ));
        }
        if !(self.tick_us.is_finite() && self.tick_us >= 1.0) {
            return Err(format!(
                "tick_us must be a time ≥ 1 µs, got {}",
                self.tick_us
            ));
        }
        Ok(())
    }
}

/// PELT's utilisation time constant: a 32 ms half-life, ns.
const PELT_TAU_NS: f64 = 32e6 / std::f64::consts::LN_2;

/// The share of recent time covered by a series of intervals, decayed as PELT decays a running share.
#[derive(Clone, Debug, Default)]
struct Decayed {
    /// The share of the intervals folded so far, as of `at`.
    acc: f64,
    at: Nanos,
    /// Intervals not folded yet (they may end after the last evaluation), in order.
    open: VecDeque<(Nanos, Nanos)>,
}

impl Decayed {
    fn add(&mut self, from: Nanos, to: Nanos) {
        self.open.push_back((from, to.max(from)));
    }

    /// Drop the last `n` intervals added (none of them folded yet: they end after every evaluation).
    fn drop_last(&mut self, n: usize) {
        let keep = self.open.len().saturating_sub(n);
        self.open.truncate(keep);
    }

    /// The decayed share at `t` (≥ the last evaluation's time; earlier: that evaluation's share).
    fn at(&mut self, t: Nanos) -> f64 {
        if t < self.at {
            return self.acc;
        }
        let decay = |d: Nanos| (-(d.0 as f64) / PELT_TAU_NS).exp();
        self.acc *= decay(t - self.at);
        self.at = t;
        while let Some(&(a, b)) = self.open.front() {
            if b > t {
                break;
            }
            self.acc += decay(t - b) - decay(t - a.min(t));
            self.open.pop_front();
        }
        let mut share = self.acc;
        for &(a, b) in &self.open {
            if a < t {
                share += decay(t - b.min(t)) - decay(t - a);
            }
        }
        share.min(1.0)
    }
}

/// The packing state of a loop worker.
#[derive(Clone, Debug)]
pub(super) struct Packed {
    p: LoopPacking,
    near_idle_ns: Nanos,
    tick_ns: Nanos,
    rng: Rng,
    /// The worker last ran (or waits to run) on the task's CPU.
    local: bool,
    /// Requests queued on the packed worker before it got to run: kind, first slot, pages, the
    /// completion given for them (their service from the next tick on).
    held: Vec<(IoKind, u32, u32, Nanos)>,
    /// When the worker would be free for the held requests (its earlier work done).
    held_after: Nanos,
    /// The tick at which the held requests run if the task does not sleep first.
    held_tick: Nanos,
    /// Writes whose completion moved, for the host.
    retimed: Vec<Retimed>,
    /// Completion times of requests served on the task's CPU (recent ones).
    local_done: BTreeSet<Nanos>,
    /// The task's sleeps and the worker's work, decayed.
    sleeps: Decayed,
    work: Decayed,
    entered: [u64; 2],
    decided: [u64; 2],
    stayed: u64,
    left: u64,
    too_busy: u64,
    /// Utilisation at wake-ups from another CPU, in thousandths.
    util: Histogram,
    released_by_sleep: u64,
    released_by_tick: u64,
    released_by_read: u64,
    held_writes: u64,
}

impl Packed {
    pub(super) fn new(p: LoopPacking, rng: Rng) -> Packed {
        Packed {
            near_idle_ns: Nanos((p.near_idle_us * 1e3) as u64),
            tick_ns: Nanos(((p.tick_us * 1e3) as u64).max(1)),
            p,
            rng,
            local: false,
            held: Vec::new(),
            held_after: Nanos::ZERO,
            held_tick: Nanos::ZERO,
            retimed: Vec::new(),
            local_done: BTreeSet::new(),
            sleeps: Decayed::default(),
            work: Decayed::default(),
            entered: [0; 2],
            decided: [0; 2],
            stayed: 0,
            left: 0,
            too_busy: 0,
            util: Histogram::new(),
            released_by_sleep: 0,
            released_by_tick: 0,
            released_by_read: 0,
            held_writes: 0,
        }
    }

    /// A request completes at `t` on the task's CPU (noted at `now`); completions long past are
    /// forgotten (a page's write ends within a second of its completion).
    fn completed_here(&mut self, t: Nanos, now: Nanos) {
        self.local_done.insert(t);
        while let Some(&old) = self.local_done.first() {
            if old + Nanos(1_000_000_000) >= now {
                break;
            }
            self.local_done.pop_first();
        }
    }

    /// The worker works (remotely) from `from` to `to`.
    pub(super) fn worked(&mut self, from: Nanos, to: Nanos) {
        self.work.add(from, to);
    }

    /// The task slept from `from` to `to`.
    pub(super) fn slept(&mut self, from: Nanos, to: Nanos) {
        self.sleeps.add(from, to);
    }

    /// Whether the request completing at `done` completed on the task's CPU.
    pub(super) fn completed_locally(&self, done: Nanos) -> bool {
        self.local_done.contains(&done)
    }

    /// The writes re-timed since the last call, appended to `out`.
    pub(super) fn take_retimed(&mut self, out: &mut Vec<Retimed>) {
        out.append(&mut self.retimed);
    }

    /// The task sleeps at `at`: held requests run now unless their tick came first. Returns when the
    /// worker is done with them, if it ran them.
    pub(super) fn task_sleeps(
        &mut self,
        at: Nanos,
        request_ns: Nanos,
        page_ns: Nanos,
    ) -> Option<Nanos> {
        if self.held.is_empty() || at >= self.held_tick {
            return None;
        }
        self.released_by_sleep += 1;
        Some(self.release(at, request_ns, page_ns))
    }

    /// Run the held requests from `from` (the worker gets the CPU then); record the completions that
    /// moved. Returns when they are done (`from` if none).
    fn release(&mut self, from: Nanos, request_ns: Nanos, page_ns: Nanos) -> Nanos {
        let mut t = if self.held.is_empty() {
            from
        } else {
            from.max(self.held_after)
        };
        let held = std::mem::take(&mut self.held);
        // The work was counted at its times from the tick on; it runs from now instead.
        self.work.drop_last(held.len());
        let begin = t;
        for &(kind, first, n, given) in &held {
            t += work_ns(request_ns, page_ns, n);
            if t != given {
                self.local_done.remove(&given);
                self.local_done.insert(t);
                // (A held discard is not re-timed: its cluster is freed at the time first given, at
                // most a tick late.)
                if kind == IoKind::Write {
                    self.retimed.push(Retimed {
                        first,
                        n,
                        given,
                        done: t,
                    });
                }
            }
        }
        if !held.is_empty() {
            self.work.add(begin, t);
        }
        self.held = held;
        self.held.clear();
        t
    }

    /// The report's `packing` section.
    pub(super) fn report(&self) -> serde_json::Value {
        let util = |q: f64| self.util.quantile(q) as f64 / 1e3;
        json!({
            "near_idle_us": self.p.near_idle_us,
            "enter_near_idle": self.p.enter_near_idle,
            "enter": self.p.enter,
            "stay": self.p.stay,
            "max_util": self.p.max_util,
            "tick_us": self.p.tick_us,
            "wakes_from_other_cpu": {"too_busy": self.too_busy,
                "near_idle": self.decided[1], "packed_near_idle": self.entered[1],
                "other": self.decided[0], "packed_other": self.entered[0]},
            "wakes_when_packed": {"stayed": self.stayed, "left": self.left},
            "utilisation_at_wakes_from_other_cpu": if self.util.is_empty() { json!(null) } else {
                json!({"p10": util(0.1), "p50": util(0.5), "p90": util(0.9)}) },
            "requests_held": self.held_writes,
            "released": {"by_read": self.released_by_read, "by_sleep": self.released_by_sleep,
                         "by_tick": self.released_by_tick},
        })
    }
}

impl LoopSwap {
    /// The worker may be packed onto the waking task's CPU ([`LoopPacking`]), decided with `rng`.
    pub fn packing(mut self, p: LoopPacking, rng: Rng) -> LoopSwap {
        self.pack = Some(Packed::new(p, rng));
        self
    }

    /// With packing: place the worker at a wake-up, and serve the request if the worker is packed
    /// (`None`: it is on another CPU, served as without packing).
    pub(super) fn serve_packed(
        &mut self,
        kind: IoKind,
        first: u32,
        pages: u32,
        at: Nanos,
        work: Nanos,
    ) -> Option<Nanos> {
        let (req, page) = (self.request_ns, self.page_ns);
        let pk = self.pack.as_mut().expect("packing");
        // Held requests whose tick came ran then (their completions were exact).
        if !pk.held.is_empty() && at >= pk.held_tick {
            pk.held.clear();
            pk.released_by_tick += 1;
        }
        let idle = at >= self.busy_until && pk.held.is_empty();
        if idle {
            if pk.local {
                if pk.rng.chance(pk.p.stay) {
                    pk.stayed += 1;
                } else {
                    pk.local = false;
                    pk.left += 1;
                }
            } else {
                // The task runs but while it sleeps; it started (at 0) with half a CPU's utilisation,
                // as PELT gives a new task on an idle CPU (`post_init_entity_util_avg`).
                let start = (-(at.0 as f64) / PELT_TAU_NS).exp();
                let util = (1.0 - 0.5 * start - pk.sleeps.at(at)).max(0.0) + pk.work.at(at);
                pk.util.record((util * 1e3).round() as u64);
                if util >= pk.p.max_util {
                    pk.too_busy += 1;
                } else {
                    let near = (at - self.busy_until < pk.near_idle_ns) as usize;
                    pk.decided[near] += 1;
                    let p = if near == 1 {
                        pk.p.enter_near_idle
                    } else {
                        pk.p.enter
                    };
                    if pk.rng.chance(p) {
                        pk.local = true;
                        pk.entered[near] += 1;
                    }
                }
            }
            if pk.local {
                // No wake-up IPI: the worker is queued on the task's own CPU.
                self.wakes += 1;
            }
        }
        if !pk.local {
            return None;
        }
        if kind == IoKind::Read {
            // The task sleeps on its read: the worker runs now, the held requests first.
            if !pk.held.is_empty() {
                pk.released_by_read += 1;
            }
            // (With requests held, `busy_until` is their completion at the tick, not when the worker
            // is free.)
            let from = if pk.held.is_empty() {
                at.max(self.busy_until)
            } else {
                at
            };
            let mut t = pk.release(from, req, page);
            t = t.max(at) + work;
            pk.work.add(t - work, t);
            pk.completed_here(t, at);
            self.busy_until = t;
            return Some(t);
        }
        if pk.held.is_empty() && self.busy_until > at {
            // The packed worker has the CPU now (since the tick or the task's sleep): it takes this
            // request after the ones it is running.
            let done = self.busy_until + work;
            pk.work.add(self.busy_until, done);
            pk.completed_here(done, at);
            self.busy_until = done;
            return Some(done);
        }
        if pk.held.is_empty() {
            pk.held_after = self.busy_until;
            pk.held_tick = pk.tick_ns * (at / pk.tick_ns + 1);
        }
        let start = pk
            .held
            .last()
            .map_or(pk.held_tick.max(pk.held_after), |h| h.3);
        let done = start + work;
        pk.held.push((kind, first, pages, done));
        pk.held_writes += 1;
        pk.work.add(start, done);
        pk.completed_here(done, at);
        self.busy_until = done;
        Some(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::SwapBackend;

    /// Packing that always happens and never ends (the decisions are not what is tested).
    fn always_packed() -> LoopSwap {
        let p = LoopPacking {
            near_idle_us: 10.0,
            enter_near_idle: 1.0,
            enter: 1.0,
            stay: 1.0,
            max_util: 100.0,
            tick_us: 4000.0,
        };
        LoopSwap::new(0, 5.0, 1.0)
            .waking(10.0)
            .packing(p, Rng::new(1))
    }

    /// The completion (ns) of `pages` pages from slot `first` served at `at` ns.
    fn done(l: &mut LoopSwap, kind: IoKind, first: u32, pages: u32, at: u64) -> u64 {
        l.serve_at(kind, first, pages, Nanos(at)).0
    }

    fn retimed(l: &mut LoopSwap) -> Vec<(u32, u64, u64)> {
        let mut v = Vec::new();
        l.take_retimed(&mut v);
        v.iter().map(|r| (r.first, r.given.0, r.done.0)).collect()
    }

    #[test]
    fn a_packed_worker_runs_writes_at_the_next_tick_on_the_tasks_cpu() {
        let mut l = always_packed();
        // Writes at 1 ms and 1.5 ms wait for the tick at 4 ms: 5 µs + 2 × 1 µs, then 5 µs + 1 µs.
        assert_eq!(done(&mut l, IoKind::Write, 10, 2, 1_000_000), 4_007_000);
        assert_eq!(done(&mut l, IoKind::Write, 20, 1, 1_500_000), 4_013_000);
        assert!(!l.completed_remotely(Nanos(4_007_000)) && !l.completed_remotely(Nanos(4_013_000)));
        assert!(
            l.completed_remotely(Nanos(4_000_000)),
            "no request completed then"
        );
        // After the tick they had run as given; once done, the next write waits for the tick at 8 ms.
        assert_eq!(done(&mut l, IoKind::Write, 30, 1, 5_000_000), 8_006_000);
        assert!(retimed(&mut l).is_empty());
        // No wake-up IPI, so no wake-up latency, on the task's CPU.
        assert_eq!(l.tail_ns, Nanos::ZERO);
    }

    #[test]
    fn a_packed_worker_that_has_the_cpu_takes_new_requests_in_turn() {
        let mut l = always_packed();
        assert_eq!(done(&mut l, IoKind::Write, 10, 2, 1_000_000), 4_007_000);
        // 2 µs after the tick the worker is running the held write: a new one follows it at once
        // instead of waiting for the next tick.
        assert_eq!(done(&mut l, IoKind::Write, 20, 1, 4_002_000), 4_013_000);
        assert!(!l.completed_remotely(Nanos(4_013_000)));
        assert_eq!(l.pack.as_ref().unwrap().released_by_tick, 1);
        // Once it is done, the next write waits for the task again (the tick at 8 ms).
        assert_eq!(done(&mut l, IoKind::Write, 30, 1, 5_000_000), 8_006_000);
    }

    #[test]
    fn a_read_lets_the_packed_worker_run_the_writes_it_holds_first() {
        let mut l = always_packed();
        l.serve_at(IoKind::Write, 10, 2, Nanos(1_000_000));
        l.serve_at(IoKind::Write, 20, 1, Nanos(1_500_000));
        // The task reads at 2 ms and sleeps: the worker runs now, the writes first (7 + 6 µs), then
        // the read (6 µs).
        assert_eq!(done(&mut l, IoKind::Read, 40, 1, 2_000_000), 2_019_000);
        assert_eq!(
            retimed(&mut l),
            vec![(10, 4_007_000, 2_007_000), (20, 4_013_000, 2_013_000)]
        );
        assert!(!l.completed_remotely(Nanos(2_007_000)) && !l.completed_remotely(Nanos(2_019_000)));
        assert!(
            l.completed_remotely(Nanos(4_007_000)),
            "the old completion is forgotten"
        );
        let pk = l.pack.as_ref().unwrap();
        assert_eq!((pk.released_by_read, pk.released_by_tick), (1, 0));
    }

    #[test]
    fn the_task_sleeping_lets_the_packed_worker_run() {
        let mut l = always_packed();
        l.serve_at(IoKind::Write, 10, 2, Nanos(1_000_000));
        l.task_sleeps(Nanos(3_000_000));
        assert_eq!(retimed(&mut l), vec![(10, 4_007_000, 3_007_000)]);
        // Sleeping again with nothing held, or after the tick, moves nothing.
        l.task_sleeps(Nanos(3_500_000));
        l.serve_at(IoKind::Write, 11, 1, Nanos(3_600_000));
        l.task_sleeps(Nanos(4_100_000));
        assert!(retimed(&mut l).is_empty());
    }

    #[test]
    fn a_busy_task_and_worker_are_never_packed() {
        let mut l = always_packed();
        l.pack.as_mut().unwrap().p.max_util = 0.0;
        // As without packing: woken on the other CPU after 10 µs.
        assert_eq!(done(&mut l, IoKind::Write, 10, 2, 1_000_000), 1_017_000);
        assert!(l.completed_remotely(Nanos(1_017_000)));
        assert_eq!(l.pack.as_ref().unwrap().too_busy, 1);
    }

    #[test]
    fn packing_follows_its_probabilities() {
        // Never packed from a far wake-up, always from a near one; left on every later wake-up.
        let p = LoopPacking {
            near_idle_us: 10.0,
            enter_near_idle: 1.0,
            enter: 0.0,
            stay: 0.0,
            max_util: 100.0,
            tick_us: 4000.0,
        };
        let mut l = LoopSwap::new(0, 5.0, 1.0).packing(p, Rng::new(3));
        // Idle since 0 (far): stays remote; done at 1_006_000.
        assert_eq!(done(&mut l, IoKind::Read, 1, 1, 1_000_000), 1_006_000);
        // 5 µs after it went idle (near): packed; the read runs at once on the task's CPU.
        assert_eq!(done(&mut l, IoKind::Read, 2, 1, 1_011_000), 1_017_000);
        assert!(!l.completed_remotely(Nanos(1_017_000)));
        // The next wake-up leaves (stay 0): remote again.
        assert_eq!(done(&mut l, IoKind::Read, 3, 1, 2_000_000), 2_006_000);
        assert!(l.completed_remotely(Nanos(2_006_000)));
        let pk = l.pack.as_ref().unwrap();
        assert_eq!((pk.decided, pk.entered, pk.left), ([1, 1], [0, 1], 1));
    }

    #[test]
    fn decayed_shares_follow_pelts_half_life() {
        let ms = Nanos(1_000_000);
        let mut d = Decayed::default();
        // Running from 0 to 32 ms: half of the recent past at 32 ms, a quarter at 64 ms.
        d.add(Nanos(0), 32 * ms);
        assert!((d.at(32 * ms) - 0.5).abs() < 1e-9);
        assert!((d.at(64 * ms) - 0.25).abs() < 1e-9);
        // An interval still open counts up to now: [64, 96) at 96 ms adds a half.
        let mut e = Decayed::default();
        e.add(64 * ms, 128 * ms);
        assert!((e.at(96 * ms) - 0.5).abs() < 1e-9);
        assert!((e.at(128 * ms) - 0.75).abs() < 1e-9);
        // An interval ended behind one not begun yet counts as ended; dropped, it counts no more.
        let mut g = Decayed::default();
        g.add(100 * ms, 200 * ms);
        g.add(Nanos(0), 32 * ms);
        assert!((g.at(64 * ms) - 0.25).abs() < 1e-9);
        g.drop_last(1);
        assert!(g.at(64 * ms).abs() < 1e-9);
        // Always running: tends to 1.
        let mut f = Decayed::default();
        f.add(Nanos(0), 1_000 * ms);
        assert!(f.at(1_000 * ms) > 0.999_999);
    }

    #[test]
    fn packing_rejects_what_is_not_a_probability_or_a_time() {
        let ok = LoopPacking {
            near_idle_us: 10.0,
            enter_near_idle: 0.7,
            enter: 0.03,
            stay: 0.9,
            max_util: 0.5,
            tick_us: 4000.0,
        };
        assert!(ok.check().is_ok());
        assert!(LoopPacking { stay: 1.5, ..ok }
            .check()
            .unwrap_err()
            .contains("stay"));
        assert!(LoopPacking { enter: -0.1, ..ok }
            .check()
            .unwrap_err()
            .contains("enter"));
        assert!(LoopPacking {
            max_util: f64::NAN,
            ..ok
        }
        .check()
        .unwrap_err()
        .contains("max_util"));
        assert!(LoopPacking { tick_us: 0.0, ..ok }
            .check()
            .unwrap_err()
            .contains("tick_us"));
        assert!(LoopPacking {
            near_idle_us: -1.0,
            ..ok
        }
        .check()
        .unwrap_err()
        .contains("near_idle_us"));
    }
}

//! Linux swap on a loop device whose backing file lives in RAM (tmpfs) — the setup of the kernel
//! captures (`capture-swap.sh`: `losetup` over a file in a `mktemp -d` directory, `swapon`).
//!
//! The swap layer's requests are formed exactly as for [`super::block`] (single-page bios merged in
//! the task's plug, `crate::plug`); what differs is what serves them. `loop_queue_rq` queues each
//! request on the loop device's work list (`loop_queue_work`: one worker per blkcg; the captures'
//! bios all belong to the root blkcg, so one worker serves them in order), and the worker
//! (`loop_process_work` → `do_req_filebacked` → `lo_write_simple` / `lo_read_simple`) copies each
//! 4 KiB segment to or from the backing file's page cache with `vfs_iter_write` / `vfs_iter_read`.
//! Discards punch a hole in the file (`lo_fallocate`), freeing each page. So a request is served after
//! the ones queued before it, in `request_us` plus `page_us` per page (discards included); no SSD is
//! involved (the device below the host sees no swap traffic; requests are counted and traced by the
//! host's block layer).
//!
//! An idle worker is woken on another CPU: `wake_us`, plus an optional heavy tail drawn per wake-up
//! ([`WakeTail`]): in a VM the idle vCPU must first be run by the hypervisor before the wake-up IPI
//! lands (traced on the captures' VM: median 20 µs, 1 in 1,000 over 0.4 ms, 1 in 10,000 over 2.9 ms).
//! A write that waits for such a wake-up holds back every page written with it, and reclaim, finding
//! nothing written back to free, goes on to write more.
//!
//! Optionally the worker is *packed* onto the submitting task's CPU ([`Packing`]): the capture VMs run
//! a scheduler (not upstream Linux: the kernel command line's `sched_vcpu_pack`) that, when the task and
//! the worker are lightly loaded, wakes the worker on the task's CPU instead of the idle other vCPU, and
//! keeps it there on later wake-ups. A packed worker cannot run while the task runs (PREEMPT_NONE): its
//! requests wait until the task sleeps (a synchronous swap-in read, a wait for writeback) or the next
//! scheduler tick preempts the task. Writes queued on it meanwhile complete later than the host was
//! first told; [`SwapBackend::take_retimed`] hands the new completions back. Its completions run on the
//! task's CPU ([`SwapBackend::completed_remotely`] is false for them).
//!
//! The worker completes requests on its own CPU (`blk_mq_complete_request` raises the completion
//! softirq locally when the submitter's CPU shares its cache), not on the CPU of the task that
//! submitted them: [`SwapBackend::completes_remotely`].

use std::collections::{BTreeSet, VecDeque};

use nandstack_core::rng::Rng;
use nandstack_core::Result;
use serde_json::json;

use super::{Retimed, SwapBackend};
use crate::block::{BlockLayer, IoKind, Region};

pub struct LoopSwap {
    /// Byte offset of slot 0 in the host's block address space (for counters and traces).
    base: u64,
    request_ns: u64,
    page_ns: u64,
    /// Latency before an idle worker starts (its work item queued, the kworker woken), ns.
    wake_ns: u64,
    /// Extra latency of each idle wake-up.
    tail: WakeTail,
    /// When the worker has served every request queued so far.
    busy_until: u64,
    served: [u64; 3],
    busy_ns: u64,
    /// Wake-ups of the idle worker, and the extra latency the tail added to them.
    wakes: u64,
    tail_ns: u64,
    /// Packing of the worker onto the task's CPU (`None`: always woken on another CPU).
    pack: Option<Packed>,
}

/// The VM scheduler's packing of the loop worker onto the CPU of the task that wakes it, as traced on
/// the captures' VM (`tools/capture/trace-reclaim.sh --sched`, `analyze-trace.py`'s placement lines).
/// A wake-up of the idle worker that last ran on another CPU packs it with probability `enter_near_idle`
/// when that CPU went idle less than `near_idle_us` before, `enter` otherwise — and never while the
/// task's and the worker's utilisation (running shares decayed with PELT's 32 ms half-life) add up to
/// `max_util` or more. A wake-up of a packed worker keeps it packed with probability `stay`. The
/// scheduler tick (`tick_us`) ends the task's turn if it never sleeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packing {
    pub near_idle_us: f64,
    pub enter_near_idle: f64,
    pub enter: f64,
    pub stay: f64,
    pub max_util: f64,
    pub tick_us: f64,
}

impl Packing {
    /// `Err` names the field that is not a probability or a time.
    pub fn check(&self) -> std::result::Result<(), String> {
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

/// The loop worker's time for a request of `pages`: `request_ns` plus `page_ns` per page. A discard
/// punches a hole in the backing file (`lo_fallocate` → `shmem_fallocate`), freeing each of its pages:
/// charged like a page copied (a traced 2 MiB cluster took the worker a median 885 µs, 1.7 µs per page;
/// docs/kernel-swap-comparison.md).
fn work_ns(request_ns: u64, page_ns: u64, pages: u32) -> u64 {
    request_ns + pages as u64 * page_ns
}

/// PELT's utilisation time constant: a 32 ms half-life, ns.
const PELT_TAU_NS: f64 = 32e6 / std::f64::consts::LN_2;

/// The share of recent time covered by a series of intervals, decayed as PELT decays a running share.
#[derive(Clone, Debug, Default)]
struct Decayed {
    /// The share of the intervals folded so far, as of `at`.
    acc: f64,
    at: u64,
    /// Intervals not folded yet (they may end after the last evaluation), in order.
    open: VecDeque<(u64, u64)>,
}

impl Decayed {
    fn add(&mut self, from: u64, to: u64) {
        self.open.push_back((from, to.max(from)));
    }

    /// Drop the last `n` intervals added (none of them folded yet: they end after every evaluation).
    fn drop_last(&mut self, n: usize) {
        let keep = self.open.len().saturating_sub(n);
        self.open.truncate(keep);
    }

    /// The decayed share at `t` (≥ the last evaluation's time; earlier: that evaluation's share).
    fn at(&mut self, t: u64) -> f64 {
        if t < self.at {
            return self.acc;
        }
        let decay = |d: u64| (-(d as f64) / PELT_TAU_NS).exp();
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
struct Packed {
    p: Packing,
    near_idle_ns: u64,
    tick_ns: u64,
    rng: Rng,
    /// The worker last ran (or waits to run) on the task's CPU.
    local: bool,
    /// Requests queued on the packed worker before it got to run: kind, first slot, pages, the
    /// completion given for them (their service from the next tick on).
    held: Vec<(IoKind, u32, u32, u64)>,
    /// When the worker would be free for the held requests (its earlier work done).
    held_after: u64,
    /// The tick at which the held requests run if the task does not sleep first.
    held_tick: u64,
    retimed: Vec<Retimed>,
    /// Completion times of requests served on the task's CPU (recent ones).
    local_done: BTreeSet<u64>,
    /// The task's sleeps and the worker's work, decayed.
    sleeps: Decayed,
    work: Decayed,
    entered: [u64; 2],
    decided: [u64; 2],
    stayed: u64,
    left: u64,
    too_busy: u64,
    /// Utilisation at wake-ups from another CPU, in twentieths (the last bucket: ≥ 0.95).
    util_hist: [u64; 20],
    released_by_sleep: u64,
    released_by_tick: u64,
    released_by_read: u64,
    held_writes: u64,
}

/// The random stream label of the loop worker's wake-up tail (`Rng::derive(seed, LOOP_WAKE_STREAM)`).
pub const LOOP_WAKE_STREAM: u64 = 0x6c6f_6f70_7761_6b65;

impl Packed {
    /// A request completes at `t` on the task's CPU (noted at `now`); completions long past are
    /// forgotten (a page's write ends within a second of its completion).
    fn completed_here(&mut self, t: u64, now: u64) {
        self.local_done.insert(t);
        while let Some(&old) = self.local_done.first() {
            if old + 1_000_000_000 >= now {
                break;
            }
            self.local_done.pop_first();
        }
    }
}

/// The random stream label of the loop worker's packing decisions.
pub const LOOP_PACK_STREAM: u64 = 0x6c6f_6f70_7061_636b;

/// A distribution of extra wake-up latency given by points `(quantile, ns)` of its inverse CDF, linear
/// between points; sampled with its own seeded stream. Empty: always 0.
#[derive(Clone, Debug)]
pub struct WakeTail {
    points: Vec<(f64, u64)>,
    rng: Rng,
}

impl WakeTail {
    /// From `[quantile, µs]` points: quantiles rising strictly from exactly 0 to exactly 1, times finite,
    /// ≥ 0 and not falling. `Err` says what is wrong.
    pub fn new(points: &[[f64; 2]], rng: Rng) -> std::result::Result<WakeTail, String> {
        if !points.is_empty() {
            let (first, last) = (points[0][0], points[points.len() - 1][0]);
            if points.len() < 2 || first != 0.0 || last != 1.0 {
                return Err(format!(
                    "needs points [quantile, µs] from quantile 0 to quantile 1 (at least two), \
                     got {} point(s) from {first} to {last}",
                    points.len()
                ));
            }
        }
        for (i, p) in points.iter().enumerate() {
            if !(p[1].is_finite() && p[1] >= 0.0) {
                return Err(format!("point {i}: the time must be ≥ 0 µs, got {}", p[1]));
            }
            if i > 0 && !(p[0] > points[i - 1][0] && p[1] >= points[i - 1][1]) {
                return Err(format!(
                    "point {i} [{}, {}]: quantiles must rise and times must not fall \
                     (previous [{}, {}])",
                    p[0],
                    p[1],
                    points[i - 1][0],
                    points[i - 1][1]
                ));
            }
        }
        Ok(WakeTail {
            points: points
                .iter()
                .map(|p| (p[0], (p[1] * 1e3).round() as u64))
                .collect(),
            rng,
        })
    }

    /// No extra latency.
    pub fn none() -> WakeTail {
        WakeTail {
            points: Vec::new(),
            rng: Rng::new(0),
        }
    }

    /// The latency at quantile `u` ∈ [0, 1) (linear between the points), ns.
    fn at(&self, u: f64) -> u64 {
        let i = self.points.partition_point(|p| p.0 <= u);
        if i == 0 || i == self.points.len() {
            return self.points.last().map_or(0, |p| p.1);
        }
        let (a, b) = (self.points[i - 1], self.points[i]);
        let f = (u - a.0) / (b.0 - a.0);
        a.1 + (f * (b.1 - a.1) as f64).round() as u64
    }

    /// One draw, ns (no random number is used when there is no tail).
    fn sample(&mut self) -> u64 {
        if self.points.is_empty() {
            return 0;
        }
        let u = self.rng.unit_f64();
        self.at(u)
    }
}

impl LoopSwap {
    pub fn new(base: u64, request_us: f64, page_us: f64) -> LoopSwap {
        LoopSwap {
            base,
            request_ns: (request_us * 1e3) as u64,
            page_ns: (page_us * 1e3) as u64,
            wake_ns: 0,
            tail: WakeTail::none(),
            busy_until: 0,
            served: [0; 3],
            busy_ns: 0,
            wakes: 0,
            tail_ns: 0,
            pack: None,
        }
    }

    /// The worker may be packed onto the waking task's CPU ([`Packing`]), decided with `rng`.
    pub fn packing(mut self, p: Packing, rng: Rng) -> LoopSwap {
        self.pack = Some(Packed {
            p,
            near_idle_ns: (p.near_idle_us * 1e3) as u64,
            tick_ns: ((p.tick_us * 1e3) as u64).max(1),
            rng,
            local: false,
            held: Vec::new(),
            held_after: 0,
            held_tick: 0,
            retimed: Vec::new(),
            local_done: BTreeSet::new(),
            sleeps: Decayed::default(),
            work: Decayed::default(),
            entered: [0; 2],
            decided: [0; 2],
            stayed: 0,
            left: 0,
            too_busy: 0,
            util_hist: [0; 20],
            released_by_sleep: 0,
            released_by_tick: 0,
            released_by_read: 0,
            held_writes: 0,
        });
        self
    }

    /// Each wake-up of the idle worker takes `tail`'s extra latency on top of `wake_us`.
    pub fn with_wake_tail(mut self, tail: WakeTail) -> LoopSwap {
        self.tail = tail;
        self
    }

    /// An idle worker starts `wake_us` after a request arrives (`loop_queue_work` queues the worker's
    /// work item and a kworker is woken on another CPU); a busy one takes queued requests in turn.
    pub fn waking(mut self, wake_us: f64) -> LoopSwap {
        self.wake_ns = (wake_us * 1e3) as u64;
        self
    }

    /// Serve one request of `pages` arriving at `at`; returns its completion.
    #[cfg(test)]
    fn serve(&mut self, kind: IoKind, pages: u32, at: u64) -> u64 {
        self.serve_at(kind, 0, pages, at)
    }

    /// The worker's time for a request of `pages`.
    fn work(&self, pages: u32) -> u64 {
        work_ns(self.request_ns, self.page_ns, pages)
    }

    /// Serve one request of `pages` from slot `first` arriving at `at`; returns its completion.
    fn serve_at(&mut self, kind: IoKind, first: u32, pages: u32, at: u64) -> u64 {
        let work = self.work(pages);
        self.served[kind as usize] += 1;
        self.busy_ns += work;
        if self.pack.is_some() {
            if let Some(done) = self.serve_packed(kind, first, pages, at, work) {
                return done;
            }
        }
        let start = if at >= self.busy_until {
            let extra = self.tail.sample();
            self.wakes += 1;
            self.tail_ns += extra;
            at + self.wake_ns + extra
        } else {
            self.busy_until
        };
        self.busy_until = start + work;
        if let Some(pk) = self.pack.as_mut() {
            pk.work.add(start, self.busy_until);
        }
        self.busy_until
    }

    /// With packing: place the worker at a wake-up, and serve the request if the worker is packed
    /// (`None`: it is on another CPU, served as without packing).
    fn serve_packed(
        &mut self,
        kind: IoKind,
        first: u32,
        pages: u32,
        at: u64,
        work: u64,
    ) -> Option<u64> {
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
                let start = (-(at as f64) / PELT_TAU_NS).exp();
                let util = (1.0 - 0.5 * start - pk.sleeps.at(at)).max(0.0) + pk.work.at(at);
                pk.util_hist[((util * 20.0) as usize).min(19)] += 1;
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
            let mut t = Self::release(pk, from, req, page);
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
            pk.held_tick = (at / pk.tick_ns + 1) * pk.tick_ns;
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

    /// Run the held requests from `from` (the worker gets the CPU then); record the completions that
    /// moved. Returns when they are done (`from` if none).
    fn release(pk: &mut Packed, from: u64, request_ns: u64, page_ns: u64) -> u64 {
        let mut t = if pk.held.is_empty() {
            from
        } else {
            from.max(pk.held_after)
        };
        let held = std::mem::take(&mut pk.held);
        // The work was counted at its times from the tick on; it runs from now instead.
        pk.work.drop_last(held.len());
        let begin = t;
        for &(kind, first, n, given) in &held {
            t += work_ns(request_ns, page_ns, n);
            if t != given {
                pk.local_done.remove(&given);
                pk.local_done.insert(t);
                pk.retimed.push(Retimed {
                    kind,
                    first,
                    n,
                    given,
                    done: t,
                });
            }
        }
        if !held.is_empty() {
            pk.work.add(begin, t);
        }
        pk.held = held;
        pk.held.clear();
        t
    }
}

impl SwapBackend for LoopSwap {
    fn name(&self) -> &'static str {
        "loop"
    }

    fn completes_remotely(&self) -> bool {
        true
    }

    fn completed_remotely(&self, done: u64) -> bool {
        self.pack
            .as_ref()
            .is_none_or(|pk| !pk.local_done.contains(&done))
    }

    /// A packed worker with requests waiting gets the CPU when the task sleeps.
    fn task_sleeps(&mut self, at: u64) {
        let (req, page) = (self.request_ns, self.page_ns);
        let Some(pk) = self.pack.as_mut() else {
            return;
        };
        if pk.held.is_empty() || at >= pk.held_tick {
            return;
        }
        pk.released_by_sleep += 1;
        let t = Self::release(pk, at, req, page);
        self.busy_until = t;
    }

    fn task_slept(&mut self, from: u64, to: u64) {
        if let Some(pk) = self.pack.as_mut() {
            pk.sleeps.add(from, to);
        }
    }

    fn take_retimed(&mut self, out: &mut Vec<Retimed>) {
        if let Some(pk) = self.pack.as_mut() {
            out.append(&mut pk.retimed);
        }
    }

    /// Queued on the worker ([`LoopSwap::serve`]), and counted and traced by the host's block layer.
    fn request(
        &mut self,
        io: &mut BlockLayer,
        kind: IoKind,
        first: u32,
        n: u32,
        at: u64,
        comm: u16,
    ) -> Result<u64> {
        let d = self.serve_at(kind, first, n, at);
        let offset = self.base + first as u64 * 4096;
        io.record(kind, Region::Swap, offset, n, at, d, comm)?;
        Ok(d)
    }

    fn report(&self) -> serde_json::Value {
        json!({
            "kind": "loop",
            "offset_bytes": self.base,
            "request_us": self.request_ns as f64 / 1e3,
            "page_us": self.page_ns as f64 / 1e3,
            "wake_us": self.wake_ns as f64 / 1e3,
            "wakes": self.wakes,
            "wake_tail_mean_us": if self.wakes == 0 { 0.0 } else {
                self.tail_ns as f64 / self.wakes as f64 / 1e3 },
            "worker_busy_ms": self.busy_ns as f64 / 1e6,
            "requests_served": {"read": self.served[0], "write": self.served[1],
                                "discard": self.served[2]},
            "packing": self.pack.as_ref().map(|pk| json!({
                "near_idle_us": pk.p.near_idle_us,
                "enter_near_idle": pk.p.enter_near_idle,
                "enter": pk.p.enter,
                "stay": pk.p.stay,
                "max_util": pk.p.max_util,
                "tick_us": pk.p.tick_us,
                "wakes_from_other_cpu": {"too_busy": pk.too_busy,
                    "near_idle": pk.decided[1], "packed_near_idle": pk.entered[1],
                    "other": pk.decided[0], "packed_other": pk.entered[0]},
                "wakes_when_packed": {"stayed": pk.stayed, "left": pk.left},
                "utilisation_at_wakes_from_other_cpu": util_quantiles(&pk.util_hist),
                "requests_held": pk.held_writes,
                "released": {"by_read": pk.released_by_read, "by_sleep": pk.released_by_sleep,
                             "by_tick": pk.released_by_tick},
            })),
        })
    }
}

/// p10, p50, p90 of a histogram in twentieths (each the bucket's upper edge).
fn util_quantiles(h: &[u64; 20]) -> serde_json::Value {
    let n: u64 = h.iter().sum();
    let q = |p: f64| {
        let want = (p * n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in h.iter().enumerate() {
            seen += c;
            if seen >= want {
                return (i + 1) as f64 / 20.0;
            }
        }
        1.0
    };
    if n == 0 {
        return json!(null);
    }
    json!({"p10": q(0.1), "p50": q(0.5), "p90": q(0.9)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worker_serves_requests_in_order() {
        let mut l = LoopSwap::new(0, 5.0, 1.0);
        // Idle worker: 5 µs + 8 pages × 1 µs.
        assert_eq!(l.serve(IoKind::Read, 8, 1_000), 1_000 + 13_000);
        // Queued behind it: starts when the first is done.
        assert_eq!(l.serve(IoKind::Write, 2, 2_000), 14_000 + 7_000);
        // A discard frees each page of the backing file: 5 µs + 512 × 1 µs; later arrivals find the
        // worker idle once it is done.
        assert_eq!(l.serve(IoKind::Discard, 512, 100_000), 100_000 + 517_000);
        assert_eq!(l.served, [1, 1, 1]);
    }

    fn tail(points: &[[f64; 2]]) -> WakeTail {
        WakeTail::new(points, Rng::new(7)).expect("valid tail")
    }

    #[test]
    fn a_wake_tail_is_its_inverse_cdf_linear_between_points() {
        let t = tail(&[[0.0, 0.0], [0.5, 0.0], [0.9, 10.0], [1.0, 110.0]]);
        assert_eq!(t.at(0.0), 0);
        assert_eq!(t.at(0.49), 0);
        assert_eq!(t.at(0.5), 0);
        assert_eq!(t.at(0.7), 5_000);
        assert_eq!(t.at(0.9), 10_000);
        assert_eq!(t.at(0.95), 60_000);
        assert_eq!(t.at(0.999_999), 109_999);
        // Sampled: half the draws are 0, a tenth land in (10, 110] µs, the mean is the area under the
        // inverse CDF: 0.4 × 5 + 0.1 × 60 = 8 µs.
        let mut t = t;
        let n = 200_000;
        let v: Vec<u64> = (0..n).map(|_| t.sample()).collect();
        let zero = v.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        let high = v.iter().filter(|&&x| x > 10_000).count() as f64 / n as f64;
        let mean = v.iter().sum::<u64>() as f64 / n as f64 / 1e3;
        assert!((zero - 0.5).abs() < 0.005, "{zero}");
        assert!((high - 0.1).abs() < 0.003, "{high}");
        assert!((mean - 8.0).abs() < 0.2, "{mean}");
    }

    #[test]
    fn a_wake_tail_rejects_what_is_not_a_distribution() {
        let bad = |p: &[[f64; 2]]| WakeTail::new(p, Rng::new(1)).unwrap_err();
        assert!(bad(&[[0.0, 1.0]]).contains("at least two"));
        assert!(bad(&[[0.1, 0.0], [1.0, 5.0]]).contains("from quantile 0"));
        assert!(bad(&[[0.0, 0.0], [0.9, 5.0]]).contains("to quantile 1"));
        assert!(bad(&[[0.0, 0.0], [0.5, 5.0], [0.5, 6.0], [1.0, 7.0]]).contains("must rise"));
        assert!(bad(&[[0.0, 0.0], [0.5, 5.0], [1.0, 4.0]]).contains("must not fall"));
        assert!(bad(&[[0.0, -1.0], [1.0, 4.0]]).contains("≥ 0"));
        assert!(bad(&[[0.0, 0.0], [1.0, f64::NAN]]).contains("≥ 0"));
        assert!(WakeTail::new(&[], Rng::new(1)).is_ok());
    }

    #[test]
    fn only_an_idle_worker_pays_the_wake_tail() {
        // Every wake-up takes exactly 100 µs more (a degenerate tail).
        let mut l = LoopSwap::new(0, 5.0, 1.0)
            .waking(10.0)
            .with_wake_tail(tail(&[[0.0, 100.0], [1.0, 100.0]]));
        assert_eq!(l.serve(IoKind::Write, 1, 1_000), 1_000 + 116_000);
        // Queued behind a busy worker: no wake-up, no tail.
        assert_eq!(l.serve(IoKind::Write, 1, 2_000), 117_000 + 6_000);
        assert_eq!((l.wakes, l.tail_ns), (1, 100_000));
    }

    #[test]
    fn the_same_seed_draws_the_same_wake_ups() {
        let pts = [[0.0, 0.0], [0.9, 7.0], [0.999, 400.0], [1.0, 9000.0]];
        let draw = |seed| {
            let mut t = WakeTail::new(&pts, Rng::derive(seed, LOOP_WAKE_STREAM)).unwrap();
            (0..1000).map(|_| t.sample()).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn an_idle_worker_wakes_up_first() {
        let mut l = LoopSwap::new(0, 5.0, 1.0).waking(10.0);
        // Idle: 10 µs wake-up, then 5 µs + 1 page × 1 µs.
        assert_eq!(l.serve(IoKind::Read, 1, 1_000), 1_000 + 16_000);
        // Arriving while it works: no wake-up, served after it.
        assert_eq!(l.serve(IoKind::Write, 4, 5_000), 17_000 + 9_000);
        // Arriving exactly when it went idle: woken again.
        assert_eq!(l.serve(IoKind::Read, 1, 26_000), 26_000 + 16_000);
    }
    /// Packing that always happens and never ends (the decisions are not what is tested).
    fn always_packed() -> LoopSwap {
        let p = Packing {
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

    fn retimed(l: &mut LoopSwap) -> Vec<(u32, u64, u64)> {
        let mut v = Vec::new();
        l.take_retimed(&mut v);
        v.iter().map(|r| (r.first, r.given, r.done)).collect()
    }

    #[test]
    fn a_packed_worker_runs_writes_at_the_next_tick_on_the_tasks_cpu() {
        let mut l = always_packed();
        // Writes at 1 ms and 1.5 ms wait for the tick at 4 ms: 5 µs + 2 × 1 µs, then 5 µs + 1 µs.
        assert_eq!(l.serve_at(IoKind::Write, 10, 2, 1_000_000), 4_007_000);
        assert_eq!(l.serve_at(IoKind::Write, 20, 1, 1_500_000), 4_013_000);
        assert!(!l.completed_remotely(4_007_000) && !l.completed_remotely(4_013_000));
        assert!(l.completed_remotely(4_000_000), "no request completed then");
        // After the tick they had run as given; once done, the next write waits for the tick at 8 ms.
        assert_eq!(l.serve_at(IoKind::Write, 30, 1, 5_000_000), 8_006_000);
        assert!(retimed(&mut l).is_empty());
        // No wake-up IPI, so no wake-up latency, on the task's CPU.
        assert_eq!(l.tail_ns, 0);
    }

    #[test]
    fn a_packed_worker_that_has_the_cpu_takes_new_requests_in_turn() {
        let mut l = always_packed();
        assert_eq!(l.serve_at(IoKind::Write, 10, 2, 1_000_000), 4_007_000);
        // 2 µs after the tick the worker is running the held write: a new one follows it at once
        // instead of waiting for the next tick.
        assert_eq!(l.serve_at(IoKind::Write, 20, 1, 4_002_000), 4_013_000);
        assert!(!l.completed_remotely(4_013_000));
        assert_eq!(l.pack.as_ref().unwrap().released_by_tick, 1);
        // Once it is done, the next write waits for the task again (the tick at 8 ms).
        assert_eq!(l.serve_at(IoKind::Write, 30, 1, 5_000_000), 8_006_000);
    }

    #[test]
    fn a_read_lets_the_packed_worker_run_the_writes_it_holds_first() {
        let mut l = always_packed();
        l.serve_at(IoKind::Write, 10, 2, 1_000_000);
        l.serve_at(IoKind::Write, 20, 1, 1_500_000);
        // The task reads at 2 ms and sleeps: the worker runs now, the writes first (7 + 6 µs), then
        // the read (6 µs).
        assert_eq!(l.serve_at(IoKind::Read, 40, 1, 2_000_000), 2_019_000);
        assert_eq!(
            retimed(&mut l),
            vec![(10, 4_007_000, 2_007_000), (20, 4_013_000, 2_013_000)]
        );
        assert!(!l.completed_remotely(2_007_000) && !l.completed_remotely(2_019_000));
        assert!(
            l.completed_remotely(4_007_000),
            "the old completion is forgotten"
        );
        let pk = l.pack.as_ref().unwrap();
        assert_eq!((pk.released_by_read, pk.released_by_tick), (1, 0));
    }

    #[test]
    fn the_task_sleeping_lets_the_packed_worker_run() {
        let mut l = always_packed();
        l.serve_at(IoKind::Write, 10, 2, 1_000_000);
        l.task_sleeps(3_000_000);
        assert_eq!(retimed(&mut l), vec![(10, 4_007_000, 3_007_000)]);
        // Sleeping again with nothing held, or after the tick, moves nothing.
        l.task_sleeps(3_500_000);
        l.serve_at(IoKind::Write, 11, 1, 3_600_000);
        l.task_sleeps(4_100_000);
        assert!(retimed(&mut l).is_empty());
    }

    #[test]
    fn a_busy_task_and_worker_are_never_packed() {
        let mut l = always_packed();
        l.pack.as_mut().unwrap().p.max_util = 0.0;
        // As without packing: woken on the other CPU after 10 µs.
        assert_eq!(l.serve_at(IoKind::Write, 10, 2, 1_000_000), 1_017_000);
        assert!(l.completed_remotely(1_017_000));
        assert_eq!(l.pack.as_ref().unwrap().too_busy, 1);
    }

    #[test]
    fn packing_follows_its_probabilities() {
        // Never packed from a far wake-up, always from a near one; left on every later wake-up.
        let p = Packing {
            near_idle_us: 10.0,
            enter_near_idle: 1.0,
            enter: 0.0,
            stay: 0.0,
            max_util: 100.0,
            tick_us: 4000.0,
        };
        let mut l = LoopSwap::new(0, 5.0, 1.0).packing(p, Rng::new(3));
        // Idle since 0 (far): stays remote; done at 1_006_000.
        assert_eq!(l.serve_at(IoKind::Read, 1, 1, 1_000_000), 1_006_000);
        // 5 µs after it went idle (near): packed; the read runs at once on the task's CPU.
        assert_eq!(l.serve_at(IoKind::Read, 2, 1, 1_011_000), 1_017_000);
        assert!(!l.completed_remotely(1_017_000));
        // The next wake-up leaves (stay 0): remote again.
        assert_eq!(l.serve_at(IoKind::Read, 3, 1, 2_000_000), 2_006_000);
        assert!(l.completed_remotely(2_006_000));
        let pk = l.pack.as_ref().unwrap();
        assert_eq!((pk.decided, pk.entered, pk.left), ([1, 1], [0, 1], 1));
    }

    #[test]
    fn decayed_shares_follow_pelts_half_life() {
        let ms = 1_000_000u64;
        let mut d = Decayed::default();
        // Running from 0 to 32 ms: half of the recent past at 32 ms, a quarter at 64 ms.
        d.add(0, 32 * ms);
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
        g.add(0, 32 * ms);
        assert!((g.at(64 * ms) - 0.25).abs() < 1e-9);
        g.drop_last(1);
        assert!(g.at(64 * ms).abs() < 1e-9);
        // Always running: tends to 1.
        let mut f = Decayed::default();
        f.add(0, 1_000 * ms);
        assert!(f.at(1_000 * ms) > 0.999_999);
    }

    #[test]
    fn packing_rejects_what_is_not_a_probability_or_a_time() {
        let ok = Packing {
            near_idle_us: 10.0,
            enter_near_idle: 0.7,
            enter: 0.03,
            stay: 0.9,
            max_util: 0.5,
            tick_us: 4000.0,
        };
        assert!(ok.check().is_ok());
        assert!(Packing { stay: 1.5, ..ok }
            .check()
            .unwrap_err()
            .contains("stay"));
        assert!(Packing { enter: -0.1, ..ok }
            .check()
            .unwrap_err()
            .contains("enter"));
        assert!(Packing {
            max_util: f64::NAN,
            ..ok
        }
        .check()
        .unwrap_err()
        .contains("max_util"));
        assert!(Packing { tick_us: 0.0, ..ok }
            .check()
            .unwrap_err()
            .contains("tick_us"));
        assert!(Packing {
            near_idle_us: -1.0,
            ..ok
        }
        .check()
        .unwrap_err()
        .contains("near_idle_us"));
    }
}

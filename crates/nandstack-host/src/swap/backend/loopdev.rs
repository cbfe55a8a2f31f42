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
//! The worker completes requests on its own CPU (`blk_mq_complete_request` raises the completion
//! softirq locally when the submitter's CPU shares its cache), not on the CPU of the task that
//! submitted them: [`SwapBackend::completes_remotely`].

use nandstack_core::rng::Rng;
use nandstack_core::Result;
use serde_json::json;

use super::SwapBackend;
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
}

/// The random stream label of the loop worker's wake-up tail (`Rng::derive(seed, LOOP_WAKE_STREAM)`).
pub const LOOP_WAKE_STREAM: u64 = 0x6c6f_6f70_7761_6b65;

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
        }
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
    fn serve(&mut self, kind: IoKind, pages: u32, at: u64) -> u64 {
        let start = if at >= self.busy_until {
            let extra = self.tail.sample();
            self.wakes += 1;
            self.tail_ns += extra;
            at + self.wake_ns + extra
        } else {
            self.busy_until
        };
        // A discard punches a hole in the backing file (`lo_fallocate` → `shmem_fallocate`), freeing
        // each of its pages: charged like a page copied (a traced 2 MiB cluster took the worker a median
        // 885 µs, 1.7 µs per page; docs/kernel-swap-comparison.md).
        let work = self.request_ns + pages as u64 * self.page_ns;
        self.busy_until = start + work;
        self.busy_ns += work;
        self.served[kind as usize] += 1;
        self.busy_until
    }
}

impl SwapBackend for LoopSwap {
    fn name(&self) -> &'static str {
        "loop"
    }

    fn completes_remotely(&self) -> bool {
        true
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
        let d = self.serve(kind, n, at);
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
        })
    }
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
}

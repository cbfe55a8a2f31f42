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
//! Optionally the worker is *packed* onto the submitting task's CPU ([`packing`]): the capture VMs run
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

mod config;
mod packing;
mod wake;

use nandstack_core::{Nanos, Result};
use serde_json::json;

use super::{Retimed, SwapBackend};
use crate::block::{BlockLayer, IoKind, Region};
pub use config::{LoopConfig, LoopPacking};
use packing::Packed;
pub use packing::LOOP_PACK_STREAM;
pub use wake::{WakeTail, LOOP_WAKE_STREAM};

pub struct LoopSwap {
    /// Byte offset of slot 0 in the host's block address space (for counters and traces).
    base: u64,
    request_ns: Nanos,
    page_ns: Nanos,
    /// Latency before an idle worker starts (its work item queued, the kworker woken), ns.
    wake_ns: Nanos,
    /// Extra latency of each idle wake-up.
    tail: WakeTail,
    /// When the worker has served every request queued so far.
    busy_until: Nanos,
    served: [u64; 3],
    busy_ns: Nanos,
    /// Wake-ups of the idle worker, and the extra latency the tail added to them.
    wakes: u64,
    tail_ns: Nanos,
    /// Packing of the worker onto the task's CPU (`None`: always woken on another CPU).
    pack: Option<Packed>,
}

/// The loop worker's time for a request of `pages`: `request_ns` plus `page_ns` per page. A discard
/// punches a hole in the backing file (`lo_fallocate` → `shmem_fallocate`), freeing each of its pages:
/// charged like a page copied (a traced 2 MiB cluster took the worker a median 885 µs, 1.7 µs per page;
/// docs/kernel-swap-comparison.md).
fn work_ns(request_ns: Nanos, page_ns: Nanos, pages: u32) -> Nanos {
    request_ns + pages as u64 * page_ns
}

impl LoopSwap {
    pub fn new(base: u64, request_us: f64, page_us: f64) -> LoopSwap {
        LoopSwap {
            base,
            request_ns: Nanos((request_us * 1e3) as u64),
            page_ns: Nanos((page_us * 1e3) as u64),
            wake_ns: Nanos::ZERO,
            tail: WakeTail::none(),
            busy_until: Nanos::ZERO,
            served: [0; 3],
            busy_ns: Nanos::ZERO,
            wakes: 0,
            tail_ns: Nanos::ZERO,
            pack: None,
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
        self.wake_ns = Nanos((wake_us * 1e3) as u64);
        self
    }

    /// Serve one request of `pages` arriving at `at`; returns its completion.
    #[cfg(test)]
    fn serve(&mut self, kind: IoKind, pages: u32, at: Nanos) -> Nanos {
        self.serve_at(kind, 0, pages, at)
    }

    /// The worker's time for a request of `pages`.
    fn work(&self, pages: u32) -> Nanos {
        work_ns(self.request_ns, self.page_ns, pages)
    }

    /// Serve one request of `pages` from slot `first` arriving at `at`; returns its completion.
    fn serve_at(&mut self, kind: IoKind, first: u32, pages: u32, at: Nanos) -> Nanos {
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
            pk.worked(start, self.busy_until);
        }
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

    fn may_retime(&self) -> bool {
        self.pack.is_some()
    }

    fn completed_remotely(&self, done: Nanos) -> bool {
        self.pack
            .as_ref()
            .is_none_or(|pk| !pk.completed_locally(done))
    }

    /// A packed worker with requests waiting gets the CPU when the task sleeps.
    fn task_sleeps(&mut self, at: Nanos) {
        let (req, page) = (self.request_ns, self.page_ns);
        if let Some(t) = self
            .pack
            .as_mut()
            .and_then(|pk| pk.task_sleeps(at, req, page))
        {
            self.busy_until = t;
        }
    }

    fn task_slept(&mut self, from: Nanos, to: Nanos) {
        if let Some(pk) = self.pack.as_mut() {
            pk.slept(from, to);
        }
    }

    fn take_retimed(&mut self, out: &mut Vec<Retimed>) {
        if let Some(pk) = self.pack.as_mut() {
            pk.take_retimed(out);
        }
    }

    /// Queued on the worker ([`LoopSwap::serve_at`]), and counted and traced by the host's block layer.
    fn request(
        &mut self,
        io: &mut BlockLayer,
        kind: IoKind,
        first: u32,
        n: u32,
        at: Nanos,
        comm: u16,
    ) -> Result<Nanos> {
        let d = self.serve_at(kind, first, n, at);
        let offset = self.base + first as u64 * 4096;
        io.record(kind, Region::Swap, offset, n, at, d, comm)?;
        Ok(d)
    }

    fn report(&self) -> serde_json::Value {
        json!({
            "kind": "loop",
            "offset_bytes": self.base,
            "request_us": self.request_ns.0 as f64 / 1e3,
            "page_us": self.page_ns.0 as f64 / 1e3,
            "wake_us": self.wake_ns.0 as f64 / 1e3,
            "wakes": self.wakes,
            "wake_tail_mean_us": if self.wakes == 0 { 0.0 } else {
                self.tail_ns.0 as f64 / self.wakes as f64 / 1e3 },
            "worker_busy_ms": self.busy_ns.0 as f64 / 1e6,
            "requests_served": {"read": self.served[0], "write": self.served[1],
                                "discard": self.served[2]},
            "packing": self.pack.as_ref().map(packing::Packed::report),
        })
    }
}

#[cfg(test)]
mod tests {
    use nandstack_core::rng::Rng;

    use super::*;

    #[test]
    fn one_worker_serves_requests_in_order() {
        let mut l = LoopSwap::new(0, 5.0, 1.0);
        // Idle worker: 5 µs + 8 pages × 1 µs.
        assert_eq!(l.serve(IoKind::Read, 8, Nanos(1_000)).0, 1_000 + 13_000);
        // Queued behind it: starts when the first is done.
        assert_eq!(l.serve(IoKind::Write, 2, Nanos(2_000)).0, 14_000 + 7_000);
        // A discard frees each page of the backing file: 5 µs + 512 × 1 µs; later arrivals find the
        // worker idle once it is done.
        assert_eq!(
            l.serve(IoKind::Discard, 512, Nanos(100_000)).0,
            100_000 + 517_000
        );
        assert_eq!(l.served, [1, 1, 1]);
    }

    #[test]
    fn only_an_idle_worker_pays_the_wake_tail() {
        // Every wake-up takes exactly 100 µs more (a degenerate tail).
        let mut l = LoopSwap::new(0, 5.0, 1.0)
            .waking(10.0)
            .with_wake_tail(WakeTail::new(&[[0.0, 100.0], [1.0, 100.0]], Rng::new(7)).unwrap());
        assert_eq!(l.serve(IoKind::Write, 1, Nanos(1_000)).0, 1_000 + 116_000);
        // Queued behind a busy worker: no wake-up, no tail.
        assert_eq!(l.serve(IoKind::Write, 1, Nanos(2_000)).0, 117_000 + 6_000);
        assert_eq!((l.wakes, l.tail_ns.0), (1, 100_000));
    }

    #[test]
    fn an_idle_worker_wakes_up_first() {
        let mut l = LoopSwap::new(0, 5.0, 1.0).waking(10.0);
        // Idle: 10 µs wake-up, then 5 µs + 1 page × 1 µs.
        assert_eq!(l.serve(IoKind::Read, 1, Nanos(1_000)).0, 1_000 + 16_000);
        // Arriving while it works: no wake-up, served after it.
        assert_eq!(l.serve(IoKind::Write, 4, Nanos(5_000)).0, 17_000 + 9_000);
        // Arriving exactly when it went idle: woken again.
        assert_eq!(l.serve(IoKind::Read, 1, Nanos(26_000)).0, 26_000 + 16_000);
    }
}

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
//! The worker completes requests on its own CPU (`blk_mq_complete_request` raises the completion
//! softirq locally when the submitter's CPU shares its cache), not on the CPU of the task that
//! submitted them: [`SwapBackend::completes_remotely`].

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
    /// When the worker has served every request queued so far.
    busy_until: u64,
    served: [u64; 3],
    busy_ns: u64,
}

impl LoopSwap {
    pub fn new(base: u64, request_us: f64, page_us: f64) -> LoopSwap {
        LoopSwap {
            base,
            request_ns: (request_us * 1e3) as u64,
            page_ns: (page_us * 1e3) as u64,
            wake_ns: 0,
            busy_until: 0,
            served: [0; 3],
            busy_ns: 0,
        }
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
            at + self.wake_ns
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

//! The block layer's per-task plug (`blk_start_plug` … `blk_finish_plug`, `block/blk-mq.c`, Linux
//! 6.13 and later): bios submitted while a task holds a plug become requests that wait in the plug and
//! are issued together when it is flushed.
//!
//! * **Nesting.** `blk_start_plug` when the task already has a plug does nothing, and only the outermost
//!   `blk_finish_plug` flushes: reclaim run from an allocation inside swap-in readahead
//!   (`swap_vma_readahead` plugs its reads) writes into the readahead plug, and its own
//!   `shrink_lruvec` plug is a no-op.
//! * **Merging** (`blk_attempt_plug_merge`): a bio merges only into the request added last (the tail
//!   of the plug list), of the same direction and partition, when it continues it (back merge) or
//!   precedes it (front merge), up to the largest request (`max_sectors_kb` / `max_segments`).
//! * **Flush before adding a request** (`blk_add_rq_to_plug`): when the plug already holds
//!   `BLK_MAX_REQUEST_COUNT` (32) requests, or when the request `rq_list_peek` returns — the *oldest*
//!   in the plug since requests are added at the tail (6.13) — is at least `BLK_PLUG_FLUSH_SIZE`
//!   (128 KiB). So a plug that starts with a small read (readahead) collects up to 32 write requests
//!   of reclaim before it is flushed, while one that starts with a large write is flushed each time a
//!   new request begins.
//! * **Flush on sleep** (`sched_submit_work` → `blk_flush_plug(plug, true)`): a task that blocks with
//!   a non-empty plug has it flushed; the requests are run by kblockd (the `kworker/N:1H` issuers of
//!   the kernel captures).
//! * Requests are issued in the order they were added (`blk_mq_flush_plug_list`).
//!
//! Without a plug a bio is issued at once as its own request.

use crate::block::{IoKind, Region};

/// `BLK_MAX_REQUEST_COUNT`.
pub const PLUG_MAX_REQUESTS: usize = 32;
/// `BLK_PLUG_FLUSH_SIZE` (128 KiB) in 4 KiB pages.
pub const PLUG_FLUSH_PAGES: u32 = 32;

/// One request waiting in a plug: its pages (frames), in ascending offset order.
#[derive(Clone, Debug)]
pub struct PlugRq {
    pub kind: IoKind,
    pub region: Region,
    /// Byte offset of the first page.
    pub off: u64,
    pub frames: Vec<u32>,
}

impl PlugRq {
    pub fn pages(&self) -> u32 {
        self.frames.len() as u32
    }
    fn end(&self) -> u64 {
        self.off + self.frames.len() as u64 * 4096
    }
}

/// Why a plug was flushed (for the report).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlushCause {
    /// The outermost `blk_finish_plug`.
    Finish = 0,
    /// A new request found 32 requests in the plug.
    Count = 1,
    /// A new request found the oldest request at least 128 KiB.
    Size = 2,
    /// The task slept (kblockd issues the requests).
    Sleep = 3,
}

/// What adding a bio to the plug requires.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AddOutcome {
    /// Merged into the tail request or queued as a new request.
    Queued,
    /// The plug must be flushed first (then add again).
    FlushFirst(FlushCause),
    /// No plug: issue the bio now as its own request.
    NoPlug,
}

/// A task's plug.
#[derive(Default, Debug)]
pub struct BlkPlug {
    depth: u32,
    rqs: Vec<PlugRq>,
    spare: Vec<Vec<u32>>,
    /// Flushes by cause (`FlushCause` index) and requests they issued.
    pub flushes: [u64; 4],
    pub flushed_requests: [u64; 4],
}

impl BlkPlug {
    /// `blk_start_plug` (nested calls only count depth).
    pub fn start(&mut self) {
        self.depth += 1;
    }

    /// `blk_finish_plug`: true when this was the outermost plug (the caller flushes).
    pub fn finish(&mut self) -> bool {
        debug_assert!(self.depth > 0, "blk_finish_plug without blk_start_plug");
        self.depth = self.depth.saturating_sub(1);
        self.depth == 0
    }

    pub fn active(&self) -> bool {
        self.depth > 0
    }

    pub fn is_empty(&self) -> bool {
        self.rqs.is_empty()
    }

    /// Requests waiting.
    pub fn len(&self) -> usize {
        self.rqs.len()
    }

    /// Submit one page `frame` at byte `off` (a single-page bio). `max_pages` is the largest request.
    pub fn add(
        &mut self,
        kind: IoKind,
        region: Region,
        off: u64,
        frame: u32,
        max_pages: u32,
    ) -> AddOutcome {
        if self.depth == 0 {
            return AddOutcome::NoPlug;
        }
        if let Some(t) = self.rqs.last_mut() {
            if t.kind == kind && t.region == region && t.pages() < max_pages {
                if off == t.end() {
                    t.frames.push(frame);
                    return AddOutcome::Queued;
                }
                if off + 4096 == t.off {
                    t.frames.insert(0, frame);
                    t.off = off;
                    return AddOutcome::Queued;
                }
            }
        }
        if let Some(head) = self.rqs.first() {
            if self.rqs.len() >= PLUG_MAX_REQUESTS {
                return AddOutcome::FlushFirst(FlushCause::Count);
            }
            if head.pages() >= PLUG_FLUSH_PAGES {
                return AddOutcome::FlushFirst(FlushCause::Size);
            }
        }
        let mut frames = self.spare.pop().unwrap_or_default();
        frames.clear();
        frames.push(frame);
        self.rqs.push(PlugRq {
            kind,
            region,
            off,
            frames,
        });
        AddOutcome::Queued
    }

    /// Take the requests to issue (in order), counting the flush.
    pub fn take(&mut self, cause: FlushCause) -> Vec<PlugRq> {
        if !self.rqs.is_empty() {
            self.flushes[cause as usize] += 1;
            self.flushed_requests[cause as usize] += self.rqs.len() as u64;
        }
        std::mem::take(&mut self.rqs)
    }

    /// Give back the request list taken by [`BlkPlug::take`] (its buffers are reused).
    pub fn give_back(&mut self, mut v: Vec<PlugRq>) {
        for r in v.drain(..) {
            if self.spare.len() < 64 {
                self.spare.push(r.frames);
            }
        }
        if self.rqs.is_empty() {
            self.rqs = v;
        }
    }

    /// Whether `frame` waits in the plug (its I/O not yet issued).
    pub fn holds(&self, frame: u32) -> bool {
        self.rqs.iter().any(|r| r.frames.contains(&frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: IoKind = IoKind::Write;
    const R: IoKind = IoKind::Read;
    const S: Region = Region::Swap;

    fn sizes(p: &BlkPlug) -> Vec<(IoKind, u64, u32)> {
        p.rqs
            .iter()
            .map(|r| (r.kind, r.off / 4096, r.pages()))
            .collect()
    }

    #[test]
    fn no_plug_issues_at_once_and_nesting_flushes_only_at_the_outermost() {
        let mut p = BlkPlug::default();
        assert_eq!(p.add(W, S, 0, 1, 128), AddOutcome::NoPlug);
        p.start();
        p.start();
        assert!(!p.finish());
        assert_eq!(p.add(W, S, 0, 1, 128), AddOutcome::Queued);
        assert!(p.finish());
    }

    #[test]
    fn merges_only_into_the_tail_same_direction_back_or_front() {
        let mut p = BlkPlug::default();
        p.start();
        for (k, page) in [(W, 10), (W, 11), (W, 9), (R, 12), (W, 12), (W, 13), (W, 8)] {
            assert_eq!(
                p.add(k, S, page * 4096, page as u32, 128),
                AddOutcome::Queued
            );
        }
        // 9 front-merges into [10, 11]; the read of 12 starts a request; 12 and 13 written after it
        // cannot merge into [9, 11] (not the tail); 8 does not continue the tail [12, 13].
        assert_eq!(
            sizes(&p),
            vec![(W, 9, 3), (R, 12, 1), (W, 12, 2), (W, 8, 1)]
        );
        assert_eq!(p.rqs[0].frames, vec![9, 10, 11]);
    }

    #[test]
    fn flush_rules_look_at_the_count_and_at_the_oldest_request() {
        // A plug that starts with a 2-page read collects 32 requests of 128 pages: the oldest is small.
        let mut p = BlkPlug::default();
        p.start();
        p.add(R, S, 0, 0, 128);
        p.add(R, S, 4096, 1, 128);
        let mut page = 1000u64;
        let mut outcome = AddOutcome::Queued;
        for _ in 0..31 * 128 {
            outcome = p.add(W, S, page * 4096, page as u32, 128);
            page += 1;
        }
        assert_eq!(outcome, AddOutcome::Queued);
        assert_eq!(p.len(), 32);
        assert_eq!(
            p.add(W, S, page * 4096, 0, 128),
            AddOutcome::FlushFirst(FlushCause::Count)
        );
        // A plug whose oldest request reached 128 KiB is flushed when the next request begins.
        let mut q = BlkPlug::default();
        q.start();
        for i in 0..32u64 {
            assert_eq!(q.add(W, S, i * 4096, i as u32, 128), AddOutcome::Queued);
        }
        assert_eq!(
            q.add(W, S, 100 * 4096, 100, 128),
            AddOutcome::FlushFirst(FlushCause::Size)
        );
        // ... but merging into it continues up to the largest request.
        for i in 32..128u64 {
            assert_eq!(q.add(W, S, i * 4096, i as u32, 128), AddOutcome::Queued);
        }
        assert_eq!(
            q.add(W, S, 128 * 4096, 128, 128),
            AddOutcome::FlushFirst(FlushCause::Size)
        );
        let taken = q.take(FlushCause::Size);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].pages(), 128);
        assert_eq!(q.flushes[FlushCause::Size as usize], 1);
    }
}

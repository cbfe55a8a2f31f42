//! The host: virtual memory, swap, page cache and the block layer, with the mechanisms every reclaim
//! policy shares — memcg charging, page allocation with watermarks (kswapd, direct reclaim), write
//! completion, discard submission. Faults are in [`fault`], eviction mechanics in [`evict`], the
//! flusher in [`flush`], invariants in [`verify`].

/// How an out-of-memory error's message begins (the run ended where Linux would OOM-kill): callers that
/// tell it from other errors match on it (`kswap::is_out_of_memory`).
pub const OUT_OF_MEMORY: &str = "out of memory at";

mod apa;
pub mod build;
mod diss;
pub mod evict;
pub mod fault;
pub mod flush;
#[cfg(test)]
mod keyed_tests;
mod reclaim_view;
pub mod shrink_sync;
mod slot_host;
pub mod store;
pub mod swapio;
#[cfg(test)]
mod test_host;
pub mod verify;
#[cfg(test)]
mod zngc_tests;
mod zswap_worker;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nandstack_core::{Error, Nanos, Result};

use crate::block::BlockLayer;
use crate::pagecache::PageCache;
use crate::plug::BlkPlug;
use crate::reclaim::{ReclaimPolicy, ReclaimRequest};
use crate::swap::readahead::Readahead;
use crate::swap::SwapArea;
use crate::vm::page::*;
use crate::vm::Vm;
pub use store::SwapStore;

/// `FOLIO_BATCH_SIZE`: pages a per-CPU LRU batch holds before it is moved.
const ROTATE_BATCH: usize = 31;

pub use crate::block::{COMM_FLUSH, COMM_KSWAPD, COMM_KWORKER};

pub use crate::vm::counters::{Ctx, FaultKind, HostStats, Params, ShrinkStats, FAULT_KINDS};

pub struct Host {
    pub vm: Vm,
    pub swap: SwapArea,
    /// The backend and zswap in front of it (the swap area tells them of freed slots).
    pub store: SwapStore,
    pub pc: PageCache,
    pub io: BlockLayer,
    pub ra: Box<dyn Readahead>,
    policy: Option<Box<dyn ReclaimPolicy<Host>>>,
    pub p: Params,
    pub stats: HostStats,
    /// Writes in flight: (completion, frame).
    completions: BinaryHeap<Reverse<(Nanos, u32)>>,
    kswapd_backoff_until: Nanos,
    /// Where the next scan for swap-cache-only slots starts (swap full).
    pub(crate) swap_cursor: u32,
    pub(crate) ra_buf: Vec<(u32, u32)>,
    pub(crate) io_buf: Vec<u64>,
    pub(crate) frame_buf: Vec<u32>,
    pub(crate) done_buf: Vec<Nanos>,
    pub(crate) swap_pages: Vec<crate::backend::SwapPage>,
    /// The block plug of the task running host work, and kswapd's (a task of its own).
    pub plug: BlkPlug,
    pub kswapd_plug: BlkPlug,
    /// Pages whose write ended on another CPU, waiting in its `lru_rotate` batch (frame, end).
    pub rotate_batch: Vec<(u32, Nanos)>,
    /// Scratch for [`Host::apply_retimed`].
    retimed: Vec<crate::backend::Retimed>,
    /// The swap backend may move completions (`SwapBackend::may_retime`: a loop device whose worker
    /// may be packed onto the task's CPU): only then do the task's sleeps matter to it.
    worker_packs: bool,
    /// Compressed swap: page contents, frames held by the pools (`crate::zswap`).
    pub cswap: swapio::CswapState,
    /// Checking invariants (verify mode).
    pub verify: bool,
}

impl Host {
    /// The device below the host (the runner preconditions, flushes and reports it).
    pub fn device(&self) -> &dyn nandstack_device::Device {
        self.io.dev.as_ref()
    }

    /// The device below the host, to precondition or flush it between the host's steps.
    pub fn device_mut(&mut self) -> &mut dyn nandstack_device::Device {
        self.io.dev.as_mut()
    }

    /// The reclaim policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.as_ref().map_or("?", |p| p.name())
    }

    /// Whether a reclaim pass is running (the policy is out of its slot): nothing may reclaim now.
    pub(crate) fn in_reclaim(&self) -> bool {
        self.policy.is_none()
    }

    /// Whether the policy uses active lists (refault activation applies).
    fn uses_active(&self) -> bool {
        self.policy.as_ref().is_none_or(|p| p.uses_active_lists())
    }

    // ---- memory cgroups and page allocation ---------------------------------------------------

    fn oom(&self, ctx: &Ctx, m: u16, what: &str) -> Error {
        let mc = &self.vm.memcgs[m as usize];
        let lists: Vec<u64> = (0..NR_LRU as u8).map(|l| mc.lru_len(l)).collect();
        let period_ns = self.vm.stats_flush_period_ns();
        let why = if self.swap.used >= self.swap.usable {
            "the working set does not fit in RAM + swap".to_string()
        } else if lists[LRU_INACTIVE_ANON as usize] == 0
            && lists[LRU_INACTIVE_FILE as usize] == 0
            && lists[LRU_ACTIVE_ANON as usize] > 0
            && period_ns > Nanos::ZERO
        {
            format!(
                "swap has room, but the inactive lists are empty and the {} active anon pages were not \
                 aged: reclaim reads the cgroup's list sizes as of the last statistics flush \
                 (host.reclaim.stats_flush_ms = {}, Linux 6.18's periodic flush; 0 reads live values, as \
                 kernels before 5.13 did). Linux's memory controller OOM-kills a program in this state; \
                 whether it gets there depends on the flush's phase (host.reclaim.stats_flush_first_ms) — \
                 docs/model-host.md",
                lists[LRU_ACTIVE_ANON as usize],
                period_ns.0 / 1_000_000
            )
        } else {
            "swap has room, but reclaim found nothing it could evict (pages active, locked or under \
             writeback)"
                .to_string()
        };
        Error::config(
            "host",
            format!(
                "{OUT_OF_MEMORY} {:.3} s: {what} (cgroup `{}`: {} pages charged, limit {}; RAM free {} \
                 pages; swap {} of {} slots used; LRU inactive/active anon {}/{}, file {}/{}) — {why}",
                ctx.now.0 as f64 / 1e9,
                mc.name,
                mc.usage,
                if mc.limit == u64::MAX { "none".into() } else { mc.limit.to_string() },
                self.vm.free_pages(),
                self.swap.used,
                self.swap.usable,
                lists[0],
                lists[1],
                lists[2],
                lists[3],
            ),
        )
    }

    /// Wait for the earliest write in flight (reclaim throttling on writeback); false if none.
    fn wait_any_writeback(&mut self, ctx: &mut Ctx) -> Result<bool> {
        self.plug_sleep(ctx)?;
        while let Some(&Reverse((t, f))) = self.completions.peek() {
            let fr = &self.vm.frames[f as usize];
            if !fr.has(F_WRITEBACK) || fr.io_done != t {
                self.completions.pop();
                continue;
            }
            if t > ctx.now {
                self.stats.writeback_wait_ns += t - ctx.now;
                self.task_slept(ctx, t);
                ctx.now = t;
            }
            self.process_completions(ctx.now);
            return Ok(true);
        }
        Ok(false)
    }

    /// Charge one page to cgroup `m` (`try_charge_memcg`): over the limit, reclaim from the cgroup
    /// (SWAP_CLUSTER_MAX pages per try) until it fits; out of memory after MAX_RECLAIM_RETRIES rounds
    /// without progress.
    pub(crate) fn charge(&mut self, ctx: &mut Ctx, m: u16) -> Result<()> {
        let mut retries = self.p.retries;
        loop {
            let mc = &mut self.vm.memcgs[m as usize];
            if mc.usage < mc.limit {
                mc.usage += 1;
                mc.stats.max_usage_pages = mc.stats.max_usage_pages.max(mc.usage);
                return Ok(());
            }
            mc.stats.reclaim_runs += 1;
            self.stats.memcg_reclaims += 1;
            let req = ReclaimRequest {
                memcg: Some(m),
                nr_to_reclaim: self.p.scm,
                kswapd: false,
                may_swap: true,
            };
            let got = self.reclaim(ctx, &req)?;
            if got == 0 {
                let mc = &self.vm.memcgs[m as usize];
                if mc.usage >= mc.limit && !self.wait_any_writeback(ctx)? {
                    retries -= 1;
                    if retries == 0 {
                        self.vm.memcgs[m as usize].stats.oom_stalls += 1;
                        return Err(self.oom(ctx, m, "cgroup limit reclaim made no progress"));
                    }
                }
            }
        }
    }

    /// Allocate a frame charged to `m`, waking kswapd below the low watermark and reclaiming directly
    /// at the min watermark.
    pub(crate) fn alloc_page(&mut self, ctx: &mut Ctx, m: u16) -> Result<u32> {
        self.charge(ctx, m)?;
        let t0 = ctx.now;
        let mut retries = self.p.retries;
        let (min, low, _) = self.vm.wmark;
        loop {
            if self.vm.free_pages() <= low && ctx.now >= self.kswapd_backoff_until {
                self.kswapd(ctx.now)?;
            }
            if self.vm.free_pages() > min {
                break;
            }
            self.stats.direct_reclaims += 1;
            let req = ReclaimRequest {
                memcg: None,
                nr_to_reclaim: self.p.scm,
                kswapd: false,
                may_swap: true,
            };
            let got = self.reclaim(ctx, &req)?;
            if got == 0 && !self.wait_any_writeback(ctx)? {
                // No progress: dip into the reserve below min while any is left.
                if self.vm.free_pages() > 0 {
                    break;
                }
                retries -= 1;
                if retries == 0 {
                    return Err(self.oom(ctx, m, "no free RAM and reclaim made no progress"));
                }
            }
        }
        self.stats.alloc_stall_ns += ctx.now - t0;
        Ok(self.vm.take_frame(m).expect("a free frame"))
    }

    /// kswapd: reclaim from every cgroup until free memory is above the high watermark. Runs at once
    /// (on its own CPU: its time is not charged to the thread that woke it).
    fn kswapd(&mut self, now: Nanos) -> Result<()> {
        let (_, low, high) = self.vm.wmark;
        let free = self.vm.free_pages();
        if free > low {
            return Ok(());
        }
        self.stats.kswapd_runs += 1;
        let mut k = Ctx {
            now,
            cpu: 0,
            comm: COMM_KSWAPD,
            kswapd: true,
        };
        let req = ReclaimRequest {
            memcg: None,
            nr_to_reclaim: (high - free).max(self.p.scm),
            kswapd: true,
            may_swap: true,
        };
        std::mem::swap(&mut self.plug, &mut self.kswapd_plug);
        let r = self.reclaim(&mut k, &req);
        std::mem::swap(&mut self.plug, &mut self.kswapd_plug);
        r?;
        if self.vm.free_pages() <= low {
            // Could not balance (pages under writeback): try again a millisecond later.
            self.kswapd_backoff_until = now + Nanos(1_000_000);
        }
        Ok(())
    }

    /// Run the reclaim policy.
    pub(crate) fn reclaim(&mut self, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64> {
        // zswap's writeback worker runs beside reclaim: bring it up to now first.
        self.zswap_worker_run(ctx.now)?;
        self.process_completions(ctx.now);
        self.vm.tick_stats_flush(ctx.now);
        let mut pol = self.policy.take().expect("reclaim is not re-entrant");
        let r = pol.reclaim(self, ctx, req);
        self.policy = Some(pol);
        self.flush_discards(ctx.now)?;
        r
    }

    /// Put a newly resident frame on its LRU list (inactive, or active when refault-activated).
    pub(crate) fn lru_admit(&mut self, f: u32) {
        let fr = &mut self.vm.frames[f as usize];
        if !self.policy.as_ref().is_none_or(|p| p.uses_active_lists()) {
            fr.clear(F_ACTIVE);
        }
        let list = fr.lru_for();
        self.vm.lru_add_head(f, list);
    }

    // ---- write completion and discard ---------------------------------------------------------

    pub(crate) fn push_completion(&mut self, f: u32, done: Nanos) {
        self.completions.push(Reverse((done, f)));
    }

    /// Writes that completed by `now`: clear PG_writeback; a page reclaim wrote is rotated to the tail
    /// of its inactive list (`folio_rotate_reclaimable`).
    pub fn process_completions(&mut self, now: Nanos) {
        self.apply_retimed();
        while let Some(&Reverse((t, f))) = self.completions.peek() {
            if t > now {
                break;
            }
            self.completions.pop();
            self.end_writeback(f, t);
        }
    }

    /// End the writeback of `f` if it is the one completing at `t`.
    pub(crate) fn end_writeback(&mut self, f: u32, t: Nanos) {
        let fr = &mut self.vm.frames[f as usize];
        if !fr.has(F_WRITEBACK) || fr.io_done != t {
            return;
        }
        fr.clear(F_WRITEBACK);
        if fr.take(F_RECLAIM)
            && !fr.has(F_DIRTY)
            && !fr.has(F_ACTIVE)
            && (fr.list == LRU_INACTIVE_ANON || fr.list == LRU_INACTIVE_FILE)
        {
            if fr.has(F_SWAPCACHE) && self.store.backend.completed_remotely(t) {
                self.rotate_remote(f, t);
            } else {
                self.vm.lru_move_tail(f);
                self.stats.pgrotated += 1;
            }
        }
    }

    /// The task goes to sleep at `ctx.now` (an I/O wait): a loop worker packed onto its CPU runs the
    /// requests it holds, and the writes among them complete earlier than they were given.
    pub(crate) fn task_sleeps(&mut self, ctx: &Ctx) {
        if ctx.kswapd || !self.worker_packs {
            return;
        }
        self.store.backend.task_sleeps(ctx.now);
        self.apply_retimed();
    }

    /// The task sleeps from `ctx.now` until `until` (for the backend's utilisation figures).
    pub(crate) fn task_slept(&mut self, ctx: &Ctx, until: Nanos) {
        if self.worker_packs && !ctx.kswapd && until > ctx.now {
            self.store.backend.task_slept(ctx.now, until);
        }
    }

    /// Wait for the I/O of `f` to end (`folio_wait_locked` / its read): the task sleeps.
    pub(crate) fn io_wait(&mut self, ctx: &mut Ctx, f: u32) {
        if self.vm.frames[f as usize].io_done > ctx.now {
            self.task_sleeps(ctx);
            let t = self.vm.frames[f as usize].io_done;
            self.task_slept(ctx, t);
            ctx.now = ctx.now.max(t);
        }
    }

    /// Move the writeback of pages whose write request completes at another time than it was given
    /// ([`crate::backend::SwapBackend::take_retimed`]); their old completions go stale.
    pub(crate) fn apply_retimed(&mut self) {
        if !self.worker_packs {
            return;
        }
        let mut v = std::mem::take(&mut self.retimed);
        self.store.backend.take_retimed(&mut v);
        for r in &v {
            for s in r.first..r.first + r.n {
                let f = self.swap.cache[s as usize];
                if f == NONE || crate::vm::workingset::is_shadow(f) {
                    continue;
                }
                let fr = &mut self.vm.frames[f as usize];
                if fr.has(F_WRITEBACK) && fr.io_done == r.given {
                    fr.io_done = r.done;
                    self.completions.push(Reverse((r.done, f)));
                    self.stats.writebacks_moved += 1;
                }
            }
        }
        v.clear();
        self.retimed = v;
    }

    /// Whether `f` waits in the completing CPU's `lru_rotate` batch (the batch holds a reference).
    pub(crate) fn in_rotate_batch(&self, f: u32) -> bool {
        let done = self.vm.frames[f as usize].io_done;
        self.rotate_batch.iter().any(|&(g, t)| g == f && t == done)
    }

    /// `folio_rotate_reclaimable` on the completing CPU when that is not the reclaimer's: the page
    /// waits in that CPU's `lru_rotate` batch, moved to the inactive tail when the batch is full.
    fn rotate_remote(&mut self, f: u32, t: Nanos) {
        self.rotate_batch.push((f, t));
        if self.rotate_batch.len() < ROTATE_BATCH {
            return;
        }
        let v = std::mem::take(&mut self.rotate_batch);
        for &(f, t) in &v {
            // Still the clean, inactive page whose write ended at `t` (not freed and reused).
            let fr = &self.vm.frames[f as usize];
            if fr.has(F_INUSE)
                && fr.io_done == t
                && !fr.has(F_WRITEBACK | F_DIRTY | F_ACTIVE)
                && (fr.list == LRU_INACTIVE_ANON || fr.list == LRU_INACTIVE_FILE)
            {
                self.vm.lru_move_tail(f);
                self.stats.pgrotated += 1;
            }
        }
        self.rotate_batch = v;
        self.rotate_batch.clear();
    }

    /// The host's background work due at `now`, in this order: the zswap worker, I/O completions, the
    /// swap backend's own work (ZNSwap's zone resets and GC steps), idle-time discards, the flusher.
    pub fn background(&mut self, now: Nanos) -> Result<()> {
        self.zswap_worker_run(now)?;
        self.process_completions(now);
        self.backend_service(now, None)?;
        self.idle_discards(now)?;
        self.flusher_tick(now)
    }

    /// The end of the run at `now`: the per-CPU slot caches go back and the discards still asked for are
    /// issued, so writes in flight complete.
    pub fn settle(&mut self, now: Nanos) -> Result<()> {
        self.swap.drain_slot_caches(&mut self.store);
        self.flush_discards(now)
    }

    /// Issue the discards the swap area asked for (by the `kworker` discard work, at `now`).
    pub(crate) fn flush_discards(&mut self, now: Nanos) -> Result<()> {
        if self.swap.to_discard.is_empty() {
            return Ok(());
        }
        let v = self.swap.take_discards();
        for &(first, n, cluster) in &v {
            let done = self
                .store
                .backend
                .discard(&mut self.io, first, n, now, COMM_KWORKER)?;
            if cluster != NONE {
                self.swap.discard_issued(cluster, done);
            }
        }
        self.swap.to_discard = v;
        self.swap.to_discard.clear();
        Ok(())
    }

    /// Frames under writeback (for the report).
    pub fn writes_in_flight(&self) -> usize {
        self.completions.len()
    }

    /// Fault latency histogram of `kind` (ns).
    pub fn record_fault(&mut self, kind: FaultKind, ns: Nanos) {
        self.stats.faults[kind as usize] += 1;
        self.stats.fault_latency[kind as usize].record(ns.0);
    }
}

/// blk-throttle (token bucket per cgroup and direction): when a swap request of `bytes` from cgroup `m`
/// arriving at `now` may be dispatched; the delay is added to the cgroup's throttle time.
pub(crate) fn throttle(
    memcgs: &mut [crate::vm::memcg::Memcg],
    m: u16,
    write: bool,
    bytes: u64,
    now: Nanos,
) -> Nanos {
    let t = &mut memcgs[m as usize].throttle;
    let (bps, next) = if write {
        (t.write_bps, &mut t.write_next_ns)
    } else {
        (t.read_bps, &mut t.read_next_ns)
    };
    let Some(bps) = bps else {
        return now;
    };
    let start = now.max(*next);
    *next = start + Nanos((bytes as f64 * 1e9 / bps) as u64);
    t.delayed_ns += start - now;
    start
}

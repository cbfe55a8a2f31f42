//! zswap's writeback worker (`shrink_worker` on the `zswap-shrink` workqueue) and the writeback of one
//! entry (`zswap_writeback_entry`).
//!
//! A store refused while the pool is full queues the worker (`queue_work`); it starts after a wake-up
//! delay on its own CPU and walks the cgroups round robin, one entry of each per step
//! (`shrink_memcg`), until the pool is at or below the accept threshold. A step on a referenced entry
//! only rotates it (second chance) and counts as a failure, as does a writeback that finds the slot's
//! page already in the swap cache; a walk over every cgroup without any candidate counts one failure;
//! the run ends after `MAX_RECLAIM_RETRIES` failures and starts again when a store queues it. A writeback
//! allocates a page charged to the entry's cgroup (`swap_cache_alloc_folio`: under a cgroup-v1 limit the
//! worker reclaims from the cgroup first, and the pages it evicts are refused by zswap and written to
//! the backend too), decompresses the entry into it, frees the entry, and writes the page to the backend
//! with PG_reclaim set, so it goes to the inactive tail when the write ends and is freed by the next
//! reclaim.
//!
//! The worker runs concurrently with the program: the host advances it to a thread's time at every fault,
//! before every reclaim and at every store attempt ([`Host::zswap_worker_run`]), not while the worker
//! itself is being advanced (its allocations reclaim too). Inside another task's reclaim pass its page
//! is charged without reclaiming (see `zswap_writeback_entry`).

use nandstack_core::{Nanos, Result};

use super::{Ctx, Host, COMM_KWORKER};
use crate::backend::SwapPage;
use crate::swap::MAP_CACHE;
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;
use crate::zswap::policy::Pick;
use crate::zswap::MAX_RECLAIM_RETRIES;

impl Host {
    /// Run zswap's writeback worker until its clock reaches `now` (or it has nothing to do).
    pub fn zswap_worker_run(&mut self, now: Nanos) -> Result<()> {
        match self.store.zswap.as_mut() {
            Some(z) if !z.worker.inside => z.worker.inside = true,
            _ => return Ok(()),
        }
        let r = self.zswap_worker_steps(now);
        if let Some(z) = self.store.zswap.as_mut() {
            z.worker.inside = false;
        }
        r
    }

    fn zswap_worker_steps(&mut self, now: Nanos) -> Result<()> {
        let ncg = self.vm.memcgs.len();
        // An unbound kworker: say the last CPU (slot allocation in its reclaim uses that CPU's cluster).
        let cpu = self.swap.cpus().saturating_sub(1) as u16;
        loop {
            let Some(z) = self.store.zswap.as_mut() else {
                return Ok(());
            };
            let wake = z.wakeup_ns;
            let w = &mut z.worker;
            if !w.running {
                let Some(q) = w.queued else {
                    return Ok(());
                };
                // Queued while a run was going: the busy kworker takes it at once.
                let start = if q <= w.clock { w.clock } else { q + wake };
                if start > now {
                    return Ok(());
                }
                w.queued = None;
                w.running = true;
                w.clock = start;
                w.failures = 0;
                w.attempts = 0;
                z.stats.worker_runs += 1;
            }
            if z.worker.clock > now {
                return Ok(());
            }
            // One iteration of shrink_worker's do { … } while (zswap_total_pages() > thr).
            let w = &mut z.worker;
            let mut failed = false;
            if w.cursor >= ncg {
                // mem_cgroup_iter returned NULL: the walk is over.
                w.cursor = 0;
                if w.attempts == 0 {
                    failed = true;
                }
                w.attempts = 0;
            } else {
                let m = w.cursor as u16;
                w.cursor += 1;
                match z.pick(m) {
                    Pick::Empty => {}
                    Pick::Rotate => {
                        z.stats.worker_rotations += 1;
                        z.worker.clock += z.entry_ns;
                        z.worker.attempts += 1;
                        failed = true;
                    }
                    Pick::Writeback(e) => {
                        z.worker.clock += z.entry_ns;
                        z.worker.attempts += 1;
                        let mut ctx = Ctx {
                            now: z.worker.clock,
                            cpu,
                            comm: COMM_KWORKER,
                            kswapd: false,
                        };
                        let ok = self.zswap_writeback_entry(&mut ctx, e)?;
                        let z = self.store.zswap.as_mut().expect("zswap on");
                        z.worker.clock = ctx.now;
                        if !ok {
                            z.stats.reject_reclaim_fail += 1;
                            failed = true;
                        }
                    }
                }
            }
            let z = self.store.zswap.as_mut().expect("zswap on");
            let w = &mut z.worker;
            if failed {
                w.failures += 1;
            }
            if w.failures >= MAX_RECLAIM_RETRIES || z.pool_pages() <= z.accept_pages() {
                z.worker.running = false;
            }
        }
    }

    /// A page charged to `m` without reclaim, over the limit if need be; `None` when RAM is exhausted.
    fn alloc_page_forced(&mut self, m: u16) -> Option<u32> {
        let f = self.vm.take_frame(m)?;
        let mc = &mut self.vm.memcgs[m as usize];
        mc.usage += 1;
        mc.stats.max_usage_pages = mc.stats.max_usage_pages.max(mc.usage);
        Some(f)
    }

    /// `zswap_writeback_entry`: false when the writeback cannot happen (the slot's page is in the swap
    /// cache, or the entry went away while the page was being allocated).
    pub(super) fn zswap_writeback_entry(&mut self, ctx: &mut Ctx, e: u32) -> Result<bool> {
        let z = self.store.zswap.as_mut().expect("zswap on");
        if z.is_file(e) {
            // All-page accommodation: a file page's blocks are on the file partition; drop it.
            z.drop_file(e)?;
            self.sync_pool_frames();
            return Ok(true);
        }
        let (slot, _, _) = z.entry(e);
        let cached = |h: &Host| {
            let c = h.swap.cache[slot as usize];
            c != NONE && !is_shadow(c)
        };
        if cached(self) {
            return Ok(false);
        }
        let owner = self.swap.owner[slot as usize];
        let m = self.vm.procs[self.vm.proc_of(owner)].memcg;
        // The worker runs beside a reclaim pass of another task: its charge cannot reclaim there and
        // then, so it goes over the limit by a page, which that reclaim (still targeting the cgroup)
        // takes back — two tasks reclaiming one cgroup at once, in the model's serial order.
        let f = if self.in_reclaim() {
            match self.alloc_page_forced(m) {
                Some(f) => f,
                None => return Ok(false),
            }
        } else {
            self.alloc_page(ctx, m)?
        };
        let still = self.store.zswap.as_ref().expect("zswap on").entry_of(slot) == Some(e);
        if !still || cached(self) {
            self.vm.release_frame(f);
            return Ok(false);
        }
        let known = self.verify && self.load_page(owner);
        let bytes = known.then(|| self.cswap.buf.clone());
        let z = self.store.zswap.as_mut().expect("zswap on");
        let cpu = z.take_for_writeback(e, bytes.as_deref())?;
        ctx.now += cpu + z.writeback_ns;
        let shadow = self.swap.cache[slot as usize];
        {
            let fr = &mut self.vm.frames[f as usize];
            fr.set(F_ANON | F_SWAPCACHE);
            fr.key = slot;
            fr.vpn = owner;
        }
        self.swap.cache[slot as usize] = f;
        self.swap.map[slot as usize] |= MAP_CACHE;
        self.refault(f, shadow, false);
        self.lru_admit(f);
        // __swap_writepage without a plug; PG_reclaim moves it to the inactive tail when done.
        let page = SwapPage {
            slot,
            vpn: owner,
            memcg: m,
        };
        let mut buf = std::mem::take(&mut self.done_buf);
        let done = self.backend_io(ctx.now, ctx.comm, ctx.cpu, |b, sub| {
            if b.synchronous() {
                b.write_page(sub, page, bytes.as_deref())
            } else {
                b.write(sub, &[page], &mut buf)?;
                Ok(buf.first().copied())
            }
        })?;
        self.done_buf = buf;
        let fr = &mut self.vm.frames[f as usize];
        match done {
            Some(t) => {
                fr.set(F_WRITEBACK | F_RECLAIM);
                fr.io_done = t;
                self.push_completion(f, t);
                self.count_swpout(m, 1);
            }
            None => {
                // The backend refused it: the page stays in memory, dirty.
                fr.set(F_DIRTY);
                self.cswap.failed_writes += 1;
            }
        }
        self.sync_pool_frames();
        Ok(true)
    }
}

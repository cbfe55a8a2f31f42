//! Eviction mechanics shared by every reclaim policy (the `mm/rmap.c`, `mm/swap_state.c`,
//! `mm/page_io.c` and `__remove_mapping` parts of reclaim): reference-bit test, swap slot assignment,
//! unmapping, writeback submission through the task's block plug ([`crate::plug`]), removal from the
//! swap/page cache with a shadow entry, and waiting for writeback (which flushes the plug).

use nandstack_core::{Nanos, Result};

use super::{Ctx, Host, COMM_KWORKER};
use crate::backend::SwapPage;
use crate::block::{IoKind, Region};
use crate::plug::{AddOutcome, FlushCause, PlugRq};
use crate::vm::page::*;
use crate::vm::workingset;

impl Host {
    /// Whether a read of `f` is still in flight at `now` (the page is locked).
    #[inline]
    pub fn read_locked(&self, f: u32, now: Nanos) -> bool {
        let fr = &self.vm.frames[f as usize];
        fr.has(F_LOCKED) && fr.io_done > now
    }

    /// `folio_referenced`: test and clear the accessed bit of the PTE mapping `f`; the number of
    /// mappings that had it (0 or 1: pages are mapped once), and whether the mapping is VM_EXEC.
    pub fn folio_referenced(&mut self, f: u32) -> u32 {
        let fr = &self.vm.frames[f as usize];
        if !fr.has(F_MAPPED) {
            return 0;
        }
        let vpn = fr.vpn;
        let pte = &mut self.vm.ptes[vpn as usize];
        debug_assert!(is_present(*pte) && pte_frame(*pte) == f);
        let young = *pte & PTE_YOUNG != 0;
        *pte &= !PTE_YOUNG;
        if fr.has(F_ANON) {
            self.store.backend.page_referenced(vpn, young);
        }
        young as u32
    }

    /// Cache hint for reclaim's batch: the page-table entry `folio_referenced` tests, and the swap
    /// backend's record of it, of every page (each a cache miss on a table of MiBs, otherwise met one
    /// after another in the batch's loop). No effect on any result.
    pub fn prefetch_referenced(&self, batch: &[u32]) {
        for &f in batch {
            let vpn = self.vm.frames[f as usize].vpn;
            nandstack_core::hint::prefetch(&self.vm.ptes, vpn as usize);
            self.store.backend.prefetch_page(vpn);
        }
    }

    /// `folio_alloc_swap`: give anonymous frame `f` a slot and add it to the swap cache, dirty. False
    /// when swap is full. The thread waits if the allocator had to finish a discard first.
    pub fn add_to_swap(&mut self, ctx: &mut Ctx, f: u32) -> bool {
        let mut got = self.swap.alloc_slot(ctx.cpu as usize, ctx.now);
        if got.is_none() && self.swap.is_full() && self.reclaim_swapcache_slots(ctx.cpu) > 0 {
            got = self.swap.alloc_slot(ctx.cpu as usize, ctx.now);
        }
        let Some((slot, ready)) = got else {
            self.swap.stats.alloc_failures += 1;
            return false;
        };
        ctx.now = ctx.now.max(ready);
        let fr = &mut self.vm.frames[f as usize];
        debug_assert!(fr.has(F_ANON) && !fr.has(F_SWAPCACHE));
        self.swap.cache[slot as usize] = f;
        self.swap.owner[slot as usize] = fr.vpn;
        fr.key = slot;
        fr.set(F_SWAPCACHE | F_DIRTY);
        true
    }

    /// `swap_reclaim_full_clusters`: with swap full and no free slot, drop the swap-cache copies of
    /// resident pages whose slot only the swap cache holds (up to a cluster's worth, scanning from a
    /// rotating cursor), so those slots can be reused. Returns the slots freed.
    pub fn reclaim_swapcache_slots(&mut self, cpu: u16) -> u64 {
        let n = self.swap.map.len() as u32;
        let want = self.swap.cluster_slots as u64;
        let mut freed = 0;
        let mut i = 0;
        while i < n && freed < want {
            let s = (self.swap_cursor + i) % n;
            i += 1;
            let c = self.swap.cache[s as usize];
            if self.swap.map[s as usize] != crate::swap::MAP_CACHE
                || c == NONE
                || c & (1 << 31) != 0
            {
                continue;
            }
            if !self.vm.frames[c as usize].has(F_LOCKED) && self.free_swap_cache(c, cpu) {
                freed += 1;
            }
        }
        self.swap_cursor = (self.swap_cursor + i) % n.max(1);
        self.stats.swapcache_reclaimed_full += freed;
        self.swap.drain_slot_caches(&mut self.store);
        freed
    }

    /// `try_to_unmap`: replace the PTE mapping `f` by a swap entry (anonymous) or nothing (file),
    /// moving its dirty bit to the frame.
    pub fn try_to_unmap(&mut self, f: u32, now: Nanos) {
        let fr = self.vm.frames[f as usize];
        if !fr.has(F_MAPPED) {
            return;
        }
        let vpn = fr.vpn as usize;
        let pte = self.vm.ptes[vpn];
        debug_assert!(is_present(pte) && pte_frame(pte) == f);
        if pte & PTE_DIRTY != 0 {
            self.mark_dirty(f, now);
            if fr.has(F_SWAPCACHE) {
                self.swap.swapins.dirtied(fr.key);
            }
        }
        let fr = &mut self.vm.frames[f as usize];
        fr.clear(F_MAPPED);
        if fr.has(F_ANON) {
            let slot = fr.key;
            self.vm.ptes[vpn] = pte_swap(slot);
            self.swap.dup(slot);
        } else {
            fr.vpn = NONE;
            self.vm.ptes[vpn] = PTE_NONE;
        }
    }

    /// `folio_mark_dirty`.
    pub fn mark_dirty(&mut self, f: u32, now: Nanos) {
        let fr = &mut self.vm.frames[f as usize];
        if fr.has(F_DIRTY) {
            return;
        }
        fr.set(F_DIRTY);
        if fr.is_file() {
            fr.dirtied = now;
            self.pc.dirty += 1;
            let id = fr.key;
            self.pc.note_dirty(id);
            self.apa_file_dirtied(id);
        }
    }

    /// `pageout` → `swap_writepage` / `writepage`: the write of dirty frame `f` is submitted as a
    /// single-page bio into the task's plug; the frame becomes clean, under writeback (completion
    /// unknown until the plug is flushed), marked for reclaim (rotated to the inactive tail when the
    /// write ends). A swap page first goes through `swap_writeout` (zero page, zswap, synchronous
    /// backend: done at once, the page clean and idle; or refused: still dirty).
    pub fn pageout(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        let fr = self.vm.frames[f as usize];
        debug_assert!(fr.has(F_DIRTY) && !fr.has(F_WRITEBACK) && !fr.has(F_MAPPED));
        let file = fr.is_file();
        if !file && self.swap_writeout(ctx, f)? != super::swapio::Writeout::Queue {
            return Ok(());
        }
        let (region, off) = if file {
            (Region::File, self.pc.offset(fr.key))
        } else {
            (Region::Swap, self.swap.offset(fr.key))
        };
        let fr = &mut self.vm.frames[f as usize];
        fr.clear(F_DIRTY);
        fr.set(F_WRITEBACK | F_RECLAIM);
        fr.io_done = Nanos::MAX;
        if file {
            self.pc.dirty -= 1;
            self.stats.file_pages_written += 1;
        } else {
            // `count_swpout_vm_event`, at submission.
            self.stats.pswpout += 1;
            let mc = &mut self.vm.memcgs[fr.memcg as usize];
            mc.stats.pswpout += 1;
            mc.stats.swap_write_bytes += 4096;
        }
        self.submit_bio(ctx, IoKind::Write, region, off, f)
    }

    /// `submit_bio` of one page: into the task's plug (flushing it first when the plug rules say so),
    /// or issued at once without a plug.
    pub fn submit_bio(
        &mut self,
        ctx: &Ctx,
        kind: IoKind,
        region: Region,
        off: u64,
        f: u32,
    ) -> Result<()> {
        loop {
            match self.plug.add(kind, region, off, f, self.io.max_req_pages) {
                AddOutcome::Queued => return Ok(()),
                AddOutcome::FlushFirst(cause) => self.flush_plug(ctx, cause)?,
                AddOutcome::NoPlug => {
                    let rq = PlugRq {
                        kind,
                        region,
                        off,
                        frames: vec![f],
                    };
                    return self.issue_rq(ctx, &rq, ctx.comm);
                }
            }
        }
    }

    /// `blk_start_plug`.
    pub fn blk_start_plug(&mut self) {
        self.plug.start();
    }

    /// `blk_finish_plug`: the outermost one issues what the plug holds.
    pub fn blk_finish_plug(&mut self, ctx: &Ctx) -> Result<()> {
        if self.plug.finish() {
            self.flush_plug(ctx, FlushCause::Finish)?;
        }
        Ok(())
    }

    /// The task is about to sleep: its plug is flushed (`blk_flush_plug(plug, true)`), the requests
    /// issued by kblockd.
    pub fn plug_sleep(&mut self, ctx: &Ctx) -> Result<()> {
        if !self.plug.is_empty() {
            self.flush_plug(ctx, FlushCause::Sleep)?;
        }
        self.task_sleeps(ctx);
        Ok(())
    }

    /// Issue every request of the plug, in order, at `ctx.now`.
    pub fn flush_plug(&mut self, ctx: &Ctx, cause: FlushCause) -> Result<()> {
        let rqs = self.plug.take(cause);
        let comm = if cause == FlushCause::Sleep {
            COMM_KWORKER
        } else {
            ctx.comm
        };
        let mut r = Ok(());
        for rq in &rqs {
            r = self.issue_rq(ctx, rq, comm);
            if r.is_err() {
                break;
            }
        }
        self.plug.give_back(rqs);
        r
    }

    /// Issue one request: swap pages through the swap backend, file pages to the file partition.
    /// Written frames complete when their request does; read frames get their completion time.
    fn issue_rq(&mut self, ctx: &Ctx, rq: &PlugRq, comm: u16) -> Result<()> {
        let mut done = std::mem::take(&mut self.done_buf);
        done.clear();
        if rq.region == Region::Swap {
            let mut pages = std::mem::take(&mut self.swap_pages);
            pages.clear();
            pages.extend(rq.frames.iter().map(|&f| {
                let fr = &self.vm.frames[f as usize];
                SwapPage {
                    slot: fr.key,
                    vpn: fr.vpn,
                    memcg: fr.memcg,
                }
            }));
            let kind = rq.kind;
            if kind == IoKind::Write {
                // A backend that places pages itself may make room first (and move slots doing so).
                self.backend_service(ctx.now, Some((&pages, ctx.cpu)))?;
                for (p, &f) in pages.iter_mut().zip(&rq.frames) {
                    p.slot = self.vm.frames[f as usize].key;
                }
            }
            let r = self.backend_io(ctx.now, comm, ctx.cpu, |b, sub| match kind {
                IoKind::Write => b.write(sub, &pages, &mut done),
                _ => b.read(sub, &pages, &mut done),
            });
            r?;
            if kind == IoKind::Write {
                self.swap.swapped_out(&pages);
            }
            self.swap_pages = pages;
            if kind == IoKind::Write {
                self.apply_swap_moves()?;
            }
        } else {
            debug_assert_eq!(rq.kind, IoKind::Write, "file reads are not plugged");
            let d = self
                .io
                .issue(rq.kind, rq.region, rq.off, rq.pages(), ctx.now, comm)?;
            done.resize(rq.frames.len(), d);
        }
        for (i, &f) in rq.frames.iter().enumerate() {
            self.vm.frames[f as usize].io_done = done[i];
            if rq.kind == IoKind::Write {
                self.push_completion(f, done[i]);
            }
        }
        self.done_buf = done;
        // A read may have let a packed loop worker run the writes it held.
        self.apply_retimed();
        Ok(())
    }

    /// Wait for the write of `f` to finish and end it (sleeping flushes the task's plug, which may
    /// hold that very write).
    pub fn wait_writeback(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        let fr = &self.vm.frames[f as usize];
        if !fr.has(F_WRITEBACK) {
            return Ok(());
        }
        if fr.io_done > ctx.now {
            self.plug_sleep(ctx)?;
        }
        let t = self.vm.frames[f as usize].io_done;
        debug_assert!(t != Nanos::MAX, "a write waited for was never issued");
        if t > ctx.now {
            self.stats.writeback_waits += 1;
            self.stats.writeback_wait_ns += t - ctx.now;
            self.task_slept(ctx, t);
            ctx.now = t;
        }
        self.end_writeback(f, t);
        Ok(())
    }

    /// `folio_free_swap`: drop the swap-cache copy of `f` (its slot is freed; the frame is dirty).
    /// Refused while the page is under writeback or a PTE still references the slot.
    pub fn free_swap_cache(&mut self, f: u32, cpu: u16) -> bool {
        super::slot_host::free_swap_cache(&mut self.vm, &mut self.swap, &mut self.store, f, cpu)
    }

    /// `__remove_mapping` and free: a clean, unmapped, idle, isolated frame leaves the swap or page
    /// cache (a shadow entry stays when workingset detection is on) and returns to the free list.
    pub fn remove_mapping(&mut self, f: u32, cpu: u16) {
        let fr = self.vm.frames[f as usize];
        debug_assert!(!fr.has(F_MAPPED) && !fr.has(F_DIRTY) && !fr.has(F_WRITEBACK));
        debug_assert!(fr.list == LIST_ISOLATED || fr.list == LIST_NONE);
        let shadow = if self.p.workingset {
            workingset::eviction(&mut self.vm.memcgs[fr.memcg as usize], fr.has(F_WORKINGSET))
        } else {
            NONE
        };
        if fr.has(F_SWAPCACHE) {
            let slot = fr.key;
            self.swap.cache[slot as usize] = shadow;
            self.swap.put_cache(slot, cpu as usize, &mut self.store);
        } else if fr.is_file() {
            self.pc.index[fr.key as usize] = shadow;
        }
        self.vm.release_frame(f);
    }

    /// Evict `f` (isolated) now, waiting for any I/O: for policies without writeback pipelining.
    /// False when it cannot be evicted (no swap slot).
    pub fn evict_sync(&mut self, ctx: &mut Ctx, f: u32) -> Result<bool> {
        let fr = self.vm.frames[f as usize];
        if fr.has(F_LOCKED) {
            ctx.now = ctx.now.max(fr.io_done);
            self.vm.frames[f as usize].clear(F_LOCKED);
        }
        self.wait_writeback(ctx, f)?;
        if fr.has(F_ANON) && !fr.has(F_SWAPCACHE) && !self.add_to_swap(ctx, f) {
            return Ok(false);
        }
        self.try_to_unmap(f, ctx.now);
        if self.vm.frames[f as usize].has(F_DIRTY) {
            self.blk_start_plug();
            self.pageout(ctx, f)?;
            if self.vm.frames[f as usize].has(F_WRITEBACK) {
                ctx.now += self.p.write_ns;
            }
            self.blk_finish_plug(ctx)?;
            self.wait_writeback(ctx, f)?;
            if self.vm.frames[f as usize].has(F_DIRTY) {
                // The backend refused the write: the page stays, unmapped in the swap cache.
                return Ok(false);
            }
        }
        self.apa_evict(ctx, f)?;
        self.remove_mapping(f, ctx.cpu);
        Ok(true)
    }
}

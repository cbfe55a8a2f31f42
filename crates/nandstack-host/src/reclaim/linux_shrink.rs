//! `shrink_inactive_list` and `shrink_folio_list` of Linux's split LRU: the per-page decisions.
//!
//! For each isolated page, oldest first: a page whose read is in flight is kept; a page under
//! writeback is activated (and marked for reclaim), except that cgroup-v1 limit reclaim waits for a
//! page it already marked; then the reference check (`folio_check_references`: a mapped page that was
//! accessed gets PG_referenced and one more trip round the inactive list, and is activated if
//! accessed again; VM_EXEC file pages are activated at once); an anonymous page gets a swap slot, is
//! unmapped, and if dirty written out (kept under writeback, rotated to the tail when the write ends);
//! dirty file pages are left to the flusher (activated, PG_reclaim); clean unmapped pages are freed.
//! Writes go into the task's block plug (`shrink_lruvec`'s, or an outer one); survivors are put back.

use nandstack_core::Result;

use super::linux::{LinuxReclaim, Sc};
use super::ReclaimHost;
use crate::vm::counters::Ctx;
use crate::vm::page::*;

enum Outcome {
    Freed,
    Keep,
    Activate,
}

#[derive(PartialEq)]
enum Refs {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

#[derive(Default)]
struct Stat {
    nr_pageout: u64,
    nr_unqueued_dirty: u64,
    nr_activate: u64,
    /// Referenced once: kept on the inactive list (`FOLIOREF_KEEP`).
    nr_ref_keep: u64,
    /// Under writeback: activated and marked for reclaim (the kernel's `nr_writeback`, case 2).
    nr_writeback: u64,
}

/// `folio_check_references`.
fn check_references<H: ReclaimHost + ?Sized>(h: &mut H, f: u32) -> Refs {
    let referenced_ptes = h.folio_referenced(f);
    let fr = &mut h.vm_mut().frames[f as usize];
    let referenced_folio = fr.take(F_REFERENCED);
    if referenced_ptes > 0 {
        fr.set(F_REFERENCED);
        if referenced_folio || (fr.has(F_EXEC) && fr.is_file()) {
            return Refs::Activate;
        }
        return Refs::Keep;
    }
    if referenced_folio && fr.is_file() {
        return Refs::ReclaimClean;
    }
    Refs::Reclaim
}

impl LinuxReclaim {
    /// `shrink_inactive_list`: isolate up to `n` pages from the tail of `lru` and decide each.
    pub(super) fn shrink_inactive<H: ReclaimHost + ?Sized>(
        &mut self,
        h: &mut H,
        ctx: &mut Ctx,
        sc: &mut Sc,
        m: u16,
        lru: u8,
        n: u64,
    ) -> Result<u64> {
        // Writes that completed meanwhile (I/O completions run concurrently with reclaim) have
        // rotated their pages to the tail, where this batch finds them.
        h.process_completions(ctx.now);
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        let taken = h.vm_mut().isolate_tail(m, lru, n, &mut batch);
        if taken == 0 {
            self.batch = batch;
            return Ok(0);
        }
        h.prefetch_referenced(&batch);
        h.stats_mut().pgscan += taken;
        h.vm_mut().memcgs[m as usize].stats.pgscan += taken;
        let mut ret = std::mem::take(&mut self.ret);
        ret.clear();
        let mut stat = Stat::default();
        let mut reclaimed = 0u64;
        for &f in &batch {
            ctx.now += h.params().scan_ns;
            match self.shrink_folio(h, ctx, sc, f, &mut stat)? {
                Outcome::Freed => reclaimed += 1,
                Outcome::Keep => ret.push(f),
                Outcome::Activate => {
                    stat.nr_activate += 1;
                    ret.push(f);
                }
            }
        }
        // `move_folios_to_lru`: an active page put back ages the workingset clock.
        for &f in &ret {
            let fr = h.vm_mut().frames[f as usize];
            h.vm_mut().lru_add_head(f, fr.lru_for());
            if fr.has(F_ACTIVE) {
                h.vm_mut().memcgs[fr.memcg as usize].nonresident_age += 1;
            }
        }
        let file = lru == LRU_INACTIVE_FILE;
        let scm = h.params().scm;
        h.vm_mut()
            .lru_note_cost(m, file, stat.nr_pageout, taken - reclaimed, scm);
        h.stats_mut().pgsteal += reclaimed;
        h.stats_mut().pgactivate += stat.nr_activate;
        // `trace_mm_vmscan_lru_shrink_inactive`'s figures, summed per priority.
        let at = &mut h.stats_mut().shrink_inactive_by_priority[sc.priority as usize];
        at.calls += 1;
        at.scanned += taken;
        at.reclaimed += reclaimed;
        at.activated += stat.nr_activate;
        at.ref_keep += stat.nr_ref_keep;
        at.writeback += stat.nr_writeback;
        at.pageout += stat.nr_pageout;
        let ms = &mut h.vm_mut().memcgs[m as usize].stats;
        ms.pgsteal += reclaimed;
        ms.pgactivate += stat.nr_activate;
        if file && stat.nr_unqueued_dirty == taken {
            h.wake_flusher();
        }
        self.batch = batch;
        self.ret = ret;
        Ok(reclaimed)
    }

    /// `activate_locked`: drop the swap-cache copy when swap is full, then mark active.
    fn activate<H: ReclaimHost + ?Sized>(h: &mut H, ctx: &Ctx, f: u32) -> Outcome {
        if h.vm_mut().frames[f as usize].has(F_SWAPCACHE) && h.swap_is_full() {
            h.free_swap_cache(f, ctx.cpu);
        }
        h.vm_mut().frames[f as usize].set(F_ACTIVE);
        Outcome::Activate
    }

    /// The body of `shrink_folio_list` for one page.
    fn shrink_folio<H: ReclaimHost + ?Sized>(
        &mut self,
        h: &mut H,
        ctx: &mut Ctx,
        sc: &Sc,
        f: u32,
        stat: &mut Stat,
    ) -> Result<Outcome> {
        if h.read_locked(f, ctx.now) {
            return Ok(Outcome::Keep);
        }
        h.vm_mut().frames[f as usize].clear(F_LOCKED);
        let fr = h.vm_mut().frames[f as usize];
        if fr.is_file() && fr.has(F_DIRTY) && !fr.has(F_WRITEBACK) {
            stat.nr_unqueued_dirty += 1;
        }
        if fr.has(F_WRITEBACK) {
            if fr.io_done <= ctx.now {
                h.end_writeback(f, fr.io_done);
            } else if sc.kswapd
                || !(sc.target.is_some() && h.params().cgroup_v1)
                || !fr.has(F_RECLAIM)
            {
                h.vm_mut().frames[f as usize].set(F_RECLAIM);
                stat.nr_writeback += 1;
                return Ok(Self::activate(h, ctx, f));
            } else {
                // cgroup v1 limit reclaim meets a page it marked: wait for the write (sleeping
                // flushes this task's plug first, so a write still queued there is issued).
                h.wait_writeback(ctx, f)?;
            }
        }
        let refs = check_references(h, f);
        match refs {
            Refs::Activate => return Ok(Self::activate(h, ctx, f)),
            Refs::Keep => {
                stat.nr_ref_keep += 1;
                return Ok(Outcome::Keep);
            }
            _ => {}
        }
        let fr = h.vm_mut().frames[f as usize];
        if fr.has(F_ANON) && !fr.has(F_SWAPCACHE) && (!sc.may_swap || !h.add_to_swap(ctx, f)) {
            return Ok(Self::activate(h, ctx, f));
        }
        h.try_to_unmap(f, ctx.now);
        let fr = h.vm_mut().frames[f as usize];
        if fr.has(F_DIRTY) {
            if fr.is_file() && (!sc.kswapd || !fr.has(F_RECLAIM)) {
                // Left to the flusher; reclaim it once written.
                h.vm_mut().frames[f as usize].set(F_RECLAIM);
                return Ok(Self::activate(h, ctx, f));
            }
            if refs == Refs::ReclaimClean {
                return Ok(Outcome::Keep);
            }
            h.pageout(ctx, f)?;
            stat.nr_pageout += 1;
            let fr = h.vm_mut().frames[f as usize];
            if fr.has(F_WRITEBACK) {
                // The CPU cost of submitting a device write (not of a store in memory).
                ctx.now += h.params().write_ns;
            }
            if fr.has(F_DIRTY) || fr.has(F_WRITEBACK) {
                return Ok(Outcome::Keep);
            }
            // A synchronous write (zero page, zswap, zram): the page is clean and idle, free it now.
        }
        h.apa_evict(ctx, f)?;
        h.remove_mapping(f, ctx.cpu);
        Ok(Outcome::Freed)
    }
}

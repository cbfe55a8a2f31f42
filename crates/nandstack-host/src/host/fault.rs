//! Page faults (`mm/memory.c`): first touch of anonymous memory (zero page on read, new page on write),
//! swap-in (`do_swap_page`: swap-cache hit or readahead from the device), file faults with mmap
//! read-around, copy-on-write of private file pages, and write-protect faults of shared file pages.

use nandstack_core::{Error, Nanos, Result};

use super::{Ctx, FaultKind, Host};
use crate::backend::SwapPage;
use crate::block::{IoKind, Region};
use crate::config::SwapinWrite;
use crate::swap::readahead::RaInput;
use crate::swap::{map_count, MAP_CACHE};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;
use crate::vm::VmaKind;

impl Host {
    /// Handle a reference that missed: PTE not present, or a write through a read-only PTE.
    pub fn fault(&mut self, ctx: &mut Ctx, vpn: u32, write: bool) -> Result<()> {
        let t0 = ctx.now;
        // zswap's writeback worker runs beside the program: bring it up to now.
        self.zswap_worker_run(ctx.now)?;
        self.sync_pool_frames();
        self.idle_discards(ctx.now)?;
        self.vm.tick_stats_flush(ctx.now);
        let pi = self.vm.proc_of(vpn);
        let pte = self.vm.ptes[vpn as usize];
        let kind = if is_present(pte) {
            self.wp_fault(ctx, pi, vpn)?
        } else if is_swap(pte) {
            self.swap_fault(ctx, pi, vpn, write)?
        } else if pte == PTE_ZERO {
            self.anon_fault(ctx, pi, vpn)?
        } else {
            let Some(vi) = self.vm.procs[pi].vma_of(vpn) else {
                return Err(Error::Invariant(format!(
                    "process `{}` referenced page {} outside its mappings",
                    self.vm.procs[pi].name,
                    vpn - self.vm.procs[pi].base
                )));
            };
            self.ensure_page_table(ctx, pi, vpn)?;
            match self.vm.procs[pi].vmas[vi].kind {
                VmaKind::Anon if write => self.anon_fault(ctx, pi, vpn)?,
                VmaKind::Anon => {
                    self.vm.ptes[vpn as usize] = PTE_ZERO;
                    self.stats.zero_page_maps += 1;
                    ctx.now += self.p.minor_ns;
                    FaultKind::Anon
                }
                VmaKind::File { .. } => self.file_fault(ctx, pi, vi, vpn, write)?,
            }
        };
        self.flush_discards(ctx.now)?;
        self.record_fault(kind, ctx.now - t0);
        let m = self.vm.procs[pi].memcg as usize;
        let ms = &mut self.vm.memcgs[m].stats;
        if matches!(kind, FaultKind::SwapMajor | FaultKind::FileMajor) {
            ms.major_faults += 1;
        } else {
            ms.minor_faults += 1;
        }
        Ok(())
    }

    /// Allocate the page-table pages (PTE page per 2 MiB, PMD page per 1 GiB) covering `vpn`,
    /// charged to the process's cgroup like Linux's `GFP_PGTABLE_USER` allocations.
    fn ensure_page_table(&mut self, ctx: &mut Ctx, pi: usize, vpn: u32) -> Result<()> {
        let p = &mut self.vm.procs[pi];
        let rel = (vpn - p.base) as usize;
        let (r, g) = (rel / 512, rel / (512 * 512));
        let mut need = 0;
        if p.pte_pages[r / 64] & (1 << (r % 64)) == 0 {
            p.pte_pages[r / 64] |= 1 << (r % 64);
            need += 1;
        }
        if p.pmd_pages[g / 64] & (1 << (g % 64)) == 0 {
            p.pmd_pages[g / 64] |= 1 << (g % 64);
            need += 1;
        }
        let m = p.memcg;
        for _ in 0..need {
            let f = self.alloc_page(ctx, m)?;
            self.vm.frames[f as usize].set(F_KERNEL);
            self.vm.kernel_pages += 1;
        }
        Ok(())
    }

    /// A new anonymous page for a write (first touch or after the zero page).
    fn anon_fault(&mut self, ctx: &mut Ctx, pi: usize, vpn: u32) -> Result<FaultKind> {
        let m = self.vm.procs[pi].memcg;
        let f = self.alloc_page(ctx, m)?;
        let fr = &mut self.vm.frames[f as usize];
        fr.set(F_ANON | F_MAPPED);
        fr.vpn = vpn;
        self.vm.ptes[vpn as usize] = pte_present(f, true, true);
        self.lru_admit(f);
        ctx.now += self.p.minor_ns;
        Ok(FaultKind::Anon)
    }

    /// A write through a read-only PTE: a shared file page becomes writable and dirty; a private file
    /// page is copied into a new anonymous page; a swapped-in page mapped read-only
    /// (`host.fault.swapin_write`) is reused or copied as that kernel does.
    fn wp_fault(&mut self, ctx: &mut Ctx, pi: usize, vpn: u32) -> Result<FaultKind> {
        let pte = self.vm.ptes[vpn as usize];
        let f = pte_frame(pte);
        let vi = self.vm.procs[pi].vma_of(vpn).expect("mapped page in a VMA");
        let shared = matches!(
            self.vm.procs[pi].vmas[vi].kind,
            VmaKind::File { shared: true, .. }
        );
        let anon = self.vm.frames[f as usize].has(F_ANON);
        if anon && self.vm.frames[f as usize].has(F_SWAPCACHE) && self.swapin_write_faults() {
            self.swapcache_wp(ctx, pi, vpn, f)?;
        } else if anon || shared {
            self.vm.ptes[vpn as usize] = pte | PTE_WRITE | PTE_DIRTY | PTE_YOUNG;
            if shared {
                self.mark_dirty(f, ctx.now);
            }
        } else {
            self.cow(ctx, pi, vpn)?;
        }
        ctx.now += self.p.minor_ns;
        Ok(FaultKind::Anon)
    }

    /// Whether a read swap-in maps the page read-only (`host.fault.swapin_write` other than
    /// `map_writable`), so that its first write faults.
    fn swapin_write_faults(&self) -> bool {
        self.p.swapin_write != SwapinWrite::MapWritable
    }

    /// The first write to a swapped-in page still in the swap cache, mapped read-only at its read
    /// fault. `reuse_swap_page` (4.4 `do_wp_page`): the page is the slot's only user (the map count is
    /// one and the swap count zero once mapped), so it leaves the swap cache — its slot is freed — and
    /// is reused, dirty; under writeback it stays in the swap cache and is reused all the same.
    /// `cow_copy` (5.12 `do_wp_page`): the swap cache's reference makes the page count two, so the
    /// write copies the page; the old one stays in the swap cache, unmapped, until reclaim frees it.
    fn swapcache_wp(&mut self, ctx: &mut Ctx, pi: usize, vpn: u32, f: u32) -> Result<()> {
        if self.p.swapin_write == SwapinWrite::ReuseSwapPage {
            if self.free_swap_cache(f, ctx.cpu) {
                self.stats.swap_slot_freed_on_fault += 1;
            }
            let pte = self.vm.ptes[vpn as usize];
            self.vm.ptes[vpn as usize] = pte | PTE_WRITE | PTE_DIRTY | PTE_YOUNG;
            return Ok(());
        }
        let m = self.vm.procs[pi].memcg;
        let nf = self.alloc_page(ctx, m)?;
        let pte = self.vm.ptes[vpn as usize];
        if !is_present(pte) || pte_frame(pte) != f {
            // Reclaim run by the allocation unmapped the page (`pte_same` fails): the fault starts
            // over on the swap entry now in the PTE, a write fault.
            self.vm.release_frame(nf);
            if !is_swap(pte) {
                return Err(Error::Invariant(format!(
                    "vpn {vpn}: PTE {pte:#x} neither maps frame {f} nor holds a slot after a COW allocation"
                )));
            }
            return self.swap_fault(ctx, pi, vpn, true).map(|_| ());
        }
        // The old page keeps its slot and its `vpn` (the slot's owner), like a read-ahead page.
        self.vm.frames[f as usize].clear(F_MAPPED);
        self.map_cow_copy(nf, vpn);
        Ok(())
    }

    /// Map the new anonymous frame `nf` (a copy-on-write copy) writable at `vpn` and admit it to the LRU.
    fn map_cow_copy(&mut self, nf: u32, vpn: u32) {
        let fr = &mut self.vm.frames[nf as usize];
        fr.set(F_ANON | F_MAPPED);
        fr.vpn = vpn;
        self.vm.ptes[vpn as usize] = pte_present(nf, true, true);
        self.lru_admit(nf);
        self.stats.cow_faults += 1;
    }

    /// Copy-on-write of the private file page at `vpn` (mapped or not) into a new anonymous page.
    fn cow(&mut self, ctx: &mut Ctx, pi: usize, vpn: u32) -> Result<()> {
        let m = self.vm.procs[pi].memcg;
        let nf = self.alloc_page(ctx, m)?;
        // Reclaim may have unmapped the file page meanwhile.
        let pte = self.vm.ptes[vpn as usize];
        if is_present(pte) {
            let old = &mut self.vm.frames[pte_frame(pte) as usize];
            old.clear(F_MAPPED);
            old.vpn = NONE;
        }
        self.map_cow_copy(nf, vpn);
        Ok(())
    }

    /// Workingset refault check for a page read back with `shadow` in its slot / index entry.
    pub(crate) fn refault(&mut self, f: u32, shadow: u32, file: bool) {
        if !is_shadow(shadow) || !self.p.workingset || !self.uses_active() {
            return;
        }
        let m = self.vm.frames[f as usize].memcg;
        let swap_free = self.swap.free_slots() > 0;
        let r = self
            .vm
            .workingset_refault(m, shadow, file, swap_free, self.p.scm);
        let fr = &mut self.vm.frames[f as usize];
        if r.activate {
            fr.set(F_ACTIVE);
        }
        if r.restore {
            fr.set(F_WORKINGSET);
        }
    }

    /// Cache hint for a fault on `vpn`: when its PTE is a swap entry, the slot's swap-cache and swap-map
    /// entries and, through the backend, the device's record of it (each a cache miss on a large table,
    /// otherwise met one after another in the fault). No effect on any result.
    pub fn prefetch_fault(&self, vpn: u32) {
        let Some(&pte) = self.vm.ptes.get(vpn as usize) else {
            return;
        };
        if is_swap(pte) {
            let slot = pte_slot(pte);
            nandstack_core::hint::prefetch(&self.swap.cache, slot as usize);
            nandstack_core::hint::prefetch(&self.swap.map, slot as usize);
            self.store.backend.prefetch_read(&self.io, slot);
        }
    }

    /// `do_swap_page`.
    fn swap_fault(&mut self, ctx: &mut Ctx, pi: usize, vpn: u32, write: bool) -> Result<FaultKind> {
        self.prefetch_fault(vpn);
        let slot = pte_slot(self.vm.ptes[vpn as usize]);
        let vi = self.vm.procs[pi]
            .vma_of(vpn)
            .expect("swapped page in a VMA");
        let c = self.swap.cache[slot as usize];
        if c != NONE && !is_shadow(c) {
            // Swap-cache hit: a readahead page, or a page reclaim has not freed yet.
            if self.vm.frames[c as usize].has(F_LOCKED) {
                self.io_wait(ctx, c);
                self.vm.frames[c as usize].clear(F_LOCKED);
            }
            let was_ra = self.vm.frames[c as usize].take(F_READAHEAD);
            let mut ra = self.vm.procs[pi].vmas[vi].ra;
            self.ra.hit(&mut ra, vpn, was_ra);
            self.vm.procs[pi].vmas[vi].ra = ra;
            self.stats.readahead_hits += was_ra as u64;
            let m = self.vm.procs[pi].memcg as usize;
            self.vm.memcgs[m].stats.swap_cache_hits += 1;
            ctx.now += self.p.minor_ns;
            self.map_swapcache(ctx, c, vpn, write);
            return Ok(FaultKind::SwapCache);
        }
        ctx.now += self.p.major_ns;
        if self.store.backend.synchronous() && map_count(self.swap.map[slot as usize]) == 1 {
            // SWP_SYNCHRONOUS_IO: no readahead, no swap cache.
            return self.swap_fault_sync(ctx, pi, vpn, slot, write);
        }
        let mut win = std::mem::take(&mut self.ra_buf);
        win.clear();
        let ra_pages;
        {
            let v = &self.vm.procs[pi].vmas[vi];
            let input = RaInput {
                ptes: &self.vm.ptes,
                vma_start: v.start,
                vma_end: v.end(),
                fault_vpn: vpn,
                slot,
                map: &self.swap.map,
                owner: &self.swap.owner,
                nslots: self.swap.nslots,
            };
            let mut ra = v.ra;
            ra_pages = self.ra.window(&input, &mut ra, &mut win);
            self.vm.procs[pi].vmas[vi].ra = ra;
        }
        debug_assert!(win.iter().any(|&(v, _)| v == vpn));
        let m = self.vm.procs[pi].memcg;
        let mut n = self.swapin_window(ctx, m, vpn, write, &win, ra_pages > 1)?;
        // Reclaim run by a later allocation of the window may have freed the faulting page once its
        // read was done (a plug flushed early): read it again, alone (`__read_swap_cache_async` of
        // the target after the readahead loop). A backend's GC run by that reclaim may have moved
        // the page's slot (ZNSwap): its PTE says where it is now.
        let mut slot = pte_slot(self.vm.ptes[vpn as usize]);
        while self.swap.cache[slot as usize] == NONE || is_shadow(self.swap.cache[slot as usize]) {
            win.clear();
            win.push((vpn, slot));
            n += self.swapin_window(ctx, m, vpn, write, &win, false)?;
            slot = pte_slot(self.vm.ptes[vpn as usize]);
        }
        self.ra_buf = win;
        self.stats.pswpin += n;
        let ms = &mut self.vm.memcgs[m as usize].stats;
        ms.pswpin += n;
        ms.swap_read_bytes += n * 4096;
        let f = self.swap.cache[slot as usize];
        debug_assert!(f != NONE && !is_shadow(f));
        self.io_wait(ctx, f);
        self.vm.frames[f as usize].clear(F_LOCKED);
        self.map_swapcache(ctx, f, vpn, write);
        Ok(FaultKind::SwapMajor)
    }

    /// Read the pages of `win` that are not cached yet into the swap cache, in one block plug when
    /// `plugged` (the readahead loops plug their reads; reclaim run by the allocations then writes
    /// into the same plug): each gets a frame, enters the swap cache locked, and its read is
    /// submitted. Returns the pages read.
    fn swapin_window(
        &mut self,
        ctx: &mut Ctx,
        m: u16,
        vpn: u32,
        write: bool,
        win: &[(u32, u32)],
        plugged: bool,
    ) -> Result<u64> {
        let (mut n, mut t) = (0, ctx.now);
        if plugged {
            self.blk_start_plug();
        }
        for &(v, s) in win {
            // Reclaim for an earlier page of the window may have run a backend's GC, which moves
            // slots (ZNSwap): a page whose listed slot was freed is where its PTE now says.
            let pte = self.vm.ptes[v as usize];
            let s = if is_swap(pte) && pte_slot(pte) != s && self.swap.map[s as usize] == 0 {
                pte_slot(pte)
            } else {
                s
            };
            let c = self.swap.cache[s as usize];
            if (c != NONE && !is_shadow(c))
                || map_count(self.swap.map[s as usize]) == 0
                || self.vm.ptes[v as usize] != pte_swap(s)
            {
                continue;
            }
            let f = self.alloc_page(ctx, m)?;
            // The same after this allocation's reclaim (`pte_same` after a sleep).
            let pte = self.vm.ptes[v as usize];
            let s = pte_slot(pte);
            if !is_swap(pte) || {
                let c = self.swap.cache[s as usize];
                c != NONE && !is_shadow(c)
            } {
                // That reclaim ran zswap's writeback worker, which put the page in the swap cache
                // (`swapcache_prepare` fails with -EEXIST): use that page.
                self.vm.release_frame(f);
                continue;
            }
            let shadow = self.swap.cache[s as usize];
            let fr = &mut self.vm.frames[f as usize];
            fr.set(F_ANON | F_SWAPCACHE | F_LOCKED);
            if self.swap.swapins.cdh {
                // DISS CDH: a page read from swap is dirty (the device may drop its copy).
                fr.set(F_DIRTY);
            }
            if v != vpn {
                fr.set(F_READAHEAD);
                self.stats.readahead_pages += 1;
            }
            fr.key = s;
            fr.vpn = v;
            // Pending until the read is issued: reclaim must not touch it.
            fr.io_done = Nanos::MAX;
            self.swap.cache[s as usize] = f;
            self.swap.map[s as usize] |= MAP_CACHE;
            self.refault(f, shadow, false);
            self.lru_admit(f);
            // swap_read_folio: a zero bit or a zswap entry is served in memory (one after the other
            // on this CPU); the rest is read from the backend.
            t = t.max(ctx.now);
            if self.swap_read_folio_mem(&mut t, f)? {
                continue;
            }
            n += 1;
            // Swap-in kinds (DISS) and swap-in TRIM (STRIM) follow the device reads.
            let page = SwapPage {
                slot: s,
                vpn: v,
                memcg: m,
            };
            let write_slot = if write && v == vpn { s } else { NONE };
            self.swap
                .swapped_in(std::slice::from_ref(&page), write_slot);
            self.submit_bio(ctx, IoKind::Read, Region::Swap, self.swap.offset(s), f)?;
        }
        self.sync_pool_frames();
        if plugged {
            self.blk_finish_plug(ctx)?;
        }
        Ok(n)
    }

    /// The end of `do_swap_page`: map the swap-cache page, drop the PTE's swap count, and free the
    /// slot when swap is full, or when the fault writes and the fault holds the only reference besides
    /// the swap cache's (`should_try_to_free_swap`: `folio_ref_count == 1 + nr_pages`). A page whose
    /// write ended on another CPU and still waits in that CPU's `lru_rotate` batch is referenced by
    /// the batch, which the fault's `lru_add_drain` (this CPU's batches only) does not empty: it keeps
    /// its slot, and its next eviction writes that slot again.
    fn map_swapcache(&mut self, ctx: &mut Ctx, f: u32, vpn: u32, write: bool) {
        let slot = self.vm.frames[f as usize].key;
        self.swap.put_count(slot, ctx.cpu as usize, &mut self.store);
        let fr = &mut self.vm.frames[f as usize];
        fr.set(F_MAPPED);
        fr.clear(F_READAHEAD);
        fr.vpn = vpn;
        // 6.18 maps the page writable; 4.4 and 5.12 map it read-only unless the fault writes.
        let writable = write || !self.swapin_write_faults();
        self.vm.ptes[vpn as usize] = pte_present(f, writable, write);
        let full = self.swap.is_full();
        // 6.18 counts references (a page in another CPU's rotate batch keeps its slot); 4.4's and
        // 5.12's `reuse_swap_page` count mappings and swap references only.
        let batched = write && !full && !self.swapin_write_faults() && self.in_rotate_batch(f);
        if batched {
            self.stats.swap_slot_kept_batched += 1;
        }
        if (full || (write && !batched)) && self.free_swap_cache(f, ctx.cpu) {
            self.stats.swap_slot_freed_on_fault += 1;
            if !write {
                self.stats.swapcache_dropped_full += 1;
            }
        }
    }

    /// A fault on a file mapping: page-cache hit, or read-around from the file partition; then map
    /// (read-only until written), copy on write for private writes.
    fn file_fault(
        &mut self,
        ctx: &mut Ctx,
        pi: usize,
        vi: usize,
        vpn: u32,
        write: bool,
    ) -> Result<FaultKind> {
        let vma = &self.vm.procs[pi].vmas[vi];
        let VmaKind::File {
            file,
            offset,
            shared,
            exec,
        } = vma.kind
        else {
            unreachable!("file fault on an anonymous mapping");
        };
        let id = self.pc.file_base[file as usize] + offset + (vpn - vma.start);
        let m = self.vm.procs[pi].memcg;
        let c = self.pc.index[id as usize];
        let kind = if c != NONE && !is_shadow(c) {
            let fr = &mut self.vm.frames[c as usize];
            if fr.has(F_LOCKED) {
                ctx.now = ctx.now.max(fr.io_done);
                fr.clear(F_LOCKED);
            }
            ctx.now += self.p.minor_ns;
            FaultKind::FileMinor
        } else {
            ctx.now += self.p.major_ns;
            self.file_readaround(ctx, m, id)?;
            FaultKind::FileMajor
        };
        let f = self.pc.index[id as usize];
        debug_assert!(f != NONE && !is_shadow(f));
        {
            let fr = &mut self.vm.frames[f as usize];
            ctx.now = ctx.now.max(if fr.has(F_LOCKED) {
                fr.io_done
            } else {
                Nanos::ZERO
            });
            fr.clear(F_LOCKED);
        }
        if write && !shared {
            self.cow(ctx, pi, vpn)?;
            return Ok(kind);
        }
        let fr = &mut self.vm.frames[f as usize];
        if fr.has(F_MAPPED) && fr.vpn != vpn {
            return Err(Error::Invariant(format!(
                "file page {id} mapped twice (one mapping per file page is supported)"
            )));
        }
        fr.set(F_MAPPED);
        if exec {
            fr.set(F_EXEC);
        }
        fr.vpn = vpn;
        self.vm.ptes[vpn as usize] = pte_present(f, write, write);
        if write {
            self.mark_dirty(f, ctx.now);
        }
        Ok(kind)
    }

    /// mmap read-around: read the `read_ahead_kb` window around file page `id` (inside its file),
    /// skipping cached pages, merged into requests; the faulting page's frame is in the index after.
    fn file_readaround(&mut self, ctx: &mut Ctx, m: u16, id: u32) -> Result<()> {
        let (lo, hi) = self.pc.file_range(id);
        let ra = self.pc.ra_pages.max(1);
        let start = id.saturating_sub(ra / 2).max(lo);
        let end = (start + ra).min(hi).max(id + 1);
        let mut frames = std::mem::take(&mut self.frame_buf);
        frames.clear();
        for pid in start..end {
            let c = self.pc.index[pid as usize];
            if c != NONE && !is_shadow(c) {
                continue;
            }
            let f = self.alloc_page(ctx, m)?;
            let shadow = self.pc.index[pid as usize];
            let fr = &mut self.vm.frames[f as usize];
            fr.set(F_FILE | F_LOCKED);
            fr.key = pid;
            fr.io_done = Nanos::MAX;
            self.pc.index[pid as usize] = f;
            self.refault(f, shadow, true);
            self.lru_admit(f);
            frames.push(f);
        }
        // All-page accommodation: the pool's pages leave the window (served from memory).
        self.apa_read(ctx, id, &mut frames)?;
        let mut offs = std::mem::take(&mut self.io_buf);
        offs.clear();
        offs.extend(
            frames
                .iter()
                .map(|&f| self.pc.offset(self.vm.frames[f as usize].key)),
        );
        let mut done = std::mem::take(&mut self.done_buf);
        self.io.issue_batch(
            IoKind::Read,
            Region::File,
            &offs,
            ctx.now,
            ctx.comm,
            &mut done,
        )?;
        for (i, &f) in frames.iter().enumerate() {
            self.vm.frames[f as usize].io_done = done[i];
        }
        self.stats.file_pages_read += frames.len() as u64;
        self.io_buf = offs;
        self.done_buf = done;
        self.frame_buf = frames;
        Ok(())
    }
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;

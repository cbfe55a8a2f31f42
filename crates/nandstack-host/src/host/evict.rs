//! Eviction mechanics shared by every reclaim policy (the `mm/rmap.c`, `mm/swap_state.c`,
//! `mm/page_io.c` and `__remove_mapping` parts of reclaim): reference-bit test, swap slot assignment,
//! unmapping, writeback submission with request merging, removal from the swap/page cache with a
//! shadow entry, and waiting for writeback.

use nandstack_core::Result;

use super::{Ctx, Host};
use crate::block::{IoKind, Region};
use crate::swap::backend::{Submit, SwapPage};
use crate::swap::map_count;
use crate::vm::page::*;
use crate::vm::workingset;

/// `BLK_MAX_REQUEST_COUNT`: a plug holding this many requests is flushed before another is added.
const PLUG_MAX_REQUESTS: u32 = 32;
/// `BLK_PLUG_FLUSH_SIZE` (128 KiB) in pages: a plug whose last request reached this size is flushed
/// before another request is added.
const PLUG_FLUSH_PAGES: u32 = 32;

/// A block plug (`blk_start_plug` … `blk_finish_plug`): writes queued by reclaim, page offsets and
/// frames in submission order. A write contiguous with the last one merges into its request (up to
/// the maximum request size); starting a new request first flushes the plug if it already holds
/// `BLK_MAX_REQUEST_COUNT` requests or its last request is at least `BLK_PLUG_FLUSH_SIZE`.
#[derive(Default)]
pub struct Plug {
    pub swap: Vec<(u64, u32)>,
    pub file: Vec<(u64, u32)>,
    requests: u32,
    last_off: u64,
    last_file: bool,
    last_pages: u32,
}
impl Plug {
    pub fn is_empty(&self) -> bool {
        self.swap.is_empty() && self.file.is_empty()
    }
}

impl Host {
    /// Whether a read of `f` is still in flight at `now` (the page is locked).
    #[inline]
    pub fn read_locked(&self, f: u32, now: u64) -> bool {
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
        let pte = &mut self.vm.ptes[fr.vpn as usize];
        debug_assert!(is_present(*pte) && pte_frame(*pte) == f);
        let young = *pte & PTE_YOUNG != 0;
        *pte &= !PTE_YOUNG;
        young as u32
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
        self.swap.drain_slot_caches();
        freed
    }

    /// `try_to_unmap`: replace the PTE mapping `f` by a swap entry (anonymous) or nothing (file),
    /// moving its dirty bit to the frame.
    pub fn try_to_unmap(&mut self, f: u32, now: u64) {
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
    pub fn mark_dirty(&mut self, f: u32, now: u64) {
        let fr = &mut self.vm.frames[f as usize];
        if fr.has(F_DIRTY) {
            return;
        }
        fr.set(F_DIRTY);
        if fr.is_file() {
            fr.dirtied = now;
            self.pc.dirty += 1;
        }
    }

    /// `pageout`: queue the write of dirty frame `f` in `plug` (flushing the plug first when the
    /// plug rules say so); the frame becomes clean, under writeback (not yet issued: completion
    /// unknown), marked for reclaim (rotated to the inactive tail when the write ends).
    pub fn pageout(&mut self, ctx: &Ctx, f: u32, plug: &mut Plug) -> Result<()> {
        let fr = self.vm.frames[f as usize];
        debug_assert!(fr.has(F_DIRTY) && !fr.has(F_WRITEBACK) && !fr.has(F_MAPPED));
        let file = fr.is_file();
        let off = if file {
            self.pc.offset(fr.key)
        } else {
            self.swap.offset(fr.key)
        };
        let merges = plug.last_pages > 0
            && plug.last_file == file
            && off == plug.last_off + 4096
            && plug.last_pages < self.io.max_req_pages;
        if !merges
            && plug.last_pages > 0
            && (plug.requests >= PLUG_MAX_REQUESTS || plug.last_pages >= PLUG_FLUSH_PAGES)
        {
            self.submit_plug(ctx, plug)?;
        }
        let fr = &mut self.vm.frames[f as usize];
        fr.clear(F_DIRTY);
        fr.set(F_WRITEBACK | F_RECLAIM);
        fr.io_done = u64::MAX;
        if file {
            self.pc.dirty -= 1;
            plug.file.push((off, f));
        } else {
            plug.swap.push((off, f));
        }
        if merges && plug.last_pages > 0 {
            plug.last_pages += 1;
        } else {
            plug.requests += 1;
            plug.last_pages = 1;
        }
        plug.last_off = off;
        plug.last_file = file;
        Ok(())
    }

    /// Submit a plug: swap pages go to the swap backend (which merges consecutive slots on a block
    /// device), file pages to the file partition in runs of consecutive pages up to the maximum request
    /// size; swap writes pass the writer cgroup's throttle. Frames complete when their request does.
    pub fn submit_plug(&mut self, ctx: &Ctx, plug: &mut Plug) -> Result<()> {
        plug.requests = 0;
        plug.last_pages = 0;
        let swap = std::mem::take(&mut plug.swap);
        if !swap.is_empty() {
            let mut pages = std::mem::take(&mut self.swap_pages);
            pages.clear();
            pages.extend(swap.iter().map(|&(_, f)| {
                let fr = &self.vm.frames[f as usize];
                SwapPage {
                    slot: fr.key,
                    vpn: fr.vpn,
                    memcg: fr.memcg,
                }
            }));
            let mut done = std::mem::take(&mut self.done_buf);
            let memcgs = &mut self.vm.memcgs;
            let mut sub = Submit {
                io: &mut self.io,
                at: ctx.now,
                comm: ctx.comm,
                dispatch: &mut |m, w, b, t| super::throttle(memcgs, m, w, b, t),
            };
            self.swap.backend.write(&mut sub, &pages, &mut done)?;
            self.swap.swapped_out(&pages);
            for (i, &(_, f)) in swap.iter().enumerate() {
                self.vm.frames[f as usize].io_done = done[i];
                self.push_completion(f, done[i]);
                let m = pages[i].memcg as usize;
                let mc = &mut self.vm.memcgs[m];
                mc.stats.pswpout += 1;
                mc.stats.swap_write_bytes += 4096;
            }
            self.stats.pswpout += swap.len() as u64;
            self.done_buf = done;
            self.swap_pages = pages;
        }
        let mut swap = swap;
        swap.clear();
        plug.swap = swap;
        let items = std::mem::take(&mut plug.file);
        let mut i = 0;
        while i < items.len() {
            let mut j = i + 1;
            while j < items.len()
                && items[j].0 == items[j - 1].0 + 4096
                && ((j - i) as u32) < self.io.max_req_pages
            {
                j += 1;
            }
            let n = (j - i) as u32;
            let done = self.io.issue(
                IoKind::Write,
                Region::File,
                items[i].0,
                n,
                ctx.now,
                ctx.comm,
            )?;
            for &(_, f) in &items[i..j] {
                self.vm.frames[f as usize].io_done = done;
                self.push_completion(f, done);
            }
            self.stats.file_pages_written += n as u64;
            i = j;
        }
        let mut items = items;
        items.clear();
        plug.file = items;
        Ok(())
    }

    /// Wait for the write of `f` to finish and end it.
    pub fn wait_writeback(&mut self, ctx: &mut Ctx, f: u32) {
        let fr = &self.vm.frames[f as usize];
        if !fr.has(F_WRITEBACK) {
            return;
        }
        let t = fr.io_done;
        if t > ctx.now {
            self.stats.writeback_waits += 1;
            self.stats.writeback_wait_ns += t - ctx.now;
            ctx.now = t;
        }
        self.end_writeback(f, t);
    }

    /// `folio_free_swap`: drop the swap-cache copy of `f` (its slot is freed; the frame is dirty).
    /// Refused while the page is under writeback or a PTE still references the slot.
    pub fn free_swap_cache(&mut self, f: u32, cpu: u16) -> bool {
        let fr = &self.vm.frames[f as usize];
        if !fr.has(F_SWAPCACHE) || fr.has(F_WRITEBACK) {
            return false;
        }
        let slot = fr.key;
        if map_count(self.swap.map[slot as usize]) > 0 {
            return false;
        }
        self.swap.cache[slot as usize] = NONE;
        self.swap.put_cache(slot, cpu as usize);
        let fr = &mut self.vm.frames[f as usize];
        fr.clear(F_SWAPCACHE);
        fr.key = NONE;
        fr.set(F_DIRTY);
        true
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
            self.swap.put_cache(slot, cpu as usize);
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
        self.wait_writeback(ctx, f);
        if fr.has(F_ANON) && !fr.has(F_SWAPCACHE) && !self.add_to_swap(ctx, f) {
            return Ok(false);
        }
        self.try_to_unmap(f, ctx.now);
        if self.vm.frames[f as usize].has(F_DIRTY) {
            let mut plug = Plug::default();
            self.pageout(ctx, f, &mut plug)?;
            self.submit_plug(ctx, &mut plug)?;
            self.wait_writeback(ctx, f);
        }
        self.remove_mapping(f, ctx.cpu);
        Ok(true)
    }
}

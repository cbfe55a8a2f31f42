//! The kernel's swap-out and swap-in paths with compressed swap (`mm/page_io.c`, `mm/memory.c`):
//!
//! * `swap_writeout` ([`Host::swap_writeout`], from `pageout`): a zero-filled page becomes a bit in the
//!   swap layer's zero map (`swpout_zero`) and is written nowhere; otherwise zswap tries to store it;
//!   otherwise the backend writes it — at once for a synchronous backend (zram), through the plug for a
//!   block device;
//! * `swap_read_folio` ([`Host::swap_read_folios`], from `do_swap_page`'s readahead window): a zero bit
//!   gives a zero page (`swpin_zero`, the slot and its bit stay), a zswap entry is decompressed and
//!   dropped (`zswpin`; the page is dirtied so it is compressed again when evicted), the rest is read
//!   from the backend (`pswpin`);
//! * the synchronous-device swap-in ([`Host::swap_fault_sync`]): with `SWP_SYNCHRONOUS_IO` and a swap
//!   count of 1, `do_swap_page` reads into a new page outside the swap cache and frees the slot (zram's
//!   `notify_free`), so the page needs a new slot and a new write at its next eviction;
//! * page contents and the RAM the pools take ([`Host::sync_pool_frames`]).

use nandstack_core::{Error, Nanos, Result};

use super::{Ctx, FaultKind, Host};
use crate::backend::{Submit, SwapBackend, SwapPage};
use crate::contents::{is_zero, PageContents, PageIn};
use crate::vm::page::*;
use crate::zswap::Store;

/// Host-level state of compressed swap: page contents per process, the frames the pools hold, scratch.
pub struct CswapState {
    /// Per process (in order), its page contents if the workload models them.
    pub contents: Vec<Option<Box<dyn PageContents>>>,
    /// Frames taken out of RAM for the zswap pool and the backend's (zram's) pool.
    pool_frames: Vec<u32>,
    pub(super) buf: Box<[u8; 4096]>,
    dev: Vec<u32>,
    /// Swap-ins that bypassed the swap cache (synchronous backend, swap count 1).
    pub sync_swapins: u64,
    /// Swap writes the backend refused (the pages stayed dirty in memory).
    pub failed_writes: u64,
    /// All-page accommodation: file page → virtual page, write versions.
    pub apa: crate::zswap::apa::ApaState,
}

impl Default for CswapState {
    fn default() -> Self {
        CswapState {
            contents: Vec::new(),
            pool_frames: Vec::new(),
            buf: Box::new([0; 4096]),
            dev: Vec::new(),
            sync_swapins: 0,
            failed_writes: 0,
            apa: Default::default(),
        }
    }
}

impl CswapState {
    /// Frames the pools hold.
    pub fn pool_frames(&self) -> u64 {
        self.pool_frames.len() as u64
    }
}

/// What `swap_writeout` did with a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writeout {
    /// Kept without a device write (zero bit, zswap, a synchronous backend): the page is clean and idle.
    Done,
    /// To be written through the plug (a block device).
    Queue,
    /// The backend refused the write: the page stays dirty.
    Keep,
}

impl Host {
    /// Give the host the processes' page contents (in process order). Compressed swap needs them: a
    /// process without contents is a config error when zswap is on or the backend keeps contents.
    pub fn set_contents(&mut self, contents: Vec<Option<Box<dyn PageContents>>>) -> Result<()> {
        let needs = self.store.zswap.is_some() || self.store.backend.needs_contents();
        if needs {
            if let Some(i) = contents.iter().position(|c| c.is_none()) {
                return Err(Error::config(
                    format!("workload.processes[{i}].workload"),
                    format!(
                        "zswap and zram compress page contents, and process `{}`'s workload has none \
                         (only memtouch models them, with its `content`)",
                        self.vm.procs[i].name
                    ),
                ));
            }
        }
        self.cswap.contents = contents;
        if let Some(z) = self.store.zswap.as_mut() {
            z.forget_keys();
        }
        self.apa_setup();
        Ok(())
    }

    /// Process `proc` has executed `refs` memory references: bring its page contents up to date.
    #[inline]
    pub fn advance_contents(&mut self, proc: usize, refs: u64) {
        if let Some(Some(c)) = self.cswap.contents.get_mut(proc) {
            c.advance(refs);
        }
    }

    /// Put the bytes of virtual page `vpn` in the scratch buffer; false if its process has no contents.
    pub(super) fn load_page(&mut self, vpn: u32) -> bool {
        match contents_of(&self.vm, &self.cswap.contents, vpn) {
            Some((c, page)) => {
                c.page_bytes(page, &mut self.cswap.buf);
                true
            }
            None => false,
        }
    }

    /// Whether the process of `vpn` has contents.
    pub(super) fn has_contents(&self, vpn: u32) -> bool {
        contents_of(&self.vm, &self.cswap.contents, vpn).is_some()
    }

    /// Whether the process of `vpn` has contents (the first), and whether the page is zero-filled
    /// (the second; false without contents, and not asked without the zero map) —
    /// [`Host::load_page`] and a zero check, without the bytes.
    fn page_is_zero(&self, vpn: u32) -> (bool, bool) {
        let zero_map = self.swap.zero_map;
        contents_of(&self.vm, &self.cswap.contents, vpn).map_or((false, false), |(c, page)| {
            (true, zero_map && c.is_zero(page))
        })
    }

    /// Count `n` pages written to the swap backend by cgroup `m` (vmstat `pswpout`).
    pub(crate) fn count_swpout(&mut self, m: u16, n: u64) {
        self.stats.pswpout += n;
        let ms = &mut self.vm.memcgs[m as usize].stats;
        ms.pswpout += n;
        ms.swap_write_bytes += n * 4096;
    }

    fn count_swpin(&mut self, m: u16, n: u64) {
        self.stats.pswpin += n;
        let ms = &mut self.vm.memcgs[m as usize].stats;
        ms.pswpin += n;
        ms.swap_read_bytes += n * 4096;
    }

    /// Run `f` on the swap backend with a submission at `at` from task `comm` (the block layer below,
    /// the cgroups' blk-throttle).
    pub(crate) fn backend_io<R>(
        &mut self,
        at: Nanos,
        comm: u16,
        cpu: u16,
        f: impl FnOnce(&mut dyn SwapBackend, &mut Submit) -> Result<R>,
    ) -> Result<R> {
        let memcgs = &mut self.vm.memcgs;
        let mut dispatch = |m, w, b, t| crate::host::throttle(memcgs, m, w, b, t);
        let mut sub = Submit {
            io: &mut self.io,
            at,
            comm,
            cpu,
            dispatch: &mut dispatch,
        };
        f(self.store.backend.as_mut(), &mut sub)
    }

    /// `swap_writeout` for anonymous frame `f` (unmapped, dirty, in the swap cache). See the module
    /// documentation.
    pub(crate) fn swap_writeout(&mut self, ctx: &mut Ctx, f: u32) -> Result<Writeout> {
        // The writeback worker runs beside this reclaim.
        self.zswap_worker_run(ctx.now)?;
        let fr = self.vm.frames[f as usize];
        let (slot, vpn, memcg) = (fr.key, fr.vpn, fr.memcg);
        // The zero-page check is answered by the contents without the page; zswap builds the page
        // only if it reads it (a page key it remembers needs none), a synchronous backend (zram)
        // below. Verify mode builds it at once (and checks with it).
        let (known, zero) = if self.verify {
            let known = self.load_page(vpn);
            (
                known,
                known && self.swap.zero_map && is_zero(&self.cswap.buf),
            )
        } else {
            self.page_is_zero(vpn)
        };
        let mut built = self.verify;
        if known && self.swap.zero_map && zero {
            self.swap.zeromap_set(slot, true);
            if let Some(z) = self.store.zswap.as_mut() {
                z.invalidate(slot);
            }
            self.swap.stats.swpout_zero += 1;
            self.vm.frames[f as usize].clear(F_DIRTY);
            return Ok(Writeout::Done);
        }
        self.swap.zeromap_set(slot, false);
        // Linux 4.7 (`shrink_sync`): a full pool is shrunk on this task first; its writebacks use the
        // scratch buffer in verify mode, so the page is loaded again.
        let room = self.zswap_shrink_sync(ctx, memcg)?;
        if known && self.verify {
            self.load_page(vpn);
        }
        if !room {
            // reject_reclaim_fail: to the backend; a stale entry must not be written over the new data.
            if let Some(z) = self.store.zswap.as_mut() {
                z.invalidate(slot);
            }
        } else if let Some(z) = self.store.zswap.as_mut() {
            let free = self.vm.free_pages();
            let stored = if known {
                let mut page = offer(
                    &self.vm,
                    &self.cswap.contents,
                    &mut self.cswap.buf,
                    vpn,
                    built,
                )
                .expect("the page's process has contents");
                let stored = z.store_page(slot, memcg, &mut page, free)?;
                built = page.built();
                stored
            } else {
                z.store(slot, memcg, &self.cswap.buf, free)?
            };
            match stored {
                Store::Stored(ns) => {
                    ctx.now += ns;
                    self.vm.frames[f as usize].clear(F_DIRTY);
                    self.sync_pool_frames();
                    return Ok(Writeout::Done);
                }
                Store::Refused(ns) => {
                    ctx.now += ns;
                    z.queue_worker(ctx.now);
                }
            }
        }
        if !self.store.backend.synchronous() {
            return Ok(Writeout::Queue);
        }
        if known && !built {
            self.load_page(vpn);
        }
        let page = SwapPage { slot, vpn, memcg };
        let bytes = known.then(|| self.cswap.buf.clone());
        let done = self.backend_io(ctx.now, ctx.comm, ctx.cpu, |b, sub| {
            b.write_page(sub, page, bytes.as_deref())
        })?;
        self.sync_pool_frames();
        match done {
            Some(t) => {
                ctx.now = ctx.now.max(t);
                self.count_swpout(memcg, 1);
                self.vm.frames[f as usize].clear(F_DIRTY);
                Ok(Writeout::Done)
            }
            None => {
                self.cswap.failed_writes += 1;
                Ok(Writeout::Keep)
            }
        }
    }

    /// `swap_read_folio`'s in-memory cases for frame `f` (in the swap cache, locked, `key` = slot, `vpn`
    /// = owner): a zero bit gives a zero page (`swpin_zero`; the slot and its bit stay), a zswap entry is
    /// decompressed and dropped (`zswpin`; the page is dirtied, the swap cache owns it now). `t` is the
    /// reading CPU's clock (decompressions run one after the other); sets `io_done`. False when the page
    /// must be read from the backend.
    pub(crate) fn swap_read_folio_mem(&mut self, t: &mut Nanos, f: u32) -> Result<bool> {
        let (slot, vpn) = (
            self.vm.frames[f as usize].key,
            self.vm.frames[f as usize].vpn,
        );
        if self.swap.is_zero(slot) {
            self.swap.stats.swpin_zero += 1;
            self.vm.frames[f as usize].io_done = *t;
            return Ok(true);
        }
        let Some(z) = self.store.zswap.as_mut() else {
            return Ok(false);
        };
        let hit = z.contains(slot);
        if !self.vm.frames[f as usize].has(F_READAHEAD) {
            // A page-in request (the faulting page; readahead pages are not requested).
            z.lookup(hit);
        }
        if !hit {
            return Ok(false);
        }
        let known = self.verify && self.load_page(vpn);
        let bytes = known.then_some(&*self.cswap.buf);
        let z = self.store.zswap.as_mut().expect("checked above");
        let exclusive = z.exclusive_loads;
        *t += if exclusive {
            z.load(slot, bytes)?
        } else {
            z.load_keep(slot, bytes)?
        }
        .expect("the slot has an entry");
        let fr = &mut self.vm.frames[f as usize];
        fr.io_done = *t;
        if exclusive {
            fr.set(F_DIRTY);
        }
        Ok(true)
    }

    /// `swap_read_folio` for the frames of one synchronous read (in the swap cache or not, locked, `key`
    /// = slot, `vpn` = owner), all charged to cgroup `m`: zero bits and zswap entries are served in
    /// memory ([`Host::swap_read_folio_mem`]); the rest are read from the backend in one submission.
    /// Sets each frame's `io_done`; returns the pages read from the backend.
    pub(crate) fn swap_read_folios(&mut self, ctx: &Ctx, m: u16, frames: &[u32]) -> Result<u64> {
        let mut t = ctx.now;
        let mut dev = std::mem::take(&mut self.cswap.dev);
        dev.clear();
        for &f in frames {
            if !self.swap_read_folio_mem(&mut t, f)? {
                dev.push(f);
            }
        }
        let n = dev.len() as u64;
        if n > 0 {
            let mut pages = std::mem::take(&mut self.swap_pages);
            pages.clear();
            pages.extend(dev.iter().map(|&f| {
                let fr = &self.vm.frames[f as usize];
                SwapPage {
                    slot: fr.key,
                    vpn: fr.vpn,
                    memcg: m,
                }
            }));
            let mut done = std::mem::take(&mut self.done_buf);
            self.backend_io(ctx.now, ctx.comm, ctx.cpu, |b, sub| {
                b.read(sub, &pages, &mut done)
            })?;
            for (i, &f) in dev.iter().enumerate() {
                self.vm.frames[f as usize].io_done = done[i];
            }
            self.swap_pages = pages;
            self.done_buf = done;
            self.count_swpin(m, n);
        }
        self.cswap.dev = dev;
        self.sync_pool_frames();
        Ok(n)
    }

    /// `do_swap_page` on a synchronous device with a swap count of 1 (zram): read slot `slot` into a new
    /// page that skips the swap cache, map it, and free the slot.
    pub(crate) fn swap_fault_sync(
        &mut self,
        ctx: &mut Ctx,
        pi: usize,
        vpn: u32,
        slot: u32,
        write: bool,
    ) -> Result<FaultKind> {
        let m = self.vm.procs[pi].memcg;
        let f = self.alloc_page(ctx, m)?;
        let shadow = self.swap.cache[slot as usize];
        {
            let fr = &mut self.vm.frames[f as usize];
            fr.set(F_ANON);
            fr.key = slot;
            fr.vpn = vpn;
        }
        self.swap_read_folios(ctx, m, &[f])?;
        let fr = &mut self.vm.frames[f as usize];
        ctx.now = ctx.now.max(fr.io_done);
        fr.key = NONE;
        fr.clear(F_DIRTY);
        fr.set(F_MAPPED);
        self.vm.ptes[vpn as usize] = pte_present(f, true, write);
        self.refault(f, shadow, false);
        self.lru_admit(f);
        // swap_free_nr: the last reference goes, and with it the slot and the backend's copy.
        self.swap.put_count(slot, ctx.cpu as usize, &mut self.store);
        self.cswap.sync_swapins += 1;
        self.sync_pool_frames();
        Ok(FaultKind::SwapMajor)
    }

    /// Hold as many frames out of RAM as the pools (zswap's, the backend's) have pages; a pool that grew
    /// while RAM was short holds fewer until frames come free.
    pub fn sync_pool_frames(&mut self) {
        let target = self.store.zswap.as_ref().map_or(0, |z| z.pool_pages())
            + self.store.backend.ram_pages();
        let held = &mut self.cswap.pool_frames;
        while (held.len() as u64) < target {
            let Some(f) = self.vm.take_frame(0) else {
                break;
            };
            self.vm.memcgs[0].usage += 1;
            self.vm.frames[f as usize].set(F_KERNEL);
            held.push(f);
        }
        while held.len() as u64 > target {
            let f = held.pop().expect("non-empty");
            self.vm.release_frame(f);
        }
    }

    /// Invariants of compressed swap (verify mode): zswap's own bookkeeping; a zero bit or a zswap entry
    /// only on a slot in use, never both, and a zswap entry never beside a swap-cache page of its slot;
    /// the backend's bookkeeping; no more frames held than the pools have pages.
    pub(crate) fn cswap_check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(m));
        let (sw, st) = (&self.swap, &self.store);
        if let Some(z) = st.zswap.as_ref() {
            z.check(self.vm.memcgs.len())?;
        }
        for (s, &m) in sw.map.iter().enumerate() {
            let s = s as u32;
            let zero = sw.is_zero(s);
            let stored = st.zswap.as_ref().is_some_and(|z| z.contains(s));
            if (zero || stored) && (m == 0 || m == crate::swap::MAP_BAD) {
                return bad(format!(
                    "slot {s} is free but holds a zero bit or a zswap entry"
                ));
            }
            if zero && stored {
                return bad(format!("slot {s} is both a zero page and a zswap entry"));
            }
            let c = sw.cache[s as usize];
            let exclusive = st.zswap.as_ref().is_none_or(|z| z.exclusive_loads);
            if exclusive && stored && c != NONE && !crate::vm::workingset::is_shadow(c) {
                return bad(format!(
                    "slot {s} has a zswap entry and a swap-cache page {c}"
                ));
            }
        }
        st.backend.check(&sw.map)?;
        self.apa_check()?;
        let target = st.zswap.as_ref().map_or(0, |z| z.pool_pages()) + st.backend.ram_pages();
        if self.cswap.pool_frames() > target {
            return bad(format!(
                "{} frames held for pools of {target} pages",
                self.cswap.pool_frames()
            ));
        }
        Ok(())
    }
}

/// The content model of `vpn`'s process and the page's index in it; `None` without one.
/// Virtual page `vpn` offered to compression, `None` when its process has no contents: its key is the
/// contents' key plus the process's first page (unique per host: a key is below the process's page
/// count), its bytes are built into `buf` when first read — or are there already (`built`).
pub(super) fn offer<'a>(
    vm: &crate::vm::Vm,
    contents: &'a [Option<Box<dyn PageContents>>],
    buf: &'a mut [u8; 4096],
    vpn: u32,
    built: bool,
) -> Option<PageIn<'a>> {
    let pi = vm.proc_of(vpn);
    let c = contents.get(pi)?.as_deref()?;
    let pr = &vm.procs[pi];
    let page = vpn - pr.base;
    let key = c
        .content_key(page)
        .filter(|&k| k < pr.pages)
        .map(|k| pr.base + k);
    Some(if built {
        PageIn::ready_keyed(key, buf)
    } else {
        PageIn::lazy(key, c, page, buf)
    })
}

fn contents_of<'a>(
    vm: &crate::vm::Vm,
    contents: &'a [Option<Box<dyn PageContents>>],
    vpn: u32,
) -> Option<(&'a dyn PageContents, u32)> {
    let pi = vm.proc_of(vpn);
    let c = contents.get(pi)?.as_deref()?;
    Some((c, vpn - vm.procs[pi].base))
}

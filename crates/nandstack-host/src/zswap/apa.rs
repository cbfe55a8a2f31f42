//! ezswap's all-page accommodation (APA, §III-A): clean file pages that reclaim drops from the page
//! cache are compressed into the pool beside anonymous pages, and a file read is served from the pool
//! for the blocks it holds.
//!
//! * Store: where reclaim frees a clean, unmapped file page (`__remove_mapping`), the page's bytes (its
//!   process's content model at the page it is mapped at) go through the same store path as a swap-out
//!   — pool limit, admission policy, compression — keyed by the file page id. A refused page is simply
//!   dropped, as without APA.
//! * Read: the mmap read-around (`file_readaround`) builds its window of missing pages; the pages the
//!   pool holds are decompressed into their new page-cache pages and leave the pool (the paper:
//!   "decompressed, forwarded to the buffer cache layer, and removed from the zpool"), the rest are
//!   read from the device in the same submission as before — a partial hit is a smaller device read
//!   merged with the pool's pages. The faulting page is a page-in request for SA's hit window (the
//!   read-around pages are not requested by anyone; the swap-in path counts its faulting page alike).
//! * Writeback: the worker drops a file entry instead of writing it (its blocks are on the file
//!   partition); counted as `file_dropped`.
//! * Never stale: a pool copy exists only while the block is out of the page cache, and a block is
//!   only written through the page cache, so a read always takes the pool copy out before any write
//!   can happen; [`Host::apa_file_dirtied`] still drops a copy if a write ever finds one, and verify
//!   mode stores each block's write version with its copy and refuses to serve a copy of another
//!   version ([`Zswap::load_file`]); the invariants check that no block is both cached and pooled.

use nandstack_core::{Error, Result};

use super::policy::PageKind;
use super::{Store, Zswap};
use crate::host::{Ctx, Host};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;
use crate::vm::VmaKind;

/// Per file page: the virtual page mapping it (for its bytes) and its write version.
#[derive(Debug, Default)]
pub struct ApaState {
    pub file_vpn: Vec<u32>,
    pub version: Vec<u32>,
}

impl Zswap {
    /// Whether clean file pages are stored (APA).
    pub fn apa(&self) -> bool {
        self.apa
    }

    /// Store clean file page `id` at write `version`.
    pub fn store_file(
        &mut self,
        id: u32,
        version: u32,
        memcg: u16,
        bytes: &[u8; 4096],
        free_frames: u64,
    ) -> Result<Store> {
        let out = self.try_store_kind(id, PageKind::File, version, memcg, bytes, free_frames)?;
        if matches!(out, Store::Refused(_)) {
            self.stats.file_refused += 1;
            self.invalidate_file(id);
        }
        Ok(out)
    }

    /// The entry of file page `id`, if any.
    pub fn file_entry(&self, id: u32) -> Option<u32> {
        self.by_file
            .get(id as usize)
            .copied()
            .filter(|&e| e != crate::vm::page::NONE)
    }

    /// Serve file page `id` at write `version` from the pool: decompress, drop the entry; the CPU time,
    /// or `None` without an entry. Verify mode (`bytes` given): the copy must hold these bytes and
    /// this version.
    pub fn load_file(
        &mut self,
        id: u32,
        version: u32,
        bytes: Option<&[u8; 4096]>,
    ) -> Result<Option<u64>> {
        let Some(e) = self.file_entry(id) else {
            return Ok(None);
        };
        if bytes.is_some() && self.entries[e as usize].version != version {
            return Err(Error::Invariant(format!(
                "zswap: file page {id} would be served at version {} after write {version}",
                self.entries[e as usize].version
            )));
        }
        self.stats.file_hits += 1;
        self.take(e, bytes).map(Some)
    }

    /// Drop the pool's copy of file page `id` (the block was written or truncated).
    pub fn invalidate_file(&mut self, id: u32) {
        if let Some(e) = self.file_entry(id) {
            self.stats.file_invalidated += 1;
            self.erase(e).expect("a live entry frees");
        }
    }

    /// The writeback worker drops file entry `e` (its blocks are on the file partition).
    pub fn drop_file(&mut self, e: u32) -> Result<()> {
        self.stats.file_dropped += 1;
        self.erase(e)
    }

    /// Queue the writeback worker after a store refused at the pool limit.
    pub fn queue_worker(&mut self, now: u64) {
        if self.wants_worker() && self.worker.queued.is_none() {
            self.worker.queued = Some(now);
            self.stats.worker_queued += 1;
        }
    }
}

impl Host {
    fn apa_on(&self) -> bool {
        self.swap.zswap.as_ref().is_some_and(|z| z.apa())
    }

    /// Map each file page to the virtual page that maps it (its bytes come from that process's
    /// contents). Called once the contents are set.
    pub(crate) fn apa_setup(&mut self) {
        let n = self.pc.pages() as usize;
        let mut vpn = vec![NONE; n];
        for p in &self.vm.procs {
            for v in &p.vmas {
                if let VmaKind::File { file, offset, .. } = v.kind {
                    let base = self.pc.file_base[file as usize] + offset;
                    for i in 0..v.pages {
                        vpn[(base + i) as usize] = v.start + i;
                    }
                }
            }
        }
        self.cswap.apa = ApaState {
            file_vpn: vpn,
            version: vec![0; n],
        };
    }

    /// Bytes of file page `id` into the scratch buffer; false when unknown.
    fn load_file_page(&mut self, id: u32) -> bool {
        match self.cswap.apa.file_vpn.get(id as usize) {
            Some(&v) if v != NONE => self.load_page(v),
            _ => false,
        }
    }

    /// Reclaim is about to free clean file frame `f` (`__remove_mapping`): with APA, store its page.
    pub(crate) fn apa_evict(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        let fr = self.vm.frames[f as usize];
        if !self.apa_on() || !fr.is_file() || fr.has(F_SWAPCACHE) || fr.has(F_DIRTY) {
            return Ok(());
        }
        let id = fr.key;
        // The worker runs beside this reclaim (first: it uses the scratch buffer in verify mode).
        self.zswap_worker_run(ctx.now)?;
        if !self.load_file_page(id) {
            return Ok(());
        }
        // Linux 4.7 (`shrink_sync`): a full pool is shrunk on this task first (its writebacks use the
        // scratch buffer in verify mode, so the page is loaded again).
        let room = self.zswap_shrink_sync(ctx, fr.memcg)?;
        let z = self.swap.zswap.as_mut().expect("APA on");
        if !room {
            z.stats.file_refused += 1;
            z.invalidate_file(id);
            self.sync_pool_frames();
            return Ok(());
        }
        if self.verify {
            self.load_file_page(id);
        }
        let free = self.vm.free_pages();
        let version = self.cswap.apa.version[id as usize];
        let z = self.swap.zswap.as_mut().expect("APA on");
        match z.store_file(id, version, fr.memcg, &self.cswap.buf, free)? {
            Store::Stored(ns) => ctx.now += ns,
            Store::Refused(ns) => {
                ctx.now += ns;
                z.queue_worker(ctx.now);
            }
        }
        self.sync_pool_frames();
        Ok(())
    }

    /// The read-around of file pages `frames` (new, locked page-cache frames, `key` = file page id) is
    /// about to be submitted: serve from the pool the pages it holds (each decompressed in turn on the
    /// reading CPU, `io_done` set) and leave in `frames` only those to read from the device.
    pub(crate) fn apa_read(&mut self, ctx: &Ctx, want: u32, frames: &mut Vec<u32>) -> Result<()> {
        if !self.apa_on() {
            return Ok(());
        }
        let mut t = ctx.now;
        let mut keep = 0;
        for i in 0..frames.len() {
            let f = frames[i];
            let id = self.vm.frames[f as usize].key;
            let z = self.swap.zswap.as_mut().expect("APA on");
            let hit = z.file_entry(id).is_some();
            if id == want {
                z.lookup(hit);
            }
            if !hit {
                frames[keep] = f;
                keep += 1;
                continue;
            }
            let known = self.verify && self.load_file_page(id);
            let bytes = known.then_some(&*self.cswap.buf);
            let version = self.cswap.apa.version[id as usize];
            let z = self.swap.zswap.as_mut().expect("APA on");
            t += z.load_file(id, version, bytes)?.expect("checked above");
            self.vm.frames[f as usize].io_done = t;
        }
        frames.truncate(keep);
        self.sync_pool_frames();
        Ok(())
    }

    /// File page `id` was dirtied (a write to the block): a new version; a pool copy, if any, is stale
    /// and goes.
    pub fn apa_file_dirtied(&mut self, id: u32) {
        if let Some(v) = self.cswap.apa.version.get_mut(id as usize) {
            *v = v.wrapping_add(1);
        }
        if let Some(z) = self.swap.zswap.as_mut() {
            z.invalidate_file(id);
        }
    }

    /// Invariant (verify mode): no file page is both in the page cache and in the pool.
    pub(crate) fn apa_check(&self) -> Result<()> {
        let Some(z) = self.swap.zswap.as_ref() else {
            return Ok(());
        };
        for (id, &e) in z.by_file.iter().enumerate() {
            if e == NONE {
                continue;
            }
            let c = self.pc.index[id];
            if c != NONE && !is_shadow(c) {
                return Err(Error::Invariant(format!(
                    "file page {id} is both in the page cache (frame {c}) and in the pool"
                )));
            }
        }
        Ok(())
    }
}

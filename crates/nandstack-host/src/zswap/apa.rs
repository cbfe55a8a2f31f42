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

use nandstack_core::{Error, Nanos, Result};

use super::policy::PageKind;
use super::{Store, Zswap};
use crate::contents::PageIn;

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

    /// Store clean file page `id` at write `version` (the page is built only if admission or
    /// compression reads it).
    pub fn store_file(
        &mut self,
        id: u32,
        version: u32,
        memcg: u16,
        page: &mut PageIn,
        free_frames: u64,
    ) -> Result<Store> {
        let out = self.try_store_kind(id, PageKind::File, version, memcg, page, free_frames)?;
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
    ) -> Result<Option<Nanos>> {
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
    pub fn queue_worker(&mut self, now: Nanos) {
        if self.wants_worker() && self.worker.queued.is_none() {
            self.worker.queued = Some(now);
            self.stats.worker_queued += 1;
        }
    }
}

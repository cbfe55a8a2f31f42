//! The page cache of the files on the file partition.
//!
//! Each file occupies a contiguous run of 4 KiB pages on the file partition (files are laid out one
//! after another); a file page has a global id (file base + index). The index maps each file page to
//! its frame, a shadow entry (evicted, for refault detection) or nothing. Clean file pages are dropped
//! by reclaim; dirty ones are written back by the flusher ([`crate::host::flush`]) — periodically when
//! older than `dirty_expire`, all of them above `dirty_background_ratio`, or when reclaim finds only
//! dirty pages — and by kswapd for pages reclaim already marked.

use crate::vm::page::NONE;
use nandstack_core::Nanos;

pub struct PageCache {
    /// Byte offset of the file partition on the device.
    pub base: u64,
    /// First page id and length (pages) of each file.
    pub file_base: Vec<u32>,
    pub file_len: Vec<u32>,
    /// Frame / shadow / NONE per file page id.
    pub index: Vec<u32>,
    /// Dirty file pages.
    pub dirty: u64,
    /// One bit per file page id, set when the page is dirtied (`mark_dirty`) and cleared by the
    /// flusher once it finds the page clean or gone: a superset of the dirty pages, so the flusher
    /// visits them in id order without scanning every page of every file (`Host::flusher_tick`;
    /// verify mode checks the superset).
    pub maybe_dirty: Vec<u64>,
    /// Read-around window of an mmap fault, pages.
    pub ra_pages: u32,
    pub expire_ns: Nanos,
    pub period_ns: Nanos,
    /// Dirty pages above which the flusher writes everything (`dirty_background_ratio`).
    pub background_pages: u64,
    /// Next periodic flusher run.
    pub next_flush: Nanos,
    /// Reclaim saw only dirty pages: wake the flusher.
    pub wakeup: bool,
    pub flusher_runs: u64,
}

impl PageCache {
    pub fn new(
        base: u64,
        files: &[u32],
        ra_pages: u32,
        expire_ns: Nanos,
        period_ns: Nanos,
        background_pages: u64,
    ) -> PageCache {
        let mut file_base = Vec::with_capacity(files.len());
        let mut at = 0u32;
        for &len in files {
            file_base.push(at);
            at += len;
        }
        PageCache {
            base,
            file_base,
            file_len: files.to_vec(),
            index: vec![NONE; at as usize],
            dirty: 0,
            maybe_dirty: vec![0; (at as usize).div_ceil(64)],
            ra_pages,
            expire_ns,
            period_ns,
            background_pages,
            next_flush: period_ns,
            wakeup: false,
            flusher_runs: 0,
        }
    }

    /// Total file pages (size of the file partition in use).
    /// Note that page `id` was dirtied (see `maybe_dirty`).
    #[inline]
    pub fn note_dirty(&mut self, id: u32) {
        self.maybe_dirty[id as usize / 64] |= 1 << (id % 64);
    }

    /// Whether page `id` may be dirty (see `maybe_dirty`).
    #[inline]
    pub fn may_be_dirty(&self, id: u32) -> bool {
        self.maybe_dirty[id as usize / 64] & (1 << (id % 64)) != 0
    }

    pub fn pages(&self) -> u64 {
        self.index.len() as u64
    }

    /// Byte offset of a file page on the device.
    #[inline]
    pub fn offset(&self, id: u32) -> u64 {
        self.base + id as u64 * 4096
    }

    /// The file holding page id `id` and the id range of that file.
    pub fn file_range(&self, id: u32) -> (u32, u32) {
        let i = self.file_base.partition_point(|&b| b <= id) - 1;
        (self.file_base[i], self.file_base[i] + self.file_len[i])
    }
}

//! zram as the swap device (`drivers/block/zram/zram_drv.c`, Linux 6.18): a RAM disk whose 4 KiB blocks
//! are compressed into a zsmalloc pool. It is a synchronous device (`SWP_SYNCHRONOUS_IO`): a write
//! compresses in the writer's context and is done when it returns; a read decompresses in the reader's.
//!
//! * `zram_write_page`: the slot's old contents are freed; a page whose words are all equal is kept as
//!   its value (`same_pages`, no pool memory); otherwise it is compressed, and stored whole when the
//!   compressed length reaches zsmalloc's `huge_class_size` (`huge_pages`, `huge_pages_since`); the pool
//!   allocation is refused past `mem_limit` (a write error: the page stays dirty in memory,
//!   `failed_writes`).
//! * `zram_slot_free_notify`: the swap layer freed the slot (`notify_free`); its object goes.
//! * Writeback (`CONFIG_ZRAM_WRITEBACK`, optional): every `interval_ms` the pages chosen by the mode
//!   (`huge`, `idle`, `huge_idle`) are written to the backing device — the swap partition's range of the
//!   SSD, a block per page from a first-fit bitmap (`alloc_block_bdev`) — and leave the pool; reading
//!   such a page reads the device (`bd_reads`). After each pass every stored page is marked idle, as an
//!   agent doing `echo all > idle` would; a read or a new write clears the mark.
//!
//! `mm_stat`, `io_stat` and `bd_stat` are reported with the kernel's names.

mod config;

pub use config::{ZramConfig, ZramWritebackConfig, ZramWritebackMode};

use nandstack_core::{Error, Nanos, Result};
use serde_json::json;

use super::{Submit, SwapBackend, SwapPage};
use crate::block::{BlockLayer, IoKind, Region};
use crate::compressor::{page_ns, CompressionCosts, CompressorKind, MemoCompressor};
use crate::contents::same_filled;
use crate::zpool::{Handle, Zpool, Zsmalloc, PAGE_BYTES};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Empty,
    /// Every word equal to this value (`ZRAM_SAME`).
    Same(u64),
    /// In the pool: compressed length (4096 for a huge page).
    Stored {
        handle: Handle,
        len: u32,
    },
    /// Written back to the backing device, block `blk` (`ZRAM_WB`).
    Backing(u32),
}

/// zram's counters, named as in `mm_stat`, `io_stat` and `bd_stat` (pages unless `_size`).
#[derive(Clone, Debug, Default)]
pub struct ZramStats {
    pub pages_stored: u64,
    pub compr_data_size: u64,
    pub same_pages: u64,
    pub huge_pages: u64,
    pub huge_pages_since: u64,
    pub mem_used_max_pages: u64,
    pub failed_reads: u64,
    pub failed_writes: u64,
    pub notify_free: u64,
    pub bd_count: u64,
    pub bd_reads: u64,
    pub bd_writes: u64,
    pub writeback_passes: u64,
    pub compress_ns: Nanos,
    pub decompress_ns: Nanos,
}

pub struct Zram {
    kind: CompressorKind,
    compressor: MemoCompressor,
    pool: Zsmalloc,
    huge_class_size: u32,
    slots: Vec<Slot>,
    idle: Vec<bool>,
    limit_pages: u64,
    compress_ns: Nanos,
    decompress_ns: Nanos,
    copy_ns: Nanos,
    mode: ZramWritebackMode,
    interval_ns: Nanos,
    next_pass_ns: Nanos,
    /// Byte offset of block 0 of the backing device (the swap partition).
    base: u64,
    /// Backing-device blocks in use (block 0 is never used, as `alloc_block_bdev` starts at 1).
    bd_used: Vec<bool>,
    pub stats: ZramStats,
}

impl Zram {
    /// A zram disk of `slots` 4 KiB blocks whose backing device starts at byte `base` of the SSD.
    pub fn new(cfg: &ZramConfig, costs: &CompressionCosts, slots: u32, base: u64) -> Result<Zram> {
        let c = costs.of(cfg.comp_algorithm);
        let pool = Zsmalloc::new();
        Ok(Zram {
            kind: cfg.comp_algorithm,
            compressor: MemoCompressor::new(cfg.comp_algorithm.algorithm())?,
            huge_class_size: pool.huge_class_size(),
            pool,
            slots: vec![Slot::Empty; slots as usize],
            idle: vec![false; slots as usize],
            limit_pages: cfg.mem_limit_mib * 256,
            compress_ns: page_ns(c.compress_cycles_per_byte, costs.cpu_mhz),
            decompress_ns: page_ns(c.decompress_cycles_per_byte, costs.cpu_mhz),
            copy_ns: page_ns(costs.copy_cycles_per_byte, costs.cpu_mhz),
            mode: cfg.writeback.mode,
            interval_ns: Nanos((cfg.writeback.interval_ms * 1e6) as u64),
            next_pass_ns: Nanos((cfg.writeback.interval_ms * 1e6) as u64),
            base,
            bd_used: vec![false; slots as usize],
            stats: ZramStats::default(),
        })
    }

    /// `zram_free_page`.
    fn free_slot(&mut self, slot: u32) -> Result<()> {
        match std::mem::replace(&mut self.slots[slot as usize], Slot::Empty) {
            Slot::Empty => return Ok(()),
            Slot::Same(_) => self.stats.same_pages -= 1,
            Slot::Stored { handle, len } => {
                self.pool.free(handle)?;
                self.stats.compr_data_size -= len as u64;
                if len == PAGE_BYTES {
                    self.stats.huge_pages -= 1;
                }
            }
            Slot::Backing(blk) => {
                self.bd_used[blk as usize] = false;
                self.stats.bd_count -= 1;
            }
        }
        self.idle[slot as usize] = false;
        self.stats.pages_stored -= 1;
        Ok(())
    }

    /// Run the writeback passes due by `now` (`writeback_store`, one page at a time, each write waited
    /// for: `submit_bio_wait`).
    fn writeback_due(&mut self, io: &mut BlockLayer, now: Nanos) -> Result<()> {
        if self.mode == ZramWritebackMode::Off {
            return Ok(());
        }
        while self.next_pass_ns <= now {
            let mut t = self.next_pass_ns;
            self.stats.writeback_passes += 1;
            let mut blk = 1usize;
            for s in 0..self.slots.len() {
                let Slot::Stored { handle, len } = self.slots[s] else {
                    continue;
                };
                let huge = len == PAGE_BYTES;
                let idle = self.idle[s];
                let pick = match self.mode {
                    ZramWritebackMode::Huge => huge,
                    ZramWritebackMode::Idle => idle,
                    ZramWritebackMode::HugeIdle => huge && idle,
                    ZramWritebackMode::Off => false,
                };
                if !pick {
                    continue;
                }
                while blk < self.bd_used.len() && self.bd_used[blk] {
                    blk += 1;
                }
                if blk >= self.bd_used.len() {
                    break;
                }
                t = io.issue(
                    IoKind::Write,
                    Region::Swap,
                    self.base + blk as u64 * 4096,
                    1,
                    t,
                    crate::block::COMM_KWORKER,
                )?;
                self.bd_used[blk] = true;
                self.pool.free(handle)?;
                self.stats.compr_data_size -= len as u64;
                if huge {
                    self.stats.huge_pages -= 1;
                }
                self.slots[s] = Slot::Backing(blk as u32);
                self.stats.bd_count += 1;
                self.stats.bd_writes += 1;
            }
            for s in 0..self.slots.len() {
                self.idle[s] = matches!(self.slots[s], Slot::Stored { .. });
            }
            self.next_pass_ns += self.interval_ns;
        }
        Ok(())
    }
}

impl SwapBackend for Zram {
    fn name(&self) -> &'static str {
        "zram"
    }

    fn synchronous(&self) -> bool {
        true
    }

    fn needs_contents(&self) -> bool {
        true
    }

    fn write(
        &mut self,
        _sub: &mut Submit,
        _pages: &[SwapPage],
        _done: &mut Vec<Nanos>,
    ) -> Result<()> {
        Err(Error::Invariant(
            "zram is written page by page with the pages' bytes (write_page)".into(),
        ))
    }

    fn write_page(
        &mut self,
        sub: &mut Submit,
        page: SwapPage,
        bytes: Option<&[u8; 4096]>,
    ) -> Result<Option<Nanos>> {
        let Some(bytes) = bytes else {
            return Err(Error::Invariant(format!(
                "zram: no contents for the page written to slot {}",
                page.slot
            )));
        };
        self.writeback_due(sub.io, sub.at)?;
        let slot = page.slot;
        self.free_slot(slot)?;
        let mut t = sub.at;
        if let Some(v) = same_filled(bytes) {
            t += self.copy_ns;
            self.slots[slot as usize] = Slot::Same(v);
            self.stats.same_pages += 1;
            self.stats.pages_stored += 1;
            return Ok(Some(t));
        }
        let comp_len = self.compressor.compressed_len(bytes)? as u32;
        t += self.compress_ns;
        self.stats.compress_ns += self.compress_ns;
        // write_incompressible_page: from huge_class_size up the page is kept as it is.
        let len = if comp_len >= self.huge_class_size {
            PAGE_BYTES
        } else {
            comp_len
        };
        let handle = self.pool.alloc(len)?;
        let used = self.pool.total_pages();
        self.stats.mem_used_max_pages = self.stats.mem_used_max_pages.max(used);
        if self.limit_pages > 0 && used > self.limit_pages {
            // zram_can_store_page: -ENOMEM, a write error.
            self.pool.free(handle)?;
            self.stats.failed_writes += 1;
            return Ok(None);
        }
        self.slots[slot as usize] = Slot::Stored { handle, len };
        self.stats.pages_stored += 1;
        self.stats.compr_data_size += len as u64;
        if len == PAGE_BYTES {
            self.stats.huge_pages += 1;
            self.stats.huge_pages_since += 1;
        }
        Ok(Some(t))
    }

    fn read(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<Nanos>) -> Result<()> {
        self.writeback_due(sub.io, sub.at)?;
        done.clear();
        let mut t = sub.at;
        for p in pages {
            let s = p.slot as usize;
            self.idle[s] = false;
            t = match self.slots[s] {
                Slot::Same(_) => t + self.copy_ns,
                Slot::Stored { len, .. } => {
                    let ns = if len == PAGE_BYTES {
                        self.copy_ns
                    } else {
                        self.decompress_ns
                    };
                    self.stats.decompress_ns += ns;
                    t + ns
                }
                Slot::Backing(blk) => {
                    self.stats.bd_reads += 1;
                    let start = (sub.dispatch)(p.memcg, false, 4096, t);
                    sub.io.issue(
                        IoKind::Read,
                        Region::Swap,
                        self.base + blk as u64 * 4096,
                        1,
                        start,
                        sub.comm,
                    )?
                }
                Slot::Empty => {
                    self.stats.failed_reads += 1;
                    return Err(Error::Invariant(format!(
                        "zram: read of slot {s}, which holds nothing"
                    )));
                }
            };
            done.push(t);
        }
        Ok(())
    }

    fn discard(
        &mut self,
        _io: &mut BlockLayer,
        first: u32,
        n: u32,
        at: Nanos,
        _comm: u16,
    ) -> Result<Nanos> {
        // zram_bio_discard: the blocks' contents go (the swap layer discards free slots only).
        for s in first..first + n {
            self.free_slot(s)?;
        }
        Ok(at)
    }

    fn slot_freed(&mut self, slot: u32) {
        self.stats.notify_free += 1;
        self.free_slot(slot).expect("a stored object frees");
    }

    fn ram_pages(&self) -> u64 {
        self.pool.total_pages()
    }

    fn check(&self, map: &[u8]) -> Result<()> {
        self.pool.check()?;
        let (mut stored, mut same, mut huge, mut bytes, mut bd) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for (s, slot) in self.slots.iter().enumerate() {
            if *slot != Slot::Empty && map.get(s).is_none_or(|&m| m == 0) {
                return Err(Error::Invariant(format!(
                    "zram: slot {s} holds data but the swap layer has freed it"
                )));
            }
            match *slot {
                Slot::Empty => continue,
                Slot::Same(_) => same += 1,
                Slot::Stored { len, .. } => {
                    bytes += len as u64;
                    huge += (len == PAGE_BYTES) as u64;
                }
                Slot::Backing(blk) => {
                    bd += 1;
                    if !self.bd_used[blk as usize] {
                        return Err(Error::Invariant(format!(
                            "zram: slot {s} on backing block {blk}, which is marked free"
                        )));
                    }
                }
            }
            stored += 1;
        }
        let st = &self.stats;
        if (stored, same, huge, bytes, bd)
            != (
                st.pages_stored,
                st.same_pages,
                st.huge_pages,
                st.compr_data_size,
                st.bd_count,
            )
            || self.pool.objects() != stored - same - bd
        {
            return Err(Error::Invariant(format!(
                "zram: counted {stored} stored ({same} same, {huge} huge, {bytes} bytes, {bd} on the \
                 backing device) but mm_stat says {st:?}, pool holds {} objects",
                self.pool.objects()
            )));
        }
        Ok(())
    }

    fn report(&self) -> serde_json::Value {
        let s = &self.stats;
        json!({
            "kind": "zram",
            "comp_algorithm": self.kind.algorithm().name(),
            "disksize": self.slots.len() as u64 * 4096,
            "mm_stat": {
                "orig_data_size": s.pages_stored * 4096,
                "compr_data_size": s.compr_data_size,
                "mem_used_total": self.pool.total_bytes(),
                "mem_limit": self.limit_pages * 4096,
                "mem_used_max": s.mem_used_max_pages * 4096,
                "same_pages": s.same_pages,
                "pages_compacted": self.pool.pages_compacted(),
                "huge_pages": s.huge_pages,
                "huge_pages_since": s.huge_pages_since,
            },
            "io_stat": {
                "failed_reads": s.failed_reads,
                "failed_writes": s.failed_writes,
                "invalid_io": 0,
                "notify_free": s.notify_free,
            },
            "bd_stat": {
                "bd_count": s.bd_count,
                "bd_reads": s.bd_reads,
                "bd_writes": s.bd_writes,
            },
            "writeback_passes": s.writeback_passes,
            "compress_ms": s.compress_ns.0 as f64 / 1e6,
            "decompress_ms": s.decompress_ns.0 as f64 / 1e6,
        })
    }
}

//! The hybrid FTL: 4 KiB page-level mapping fully in DRAM, a DRAM write buffer, blocks programmed in SLC
//! or QLC mode, an SLC region whose size (a block budget) changes at run time, SLC→QLC migration and QLC
//! GC. Host-facing operations live here; reclaim and resizing in `reclaim.rs`, checks in `verify.rs`.
//!
//! Addresses: a physical unit is `block × qlc_units_per_block + offset`; an SLC-mode block uses only its
//! first `slc_units_per_block` offsets. `l2p` holds a physical unit, `BUF_FLAG | slot` for a unit in the
//! write buffer, or `NONE`. A buffered unit's older flash copy is invalidated when it enters the buffer, so
//! every logical unit has at most one valid copy, holding its latest version.
//!
//! Costs: a page program is charged (to the category of the data) when its last unit is written or when
//! it is padded; a GC/migration victim costs one read per page holding valid data and one erase.

use nandstack_core::{Error, Result};

use crate::ftl::versions::VersionTable;
use serde::Serialize;

use super::blocks::{BlockMode, BlockState, Blocks, BufSlot, WriteBuffer, NONE};
use super::config::HybridParams;
use super::cost::{CostBreakdown, CostKind};
use super::Region;

pub(crate) const BUF_FLAG: u32 = 1 << 31;

/// How the SLC region is organised (chosen by the manager, fixed for a run).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlcLayout {
    /// One SLC log for all data; reclaim migrates every valid unit of a victim block to QLC.
    Shared,
    /// UST: each logical block (a QLC block's worth of logical units) owns up to `max_blocks` SLC blocks;
    /// SLC GC of a logical block keeps its hot units in SLC (SLC→SLC) and moves the rest to QLC.
    PerLogicalBlock { max_blocks: u32 },
}

/// Shared open-block streams (UST's per-logical-block SLC blocks are tracked separately).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    HostSlc = 0,
    HostQlc = 1,
    /// Destination of SLC→QLC migration.
    Migrate = 2,
    /// Destination of QLC→QLC GC.
    QlcGc = 3,
}

impl Stream {
    pub(crate) fn kind(self) -> CostKind {
        match self {
            Stream::HostSlc => CostKind::HostToSlc,
            Stream::HostQlc => CostKind::HostToQlc,
            Stream::Migrate => CostKind::SlcToQlc,
            Stream::QlcGc => CostKind::QlcToQlc,
        }
    }
    pub(crate) fn mode(self) -> BlockMode {
        match self {
            Stream::HostSlc => BlockMode::Slc,
            _ => BlockMode::Qlc,
        }
    }
}

/// Event counters (units are 4 KiB).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlCounters {
    /// Host units written to flash in SLC mode (after the buffer).
    pub host_units_to_slc: u64,
    /// Host units written to flash in QLC mode.
    pub host_units_to_qlc: u64,
    /// Host units that overwrote a unit still in the write buffer (no flash write).
    pub buffer_absorbed_units: u64,
    /// Host units that overwrote data held in SLC (or buffered for SLC): the SLC update frequency.
    pub slc_update_units: u64,
    /// Units moved SLC→QLC (migration, shrink, UST cold data).
    pub migrated_units: u64,
    /// Units moved by QLC GC.
    pub qlc_gc_units: u64,
    /// Units kept in SLC by UST's SLC GC.
    pub slc_gc_units: u64,
    pub slc_migration_victims: u64,
    pub qlc_gc_victims: u64,
    pub ust_gc_runs: u64,
    /// Units of padding programmed to close partial pages (flush, shrink to zero, UST compaction).
    pub padding_units: u64,
    pub trimmed_units: u64,
    pub host_read_units: u64,
    /// Host read units served from the write buffer.
    pub buffer_read_units: u64,
    pub read_slc_page_reads: u64,
    pub read_qlc_page_reads: u64,
    /// Time of host reads (ns); not part of the write cost.
    pub read_ns: u64,
}

/// The hybrid FTL.
pub struct HybridFtl {
    pub(crate) p: HybridParams,
    pub(crate) layout: SlcLayout,
    pub(crate) l2p: Vec<u32>,
    pub(crate) p2l: Vec<u32>,
    /// UST: a unit updated while its copy was in SLC (or the buffer) since it last moved.
    pub(crate) hot: Vec<bool>,
    pub(crate) blocks: Blocks,
    pub(crate) slc_target: u32,
    pub(crate) slc_used: u32,
    pub(crate) qlc_used: u32,
    pub(crate) open: [u32; 4],
    /// UST: open SLC block, owned blocks and last host write (clock) of each logical block.
    pub(crate) lb_open: Vec<u32>,
    pub(crate) lb_blocks: Vec<Vec<u32>>,
    pub(crate) lb_last_write: Vec<u64>,
    pub(crate) buf: WriteBuffer,
    pub(crate) valid_units: u64,
    pub(crate) costs: CostBreakdown,
    pub(crate) counters: FtlCounters,
    /// Read-after-write versions (verify mode; shared with the block FTL).
    pub(crate) versions: Option<VersionTable>,
    /// Write cost charged since the last `take_request_ns`.
    pub(crate) request_ns: u64,
    /// Host units written (the logical clock of UST's LRU).
    pub(crate) clock: u64,
}

impl HybridFtl {
    pub fn new(p: HybridParams, layout: SlcLayout, verify: bool) -> HybridFtl {
        let n = p.total_blocks;
        let physical = n as usize * p.qlc_units_per_block as usize;
        let logical = p.logical_units as usize;
        let lbs = (p.logical_units as usize).div_ceil(p.qlc_units_per_block as usize);
        let ust = matches!(layout, SlcLayout::PerLogicalBlock { .. });
        HybridFtl {
            layout,
            l2p: vec![NONE; logical],
            p2l: vec![NONE; physical],
            hot: if ust {
                vec![false; logical]
            } else {
                Vec::new()
            },
            blocks: Blocks::new(n),
            slc_target: 0,
            slc_used: 0,
            qlc_used: 0,
            open: [NONE; 4],
            lb_open: if ust { vec![NONE; lbs] } else { Vec::new() },
            lb_blocks: if ust {
                vec![Vec::new(); lbs]
            } else {
                Vec::new()
            },
            lb_last_write: if ust { vec![0; lbs] } else { Vec::new() },
            buf: WriteBuffer::new(p.write_buffer_units),
            valid_units: 0,
            costs: CostBreakdown::default(),
            counters: FtlCounters::default(),
            versions: verify.then(|| VersionTable::new(logical, physical, |_| false, |_| false)),
            request_ns: 0,
            clock: 0,
            p,
        }
    }

    pub fn params(&self) -> &HybridParams {
        &self.p
    }
    pub fn layout(&self) -> SlcLayout {
        self.layout
    }
    /// The SLC region's size (a block budget: in-use SLC blocks + free blocks reserved for SLC).
    pub fn slc_target(&self) -> u32 {
        self.slc_target
    }
    /// Blocks currently programmed in SLC mode (open or sealed).
    pub fn slc_used(&self) -> u32 {
        self.slc_used
    }
    pub fn qlc_used(&self) -> u32 {
        self.qlc_used
    }
    /// Logical units holding data (on flash or in the buffer).
    pub fn valid_units(&self) -> u64 {
        self.valid_units
    }
    /// Space utilisation: valid data ÷ logical capacity.
    pub fn utilization(&self) -> f64 {
        self.valid_units as f64 / self.p.logical_units as f64
    }
    pub fn costs(&self) -> &CostBreakdown {
        &self.costs
    }
    pub fn counters(&self) -> &FtlCounters {
        &self.counters
    }
    /// Largest SLC region the current data allows (see `HybridParams::max_slc_blocks`).
    pub fn max_slc_blocks(&self) -> u32 {
        self.p.max_slc_blocks(self.valid_units)
    }
    /// Per-block lifetime erase counts in (SLC mode, QLC mode).
    pub fn erase_counts(&self) -> (&[u32], &[u32]) {
        (&self.blocks.slc_erases, &self.blocks.qlc_erases)
    }
    /// Reads checked against their version (verify mode).
    pub fn reads_checked(&self) -> u64 {
        self.versions.as_ref().map_or(0, |v| v.reads_checked())
    }
    /// UST: SLC blocks owned by each logical block.
    pub fn slc_blocks_per_logical_block(&self) -> impl Iterator<Item = u32> + '_ {
        self.lb_blocks.iter().map(|v| v.len() as u32)
    }
    /// Turn on read-after-write versions from now on: every unit holding data counts as version 1.
    pub fn enable_verification(&mut self) {
        if self.versions.is_some() {
            return;
        }
        let (l2p, p2l) = (&self.l2p, &self.p2l);
        self.versions = Some(VersionTable::new(
            l2p.len(),
            p2l.len(),
            |l| l2p[l] != NONE,
            |p| p2l[p] != NONE,
        ));
        for s in &mut self.buf.slots {
            s.version = 1;
        }
    }
    /// Zero the costs and event counters (after preconditioning); the data and versions stay.
    pub fn reset_counters(&mut self) {
        self.costs = CostBreakdown::default();
        self.counters = FtlCounters::default();
        self.request_ns = 0;
    }
    /// Write cost (ns) charged since the previous call.
    pub fn take_request_ns(&mut self) -> u64 {
        std::mem::take(&mut self.request_ns)
    }
    pub(crate) fn slc_free(&self) -> i64 {
        self.slc_target as i64 - self.slc_used as i64
    }
    pub(crate) fn qlc_free(&self) -> i64 {
        (self.p.total_blocks - self.slc_target) as i64 - self.qlc_used as i64
    }
    pub(crate) fn cap_of(&self, b: u32) -> u32 {
        match self.blocks.mode[b as usize] {
            BlockMode::Slc => self.p.slc_units_per_block,
            _ => self.p.qlc_units_per_block,
        }
    }
    #[inline]
    pub(crate) fn block_of(&self, addr: u32) -> u32 {
        addr / self.p.qlc_units_per_block
    }

    fn check_range(&self, first: u64, count: u64) -> Result<()> {
        if first + count > self.p.logical_units as u64 {
            return Err(Error::OutOfRange(format!(
                "units [{first}, {}) beyond the logical capacity of {} units ({} bytes)",
                first + count,
                self.p.logical_units,
                self.p.logical_bytes()
            )));
        }
        Ok(())
    }

    // ---- flash operations and their cost ----

    pub(crate) fn charge(&mut self, kind: CostKind, mode: BlockMode, op: FlashOp, n: u64) {
        let t = if mode == BlockMode::Slc {
            self.p.slc
        } else {
            self.p.qlc
        };
        let c = self.costs.get_mut(kind);
        let slc = mode == BlockMode::Slc;
        let ns = n * match op {
            FlashOp::Read => {
                *(if slc {
                    &mut c.slc_page_reads
                } else {
                    &mut c.qlc_page_reads
                }) += n;
                t.read.0
            }
            FlashOp::Program => {
                *(if slc {
                    &mut c.slc_page_programs
                } else {
                    &mut c.qlc_page_programs
                }) += n;
                t.program.0
            }
            FlashOp::Erase => {
                *(if slc {
                    &mut c.slc_block_erases
                } else {
                    &mut c.qlc_block_erases
                }) += n;
                t.erase.0
            }
        };
        c.ns += ns;
        self.request_ns += ns;
    }

    /// Write one unit at block `b`'s write pointer; programs the page when it fills.
    pub(crate) fn append_to(&mut self, b: u32, kind: CostKind) -> u32 {
        let i = b as usize;
        debug_assert!(self.blocks.written[i] < self.cap_of(b));
        let addr = b * self.p.qlc_units_per_block + self.blocks.written[i];
        self.blocks.written[i] += 1;
        if self.blocks.written[i].is_multiple_of(self.p.units_per_page) {
            self.charge(kind, self.blocks.mode[i], FlashOp::Program, 1);
        }
        addr
    }

    /// Program the block's partially filled page, if any, with padding.
    pub(crate) fn pad_page(&mut self, b: u32, kind: CostKind) {
        let i = b as usize;
        let upp = self.p.units_per_page;
        let rem = self.blocks.written[i] % upp;
        if rem != 0 {
            self.blocks.written[i] += upp - rem;
            self.counters.padding_units += (upp - rem) as u64;
            self.charge(kind, self.blocks.mode[i], FlashOp::Program, 1);
        }
    }

    pub(crate) fn take_free(&mut self, mode: BlockMode) -> Result<u32> {
        let b = self.blocks.take(mode).ok_or_else(|| {
            Error::DeviceFull(format!(
                "hybrid device: no erased block left (SLC region {} blocks, {} in SLC mode, {} in QLC mode)",
                self.slc_target, self.slc_used, self.qlc_used
            ))
        })?;
        match mode {
            BlockMode::Slc => self.slc_used += 1,
            _ => self.qlc_used += 1,
        }
        Ok(b)
    }

    pub(crate) fn erase(&mut self, b: u32, kind: CostKind) -> Result<()> {
        let i = b as usize;
        if self.blocks.valid[i] != 0 {
            return Err(Error::Invariant(format!(
                "hybrid: erasing block {b} with {} valid units",
                self.blocks.valid[i]
            )));
        }
        let mode = self.blocks.mode[i];
        self.charge(kind, mode, FlashOp::Erase, 1);
        match mode {
            BlockMode::Slc => self.slc_used -= 1,
            _ => self.qlc_used -= 1,
        }
        self.blocks.erase(b);
        Ok(())
    }

    pub(crate) fn seal(&mut self, b: u32) {
        self.blocks.state[b as usize] = BlockState::Sealed;
    }

    /// Next unit of a shared stream, opening a block (and reclaiming space) when needed.
    pub(crate) fn append_stream(&mut self, s: Stream) -> Result<u32> {
        let si = s as usize;
        let b = self.open[si];
        if b == NONE || self.blocks.written[b as usize] == self.cap_of(b) {
            if b != NONE {
                self.seal(b);
                self.open[si] = NONE;
            }
            match s {
                Stream::HostSlc => self.ensure_slc_free()?,
                Stream::HostQlc | Stream::Migrate => self.ensure_qlc_free()?,
                Stream::QlcGc => {}
            }
            self.open[si] = self.take_free(s.mode())?;
        }
        Ok(self.append_to(self.open[si], s.kind()))
    }

    /// UST: next unit of logical block `lb`'s SLC blocks.
    fn append_lb(&mut self, lb: u32, max_blocks: u32) -> Result<u32> {
        let l = lb as usize;
        let b = self.lb_open[l];
        if b != NONE && self.blocks.written[b as usize] < self.cap_of(b) {
            return Ok(self.append_to(b, CostKind::HostToSlc));
        }
        if b != NONE {
            self.seal(b);
            self.lb_open[l] = NONE;
        }
        self.ensure_slc_free()?;
        if self.lb_blocks[l].len() as u32 >= max_blocks {
            self.ust_gc(lb, false)?;
        }
        let b = self.lb_open[l];
        if b != NONE && self.blocks.written[b as usize] < self.cap_of(b) {
            return Ok(self.append_to(b, CostKind::HostToSlc));
        }
        let nb = self.take_free(BlockMode::Slc)?;
        self.blocks.owner[nb as usize] = lb;
        self.lb_blocks[l].push(nb);
        self.lb_open[l] = nb;
        Ok(self.append_to(nb, CostKind::HostToSlc))
    }

    // ---- mapping ----

    pub(crate) fn map(&mut self, lpn: u32, addr: u32, version: u64) {
        self.l2p[lpn as usize] = addr;
        self.p2l[addr as usize] = lpn;
        let b = self.block_of(addr) as usize;
        self.blocks.valid[b] += 1;
        if let Some(v) = &mut self.versions {
            v.store(addr, version);
        }
    }

    pub(crate) fn unmap_phys(&mut self, addr: u32) {
        self.p2l[addr as usize] = NONE;
        let b = self.block_of(addr) as usize;
        self.blocks.valid[b] -= 1;
    }

    pub(crate) fn phys_version(&self, addr: u32) -> u64 {
        self.versions.as_ref().map_or(0, |v| v.held(addr))
    }

    /// Put a unit leaving the host side (buffer or direct) on flash.
    fn place(&mut self, lpn: u32, dest: Region, version: u64) -> Result<()> {
        let addr = match (dest, self.layout) {
            (Region::Slc, _) if self.slc_target == 0 => self.append_stream(Stream::HostQlc)?,
            (Region::Slc, SlcLayout::Shared) => self.append_stream(Stream::HostSlc)?,
            (Region::Slc, SlcLayout::PerLogicalBlock { max_blocks }) => {
                self.append_lb(lpn / self.p.qlc_units_per_block, max_blocks)?
            }
            (Region::Qlc, _) => self.append_stream(Stream::HostQlc)?,
        };
        if self.blocks.mode[self.block_of(addr) as usize] == BlockMode::Slc {
            self.counters.host_units_to_slc += 1;
        } else {
            self.counters.host_units_to_qlc += 1;
        }
        self.map(lpn, addr, version);
        Ok(())
    }

    // ---- host operations ----

    /// Host write of `count` units from `first`, each destined for `dest`.
    pub fn write(&mut self, first: u64, count: u64, dest: Region) -> Result<()> {
        self.check_range(first, count)?;
        for lpn in first..first + count {
            self.write_unit(lpn as u32, dest)?;
        }
        Ok(())
    }

    fn write_unit(&mut self, lpn: u32, dest: Region) -> Result<()> {
        self.clock += 1;
        let ust = !self.hot.is_empty();
        if ust {
            self.lb_last_write[(lpn / self.p.qlc_units_per_block) as usize] = self.clock;
        }
        let version = self.versions.as_mut().map_or(0, |v| v.write(lpn));
        let cur = self.l2p[lpn as usize];
        if cur != NONE && cur & BUF_FLAG != 0 {
            let e = &mut self.buf.slots[(cur & !BUF_FLAG) as usize];
            if e.dest == Region::Slc {
                self.counters.slc_update_units += 1;
            }
            e.dest = dest;
            e.version = version;
            self.counters.buffer_absorbed_units += 1;
            if ust {
                self.hot[lpn as usize] = true;
            }
            return Ok(());
        }
        if cur != NONE {
            if self.blocks.mode[self.block_of(cur) as usize] == BlockMode::Slc {
                self.counters.slc_update_units += 1;
                if ust {
                    self.hot[lpn as usize] = true;
                }
            }
            self.unmap_phys(cur);
            self.l2p[lpn as usize] = NONE;
        } else {
            self.valid_units += 1;
        }
        if self.buf.cap() == 0 {
            return self.place(lpn, dest, version);
        }
        while self.buf.is_full() {
            if let Some(e) = self.buf.pop() {
                self.place(e.lpn, e.dest, e.version)?;
            }
        }
        let slot = self.buf.push(BufSlot { lpn, dest, version });
        self.l2p[lpn as usize] = BUF_FLAG | slot;
        Ok(())
    }

    /// Host read of `count` units from `first`: one page read per flash page touched (consecutive units
    /// of one page share it); buffered units come from DRAM. Verify mode checks every version.
    pub fn read(&mut self, first: u64, count: u64) -> Result<()> {
        self.check_range(first, count)?;
        let upp = self.p.units_per_page;
        let mut last_page = NONE;
        for lpn in first..first + count {
            self.counters.host_read_units += 1;
            let cur = self.l2p[lpn as usize];
            if cur == NONE {
                if let Some(v) = &mut self.versions {
                    v.check(lpn as u32, 0, || "the unmapped unit".into())?;
                }
                continue;
            }
            let got = if cur & BUF_FLAG != 0 {
                self.counters.buffer_read_units += 1;
                self.buf.slots[(cur & !BUF_FLAG) as usize].version
            } else {
                if cur / upp != last_page {
                    last_page = cur / upp;
                    let (t, slc) = match self.blocks.mode[self.block_of(cur) as usize] {
                        BlockMode::Slc => (self.p.slc.read.0, true),
                        _ => (self.p.qlc.read.0, false),
                    };
                    self.counters.read_ns += t;
                    if slc {
                        self.counters.read_slc_page_reads += 1;
                    } else {
                        self.counters.read_qlc_page_reads += 1;
                    }
                }
                self.phys_version(cur)
            };
            if let Some(v) = &mut self.versions {
                v.check(lpn as u32, got, || {
                    if cur & BUF_FLAG != 0 {
                        format!("write-buffer slot {}", cur & !BUF_FLAG)
                    } else {
                        format!("physical unit {cur}")
                    }
                })?;
            }
        }
        Ok(())
    }

    /// TRIM whole units: their data becomes invalid (buffered copies are dropped).
    pub fn trim(&mut self, first: u64, count: u64) -> Result<()> {
        self.check_range(first, count)?;
        for lpn in first..first + count {
            let cur = self.l2p[lpn as usize];
            if cur == NONE {
                continue;
            }
            if let Some(v) = &mut self.versions {
                v.trim(lpn as u32);
            }
            if cur & BUF_FLAG != 0 {
                self.buf.slots[(cur & !BUF_FLAG) as usize].lpn = NONE;
            } else {
                self.unmap_phys(cur);
            }
            self.l2p[lpn as usize] = NONE;
            if !self.hot.is_empty() {
                self.hot[lpn as usize] = false;
            }
            self.valid_units -= 1;
            self.counters.trimmed_units += 1;
        }
        Ok(())
    }

    /// Write the buffer back and pad every open page (end of run, as a drive does on FLUSH).
    pub fn flush(&mut self) -> Result<()> {
        while let Some(e) = self.buf.pop() {
            self.place(e.lpn, e.dest, e.version)?;
        }
        for s in [
            Stream::HostSlc,
            Stream::HostQlc,
            Stream::Migrate,
            Stream::QlcGc,
        ] {
            let b = self.open[s as usize];
            if b != NONE {
                self.pad_page(b, s.kind());
            }
        }
        for l in 0..self.lb_open.len() {
            let b = self.lb_open[l];
            if b != NONE {
                self.pad_page(b, CostKind::HostToSlc);
            }
        }
        Ok(())
    }
}

/// A flash operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum FlashOp {
    Read,
    Program,
    Erase,
}

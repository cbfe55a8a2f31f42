//! The hybrid FTL: 4 KiB page-level mapping fully in DRAM, a DRAM write buffer, blocks programmed in SLC
//! or QLC mode, an SLC region whose size (a block budget) changes at run time, SLC→QLC migration and QLC
//! GC. The state and the flash operations live here; host operations in `host.rs`, reclaim and
//! resizing in `reclaim.rs`, checks in `verify.rs`.
//!
//! Shared with the block FTL (`crate::ftl`): the mapping table ([`MappingTable`]: forward and reverse
//! maps, validity derived), the block table ([`crate::ftl::blocks::BlockTable`], here with two program
//! modes), the victim policies ([`VictimPolicy`], one instance per region: the SLC region's is
//! configurable, QLC GC is greedy), the write buffer ([`WriteBuffer`], in FIFO order) and the
//! read-after-write version table.
//!
//! Addresses: a physical unit is `block × qlc_units_per_block + offset`; an SLC-mode block uses only its
//! first `slc_units_per_block` offsets. A buffered unit has no flash mapping: its older flash copy is
//! invalidated when it enters the buffer, so every logical unit has at most one valid copy (flash or
//! buffer), holding its latest version.
//!
//! Costs: a page program is charged (to the category of the data) when its last unit is written or when
//! it is padded; a GC/migration victim costs one read per page holding valid data and one erase.

use std::cell::Cell;

use nandstack_core::{Divisor, Error, Result, Rng, MAPPING_UNIT_BYTES};
use serde::Serialize;

use crate::cache::{Eviction, WriteBuffer, WriteBufferConfig};
use crate::ftl::blocks::BlockState;
use crate::ftl::config::VictimConfig;
use crate::ftl::gc::{self, VictimPolicy, Victims};
use crate::ftl::mapping::MappingTable;
use crate::ftl::versions::VersionTable;

use super::blocks::{BlockMode, Blocks, BufEntry, NONE};
use super::config::HybridParams;
use super::cost::{CostBreakdown, CostKind};
use super::Region;

/// How the SLC region is organised (chosen by the manager, fixed for a run).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlcLayout {
    /// One SLC log for all data; reclaim migrates every valid unit of a victim block to QLC.
    Shared,
    /// UST: each logical block (a QLC block's worth of logical units) owns up to `max_blocks` SLC blocks;
    /// SLC GC of a logical block keeps its hot units in SLC (SLC→SLC) and moves the rest to QLC.
    PerLogicalBlock { max_blocks: u32 },
}

/// Shared open-block streams (UST's per-logical-block SLC blocks are tracked separately). Each has one
/// open block per data kind (one kind, or file and swap under SDS).
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
    pub(crate) const ALL: [Stream; 4] = [
        Stream::HostSlc,
        Stream::HostQlc,
        Stream::Migrate,
        Stream::QlcGc,
    ];
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
    /// DISS CL-SDI: flash copies of swap-range units invalidated by the read that swapped them in.
    pub swap_invalidated_units: u64,
    /// DISS CL-SDI: swap-range units read from the write buffer and dropped there (never flushed; a
    /// buffered unit has no older flash copy, so these and `swap_invalidated_units` never overlap).
    pub buffer_swap_dropped_units: u64,
}

/// The hybrid FTL.
#[derive(Clone)]
pub struct HybridFtl {
    pub(crate) p: HybridParams,
    /// `p.qlc_units_per_block` and `p.units_per_page` as divisors (the per-unit paths divide by them).
    pub(crate) upb: Divisor,
    pub(crate) upp: Divisor,
    pub(crate) layout: SlcLayout,
    pub(crate) map: MappingTable,
    /// UST: a unit updated while its copy was in SLC (or the buffer) since it last moved.
    pub(crate) hot: Vec<bool>,
    pub(crate) blocks: Blocks,
    /// Victim policy of SLC→QLC migration (shared layout): told about sealed SLC blocks only.
    pub(crate) slc_victims: Victims,
    /// Victim policy of QLC GC: told about sealed QLC blocks only.
    pub(crate) qlc_victims: Victims,
    /// A policy reads `BlockTable::modified_at` (kept up to date only then).
    track_age: bool,
    /// Randomized victim policies draw from this.
    pub(crate) rng: Rng,
    seal_seq: u64,
    /// Data kinds kept apart (2 under SDS: file 0, swap 1).
    pub(crate) kinds: u32,
    /// The swap partition the host registered, in logical units `[first, end)` (DISS).
    pub(crate) swap_range: Option<(u32, u32)>,
    pub(crate) slc_target: u32,
    pub(crate) slc_used: u32,
    pub(crate) qlc_used: u32,
    /// Open block of each (stream, kind): index `stream × kinds + kind`.
    pub(crate) open: Vec<u32>,
    /// UST, per logical-block key (`logical block × kinds + kind`): open SLC block, owned blocks, last
    /// host write (clock).
    pub(crate) lb_open: Vec<u32>,
    pub(crate) lb_blocks: Vec<Vec<u32>>,
    pub(crate) lb_last_write: Vec<u64>,
    /// DRAM write buffer (FIFO), `None` when the config gives it no unit.
    pub(crate) buf: Option<WriteBuffer<BufEntry>>,
    pub(crate) valid_units: u64,
    /// `max_slc_blocks` and the `valid_units` it was computed for: the device asks after every host
    /// write request (float math), and the data's size changes far less often.
    max_slc_memo: Cell<(u64, u32)>,
    /// The valid units of a reclaim victim (kept to reuse its allocation).
    pub(crate) scratch: Vec<(u32, u32)>,
    pub(crate) costs: CostBreakdown,
    pub(crate) counters: FtlCounters,
    /// Read-after-write versions (verify mode; shared with the block FTL).
    pub(crate) versions: Option<VersionTable>,
    /// Write cost charged since the last `take_request_ns`.
    pub(crate) request_ns: u64,
    /// Host units written (the logical clock of UST's LRU and of cost-benefit's age).
    pub(crate) clock: u64,
}

impl HybridFtl {
    /// An erased device with the configured victim policies (`seed` drives randomized ones).
    pub fn new(p: HybridParams, layout: SlcLayout, verify: bool, seed: u64) -> HybridFtl {
        let t = Blocks::new(p.total_blocks, p.slc_units_per_block, p.qlc_units_per_block).t;
        let slc = gc::build(&p.slc_victim, 1, &t);
        let qlc = gc::build(&VictimConfig::greedy(), 1, &t);
        Self::with_victims(p, layout, verify, seed, slc, qlc)
    }

    /// Like [`HybridFtl::new`] with victim policies built by the caller (e.g. a policy checked in
    /// lockstep against a slow twin, in tests). Each is sized for one plane of `total_blocks` blocks.
    pub fn with_victims(
        p: HybridParams,
        layout: SlcLayout,
        verify: bool,
        seed: u64,
        slc_victims: Victims,
        qlc_victims: Victims,
    ) -> HybridFtl {
        let n = p.total_blocks;
        let physical = n as usize * p.qlc_units_per_block as usize;
        let logical = p.logical_units as usize;
        let kinds = p.kinds();
        let ust = matches!(layout, SlcLayout::PerLogicalBlock { .. });
        let keys = if ust {
            (p.logical_units as usize).div_ceil(p.qlc_units_per_block as usize) * kinds as usize
        } else {
            0
        };
        let buffer = WriteBufferConfig {
            bytes: p.write_buffer_units as u64 * nandstack_core::MAPPING_UNIT_BYTES,
            eviction: Eviction::Fifo,
            ..WriteBufferConfig::default()
        };
        HybridFtl {
            upb: Divisor::new(p.qlc_units_per_block),
            upp: Divisor::new(p.units_per_page),
            layout,
            map: MappingTable::new(logical, physical),
            hot: if ust {
                vec![false; logical]
            } else {
                Vec::new()
            },
            blocks: Blocks::new(n, p.slc_units_per_block, p.qlc_units_per_block),
            track_age: slc_victims.needs_age() || qlc_victims.needs_age(),
            slc_victims,
            qlc_victims,
            rng: Rng::derive(seed, 0x6879),
            seal_seq: 0,
            kinds,
            swap_range: None,
            slc_target: 0,
            slc_used: 0,
            qlc_used: 0,
            open: vec![NONE; Stream::ALL.len() * kinds as usize],
            lb_open: vec![NONE; keys],
            lb_blocks: vec![Vec::new(); keys],
            lb_last_write: vec![0; keys],
            buf: WriteBuffer::new(p.logical_units, &buffer),
            valid_units: 0,
            max_slc_memo: Cell::new((u64::MAX, 0)),
            scratch: Vec::new(),
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
    /// The mapping table (shared type with the block FTL).
    pub fn mapping(&self) -> &MappingTable {
        &self.map
    }
    /// The block table (shared type with the block FTL; two program modes: 0 SLC, 1 QLC).
    pub fn block_table(&self) -> &crate::ftl::blocks::BlockTable {
        &self.blocks.t
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
        let (units, max) = self.max_slc_memo.get();
        if units == self.valid_units {
            return max;
        }
        let max = self.p.max_slc_blocks(self.valid_units);
        self.max_slc_memo.set((self.valid_units, max));
        max
    }
    /// Per-block lifetime erase counts in SLC mode and in QLC mode.
    pub fn erase_counts(&self) -> (Vec<u32>, Vec<u32>) {
        let slc = self.blocks.slc_erases.clone();
        let qlc = (0..self.blocks.len())
            .map(|b| self.blocks.qlc_erases(b))
            .collect();
        (slc, qlc)
    }
    /// Reads checked against their version (verify mode).
    pub fn reads_checked(&self) -> u64 {
        self.versions.as_ref().map_or(0, |v| v.reads_checked())
    }
    /// UST: SLC blocks owned by each logical block (each (logical block, data kind) under SDS).
    pub fn slc_blocks_per_logical_block(&self) -> impl Iterator<Item = u32> + '_ {
        self.lb_blocks.iter().map(|v| v.len() as u32)
    }
    /// Names of the victim policies (SLC migration, QLC GC).
    pub fn victim_policy_names(&self) -> (&'static str, &'static str) {
        (self.slc_victims.name(), self.qlc_victims.name())
    }
    /// Whether `lpn` is held in the write buffer.
    pub(crate) fn buffered(&self, lpn: u32) -> bool {
        self.buf.as_ref().is_some_and(|b| b.lru.contains(lpn))
    }
    /// Units in the write buffer.
    pub fn buffered_units(&self) -> u32 {
        self.buf.as_ref().map_or(0, |b| b.lru.len())
    }
    /// Turn on read-after-write versions from now on: every unit holding data counts as version 1.
    pub fn enable_verification(&mut self) {
        if self.versions.is_some() {
            return;
        }
        let t = VersionTable::new(
            self.map.logical_units(),
            self.map.physical_units(),
            |l| self.map.is_mapped(l as u32) || self.buffered(l as u32),
            |p| self.map.is_valid(p as u32),
        );
        self.versions = Some(t);
        if let Some(b) = self.buf.as_mut() {
            for k in b.lru.keys_lru_first() {
                if let Some(e) = b.lru.get_mut(k) {
                    e.version = 1;
                }
            }
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
    /// Units block `b` holds in its program mode.
    #[inline]
    pub(crate) fn cap_of(&self, b: u32) -> u32 {
        self.blocks.t.capacity(b)
    }
    #[inline]
    pub(crate) fn block_of(&self, addr: u32) -> u32 {
        self.upb.quotient(addr)
    }
    /// Data kind of a logical unit: 1 (swap) under SDS inside the registered swap range, else 0.
    #[inline]
    pub(crate) fn kind_of(&self, lpn: u32) -> u32 {
        match self.swap_range {
            Some((a, b)) if self.kinds == 2 && (a..b).contains(&lpn) => 1,
            _ => 0,
        }
    }

    pub(crate) fn check_range(&self, first: u64, count: u64) -> Result<()> {
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
        let (count, ns) = match op {
            FlashOp::Read if slc => (&mut c.slc_page_reads, t.read.0),
            FlashOp::Read => (&mut c.qlc_page_reads, t.read.0),
            FlashOp::Program if slc => (&mut c.slc_page_programs, t.program.0),
            FlashOp::Program => (&mut c.qlc_page_programs, t.program.0),
            FlashOp::Erase if slc => (&mut c.slc_block_erases, t.erase.0),
            FlashOp::Erase => (&mut c.qlc_block_erases, t.erase.0),
        };
        *count += n;
        c.ns += n * ns;
        self.request_ns += n * ns;
    }

    /// Write one unit at block `b`'s write pointer; programs the page when it fills.
    #[inline(always)]
    pub(crate) fn append_to(&mut self, b: u32, kind: CostKind) -> u32 {
        let i = b as usize;
        debug_assert!(self.blocks.t.written[i] < self.cap_of(b));
        let addr = b * self.p.qlc_units_per_block + self.blocks.t.written[i];
        self.blocks.t.written[i] += 1;
        if self.upp.remainder(self.blocks.t.written[i]) == 0 {
            self.charge(kind, self.blocks.mode(b), FlashOp::Program, 1);
        }
        addr
    }

    /// Program the block's partially filled page, if any, with padding.
    pub(crate) fn pad_page(&mut self, b: u32, kind: CostKind) {
        let i = b as usize;
        let upp = self.p.units_per_page;
        let rem = self.blocks.t.written[i] % upp;
        if rem != 0 {
            self.blocks.t.written[i] += upp - rem;
            self.counters.padding_units += (upp - rem) as u64;
            self.charge(kind, self.blocks.mode(b), FlashOp::Program, 1);
        }
    }

    /// An erased block, opened in `mode` for data of kind `kind`.
    pub(crate) fn take_free(&mut self, mode: BlockMode, kind: u32) -> Result<u32> {
        let b = self.blocks.take(mode, kind as u8).ok_or_else(|| {
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
        if self.blocks.t.valid[i] != 0 {
            return Err(Error::Invariant(format!(
                "hybrid: erasing block {b} with {} valid units",
                self.blocks.t.valid[i]
            )));
        }
        let mode = self.blocks.mode(b);
        self.charge(kind, mode, FlashOp::Erase, 1);
        match mode {
            BlockMode::Slc => self.slc_used -= 1,
            _ => self.qlc_used -= 1,
        }
        self.blocks.erase(b);
        Ok(())
    }

    /// The region whose victim policy block `b` belongs to: sealed QLC blocks, and sealed SLC blocks
    /// of the shared layout (UST's owned SLC blocks are reclaimed per logical block, not by a policy).
    fn victim_region(&self, b: u32) -> Option<Region> {
        match self.blocks.mode(b) {
            BlockMode::Slc if self.blocks.owner[b as usize] == NONE => Some(Region::Slc),
            BlockMode::Qlc => Some(Region::Qlc),
            _ => None,
        }
    }

    /// Seal a block: it becomes a candidate of its region's victim policy.
    pub(crate) fn seal(&mut self, b: u32) {
        let i = b as usize;
        self.blocks.t.state[i] = BlockState::Sealed;
        self.seal_seq += 1;
        self.blocks.t.sealed_seq[i] = self.seal_seq;
        self.notify_sealed(b);
    }

    /// Tell `b`'s region policy that it is a (sealed) candidate.
    pub(crate) fn notify_sealed(&mut self, b: u32) {
        match self.victim_region(b) {
            Some(Region::Slc) => self.slc_victims.on_sealed(b, &self.blocks.t),
            Some(Region::Qlc) => self.qlc_victims.on_sealed(b, &self.blocks.t),
            None => {}
        }
    }

    /// Choose a victim of `region`'s policy; it leaves the candidates (state `Victim`).
    pub(crate) fn select_victim(&mut self, region: Region) -> Option<u32> {
        let policy = match region {
            Region::Slc => &mut self.slc_victims,
            Region::Qlc => &mut self.qlc_victims,
        };
        let v = policy.select(gc::Scope::Device, &self.blocks.t, self.clock, &mut self.rng)?;
        debug_assert_eq!(self.blocks.t.state[v as usize], BlockState::Sealed);
        self.blocks.t.state[v as usize] = BlockState::Victim;
        Some(v)
    }

    /// Next unit of a shared stream for data of kind `kind`, opening a block (and reclaiming space)
    /// when needed. Inlined into every unit's write and move (with the per-unit steps it calls:
    /// LLVM left each an out-of-line call); opening a block is the rare case, kept out of line.
    #[inline(always)]
    pub(crate) fn append_stream(&mut self, s: Stream, kind: u32) -> Result<u32> {
        let si = s as usize * self.kinds as usize + kind as usize;
        let b = self.open[si];
        if b == NONE || self.blocks.t.written[b as usize] == self.cap_of(b) {
            self.open_stream_block(s, kind)?;
        }
        Ok(self.append_to(self.open[si], s.kind()))
    }

    /// Seal stream `s`'s full block of kind `kind`, if any, reclaim space and open an erased block.
    #[inline(never)]
    fn open_stream_block(&mut self, s: Stream, kind: u32) -> Result<()> {
        let si = s as usize * self.kinds as usize + kind as usize;
        let b = self.open[si];
        if b != NONE {
            self.seal(b);
            self.open[si] = NONE;
        }
        match s {
            Stream::HostSlc => self.ensure_slc_free()?,
            Stream::HostQlc | Stream::Migrate => self.ensure_qlc_free()?,
            Stream::QlcGc => {}
        }
        self.open[si] = self.take_free(s.mode(), kind)?;
        Ok(())
    }

    /// UST: next unit of the SLC blocks of logical-block key `key`.
    pub(crate) fn append_lb(&mut self, key: u32, max_blocks: u32) -> Result<u32> {
        let l = key as usize;
        let b = self.lb_open[l];
        if b != NONE && self.blocks.t.written[b as usize] < self.cap_of(b) {
            return Ok(self.append_to(b, CostKind::HostToSlc));
        }
        if b != NONE {
            self.seal(b);
            self.lb_open[l] = NONE;
        }
        self.ensure_slc_free()?;
        if self.lb_blocks[l].len() as u32 >= max_blocks {
            self.ust_gc(key, false)?;
        }
        let b = self.lb_open[l];
        if b != NONE && self.blocks.t.written[b as usize] < self.cap_of(b) {
            return Ok(self.append_to(b, CostKind::HostToSlc));
        }
        let nb = self.take_free(BlockMode::Slc, key % self.kinds)?;
        self.blocks.owner[nb as usize] = key;
        self.lb_blocks[l].push(nb);
        self.lb_open[l] = nb;
        Ok(self.append_to(nb, CostKind::HostToSlc))
    }

    /// Cache hints for the requests ahead (`Device::prefetch`: byte offsets of three requests, nearest
    /// first), the block FTL's pipeline (`Ftl::prefetch`) on each request's first unit (a request's
    /// units are consecutive: the hardware prefetcher follows the rest): the mapping entry of the
    /// farthest, the metadata of the block holding the middle one's old copy (its mapping entry was
    /// fetched some calls earlier) and its entries in the victim policies (the overwrite unlinks it from
    /// its bucket), and the victim index's neighbours of the nearest one's block. Pure hints: no
    /// simulated state changes.
    #[inline]
    pub fn prefetch(&self, ahead: [Option<u64>; 3]) {
        use crate::ftl::bigvec::prefetch;
        let old_block = |o: u64| {
            let pua = *self.map.l2p.get((o / MAPPING_UNIT_BYTES) as usize)?;
            (pua != NONE).then(|| self.block_of(pua))
        };
        if let Some(o) = ahead[2] {
            nandstack_core::hint::prefetch(&self.map.l2p, (o / MAPPING_UNIT_BYTES) as usize);
        }
        if let Some(b) = ahead[1].and_then(old_block) {
            let i = b as usize;
            prefetch(&self.blocks.t.valid, i);
            prefetch(&self.blocks.t.state, i);
            prefetch(&self.blocks.t.mode, i);
            prefetch(&self.blocks.owner, i);
            // Which region's policy holds it is in the lines just requested: hint both.
            self.slc_victims.prefetch(b);
            self.qlc_victims.prefetch(b);
        }
        if let Some(b) = ahead[0].and_then(old_block) {
            if self.blocks.t.state[b as usize] == BlockState::Sealed {
                match self.victim_region(b) {
                    Some(Region::Slc) => self.slc_victims.prefetch_neighbours(b, &self.blocks.t),
                    Some(Region::Qlc) => self.qlc_victims.prefetch_neighbours(b, &self.blocks.t),
                    None => {}
                }
            }
        }
    }

    /// UST: the logical-block key of `lpn` (its logical block, and its data kind under SDS).
    #[inline]
    pub(crate) fn lb_key(&self, lpn: u32) -> u32 {
        self.upb.quotient(lpn) * self.kinds + self.kind_of(lpn)
    }

    // ---- mapping ----

    /// `lpn`'s copy (of `version`) is now at the freshly appended `addr`.
    #[inline(always)]
    pub(crate) fn attach(&mut self, lpn: u32, addr: u32, version: u64) {
        self.attach_in(lpn, addr, self.block_of(addr), version);
    }

    /// [`HybridFtl::attach`] with `addr`'s block `b` at hand.
    #[inline(always)]
    fn attach_in(&mut self, lpn: u32, addr: u32, b: u32, version: u64) {
        self.map.bind(lpn, addr);
        let b = b as usize;
        self.blocks.t.valid[b] += 1;
        if self.track_age {
            self.blocks.t.modified_at[b] = self.clock;
        }
        if let Some(v) = &mut self.versions {
            v.store(addr, version);
        }
    }

    /// The block of `addr` holds one valid unit fewer (its copy was unmapped, or is moving on).
    #[inline(always)]
    pub(crate) fn detach(&mut self, addr: u32) {
        let b = self.block_of(addr);
        let i = b as usize;
        self.blocks.t.valid[i] -= 1;
        if self.track_age {
            self.blocks.t.modified_at[i] = self.clock;
        }
        if self.blocks.t.state[i] == BlockState::Sealed {
            match self.victim_region(b) {
                Some(Region::Slc) => self.slc_victims.on_invalidated(b, &self.blocks.t),
                Some(Region::Qlc) => self.qlc_victims.on_invalidated(b, &self.blocks.t),
                None => {}
            }
        }
    }

    /// Drop `lpn`'s flash copy, if any; returns where it was (`NONE` if unmapped).
    pub(crate) fn invalidate(&mut self, lpn: u32) -> u32 {
        let old = self.map.unbind(lpn);
        if old != NONE {
            self.detach(old);
        }
        old
    }

    pub(crate) fn phys_version(&self, addr: u32) -> u64 {
        self.versions.as_ref().map_or(0, |v| v.held(addr))
    }

    /// Valid units of block `v`, in offset order, as (physical, logical) into `units` (cleared first),
    /// checked against its count. The forward entries of every unit's last writer are prefetched first
    /// (independent loads: their cache misses overlap), as the block FTL's GC does.
    pub(crate) fn valid_units_into(&self, v: u32, units: &mut Vec<(u32, u32)>) -> Result<()> {
        let base = v * self.p.qlc_units_per_block;
        let end = base + self.blocks.t.written[v as usize];
        self.map.prefetch_owners(base, end);
        self.map.owners_into(base, end, units);
        if units.len() as u32 != self.blocks.t.valid[v as usize] {
            return Err(Error::Invariant(format!(
                "hybrid: block {v} counts {} valid units but {} map back",
                self.blocks.t.valid[v as usize],
                units.len()
            )));
        }
        Ok(())
    }

    /// Put a unit leaving the host side (buffer or direct) on flash.
    #[inline(always)]
    pub(crate) fn place(&mut self, lpn: u32, dest: Region, version: u64) -> Result<()> {
        let kind = self.kind_of(lpn);
        let addr = match (dest, self.layout) {
            (Region::Slc, _) if self.slc_target == 0 => {
                self.append_stream(Stream::HostQlc, kind)?
            }
            (Region::Slc, SlcLayout::Shared) => self.append_stream(Stream::HostSlc, kind)?,
            (Region::Slc, SlcLayout::PerLogicalBlock { max_blocks }) => {
                self.append_lb(self.lb_key(lpn), max_blocks)?
            }
            (Region::Qlc, _) => self.append_stream(Stream::HostQlc, kind)?,
        };
        let b = self.block_of(addr);
        if self.blocks.mode(b) == BlockMode::Slc {
            self.counters.host_units_to_slc += 1;
        } else {
            self.counters.host_units_to_qlc += 1;
        }
        self.attach_in(lpn, addr, b, version);
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

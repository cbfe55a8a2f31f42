//! The page-mapped FTL.
//!
//! Layout: a physical unit address (`pua`) is `block × units_per_block + offset`, with
//! `offset = page × units_per_page + unit`; a global block id is `plane × blocks_per_plane + block`.
//! Metadata per physical 4 KiB unit: the reverse map `p2l` (4 bytes); per logical unit: `l2p` (4 bytes);
//! per block: a few words (see [`blocks::BlockTable`]). Validity is derived: a unit is valid iff
//! `p2l[pua] != NONE && l2p[p2l[pua]] == pua`. Invalidation only clears the forward entry (one random
//! memory access fewer per overwrite); stale reverse entries are overwritten when the unit is reused.

pub(crate) mod bigvec;
pub mod blocks;
mod collect;
pub mod config;
pub mod counters;
pub mod gc;
pub mod mapping;
pub mod ops;
pub mod placement;
mod verify;
pub mod versions;
mod write;

pub use config::{
    Allocation, FtlConfig, GcBurst, GcConfig, GcScope, GcTrigger, Migration, ParallelUnit,
    PlacementConfig, TieBreak, VictimConfig, WearLevelingConfig,
};
pub use counters::Counters;
pub use mapping::MappingTable;
pub use verify::UnitCensus;

use std::collections::VecDeque;

use nandstack_core::stats::Summary;
use nandstack_core::{Divisor, Error, Result, Rng, MAPPING_UNIT_BYTES};

use crate::nand::{Geometry, PlaneAddr};
use blocks::{BlockState, BlockTable, NONE};
use gc::VictimPolicy;
use placement::PlacementPolicy;

/// One GC victim, as recorded by [`Ftl::record_gc_events`] (for differential tests and traces).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GcEvent {
    pub victim: u32,
    /// Valid units it held when chosen (the units GC moved).
    pub valid_units: u32,
    pub sealed_seq: u64,
}

#[derive(Clone)]
pub struct Ftl {
    geo: Geometry,
    cfg: FtlConfig,
    planes: u32,
    upp: u32,
    upb: u32,
    /// `upp` and `upb` as divisors (multiply by a reciprocal instead of dividing on per-unit paths).
    upp_div: Divisor,
    upb_div: Divisor,
    planes_div: Divisor,
    logical_units: u32,
    /// Forward and reverse maps (validity derived from them; see [`MappingTable`]).
    map: MappingTable,
    blocks: BlockTable,
    free: crate::exact::Exact<Vec<VecDeque<u32>>>,
    free_total: u32,
    /// Open block of each (stream, plane): index `stream × planes + plane`.
    active: Vec<u32>,
    /// Stripe position → plane index, per `striping_order`.
    stripe: Vec<u32>,
    dyn_units: u64,
    gc_rr: u32,
    victim: gc::Victims,
    placement: Box<dyn PlacementPolicy>,
    streams: u32,
    counters: Counters,
    /// Logical clock: host units written so far (never reset; ages are differences).
    clock: u64,
    seal_seq: u64,
    rng: Rng,
    versions: Option<versions::VersionTable>,
    /// The swap partition the host registered, in logical units `[first, end)` (DISS).
    swap_range: Option<(u32, u32)>,
    erase_baseline: Vec<u32>,
    erases_since_wl_check: Vec<u32>,
    in_wear_leveling: bool,
    /// Physical operations since the last drain (only when `record_ops`).
    ops: Vec<ops::FlashOp>,
    record_ops: bool,
    mapcache: Option<crate::cache::MappingCache>,
    /// Maintain `BlockTable::modified_at` (only for policies that read it).
    track_age: bool,
    /// Reused buffer of the physical units whose pages a migration reads (only when recording).
    gc_reads: Vec<u32>,
    /// GC victims since the last drain (only when recording).
    gc_log: Option<Vec<GcEvent>>,
}

impl Ftl {
    /// Build an FTL on an erased device. `seed` drives randomized policies only.
    pub fn new(geo: Geometry, cfg: FtlConfig, seed: u64) -> Result<Ftl> {
        let placement = placement::build(&cfg.placement);
        Self::with_placement(geo, cfg, seed, placement)
    }

    /// Like [`Ftl::new`] with a placement policy built by the caller (e.g. an oracle that knows each
    /// unit's true temperature, in tests); `cfg.placement` is then ignored.
    pub fn with_placement(
        geo: Geometry,
        cfg: FtlConfig,
        seed: u64,
        placement: Box<dyn PlacementPolicy>,
    ) -> Result<Ftl> {
        geo.validate()?;
        let streams = placement.streams();
        cfg.validate(&geo, streams)?;
        let planes = geo.planes();
        let upp = geo.units_per_page();
        let upb = geo.units_per_block();
        let total_blocks = geo.total_blocks();
        let logical_units = u32::try_from(cfg.logical_units(&geo)).map_err(|_| {
            Error::geometry("blocks_per_plane", "logical capacity exceeds 2^32 units")
        })?;
        let blocks = BlockTable::new(total_blocks, geo.blocks_per_plane, upb);
        let victim = gc::build(&cfg.gc.victim, planes, &blocks);
        let track_age = victim.needs_age();
        let free = (0..planes)
            .map(|p| blocks.plane_blocks(p).collect::<VecDeque<u32>>())
            .collect();
        let stripe = stripe_table(&geo, &cfg.striping_order);
        Ok(Ftl {
            planes,
            upp,
            upb,
            upp_div: Divisor::new(upp),
            upb_div: Divisor::new(upb),
            planes_div: Divisor::new(planes),
            logical_units,
            map: MappingTable::new(logical_units as usize, geo.total_units() as usize),
            free: crate::exact::Exact(free),
            free_total: total_blocks,
            active: vec![NONE; (streams * planes) as usize],
            stripe,
            dyn_units: 0,
            gc_rr: 0,
            victim,
            placement,
            streams,
            counters: Counters {
                units_by_stream: vec![0; streams as usize],
                ..Counters::default()
            },
            clock: 0,
            seal_seq: 0,
            rng: Rng::derive(seed, 0x6763),
            versions: None,
            swap_range: None,
            erase_baseline: vec![0; total_blocks as usize],
            erases_since_wl_check: vec![0; planes as usize],
            in_wear_leveling: false,
            gc_reads: Vec::new(),
            gc_log: None,
            track_age,
            ops: Vec::new(),
            record_ops: false,
            mapcache: (cfg.mapping_cache.entries > 0).then(|| {
                crate::cache::MappingCache::new(
                    logical_units,
                    cfg.mapping_cache.entries.min(logical_units as u64) as u32,
                    geo.page_size_bytes,
                )
            }),
            blocks,
            geo,
            cfg,
        })
    }

    /// Turn on read-after-write version checking (costs 16 bytes per unit).
    pub fn enable_verification(&mut self) {
        let t = versions::VersionTable::new(
            self.map.logical_units(),
            self.map.physical_units(),
            |l| self.map.is_mapped(l as u32),
            |p| self.map.is_valid(p as u32),
        );
        self.versions = Some(t);
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    pub fn blocks(&self) -> &BlockTable {
        &self.blocks
    }
    /// The mapping table (forward and reverse maps).
    pub fn mapping(&self) -> &MappingTable {
        &self.map
    }
    pub fn logical_units(&self) -> u32 {
        self.logical_units
    }
    pub fn logical_bytes(&self) -> u64 {
        self.logical_units as u64 * MAPPING_UNIT_BYTES
    }
    pub fn free_blocks(&self) -> u32 {
        self.free_total
    }
    pub fn free_blocks_in_plane(&self, plane: u32) -> u32 {
        self.free[plane as usize].len() as u32
    }
    pub fn streams(&self) -> u32 {
        self.streams
    }
    /// The plane a host write of `lpn` goes to, when allocation is static.
    pub fn static_plane_of(&self, lpn: u32) -> Option<u32> {
        (self.cfg.allocation == Allocation::Static).then(|| self.striped_plane(lpn))
    }

    /// Static allocation's plane of `lpn`: its page's place in the striping order.
    #[inline(always)]
    fn striped_plane(&self, lpn: u32) -> u32 {
        self.stripe[self.planes_div.remainder(self.upp_div.quotient(lpn)) as usize]
    }

    /// Controller CPU time spent by the placement policy so far (firmware cost model), ns.
    pub fn placement_firmware_ns(&self) -> u64 {
        self.placement.firmware_ns()
    }
    pub fn placement_name(&self) -> &'static str {
        self.placement.name()
    }
    pub fn victim_policy_name(&self) -> &'static str {
        self.victim.name()
    }
    /// Record every physical operation from now on (for the timing model); drain with [`Ftl::drain_ops`].
    pub fn record_ops(&mut self, on: bool) {
        self.record_ops = on;
        self.ops.clear();
    }

    /// Record every GC victim from now on (wear-levelling moves are not GC); drain with
    /// [`Ftl::drain_gc_events`].
    pub fn record_gc_events(&mut self, on: bool) {
        self.gc_log = on.then(Vec::new);
    }

    /// GC victims recorded since the last drain, oldest first.
    pub fn drain_gc_events(&mut self) -> Vec<GcEvent> {
        self.gc_log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Move the recorded operations into `out` (which is cleared first).
    pub fn drain_ops(&mut self, out: &mut Vec<ops::FlashOp>) {
        out.clear();
        std::mem::swap(out, &mut self.ops);
    }

    #[inline(always)]
    pub(crate) fn op(&mut self, kind: ops::OpKind, cause: ops::OpCause, pua: u32) {
        if self.record_ops {
            self.record_op(kind, cause, pua);
        }
    }

    /// The recording half of [`Ftl::op`] (out of line: the untimed FTL never records).
    #[inline(never)]
    fn record_op(&mut self, kind: ops::OpKind, cause: ops::OpCause, pua: u32) {
        let op = self.unit_op()(kind, cause, pua);
        self.ops.push(op);
    }

    /// Builds the [`ops::FlashOp`] of one unit at a physical address (a copy of the layout it needs, so
    /// that it can be used while the FTL's tables are borrowed).
    #[inline]
    fn unit_op(&self) -> impl Fn(ops::OpKind, ops::OpCause, u32) -> ops::FlashOp + Copy {
        let (upb, upp, blocks_per_plane) = (self.upb_div, self.upp_div, self.geo.blocks_per_plane);
        move |kind, cause, pua| {
            let block = upb.quotient(pua);
            ops::FlashOp {
                kind,
                cause,
                plane: block / blocks_per_plane,
                units: 1,
                block,
                page: upp.quotient(upb.remainder(pua)),
            }
        }
    }

    /// Look up (and for `update`, modify) the mapping entry of `lpn` through the mapping cache, if one
    /// is configured: a miss reads a translation page, a dirty eviction programs one.
    #[inline(always)]
    pub(crate) fn map_access(&mut self, lpn: u32, update: bool) {
        if self.mapcache.is_some() {
            self.cached_map_access(lpn, update);
        }
    }

    /// [`Ftl::map_access`] when the map is cached (out of line: most configurations do not cache it).
    #[inline(never)]
    fn cached_map_access(&mut self, lpn: u32, update: bool) {
        let Some(mc) = self.mapcache.as_mut() else {
            return;
        };
        let a = mc.access(lpn, update);
        let planes = self.planes;
        if let Some(t) = a.read_tpage {
            self.counters.translation_read_pages += 1;
            if self.record_ops {
                self.ops.push(ops::FlashOp {
                    kind: ops::OpKind::Read,
                    cause: ops::OpCause::Translation,
                    plane: t % planes,
                    units: self.upp,
                    block: ops::FlashOp::NO_BLOCK,
                    page: 0,
                });
            }
        }
        if let Some(t) = a.write_tpage {
            self.counters.translation_program_pages += 1;
            self.counters.flash_program_pages += 1;
            if self.record_ops {
                self.ops.push(ops::FlashOp {
                    kind: ops::OpKind::Transfer,
                    cause: ops::OpCause::Translation,
                    plane: t % planes,
                    units: self.upp,
                    block: ops::FlashOp::NO_BLOCK,
                    page: 0,
                });
                self.ops.push(ops::FlashOp {
                    kind: ops::OpKind::Program,
                    cause: ops::OpCause::Translation,
                    plane: t % planes,
                    units: 1,
                    block: ops::FlashOp::NO_BLOCK,
                    page: 0,
                });
            }
        }
    }

    pub fn mapping_cache(&self) -> Option<&crate::cache::MappingCache> {
        self.mapcache.as_ref()
    }

    /// Plane holding a physical unit.
    #[inline]
    pub fn plane_of_unit(&self, pua: u32) -> u32 {
        pua / self.upb / self.geo.blocks_per_plane
    }

    /// Software pipeline for a stream of requests (drivers call it once per request with the offsets of
    /// three requests ahead, nearest first): bring into cache the mapping entry of the farthest (and its
    /// lines of the mapping cache, when the controller caches the map), the block metadata of the middle
    /// one (its mapping entry was fetched some calls earlier), and the victim index's neighbours of the
    /// nearest (whose own entries were fetched some calls earlier). How far ahead each is, is the
    /// driver's choice (`nandstack-sim`'s drive loop: 1, 3 and 6 requests). Pure hints: no simulated
    /// state changes.
    #[inline]
    pub fn prefetch(&self, ahead: [Option<u64>; 3]) {
        self.prefetch_units(ahead.map(|o| o.map(|o| o / MAPPING_UNIT_BYTES)));
    }

    /// [`Ftl::prefetch`] for logical units (nearest first) instead of byte offsets: the stages of the
    /// pipeline for a stream of units about to be rewritten (a write buffer's next evictions). Pure hints.
    #[inline]
    pub fn prefetch_units(&self, ahead: [Option<u64>; 3]) {
        let old_block = |u: u64| {
            let pua = *self.map.l2p.get(u as usize)?;
            (pua != NONE).then_some(self.upb_div.quotient(pua))
        };
        if let Some(u) = ahead[2] {
            self.map.prefetch(u as usize);
            if let Some(mc) = &self.mapcache {
                mc.prefetch(u as u32);
            }
        }
        if let Some(b) = ahead[1].and_then(old_block) {
            let i = b as usize;
            bigvec::prefetch(&self.blocks.valid, i);
            if self.track_age {
                bigvec::prefetch(&self.blocks.modified_at, i); // only cost-benefit keeps it
            }
            bigvec::prefetch(&self.blocks.state, i);
            self.victim.prefetch(b);
        }
        if let Some(b) = ahead[0].and_then(old_block) {
            if self.blocks.state[b as usize] == BlockState::Sealed {
                self.victim.prefetch_neighbours(b, &self.blocks);
            }
        }
    }

    /// Whether physical unit `pua` holds the current copy of its logical unit.
    #[inline]
    pub fn is_valid_unit(&self, pua: u32) -> bool {
        self.map.is_valid(pua)
    }

    /// Physical unit currently holding a logical unit, if mapped.
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        self.map.lookup(lpn)
    }

    /// Zero all counters (after preconditioning); erase counts are kept but the per-phase distribution
    /// is measured from here. The mapping cache is checkpointed (all entries clean, counters zero).
    pub fn reset_counters(&mut self) {
        if let Some(mc) = self.mapcache.as_mut() {
            mc.checkpoint();
        }
        self.counters = Counters {
            units_by_stream: vec![0; self.streams as usize],
            ..Counters::default()
        };
        self.erase_baseline.clone_from(&self.blocks.erase_count);
    }

    /// Write amplification: flash page programs ÷ host-written pages, where host-written pages =
    /// host_write_bytes ÷ page_size. NaN when the host wrote nothing.
    pub fn waf(&self) -> f64 {
        let host_pages = self.counters.host_write_bytes as f64 / self.geo.page_size_bytes as f64;
        if host_pages == 0.0 {
            f64::NAN
        } else {
            self.counters.flash_program_pages as f64 / host_pages
        }
    }

    /// Bytes of FTL metadata: both mapping directions, the block table, the free pools and the victim
    /// policy's index (verification versions excluded).
    pub fn metadata_bytes(&self) -> u64 {
        let per_block = 4 + 4 + 4 + 1 + 1 + 8 + 8 + 1; // valid, written, erase_count, state, stream, modified_at, sealed_seq, content
        (self.map.memory_bytes()
            + per_block * self.blocks.len() as usize
            + 4 * self.free.iter().map(|q| q.capacity()).sum::<usize>()
            + 4 * self.active.len()
            + self.victim.memory_bytes()) as u64
    }

    /// Distribution of erases per block since the last counter reset.
    pub fn erase_summary(&self) -> Summary {
        Summary::of(
            self.blocks
                .erase_count
                .iter()
                .zip(&self.erase_baseline)
                .map(|(&e, &b)| (e - b) as f64),
        )
    }
    /// Distribution of lifetime erase counts per block.
    pub fn lifetime_erase_summary(&self) -> Summary {
        Summary::of(self.blocks.erase_count.iter().map(|&e| e as f64))
    }
    /// Blocks whose lifetime erase count reached the cell mode's rated endurance.
    pub fn blocks_past_endurance(&self) -> u32 {
        let limit = self.geo.cell_mode.endurance_pe_cycles();
        self.blocks
            .erase_count
            .iter()
            .filter(|&&e| e >= limit)
            .count() as u32
    }

    /// Effective over-provisioning seen by GC: blocks that can hold data (all blocks minus the free blocks
    /// GC keeps on average in its scope — see [`Ftl::mean_held_free_blocks`] — minus half of each open
    /// block) relative to the logical capacity. This is the α − 1 of the analytic models.
    pub fn effective_over_provisioning(&self) -> f64 {
        let reserve_blocks = match self.cfg.gc.scope {
            GcScope::Plane => self.mean_held_free_blocks() * self.planes as f64,
            GcScope::Device => self.mean_held_free_blocks(),
        };
        let open = self.active.len() as f64 * 0.5;
        let usable = (self.blocks.len() as f64 - reserve_blocks - open) * self.upb as f64;
        usable / self.logical_units as f64 - 1.0
    }

    /// Free blocks the GC schedule holds on average in one scope, in steady state. With
    /// `trigger = every_write`, free blocks sit at the burst target after GC and fall by one per block
    /// the host opens until they drop below `start`: the mean is (start + target) / 2. With
    /// `trigger = block_open` the test runs before the block is taken, so every level is one lower.
    pub fn mean_held_free_blocks(&self) -> f64 {
        let gc = &self.cfg.gc;
        let target = match gc.burst {
            config::GcBurst::ToStart | config::GcBurst::OneVictim => gc.start_free_blocks,
            config::GcBurst::ToStop => gc.stop_free_blocks,
        } as f64;
        let mean = (gc.start_free_blocks as f64 + target) / 2.0;
        match gc.trigger {
            config::GcTrigger::EveryWrite => mean,
            config::GcTrigger::BlockOpen => mean - 1.0,
        }
    }

    /// Unit of a byte offset, checking the request lies inside the logical space.
    fn unit_range(&self, what: &str, offset: u64, len: u64) -> Result<(u32, u32)> {
        let cap = self.logical_bytes();
        if len == 0 || offset.checked_add(len).is_none_or(|end| end > cap) {
            return Err(Error::OutOfRange(format!(
                "{what} of {len} bytes at offset {offset} does not fit the logical capacity of {cap} bytes"
            )));
        }
        let first = (offset / MAPPING_UNIT_BYTES) as u32;
        let last = ((offset + len - 1) / MAPPING_UNIT_BYTES) as u32;
        Ok((first, last))
    }

    /// Host read of `len` bytes at byte `offset`.
    pub fn read(&mut self, offset: u64, len: u64) -> Result<()> {
        let (first, last) = self.unit_range("read", offset, len)?;
        self.counters.host_read_requests += 1;
        self.counters.host_read_bytes += len;
        let mut last_page = u64::MAX;
        let invalidate = match self.swap_range {
            Some(r) if self.cfg.swap.invalidate_on_read => Some(r),
            _ => None,
        };
        for lpn in first..=last {
            self.counters.host_read_units += 1;
            // CL-SDI: a swap read updates the entry in the same mapping-table access (no extra load).
            let swap = invalidate.is_some_and(|(a, b)| (a..b).contains(&lpn));
            self.map_access(lpn, swap);
            let pua = self.map.get(lpn);
            self.check_version(lpn, pua)?;
            if pua == NONE {
                self.counters.unmapped_read_units += 1;
                continue;
            }
            if swap {
                self.invalidate_swapped_in(lpn);
            }
            let page = pua as u64 / self.upp as u64;
            if page != last_page {
                self.counters.host_read_pages += 1;
                last_page = page;
                self.op(ops::OpKind::Read, ops::OpCause::Host, pua);
            } else if self.record_ops {
                if let Some(last) = self.ops.last_mut() {
                    last.units += 1;
                }
            }
        }
        Ok(())
    }

    /// DISS SDR: the host's swap partition is the byte range `offset .. offset + len` (whole units
    /// inside it). The placement policy learns it (SDS); reads in it invalidate (CL-SDI) when configured.
    pub fn register_swap_range(&mut self, offset: u64, len: u64) -> Result<()> {
        self.unit_range("register_swap_range", offset, len)?;
        let first = offset.div_ceil(MAPPING_UNIT_BYTES) as u32;
        let end = ((offset + len) / MAPPING_UNIT_BYTES) as u32;
        self.swap_range = Some((first, end));
        self.placement.on_swap_range(first, end);
        Ok(())
    }

    /// Whether a read of `lpn` invalidates it (CL-SDI on and `lpn` in the registered swap range).
    #[inline]
    pub fn invalidates_on_read(&self, lpn: u32) -> bool {
        self.cfg.swap.invalidate_on_read
            && self.swap_range.is_some_and(|(a, b)| (a..b).contains(&lpn))
    }

    /// CL-SDI for a unit the controller served from its write buffer (and drops, never to be flushed):
    /// the older flash copy, if any, is invalidated with one mapping-table update.
    pub fn drop_swapped_in(&mut self, lpn: u32) {
        self.map_access(lpn, true);
        if self.map.is_mapped(lpn) {
            self.invalidate_swapped_in(lpn);
        } else if let Some(v) = self.versions.as_mut() {
            v.trim(lpn);
        }
    }

    /// The registered swap range in logical units, `[first, end)`.
    pub fn swap_range(&self) -> Option<(u32, u32)> {
        self.swap_range
    }

    /// Host write of `len` bytes at byte `offset`. Partial units are read-modify-written.
    pub fn write(&mut self, offset: u64, len: u64) -> Result<()> {
        let (first, last) = self.unit_range("write", offset, len)?;
        self.counters.host_write_requests += 1;
        self.counters.host_write_bytes += len;
        let end = offset + len;
        let req = len.min(u32::MAX as u64) as u32;
        for lpn in first..=last {
            let unit_start = lpn as u64 * MAPPING_UNIT_BYTES;
            let partial = offset > unit_start || end < unit_start + MAPPING_UNIT_BYTES;
            if partial {
                self.counters.partial_unit_writes += 1;
                let pua = self.map.get(lpn);
                if pua != NONE {
                    self.check_version(lpn, pua)?;
                    self.counters.rmw_read_pages += 1;
                    self.op(ops::OpKind::Read, ops::OpCause::ReadModifyWrite, pua);
                }
            }
            self.write_unit(lpn, req)?;
        }
        Ok(())
    }

    /// Read the old data of a unit about to be partially overwritten in the write buffer (the buffer then
    /// holds the merged unit). No-op for an unmapped unit.
    pub fn read_for_merge(&mut self, lpn: u32) -> Result<()> {
        self.map_access(lpn, false);
        let pua = self.map.get(lpn);
        if pua != NONE {
            self.check_version(lpn, pua)?;
            self.counters.rmw_read_pages += 1;
            self.op(ops::OpKind::Read, ops::OpCause::ReadModifyWrite, pua);
        }
        Ok(())
    }

    /// TRIM/discard of a byte range: every whole 4 KiB unit inside it is unmapped; partial units at the
    /// edges keep their data (as real drives do for unaligned discards).
    pub fn trim(&mut self, offset: u64, len: u64) -> Result<()> {
        self.unit_range("trim", offset, len)?;
        self.counters.host_trim_requests += 1;
        self.counters.host_trim_bytes += len;
        let first = offset.div_ceil(MAPPING_UNIT_BYTES);
        let end = (offset + len) / MAPPING_UNIT_BYTES;
        for lpn in first..end {
            self.trim_unit(lpn as u32);
        }
        Ok(())
    }

    /// Program every partially filled open page (padding the rest), as a drive does on FLUSH or shutdown.
    pub fn flush(&mut self) {
        for slot in 0..self.active.len() {
            let b = self.active[slot];
            if b == NONE {
                continue;
            }
            let w = self.blocks.written[b as usize];
            let rem = w % self.upp;
            if rem != 0 {
                let pad = self.upp - rem;
                self.blocks.written[b as usize] += pad;
                self.counters.padding_units += pad as u64;
                self.counters.flash_program_pages += 1;
                // The padded page: the one holding unit `w` of the block.
                self.op(
                    ops::OpKind::Program,
                    ops::OpCause::Padding,
                    b * self.upb + w,
                );
                if self.blocks.written[b as usize] == self.upb {
                    self.seal(b, slot);
                }
            }
        }
    }
}

/// Stripe position → plane index: the first unit in `order` varies fastest (also the zoned device's
/// layout, `zoned/layout.rs`).
pub(crate) fn stripe_table(geo: &Geometry, order: &[ParallelUnit]) -> Vec<u32> {
    (0..geo.planes())
        .map(|k| {
            let mut rem = k;
            let mut a = PlaneAddr {
                channel: 0,
                chip: 0,
                die: 0,
                plane: 0,
            };
            for unit in order {
                let (n, slot) = match unit {
                    ParallelUnit::Channel => (geo.channels, &mut a.channel),
                    ParallelUnit::Chip => (geo.chips_per_channel, &mut a.chip),
                    ParallelUnit::Die => (geo.dies_per_chip, &mut a.die),
                    ParallelUnit::Plane => (geo.planes_per_die, &mut a.plane),
                };
                *slot = rem % n;
                rem /= n;
            }
            geo.plane_index(a)
        })
        .collect()
}

impl Ftl {
    #[inline]
    fn state(&self, b: u32) -> BlockState {
        self.blocks.state[b as usize]
    }
}

#[cfg(test)]
mod run_tests;
#[cfg(test)]
mod tests;

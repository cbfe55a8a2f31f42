//! Garbage collection and static wear levelling: victim selection (through the policy), migration of valid
//! units (through the placement policy), erase.

use nandstack_core::{Error, Result};

use super::bigvec;
use super::blocks::{self, BlockState, NONE};
use super::gc::{Scope, VictimPolicy};
use super::ops::{OpCause, OpKind};
use super::placement::{WriteCause, WriteCtx};
use super::{Ftl, GcBurst, GcEvent, GcScope, GcTrigger, MappingTable, Migration};

/// How many units ahead of the one it checks GC brings a forward entry (and, when the map is cached,
/// its mapping-cache lines) into cache.
const GC_LEAD: u32 = 12;

impl Ftl {
    /// The GC schedule's threshold test (see `GcTrigger`): if free blocks in the scope of a host write to
    /// `plane` are below `start_free_blocks`, collect victims until the burst target is reached.
    #[inline(always)]
    pub(super) fn gc_if_below_start(&mut self, plane: u32) -> Result<()> {
        let free = match self.cfg.gc.scope {
            GcScope::Plane => self.free[plane as usize].len() as u32,
            GcScope::Device => self.free_total,
        };
        if free >= self.cfg.gc.start_free_blocks {
            return Ok(());
        }
        self.collect_below_start(plane)
    }

    /// [`Ftl::gc_if_below_start`] below the threshold (out of line: most writes do not collect).
    #[inline(never)]
    fn collect_below_start(&mut self, plane: u32) -> Result<()> {
        let gc = &self.cfg.gc;
        let (free, scope) = match gc.scope {
            GcScope::Plane => (self.free[plane as usize].len() as u32, Scope::Plane(plane)),
            GcScope::Device => (self.free_total, Scope::Device),
        };
        if free >= gc.start_free_blocks {
            return Ok(());
        }
        let target = match gc.burst {
            GcBurst::ToStart => gc.start_free_blocks,
            GcBurst::ToStop => gc.stop_free_blocks,
            GcBurst::OneVictim => {
                self.counters.gc_invocations += 1;
                return self.collect_one(scope);
            }
        };
        self.counters.gc_invocations += 1;
        self.gc_until(scope, |f| f.free_in_scope(scope) >= target)
    }

    /// Called before a host write opens a new block for open-block `slot` in `plane`: with
    /// `trigger = block_open`, the threshold test; then (unless `burst = one_victim` and that GC opened a
    /// block for `slot`, which the write takes instead of a free block) keep more than one free block per
    /// stream in the plane so that migrations find room.
    pub(super) fn maybe_gc(&mut self, plane: u32, slot: usize) -> Result<()> {
        if self.cfg.gc.trigger == GcTrigger::BlockOpen {
            self.gc_if_below_start(plane)?;
            if self.cfg.gc.burst == GcBurst::OneVictim && self.active[slot] != NONE {
                return Ok(());
            }
        }
        let floor = self.streams;
        if self.free[plane as usize].len() as u32 <= floor {
            self.counters.gc_invocations += 1;
            self.gc_until(Scope::Plane(plane), |f| {
                f.free[plane as usize].len() as u32 > floor
            })?;
        }
        Ok(())
    }

    /// Free blocks in a GC scope.
    fn free_in_scope(&self, scope: Scope) -> u32 {
        match scope {
            Scope::Plane(p) => self.free[p as usize].len() as u32,
            Scope::Device => self.free_total,
        }
    }

    /// Background GC step: if free blocks are below `target_free` (in the plane with the fewest free
    /// blocks for plane scope, or on the device), collect one victim there. Returns whether it did.
    pub fn background_collect(&mut self, target_free: u32) -> Result<bool> {
        let scope = match self.cfg.gc.scope {
            GcScope::Plane => {
                let (p, n) = (0..self.planes)
                    .map(|p| (p, self.free[p as usize].len() as u32))
                    .min_by_key(|&(p, n)| (n, p))
                    .expect("≥ 1 plane");
                if n >= target_free {
                    return Ok(false);
                }
                Scope::Plane(p)
            }
            GcScope::Device => {
                if self.free_total >= target_free {
                    return Ok(false);
                }
                Scope::Device
            }
        };
        match self.collect_one(scope) {
            Ok(()) => {
                self.counters.background_gc_victims += 1;
                Ok(true)
            }
            // Nothing to collect in the idle window is not an error.
            Err(Error::DeviceFull(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Collect victims in `scope` until `done` holds. Fails with DeviceFull when no progress is possible:
    /// after 8 × the scope's blocks (+ 16) victims without a new high of its free blocks (a victim policy
    /// that is not greedy — FIFO, random — may move many fully valid blocks before it reaches the ones
    /// with invalid data, so a fixed number of rounds is not the test; random picks need several passes
    /// to find the one block worth collecting with high probability).
    fn gc_until(&mut self, scope: Scope, done: impl Fn(&Ftl) -> bool) -> Result<()> {
        let blocks_in_scope = match scope {
            Scope::Plane(_) => self.geo.blocks_per_plane,
            Scope::Device => self.blocks.len(),
        } as u64;
        let (mut rounds, mut since_progress) = (0u64, 0u64);
        let mut best = self.free_in_scope(scope);
        while !done(self) {
            rounds += 1;
            since_progress += 1;
            if since_progress > 8 * blocks_in_scope + 16 {
                return Err(Error::DeviceFull(format!(
                    "GC in {scope:?} collected {rounds} victims without reaching its free-block target; the \
                     logical data does not fit (raise ftl.over_provisioning)"
                )));
            }
            self.collect_one(scope)?;
            let free = self.free_in_scope(scope);
            if free > best {
                best = free;
                since_progress = 0;
            }
        }
        Ok(())
    }

    /// Select one victim, migrate its valid units and erase it.
    fn collect_one(&mut self, scope: Scope) -> Result<()> {
        let v = self
            .victim
            .select(scope, &self.blocks, self.clock, &mut self.rng)
            .ok_or_else(|| Error::DeviceFull(format!("GC found no sealed block in {scope:?}")))?;
        debug_assert_eq!(
            self.state(v),
            BlockState::Sealed,
            "policy {} returned a non-sealed block",
            self.victim.name()
        );
        self.blocks.state[v as usize] = BlockState::Victim;
        self.counters.gc_victim_blocks += 1;
        if let Some(log) = self.gc_log.as_mut() {
            log.push(GcEvent {
                victim: v,
                valid_units: self.blocks.valid[v as usize],
                sealed_seq: self.blocks.sealed_seq[v as usize],
            });
        }
        self.migrate_block(v, WriteCause::Gc)?;
        self.erase(v, WriteCause::Gc);
        Ok(())
    }

    /// Move every valid unit out of block `v` (in offset order).
    ///
    /// One pass, software-pipelined: while unit `i` is checked (its reverse entry names a logical unit
    /// whose forward entry maps back) and moved, the forward entry of unit `i +` [`GC_LEAD`] is being
    /// fetched (a pure hint), so the cache misses of the checks overlap the work of the moves instead of
    /// preceding it. Reads are counted per page of a valid unit. In the recorded operation stream every
    /// page read of the victim precedes its first program, as a controller reads before it programs:
    /// the reads are noted during the pass and placed in front of the pass's operations afterwards.
    ///
    /// When the placement sends every move of the victim to one stream (`migration_stream`), migration
    /// is same-plane and the map is not cached, every move has the same destination: the moves append
    /// to the open block in runs ([`Ftl::move_runs`]); otherwise each asks the placement and goes
    /// through `append`/`commit` ([`Ftl::move_units`]). Both make the same writes in the same order.
    pub(super) fn migrate_block(&mut self, v: u32, cause: WriteCause) -> Result<()> {
        let expected = self.blocks.valid[v as usize];
        let op_cause = if cause == WriteCause::Gc {
            OpCause::Gc
        } else {
            OpCause::WearLeveling
        };
        let ops_start = self.ops.len();
        let mut reads = std::mem::take(&mut self.gc_reads);
        reads.clear();
        let fixed = match (self.cfg.gc.migration, &self.mapcache) {
            (Migration::SamePlane, None) => self
                .placement
                .migration_stream(self.blocks.stream[v as usize], cause),
            _ => None,
        };
        let done = match fixed {
            Some(stream) => self.move_runs(v, u32::from(stream), op_cause, &mut reads),
            None => self.move_units(v, cause, op_cause, &mut reads),
        };
        let moved = done?;
        if moved.units != expected {
            return Err(Error::Invariant(format!(
                "GC of block {v}: valid count {expected} but {} units mapped back",
                moved.units
            )));
        }
        if self.record_ops {
            for &old in &reads {
                self.op(OpKind::Read, op_cause, old);
            }
            self.ops[ops_start..].rotate_right(reads.len());
        }
        self.gc_reads = reads;
        let n = u64::from(moved.units);
        self.blocks.valid[v as usize] = 0;
        match cause {
            WriteCause::Gc => {
                self.counters.gc_read_pages += moved.pages_read;
                self.counters.program_units_gc += n;
                self.counters.gc_migrated_units += n;
                self.counters.gc_migrated_swap_units += moved.swap_units;
            }
            _ => {
                self.counters.wear_leveling_read_pages += moved.pages_read;
                self.counters.program_units_wear_leveling += n;
                self.counters.wear_leveling_migrated_units += n;
            }
        }
        Ok(())
    }

    /// [`Ftl::migrate_block`]'s moves, each placed by the placement policy and written through
    /// `append`/`commit`.
    fn move_units(
        &mut self,
        v: u32,
        cause: WriteCause,
        op_cause: OpCause,
        reads: &mut Vec<u32>,
    ) -> Result<Moved> {
        let base = v * self.upb;
        let written = self.blocks.written[v as usize];
        let source_stream = Some(self.blocks.stream[v as usize]);
        let src_plane = self.blocks.plane_of(v);
        for ahead in base..base + written.min(GC_LEAD) {
            self.prefetch_move(ahead);
        }
        let mut scan = Scan::new(self.upp);
        let mut moved = Moved::default();
        for i in 0..written {
            if i + GC_LEAD < written {
                self.prefetch_move(base + i + GC_LEAD);
            }
            scan.step(i);
            let old = base + i;
            let Some(lpn) = self.map.owner(old) else {
                continue;
            };
            moved.note(&mut scan, old, lpn, self.swap_range, self.record_ops, reads);
            let ctx = WriteCtx {
                lpn,
                cause,
                source_stream,
                request_bytes: 0,
            };
            let stream = self.placement.stream_for(&ctx) as u32;
            let plane = match self.cfg.gc.migration {
                Migration::SamePlane => src_plane,
                Migration::AnyPlane => self.next_gc_plane(stream)?,
            };
            self.ensure_open(stream, plane, false)?;
            self.map_access(lpn, true);
            let new = self.append(stream, plane, op_cause);
            self.commit(new, lpn);
            if let Some(ver) = self.versions.as_mut() {
                ver.moved(old, new);
            }
        }
        Ok(moved)
    }

    /// [`Ftl::migrate_block`]'s moves when all go to the open block of (`stream`, the victim's plane) and
    /// the map is not cached: each run of moves into one open block is a loop over the two maps alone
    /// (the block's written count in a register); the block table and counters are brought up to date
    /// when the block is full or the victim done — nothing reads them in between.
    fn move_runs(
        &mut self,
        v: u32,
        stream: u32,
        op_cause: OpCause,
        reads: &mut Vec<u32>,
    ) -> Result<Moved> {
        let (upb, upp_div, record) = (self.upb, self.upp_div, self.record_ops);
        let base = v * upb;
        let written = self.blocks.written[v as usize];
        let plane = self.blocks.plane_of(v);
        let slot = (stream * self.planes + plane) as usize;
        let unit_op = self.unit_op();
        for ahead in base..base + written.min(GC_LEAD) {
            self.prefetch_move(ahead);
        }
        let mut scan = Scan::new(self.upp);
        let mut moved = Moved::default();
        let mut i = 0;
        while i < written {
            // The maps as plain slices here (pointer and length in registers: stores into the tables
            // cannot alias them). Find the next valid unit (there may be none left: then no block is
            // opened).
            let (l2p, p2l) = (&self.map.l2p[..], &self.map.p2l[..]);
            while i < written && MappingTable::owner_in(l2p, p2l, base + i).is_none() {
                if i + GC_LEAD < written {
                    bigvec::prefetch(l2p, p2l[(base + i + GC_LEAD) as usize] as usize);
                }
                scan.step(i);
                i += 1;
            }
            if i == written {
                break;
            }
            self.ensure_open(stream, plane, false)?;
            let block = self.active[slot];
            let first = self.blocks.written[block as usize];
            let mut w = first;
            let mut programs = 0u64;
            // Move from unit `i` (valid) on until the block is full or the victim done.
            let swap_range = self.swap_range;
            let (ops, versions) = (&mut self.ops, &mut self.versions);
            let (l2p, p2l) = (&mut self.map.l2p[..], &mut self.map.p2l[..]);
            while i < written && w < upb {
                if i + GC_LEAD < written {
                    bigvec::prefetch(l2p, p2l[(base + i + GC_LEAD) as usize] as usize);
                }
                scan.step(i);
                let old = base + i;
                i += 1;
                let Some(lpn) = MappingTable::owner_in(l2p, p2l, old) else {
                    continue;
                };
                moved.note(&mut scan, old, lpn, swap_range, record, reads);
                let new = block * upb + w;
                w += 1;
                // `MappingTable::bind` on the slices.
                p2l[new as usize] = lpn;
                l2p[lpn as usize] = new;
                if upp_div.remainder(w) == 0 {
                    programs += 1;
                    if record {
                        ops.push(unit_op(OpKind::Program, op_cause, new));
                    }
                }
                if let Some(ver) = versions.as_mut() {
                    ver.moved(old, new);
                }
            }
            // Close the run: what `append` + `commit` would have written per move.
            let b = block as usize;
            let n = w - first;
            self.blocks.written[b] = w;
            self.blocks.valid[b] += n;
            self.blocks.content[b] |= blocks::HOLDS_MIGRATED;
            self.counters.units_by_stream[stream as usize] += u64::from(n);
            self.counters.flash_program_pages += programs;
            if self.track_age {
                self.blocks.modified_at[b] = self.clock;
            }
            if w == upb {
                self.seal(block, slot);
            }
        }
        Ok(moved)
    }

    /// Cache hints for a move GC will check [`GC_LEAD`] units from now: the forward entry of the
    /// logical unit last written to physical unit `pua` and, when the map is cached, its lines of the
    /// mapping cache (pure hints).
    #[inline]
    fn prefetch_move(&self, pua: u32) {
        let lpn = self.map.p2l[pua as usize];
        self.map.prefetch(lpn as usize);
        if let (Some(mc), true) = (&self.mapcache, lpn != NONE) {
            mc.prefetch(lpn);
        }
    }

    /// Erase an emptied victim and return it to its plane's free pool.
    fn erase(&mut self, v: u32, cause: WriteCause) {
        let i = v as usize;
        debug_assert_eq!(self.blocks.valid[i], 0);
        self.blocks.written[i] = 0;
        self.blocks.content[i] = 0;
        self.blocks.erase_count[i] += 1;
        self.blocks.state[i] = BlockState::Free;
        let plane = self.blocks.plane_of(v);
        self.free[plane as usize].push_back(v);
        self.free_total += 1;
        let op_cause = if cause == WriteCause::Gc {
            OpCause::Gc
        } else {
            OpCause::WearLeveling
        };
        self.op(OpKind::Erase, op_cause, v * self.upb);
        match cause {
            WriteCause::Gc => self.counters.gc_erases += 1,
            _ => self.counters.wear_leveling_erases += 1,
        }
        if self.cfg.wear_leveling.enabled && !self.in_wear_leveling {
            let n = &mut self.erases_since_wl_check[plane as usize];
            *n += 1;
            if *n >= self.cfg.wear_leveling.check_every_erases {
                *n = 0;
                self.in_wear_leveling = true;
                let r = self.level_wear(plane);
                self.in_wear_leveling = false;
                // Wear levelling only runs when the plane has spare free blocks, so it cannot run out.
                debug_assert!(r.is_ok(), "{r:?}");
                let _ = r;
            }
        }
    }

    /// Static wear levelling in one plane: if the erase-count gap exceeds the threshold, recycle the
    /// least-erased sealed block (cold data sitting on a young block).
    fn level_wear(&mut self, plane: u32) -> Result<()> {
        if self.free[plane as usize].len() as u32 <= self.streams + 1 {
            return Ok(());
        }
        let mut max_erase = 0;
        let mut coldest: Option<u32> = None;
        for b in self.blocks.plane_blocks(plane) {
            let e = self.blocks.erase_count[b as usize];
            max_erase = max_erase.max(e);
            if self.blocks.state[b as usize] == BlockState::Sealed
                && coldest.is_none_or(|c| e < self.blocks.erase_count[c as usize])
            {
                coldest = Some(b);
            }
        }
        let Some(c) = coldest else { return Ok(()) };
        if max_erase - self.blocks.erase_count[c as usize] <= self.cfg.wear_leveling.threshold {
            return Ok(());
        }
        self.counters.wear_leveling_invocations += 1;
        self.victim.remove(c, &self.blocks);
        self.blocks.state[c as usize] = BlockState::Victim;
        self.migrate_block(c, WriteCause::WearLeveling)?;
        self.erase(c, WriteCause::WearLeveling);
        Ok(())
    }
}

/// What a migration moved: units, pages read, units in the swap range.
#[derive(Default)]
struct Moved {
    units: u32,
    pages_read: u64,
    swap_units: u64,
}

impl Moved {
    /// A valid unit `old` (holding `lpn`) is moved: count it, and its page's read if it is the page's
    /// first valid unit (noted in `reads` when recording).
    #[inline(always)]
    fn note(
        &mut self,
        scan: &mut Scan,
        old: u32,
        lpn: u32,
        swap_range: Option<(u32, u32)>,
        record: bool,
        reads: &mut Vec<u32>,
    ) {
        if !scan.page_read {
            scan.page_read = true;
            self.pages_read += 1;
            if record {
                reads.push(old);
            }
        }
        self.units += 1;
        if let Some((a, b)) = swap_range {
            self.swap_units += u64::from((a..b).contains(&lpn));
        }
    }
}

/// Page boundaries of a victim scanned unit by unit (no division per unit).
struct Scan {
    upp: u32,
    /// Offset of the current page's first unit.
    page_first: u32,
    /// Whether a valid unit of the current page was read already.
    page_read: bool,
}

impl Scan {
    fn new(upp: u32) -> Scan {
        Scan {
            upp,
            page_first: 0,
            page_read: false,
        }
    }
    /// The scan reached offset `i` (called for every offset, in order).
    #[inline(always)]
    fn step(&mut self, i: u32) {
        if i - self.page_first == self.upp {
            self.page_first = i;
            self.page_read = false;
        }
    }
}

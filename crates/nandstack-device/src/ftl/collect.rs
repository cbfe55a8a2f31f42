//! Garbage collection and static wear levelling: victim selection (through the policy), migration of valid
//! units (through the placement policy), erase.

use nandstack_core::{Error, Result};

use super::blocks::{self, BlockState, NONE};
use super::gc::Scope;
use super::ops::{OpCause, OpKind};
use super::placement::{WriteCause, WriteCtx};
use super::{Ftl, GcBurst, GcEvent, GcScope, GcTrigger, Migration};

/// How many units ahead of the one it checks GC brings a forward entry (and, when the map is cached,
/// its mapping-cache lines) into cache.
const GC_LEAD: u32 = 12;

impl Ftl {
    /// The GC schedule's threshold test (see `GcTrigger`): if free blocks in the scope of a host write to
    /// `plane` are below `start_free_blocks`, collect victims until the burst target is reached.
    pub(super) fn gc_if_below_start(&mut self, plane: u32) -> Result<()> {
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
    pub(super) fn migrate_block(&mut self, v: u32, cause: WriteCause) -> Result<()> {
        let base = v * self.upb;
        let written = self.blocks.written[v as usize];
        let expected = self.blocks.valid[v as usize];
        let source_stream = Some(self.blocks.stream[v as usize]);
        let src_plane = self.blocks.plane_of(v);
        let op_cause = if cause == WriteCause::Gc {
            OpCause::Gc
        } else {
            OpCause::WearLeveling
        };
        let ops_start = self.ops.len();
        let mut reads = std::mem::take(&mut self.gc_reads);
        reads.clear();
        for ahead in base..base + written.min(GC_LEAD) {
            self.prefetch_move(ahead);
        }
        // A placement that sends every move of this victim to one stream, with same-plane migration:
        // one destination, so the moves append to a run kept in registers (`Run`) instead of each
        // asking the placement and the open-block table (the same writes, in the same order).
        let fixed = match self.cfg.gc.migration {
            Migration::SamePlane => self
                .placement
                .migration_stream(self.blocks.stream[v as usize], cause)
                .map(u32::from),
            Migration::AnyPlane => None,
        };
        let mut run = Run::EMPTY;
        let (mut pages_read, mut moved, mut swap) = (0u64, 0u32, 0u64);
        // Offset of the current page's first unit, and whether a valid unit of it was read already.
        let (mut page_first, mut page_read) = (0u32, false);
        for i in 0..written {
            if i + GC_LEAD < written {
                self.prefetch_move(base + i + GC_LEAD);
            }
            if i - page_first == self.upp {
                page_first = i;
                page_read = false;
            }
            let old = base + i;
            let Some(lpn) = self.map.owner(old) else {
                continue;
            };
            if !page_read {
                page_read = true;
                pages_read += 1;
                if self.record_ops {
                    reads.push(old);
                }
            }
            moved += 1;
            if let Some((a, b)) = self.swap_range {
                swap += u64::from((a..b).contains(&lpn));
            }
            if let Some(stream) = fixed {
                // Same destination for every move: append to the run in registers.
                if run.left == 0 {
                    self.ensure_open(stream, src_plane, false)?;
                    run = Run::open(self, stream, src_plane);
                }
                let new = run.block * self.upb + run.written;
                run.written += 1;
                run.left -= 1;
                self.map_access(lpn, true);
                self.map.bind(lpn, new);
                if self.upp_div.remainder(run.written) == 0 {
                    self.counters.flash_program_pages += 1;
                    self.op(OpKind::Program, op_cause, new);
                }
                if let Some(ver) = self.versions.as_mut() {
                    ver.moved(old, new);
                }
                if run.left == 0 {
                    run.close(self);
                }
                continue;
            }
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
        if run.left > 0 {
            run.close(self);
        }
        if moved != expected {
            return Err(Error::Invariant(format!(
                "GC of block {v}: valid count {expected} but {moved} units mapped back"
            )));
        }
        if self.record_ops {
            for &old in &reads {
                self.op(OpKind::Read, op_cause, old);
            }
            self.ops[ops_start..].rotate_right(reads.len());
        }
        self.gc_reads = reads;
        let n = u64::from(moved);
        self.blocks.valid[v as usize] = 0;
        match cause {
            WriteCause::Gc => {
                self.counters.gc_read_pages += pages_read;
                self.counters.program_units_gc += n;
                self.counters.gc_migrated_units += n;
                self.counters.gc_migrated_swap_units += swap;
            }
            _ => {
                self.counters.wear_leveling_read_pages += pages_read;
                self.counters.program_units_wear_leveling += n;
                self.counters.wear_leveling_migrated_units += n;
            }
        }
        Ok(())
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

/// Moves appended to one open block without going through [`Ftl::append`] and [`Ftl::commit`] per
/// unit: the block's written count is kept here, and its counters are brought up to date when the run
/// closes (the block is full, or the victim is done) — nothing reads them in between.
#[derive(Copy, Clone)]
struct Run {
    block: u32,
    stream: u32,
    /// The block's written units, counting this run's moves.
    written: u32,
    /// Units the block can still take.
    left: u32,
}

impl Run {
    const EMPTY: Run = Run {
        block: NONE,
        stream: 0,
        written: 0,
        left: 0,
    };

    /// A run on the open block of (stream, plane), which must exist and have room.
    fn open(f: &Ftl, stream: u32, plane: u32) -> Run {
        let block = f.active[(stream * f.planes + plane) as usize];
        let written = f.blocks.written[block as usize];
        debug_assert!(block != NONE && written < f.upb);
        Run {
            block,
            stream,
            written,
            left: f.upb - written,
        }
    }

    /// Write the run's moves into the block table and counters (as `append` + `commit` per unit would
    /// have); seal the block if full.
    fn close(&mut self, f: &mut Ftl) {
        let b = self.block as usize;
        let moved = self.written - f.blocks.written[b];
        f.blocks.written[b] = self.written;
        f.blocks.valid[b] += moved;
        f.blocks.content[b] |= blocks::HOLDS_MIGRATED;
        f.counters.units_by_stream[self.stream as usize] += u64::from(moved);
        if f.track_age {
            f.blocks.modified_at[b] = f.clock;
        }
        if self.written == f.upb {
            let slot = (self.stream * f.planes + f.blocks.plane_of(self.block)) as usize;
            f.seal(self.block, slot);
        }
        *self = Run::EMPTY;
    }
}

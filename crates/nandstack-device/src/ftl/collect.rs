//! Garbage collection and static wear levelling: victim selection (through the policy), migration of valid
//! units (through the placement policy), erase.

use nandstack_core::{Error, Result};

use super::blocks::{BlockState, NONE};
use super::gc::Scope;
use super::ops::{OpCause, OpKind};
use super::placement::{WriteCause, WriteCtx};
use super::{Ftl, GcBurst, GcEvent, GcScope, GcTrigger, Migration};

/// How many moves ahead GC brings a move's mapping-cache lines into cache (when the map is cached).
const MAPCACHE_LEAD: usize = 8;

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
    /// Three passes. The first prefetches the forward entry of every unit's last writer (independent
    /// hints: their cache misses overlap). The second finds the valid units without a branch on the
    /// loaded data (a validity branch mispredicts about once in four units on a steady-state victim, and
    /// each misprediction would wait for its load before the next load could start) and checks the count
    /// against the block's valid counter; reads are counted per page of a valid unit. The third moves
    /// them, with the mapping entries in cache.
    pub(super) fn migrate_block(&mut self, v: u32, cause: WriteCause) -> Result<()> {
        let base = v * self.upb;
        let written = self.blocks.written[v as usize];
        let source_stream = Some(self.blocks.stream[v as usize]);
        let src_plane = self.blocks.plane_of(v);
        let op_cause = if cause == WriteCause::Gc {
            OpCause::Gc
        } else {
            OpCause::WearLeveling
        };
        let mut moves = std::mem::take(&mut self.scratch);
        self.map.prefetch_owners(base, base + written);
        self.map.owners_into(base, base + written, &mut moves);
        let mut pages_read = 0u64;
        let mut last_page = NONE;
        for &(old, _) in &moves {
            let page = old / self.upp;
            if page != last_page {
                last_page = page;
                pages_read += 1;
                self.op(OpKind::Read, op_cause, old);
            }
        }
        if moves.len() as u32 != self.blocks.valid[v as usize] {
            return Err(Error::Invariant(format!(
                "GC of block {v}: valid count {} but {} units map back",
                self.blocks.valid[v as usize],
                moves.len()
            )));
        }
        for (i, &(old, lpn)) in moves.iter().enumerate() {
            // The mapping cache's lines of a move some moves ahead (pure hint).
            if let (Some(mc), Some(&(_, ahead))) = (&self.mapcache, moves.get(i + MAPCACHE_LEAD)) {
                mc.prefetch(ahead);
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
        let n = moves.len() as u64;
        self.blocks.valid[v as usize] = 0;
        self.scratch = moves;
        match cause {
            WriteCause::Gc => {
                self.counters.gc_read_pages += pages_read;
                self.counters.program_units_gc += n;
                self.counters.gc_migrated_units += n;
                if let Some((a, b)) = self.swap_range {
                    let swap = self
                        .scratch
                        .iter()
                        .filter(|m| (a..b).contains(&m.1))
                        .count();
                    self.counters.gc_migrated_swap_units += swap as u64;
                }
            }
            _ => {
                self.counters.wear_leveling_read_pages += pages_read;
                self.counters.program_units_wear_leveling += n;
                self.counters.wear_leveling_migrated_units += n;
            }
        }
        Ok(())
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

//! The write path: unit writes, invalidation, allocation of open blocks, sealing.

use nandstack_core::{Error, Result};

use super::blocks::{self, BlockState, NONE};
use super::gc::VictimPolicy;
use super::ops::{OpCause, OpKind};
use super::placement::{WriteCause, WriteCtx};
use super::{Allocation, Ftl, GcScope, GcTrigger};

impl Ftl {
    /// Write one 4 KiB logical unit on behalf of the host.
    pub(super) fn write_unit(&mut self, lpn: u32, request_bytes: u32) -> Result<()> {
        let ctx = WriteCtx {
            lpn,
            cause: WriteCause::Host,
            source_stream: None,
            request_bytes,
        };
        let stream = self.placement.stream_for(&ctx) as u32;
        let mut plane = self.host_plane(lpn);
        if self.cfg.allocation == Allocation::Dynamic {
            plane = self.dynamic_plane_with_room(stream, plane);
        }
        // Make room first: GC may move this unit's old copy, which is still valid until we invalidate it.
        if self.cfg.gc.trigger == GcTrigger::EveryWrite {
            self.gc_if_below_start(plane)?;
        }
        self.ensure_open(stream, plane, true)?;
        self.clock += 1;
        self.map_access(lpn, true);
        self.invalidate(lpn);
        let pua = self.append(stream, plane, OpCause::Host);
        self.commit(pua, lpn);
        self.counters.host_write_units += 1;
        self.counters.program_units_host += 1;
        if let Some(v) = self.versions.as_mut() {
            let version = v.write(lpn);
            v.store(pua, version);
        }
        Ok(())
    }

    pub(super) fn trim_unit(&mut self, lpn: u32) {
        self.map_access(lpn, true);
        if self.map.is_mapped(lpn) {
            self.invalidate(lpn);
            self.counters.trimmed_units += 1;
            self.placement.on_trim(lpn);
        }
        if let Some(v) = self.versions.as_mut() {
            v.trim(lpn);
        }
    }

    /// CL-SDI: the unit a swap read just returned is dead on the device (the host holds the page).
    pub(super) fn invalidate_swapped_in(&mut self, lpn: u32) {
        self.invalidate(lpn);
        self.counters.swap_invalidated_units += 1;
        self.placement.on_trim(lpn);
        if let Some(v) = self.versions.as_mut() {
            v.trim(lpn);
        }
    }

    /// Plane of a host write.
    #[inline]
    fn host_plane(&mut self, lpn: u32) -> u32 {
        match self.cfg.allocation {
            Allocation::Static => self.striped_plane(lpn),
            Allocation::Dynamic => {
                // Page-granular round robin: fill one page of a plane, then move on.
                let k = (self.dyn_units / self.upp as u64) % self.planes as u64;
                self.dyn_units += 1;
                self.stripe[k as usize]
            }
        }
    }

    /// Dynamic allocation: `plane` (the round-robin choice) unless it cannot take a unit of `stream`
    /// without plane GC that cannot succeed — no open block for the stream, below a free-block target
    /// (the per-stream floor, or plane-scope GC's start threshold, then its stop target), and too little
    /// invalid data to reach it (its blocks hold valid data that same-plane migration cannot move out) —
    /// then the next plane in striping order that can. Round robin does not bound the valid data per
    /// plane, so a plane can fill up with valid data; a real controller writes elsewhere. If no plane
    /// qualifies, `plane` (its GC then reports the device full).
    fn dynamic_plane_with_room(&self, stream: u32, plane: u32) -> u32 {
        let gc = &self.cfg.gc;
        let can_take = |p: u32| {
            if self.active[(stream * self.planes + p) as usize] != NONE {
                return true;
            }
            let free = self.free[p as usize].len() as u32;
            let mut target = if free <= self.streams {
                self.streams + 1
            } else {
                0
            };
            if gc.scope == GcScope::Plane && free < gc.start_free_blocks {
                target = target.max(gc.stop_free_blocks);
            }
            target <= free || self.reclaimable_units(p) >= (target - free) as u64 * self.upb as u64
        };
        if can_take(plane) {
            return plane;
        }
        let start = self.stripe.iter().position(|&p| p == plane).unwrap_or(0);
        (1..self.planes as usize)
            .map(|k| self.stripe[(start + k) % self.planes as usize])
            .find(|&p| can_take(p))
            .unwrap_or(plane)
    }

    /// Room GC in `plane` could win: invalid units in its sealed blocks plus the unwritten units of its
    /// open blocks (where migrated data can go without a new block). O(blocks per plane): called only for
    /// a plane below its free-block target.
    fn reclaimable_units(&self, plane: u32) -> u64 {
        self.blocks
            .plane_blocks(plane)
            .map(|b| match self.state(b) {
                BlockState::Sealed => (self.upb - self.blocks.valid[b as usize]) as u64,
                BlockState::Open => (self.upb - self.blocks.written[b as usize]) as u64,
                _ => 0,
            })
            .sum()
    }

    /// Next plane for `any_plane` migration of a `stream` write: round robin over the striping order,
    /// skipping planes that could not take it (no open block for the stream and no free block).
    pub(super) fn next_gc_plane(&mut self, stream: u32) -> Result<u32> {
        for _ in 0..self.planes {
            let p = self.stripe[self.gc_rr as usize];
            self.gc_rr = (self.gc_rr + 1) % self.planes;
            let open = self.active[(stream * self.planes + p) as usize] != NONE;
            if open || !self.free[p as usize].is_empty() {
                return Ok(p);
            }
        }
        Err(Error::DeviceFull(format!(
            "no plane has room for a migrated page of stream {stream}"
        )))
    }

    /// Make sure (stream, plane) has an open block with room. Host allocations may trigger GC first;
    /// GC allocations never do (they draw on the reserve GC keeps).
    #[inline(always)]
    pub(super) fn ensure_open(&mut self, stream: u32, plane: u32, host: bool) -> Result<()> {
        if self.active[(stream * self.planes + plane) as usize] != NONE {
            return Ok(());
        }
        self.open_block(stream, plane, host)
    }

    /// [`Ftl::ensure_open`] when (stream, plane) has no open block (out of line: once per block).
    #[inline(never)]
    fn open_block(&mut self, stream: u32, plane: u32, host: bool) -> Result<()> {
        let slot = (stream * self.planes + plane) as usize;
        if host {
            self.maybe_gc(plane, slot)?;
            if self.active[slot] != NONE {
                return Ok(()); // GC opened a block for this very slot (shared host/GC stream).
            }
        }
        let b = self.free[plane as usize].pop_front().ok_or_else(|| {
            Error::DeviceFull(format!(
                "plane {plane} has no free block for stream {stream} ({}); over-provisioning {} leaves GC no room",
                if host { "host write" } else { "migration" },
                self.cfg.over_provisioning
            ))
        })?;
        self.free_total -= 1;
        debug_assert_eq!(self.state(b), BlockState::Free);
        debug_assert_eq!(self.blocks.written[b as usize], 0);
        self.blocks.state[b as usize] = BlockState::Open;
        self.blocks.stream[b as usize] = stream as u8;
        self.active[slot] = b;
        Ok(())
    }

    /// Take the next unit of the open block of (stream, plane); the caller commits it. Host units are
    /// transferred to the die as they arrive; the page is programmed when its last unit is filled.
    #[inline(always)]
    pub(super) fn append(&mut self, stream: u32, plane: u32, cause: OpCause) -> u32 {
        let b = self.active[(stream * self.planes + plane) as usize];
        debug_assert!(b != NONE);
        let w = &mut self.blocks.written[b as usize];
        let pua = b * self.upb + *w;
        *w += 1;
        let full = self.upp_div.remainder(*w) == 0;
        self.counters.units_by_stream[stream as usize] += 1;
        self.blocks.content[b as usize] |= if cause == OpCause::Host {
            blocks::HOLDS_HOST
        } else {
            blocks::HOLDS_MIGRATED
        };
        if cause == OpCause::Host {
            self.op(OpKind::Transfer, cause, pua);
        }
        if full {
            self.counters.flash_program_pages += 1;
            self.op(OpKind::Program, cause, pua);
        }
        pua
    }

    /// Map `lpn` to the freshly appended `pua`; seal the block if it is full.
    #[inline(always)]
    pub(super) fn commit(&mut self, pua: u32, lpn: u32) {
        self.map.bind(lpn, pua);
        let b = self.upb_div.quotient(pua);
        self.blocks.valid[b as usize] += 1;
        if self.track_age {
            self.blocks.modified_at[b as usize] = self.clock;
        }
        if self.blocks.written[b as usize] == self.upb {
            let slot = (self.blocks.stream[b as usize] as u32 * self.planes
                + self.blocks.plane_of(b)) as usize;
            self.seal(b, slot);
        }
    }

    #[inline(never)]
    pub(super) fn seal(&mut self, b: u32, slot: usize) {
        debug_assert_eq!(self.active[slot], b);
        self.active[slot] = NONE;
        self.blocks.state[b as usize] = BlockState::Sealed;
        match self.blocks.content[b as usize] {
            blocks::HOLDS_HOST => self.counters.sealed_blocks_host_only += 1,
            blocks::HOLDS_MIGRATED => self.counters.sealed_blocks_migrated_only += 1,
            0 => {}
            _ => self.counters.sealed_blocks_mixed += 1,
        }
        self.seal_seq += 1;
        self.blocks.sealed_seq[b as usize] = self.seal_seq;
        self.victim.on_sealed(b, &self.blocks);
    }

    /// Drop the current physical copy of `lpn`, if any.
    #[inline(always)]
    pub(super) fn invalidate(&mut self, lpn: u32) {
        let old = self.map.unbind(lpn);
        if old == NONE {
            return;
        }
        let b = self.upb_div.quotient(old);
        self.blocks.valid[b as usize] -= 1;
        if self.track_age {
            self.blocks.modified_at[b as usize] = self.clock;
        }
        if self.blocks.state[b as usize] == BlockState::Sealed {
            self.victim.on_invalidated(b, &self.blocks);
        }
    }

    /// Verification mode: the copy at `pua` must carry the version the host last wrote to `lpn`.
    #[inline]
    pub(super) fn check_version(&mut self, lpn: u32, pua: u32) -> Result<()> {
        let Some(v) = self.versions.as_mut() else {
            return Ok(());
        };
        let got = if pua == NONE { 0 } else { v.held(pua) };
        v.check(lpn, got, || {
            if pua == NONE {
                "the unmapped unit".to_string()
            } else {
                format!("the mapped copy (physical unit {pua})")
            }
        })
    }
}

//! Reclaim and resizing: SLC→QLC migration, QLC GC, UST's per-logical-block SLC GC, and changes of the
//! SLC region's size.
//!
//! * **Migration** (shared layout) runs when a host write needs an SLC block and the SLC region has fewer
//!   than `slc_free_threshold` free blocks: victims of the SLC region's policy (`slc_victim`, greedy by
//!   default) move every valid unit to QLC.
//! * **QLC GC** runs when a QLC allocation finds fewer than `qlc_free_threshold` free QLC blocks: greedy
//!   victims (fewest valid; ties: the block that reached its count first) move to the GC stream, whose
//!   allocations never trigger GC.
//! * Victims come from the block FTL's victim policies (`crate::ftl::gc`), one instance per region,
//!   each told only about its region's sealed blocks.
//! * **Grow** raises the budget and runs QLC GC until the QLC region again has its threshold of free
//!   blocks (the blocks an SLC region takes are the QLC region's free blocks); growth that GC cannot pay
//!   for is not granted. **Shrink** lowers the budget and migrates SLC data until the SLC region has its
//!   threshold of free blocks again (shrinking to zero closes and empties every SLC block).
//! * Every loop is bounded; failing to make progress is `Error::DeviceFull`, never a hang.

use nandstack_core::{Error, Result};

use super::blocks::{BlockMode, NONE};
use super::cost::CostKind;
use super::ftl::{FlashOp, HybridFtl, SlcLayout, Stream};
use super::Region;

impl HybridFtl {
    /// Set the SLC region's size (blocks). The request is clamped to `[0, max_slc_blocks]` (a non-zero
    /// request below `min_slc_blocks` becomes that minimum, or 0 when even that does not fit); growth the
    /// QLC region cannot free blocks for is reduced. Returns the size now in effect.
    pub fn set_slc_target(&mut self, want: u32) -> Result<u32> {
        let max = self.max_slc_blocks();
        let min = self.p.min_slc_blocks();
        let mut want = want.min(max);
        if want > 0 && want < min {
            want = if min <= max { min } else { 0 };
        }
        let old = self.slc_target;
        if want > old {
            self.slc_target = want;
            self.qlc_gc_best_effort()?;
            let short = self.p.qlc_free_threshold as i64 - self.qlc_free();
            if short > 0 {
                let granted = (want as i64 - short).max(old as i64) as u32;
                self.slc_target = if granted > 0 && granted < min {
                    old
                } else {
                    granted
                };
            }
        } else if want < old {
            self.slc_target = want;
            self.shrink_slc()?;
        }
        Ok(self.slc_target)
    }

    fn shrink_slc(&mut self) -> Result<()> {
        if self.slc_target == 0 {
            // Close every open SLC block, then empty them all.
            for kind in 0..self.kinds as usize {
                let si = Stream::HostSlc as usize * self.kinds as usize + kind;
                let b = self.open[si];
                if b != NONE {
                    self.pad_page(b, CostKind::HostToSlc);
                    self.seal(b);
                    self.open[si] = NONE;
                }
            }
            let ust = matches!(self.layout, SlcLayout::PerLogicalBlock { .. });
            for key in 0..self.lb_blocks.len() as u32 {
                if !self.lb_blocks[key as usize].is_empty() {
                    self.ust_gc(key, true)?;
                }
            }
            if !ust {
                while let Some(v) = self.select_victim(Region::Slc) {
                    self.migrate_block(v)?;
                }
            }
            debug_assert_eq!(self.slc_used, 0);
            return Ok(());
        }
        self.ensure_slc_free()
    }

    /// Reclaim SLC blocks until the SLC region has its threshold of free blocks (or nothing is left to
    /// reclaim: only open blocks).
    pub(crate) fn ensure_slc_free(&mut self) -> Result<()> {
        let thr = self.p.slc_free_threshold as i64;
        let mut guard = 0u64;
        while self.slc_free() < thr {
            guard += 1;
            if guard > 4 * self.p.total_blocks as u64 + 16 {
                return Err(Error::DeviceFull(format!(
                    "hybrid: SLC reclaim made no progress (region {} blocks, {} in use)",
                    self.slc_target, self.slc_used
                )));
            }
            match self.layout {
                SlcLayout::Shared => match self.select_victim(Region::Slc) {
                    Some(v) => self.migrate_block(v)?,
                    None => break,
                },
                SlcLayout::PerLogicalBlock { .. } => match self.lru_logical_block() {
                    Some(lb) => self.ust_gc(lb, false)?,
                    None => break,
                },
            }
        }
        Ok(())
    }

    /// QLC GC until the QLC region has its threshold of free blocks; failing is `DeviceFull`.
    pub(crate) fn ensure_qlc_free(&mut self) -> Result<()> {
        if !self.qlc_gc_best_effort()? {
            return Err(Error::DeviceFull(format!(
                "hybrid: QLC GC cannot free {} blocks (QLC region {} blocks, {} in use, {} valid units)",
                self.p.qlc_free_threshold,
                self.p.total_blocks - self.slc_target,
                self.qlc_used,
                self.valid_units
            )));
        }
        Ok(())
    }

    /// QLC GC towards the threshold; stops (returning false) when no victim can free space.
    fn qlc_gc_best_effort(&mut self) -> Result<bool> {
        let thr = self.p.qlc_free_threshold as i64;
        let mut guard = 0u64;
        while self.qlc_free() < thr {
            guard += 1;
            let Some(v) = self.select_victim(Region::Qlc) else {
                return Ok(false);
            };
            if guard > 4 * self.p.total_blocks as u64 + 16
                || self.blocks.t.valid[v as usize] >= self.p.qlc_units_per_block
            {
                // Greedy found no block with invalid data: nothing to gain. Put the block back.
                self.blocks.t.state[v as usize] = crate::ftl::blocks::BlockState::Sealed;
                self.notify_sealed(v);
                return Ok(false);
            }
            self.collect_qlc(v)?;
        }
        Ok(true)
    }

    /// UST: the least recently written logical block that owns SLC blocks.
    fn lru_logical_block(&self) -> Option<u32> {
        let mut best: Option<(u64, u32)> = None;
        for (l, blocks) in self.lb_blocks.iter().enumerate() {
            if !blocks.is_empty() {
                let t = self.lb_last_write[l];
                if best.is_none_or(|(t0, _)| t < t0) {
                    best = Some((t, l as u32));
                }
            }
        }
        best.map(|x| x.1)
    }

    /// Move every valid unit of `v` (a selected victim) to `dest` (each to the block of its data kind),
    /// then erase `v`. One read per page holding valid data.
    fn move_all(&mut self, v: u32, dest: Stream, kind: CostKind) -> Result<u64> {
        let mut units = std::mem::take(&mut self.scratch);
        self.valid_units_into(v, &mut units)?;
        let upp = self.upp;
        let pages = units
            .chunk_by(|a, b| upp.quotient(a.0) == upp.quotient(b.0))
            .count() as u64;
        self.charge(kind, self.blocks.mode(v), FlashOp::Read, pages);
        for &(addr, lpn) in &units {
            let version = self.phys_version(addr);
            self.detach(addr);
            let to = self.append_stream(dest, self.kind_of(lpn))?;
            self.attach(lpn, to, version);
        }
        self.erase(v, kind)?;
        let moved = units.len() as u64;
        self.scratch = units;
        Ok(moved)
    }

    /// SLC→QLC migration of one SLC block.
    pub(crate) fn migrate_block(&mut self, v: u32) -> Result<()> {
        if self.blocks.owner[v as usize] != NONE {
            return Err(Error::Invariant(format!(
                "hybrid: shared migration of UST-owned block {v}"
            )));
        }
        let moved = self.move_all(v, Stream::Migrate, CostKind::SlcToQlc)?;
        self.counters.migrated_units += moved;
        self.counters.slc_migration_victims += 1;
        Ok(())
    }

    /// QLC GC of one block.
    fn collect_qlc(&mut self, v: u32) -> Result<()> {
        let moved = self.move_all(v, Stream::QlcGc, CostKind::QlcToQlc)?;
        self.counters.qlc_gc_units += moved;
        self.counters.qlc_gc_victims += 1;
        Ok(())
    }

    /// UST SLC GC of logical block `lb`: hot units (updated while in SLC since they last moved) are
    /// compacted into fresh SLC blocks of `lb` — at most one block fewer than it had, so every run frees at
    /// least one block — and the rest migrate to QLC; then every old block is erased. `all_cold` sends
    /// everything to QLC (shrink to zero).
    ///
    /// `key` is a logical block (with its data kind under SDS: a unit of the other kind, written before
    /// the swap range was registered, is moved to QLC, never kept beside this key's data).
    pub(crate) fn ust_gc(&mut self, key: u32, all_cold: bool) -> Result<()> {
        let lb = key;
        let l = lb as usize;
        let old = std::mem::take(&mut self.lb_blocks[l]);
        let open = self.lb_open[l];
        if open != NONE {
            // Program the open page first: every unit written is programmed once before it moves.
            self.pad_page(open, CostKind::HostToSlc);
            self.seal(open);
            self.lb_open[l] = NONE;
        }
        self.counters.ust_gc_runs += 1;
        let upb = self.p.slc_units_per_block as u64;
        let mut hot_budget = if all_cold {
            0
        } else {
            (old.len() as u64).saturating_sub(1) * upb
        };
        let upp = self.upp;
        let mut new_blocks: Vec<u32> = Vec::new();
        let mut dest = NONE;
        let mut units: Vec<(u32, u32, bool)> = Vec::with_capacity(self.p.units_per_page as usize);
        // A block's valid units, found before any moves: moving one unit never changes whether another
        // unit of the block is valid.
        let mut valid_units = Vec::new();
        for &v in &old {
            self.valid_units_into(v, &mut valid_units)?;
            let mut any_hot = false;
            for page in valid_units.chunk_by(|a, b| upp.quotient(a.0) == upp.quotient(b.0)) {
                units.clear();
                for &(addr, lpn) in page {
                    let hot = self.hot[lpn as usize]
                        && hot_budget > 0
                        && self.kind_of(lpn) == key % self.kinds;
                    hot_budget -= hot as u64;
                    units.push((addr, lpn, hot));
                }
                let page_hot = units.iter().any(|u| u.2);
                any_hot |= page_hot;
                let kind = if page_hot {
                    CostKind::SlcToSlc
                } else {
                    CostKind::SlcToQlc
                };
                self.charge(kind, BlockMode::Slc, FlashOp::Read, 1);
                for &(addr, lpn, hot) in &units {
                    let version = self.phys_version(addr);
                    self.detach(addr);
                    self.hot[lpn as usize] = false;
                    let to = if hot {
                        if dest == NONE || self.blocks.t.written[dest as usize] == self.cap_of(dest)
                        {
                            if dest != NONE {
                                self.seal(dest);
                            }
                            dest = self.take_free(BlockMode::Slc, key % self.kinds)?;
                            self.blocks.owner[dest as usize] = lb;
                            new_blocks.push(dest);
                        }
                        self.counters.slc_gc_units += 1;
                        self.append_to(dest, CostKind::SlcToSlc)
                    } else {
                        self.counters.migrated_units += 1;
                        self.append_stream(Stream::Migrate, self.kind_of(lpn))?
                    };
                    self.attach(lpn, to, version);
                }
            }
            let kind = if any_hot {
                CostKind::SlcToSlc
            } else {
                CostKind::SlcToQlc
            };
            self.erase(v, kind)?;
        }
        if dest != NONE {
            self.pad_page(dest, CostKind::SlcToSlc);
            if self.blocks.t.written[dest as usize] == self.cap_of(dest) {
                self.seal(dest);
            } else {
                self.lb_open[l] = dest;
            }
        }
        self.lb_blocks[l] = new_blocks;
        Ok(())
    }
}

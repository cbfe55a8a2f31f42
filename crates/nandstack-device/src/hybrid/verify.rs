//! Full invariant check and the read-after-write version sweep of the hybrid FTL.

use nandstack_core::{Error, Result};

use crate::ftl::blocks::BlockState;

use super::blocks::{BlockMode, NONE};
use super::ftl::{HybridFtl, SlcLayout};

fn bad(msg: String) -> Error {
    Error::Invariant(format!("hybrid: {msg}"))
}

impl HybridFtl {
    /// Check every structural invariant (O(physical units)):
    /// * the mapping table maps back (each mapped logical unit has exactly one valid flash copy);
    /// * each block's valid count equals the units whose reverse map points back through the forward
    ///   map; nothing valid at or past a write pointer; write pointers fit the block's program mode;
    /// * free blocks are erased and pooled; no block is left a victim; open blocks are exactly the
    ///   streams' (and UST's per-logical-block) active blocks; mode counts equal `slc_used` / `qlc_used`;
    /// * the SLC region holds at most its budget and the QLC region at most the rest;
    /// * a buffered unit has no flash copy; mapped + buffered units = `valid_units`;
    /// * UST: every SLC block has one owner listing it, no logical block owns more than its maximum, and
    ///   the shared layout owns nothing.
    pub fn check_invariants(&self) -> Result<()> {
        self.map.check("hybrid")?;
        let t = &self.blocks.t;
        let upb = self.p.qlc_units_per_block;
        let (mut slc, mut qlc, mut free) = (0u32, 0u32, 0u32);
        let mut valid_total = 0u64;
        for blk in 0..self.blocks.len() {
            let i = blk as usize;
            let cap = self.cap_of(blk);
            let written = t.written[i];
            match self.blocks.mode(blk) {
                BlockMode::Free => {
                    free += 1;
                    if written != 0 || t.valid[i] != 0 {
                        return Err(bad(format!(
                            "free block {blk} has {written} written, {} valid",
                            t.valid[i]
                        )));
                    }
                }
                BlockMode::Slc => slc += 1,
                BlockMode::Qlc => qlc += 1,
            }
            if t.state[i] == BlockState::Victim {
                return Err(bad(format!("block {blk} left in the victim state")));
            }
            if written > cap {
                return Err(bad(format!(
                    "block {blk} written {written} > capacity {cap}"
                )));
            }
            let base = blk * upb;
            let valid = self.map.valid_in(base, base + upb);
            if self.map.valid_in(base + written, base + upb) != 0 {
                return Err(bad(format!(
                    "block {blk} holds a valid unit past its write pointer {written}"
                )));
            }
            if valid != t.valid[i] {
                return Err(bad(format!(
                    "block {blk} counts {} valid, holds {valid}",
                    t.valid[i]
                )));
            }
            valid_total += valid as u64;
            if self.blocks.mode(blk) == BlockMode::Slc
                && self.layout == SlcLayout::Shared
                && self.blocks.owner[i] != NONE
            {
                return Err(bad(format!("shared layout, but block {blk} has an owner")));
            }
        }
        if free as usize != self.blocks.free.len() || slc != self.slc_used || qlc != self.qlc_used {
            return Err(bad(format!(
                "pool {} / free {free}; SLC {slc} vs {}; QLC {qlc} vs {}",
                self.blocks.free.len(),
                self.slc_used,
                self.qlc_used
            )));
        }
        if self.slc_used > self.slc_target || self.qlc_used > self.p.total_blocks - self.slc_target
        {
            return Err(bad(format!(
                "region budgets exceeded: SLC {} of {}, QLC {} of {}",
                self.slc_used,
                self.slc_target,
                self.qlc_used,
                self.p.total_blocks - self.slc_target
            )));
        }
        self.check_open_blocks()?;
        let mut buffered = 0u64;
        for lpn in self.buf.iter().flat_map(|b| b.lru.keys_lru_first()) {
            if self.map.is_mapped(lpn) {
                return Err(bad(format!(
                    "logical unit {lpn} is buffered and still has a flash copy"
                )));
            }
            buffered += 1;
        }
        let mapped = self.map.mapped_units();
        if mapped != valid_total || mapped + buffered != self.valid_units {
            return Err(bad(format!(
                "{mapped} logical units mapped, {valid_total} valid on flash, {buffered} buffered, \
                 valid_units {}",
                self.valid_units
            )));
        }
        self.check_ust()
    }

    fn check_open_blocks(&self) -> Result<()> {
        let mut expected: Vec<u32> = self.open.iter().copied().filter(|&x| x != NONE).collect();
        expected.extend(self.lb_open.iter().copied().filter(|&x| x != NONE));
        expected.sort_unstable();
        let before = expected.len();
        expected.dedup();
        if expected.len() != before {
            return Err(bad("a block is open in two places".into()));
        }
        let open: Vec<u32> = (0..self.blocks.len())
            .filter(|&x| self.blocks.t.state[x as usize] == BlockState::Open)
            .collect();
        if open != expected {
            return Err(bad(format!(
                "open blocks {open:?}, active blocks {expected:?}"
            )));
        }
        Ok(())
    }

    fn check_ust(&self) -> Result<()> {
        let SlcLayout::PerLogicalBlock { max_blocks } = self.layout else {
            return Ok(());
        };
        let mut owned = 0u32;
        for (l, list) in self.lb_blocks.iter().enumerate() {
            if list.len() as u32 > max_blocks {
                return Err(bad(format!(
                    "logical block {l} owns {} SLC blocks > {max_blocks}",
                    list.len()
                )));
            }
            for &blk in list {
                if self.blocks.mode(blk) != BlockMode::Slc
                    || self.blocks.owner[blk as usize] != l as u32
                {
                    return Err(bad(format!(
                        "logical block {l} lists block {blk} it does not own"
                    )));
                }
            }
            owned += list.len() as u32;
            let o = self.lb_open[l];
            if o != NONE && !list.contains(&o) {
                return Err(bad(format!(
                    "logical block {l}'s open block {o} is not in its list"
                )));
            }
        }
        if owned != self.slc_used {
            return Err(bad(format!(
                "{owned} SLC blocks owned, {} in SLC mode",
                self.slc_used
            )));
        }
        Ok(())
    }

    /// Verify mode: every logical unit's copy (flash or buffer) holds the version last written; unmapped
    /// units are expected to hold none. No-op otherwise.
    pub fn verify_versions(&self) -> Result<()> {
        let Some(v) = &self.versions else {
            return Ok(());
        };
        for lpn in 0..self.p.logical_units {
            let buffered = self.buf.as_ref().and_then(|b| b.lru.get(lpn));
            let addr = self.map.get(lpn);
            let got = match (buffered, addr) {
                (Some(e), _) => e.version,
                (None, NONE) => 0,
                (None, a) => v.held(a),
            };
            v.compare(lpn, got, || match (buffered, addr) {
                (Some(_), _) => "the write buffer".into(),
                (None, NONE) => "the unmapped unit".into(),
                (None, a) => format!("physical unit {a}"),
            })?;
        }
        Ok(())
    }
}

//! Full invariant check and the read-after-write version sweep of the hybrid FTL.

use nandstack_core::{Error, Result};

use super::blocks::{BlockMode, BlockState, NONE};
use super::ftl::{HybridFtl, SlcLayout, BUF_FLAG};

fn bad(msg: String) -> Error {
    Error::Invariant(format!("hybrid: {msg}"))
}

impl HybridFtl {
    /// Check every structural invariant (O(physical units)):
    /// * each block's valid count equals the units whose reverse map points back through the forward
    ///   map; nothing is mapped at or past a write pointer; write pointers fit the block's mode;
    /// * free blocks are erased, modeless and pooled; open blocks are exactly the streams' (and UST's
    ///   per-logical-block) active blocks; mode counts equal `slc_used` / `qlc_used`;
    /// * the SLC region holds at most its budget and the QLC region at most the rest;
    /// * every mapped logical unit has exactly one valid copy (flash or buffer) that maps back, and their
    ///   number is `valid_units`; valid + invalid + unwritten units = total per block;
    /// * UST: every SLC block has one owner listing it, no logical block owns more than its maximum, and
    ///   the shared layout owns nothing.
    pub fn check_invariants(&self) -> Result<()> {
        let b = &self.blocks;
        let upb = self.p.qlc_units_per_block;
        let (mut slc, mut qlc, mut free) = (0u32, 0u32, 0u32);
        let mut valid_total = 0u64;
        for blk in 0..b.len() {
            let i = blk as usize;
            let cap = self.cap_of(blk);
            let written = b.written[i];
            match b.mode[i] {
                BlockMode::Free => {
                    free += 1;
                    if b.state[i] != BlockState::Free || written != 0 || b.valid[i] != 0 {
                        return Err(bad(format!(
                            "free block {blk} is {:?} with {written} written",
                            b.state[i]
                        )));
                    }
                }
                BlockMode::Slc => slc += 1,
                BlockMode::Qlc => qlc += 1,
            }
            if b.mode[i] != BlockMode::Free && b.state[i] == BlockState::Free {
                return Err(bad(format!(
                    "block {blk} in {:?} mode but marked free",
                    b.mode[i]
                )));
            }
            if written > cap {
                return Err(bad(format!(
                    "block {blk} written {written} > capacity {cap}"
                )));
            }
            let base = (blk * upb) as usize;
            let mut valid = 0u32;
            for off in 0..upb as usize {
                let lpn = self.p2l[base + off];
                if lpn == NONE {
                    continue;
                }
                if off as u32 >= written {
                    return Err(bad(format!(
                        "block {blk} maps unit {off} past its write pointer {written}"
                    )));
                }
                if self.l2p[lpn as usize] != (base + off) as u32 {
                    return Err(bad(format!(
                        "unit {} claims logical {lpn}, which maps elsewhere",
                        base + off
                    )));
                }
                valid += 1;
            }
            if valid != b.valid[i] {
                return Err(bad(format!(
                    "block {blk} counts {} valid, holds {valid}",
                    b.valid[i]
                )));
            }
            valid_total += valid as u64;
            if b.mode[i] == BlockMode::Slc && self.layout == SlcLayout::Shared && b.owner[i] != NONE
            {
                return Err(bad(format!("shared layout, but block {blk} has an owner")));
            }
        }
        if free as usize != b.free.len() || slc != self.slc_used || qlc != self.qlc_used {
            return Err(bad(format!(
                "pool {} / free {free}; SLC {slc} vs {}; QLC {qlc} vs {}",
                b.free.len(),
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
        // Buffer entries map back; count them.
        let mut buffered = 0u64;
        for slot in self.buf.occupied() {
            let lpn = self.buf.slots[slot as usize].lpn;
            if lpn == NONE {
                continue;
            }
            if self.l2p[lpn as usize] != BUF_FLAG | slot {
                return Err(bad(format!(
                    "buffer slot {slot} holds logical {lpn}, which maps elsewhere"
                )));
            }
            buffered += 1;
        }
        let mapped = self.l2p.iter().filter(|&&a| a != NONE).count() as u64;
        if mapped != valid_total + buffered || mapped != self.valid_units {
            return Err(bad(format!(
                "{mapped} logical units mapped, {valid_total} valid on flash + {buffered} buffered, \
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
            .filter(|&x| self.blocks.state[x as usize] == BlockState::Open)
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
                let i = blk as usize;
                if self.blocks.mode[i] != BlockMode::Slc || self.blocks.owner[i] != l as u32 {
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

    /// Verify mode: every mapped logical unit's copy holds the version last written. No-op otherwise.
    pub fn verify_versions(&self) -> Result<()> {
        let Some(v) = &self.versions else {
            return Ok(());
        };
        for (lpn, &a) in self.l2p.iter().enumerate() {
            let got = if a == NONE {
                0
            } else if a & BUF_FLAG != 0 {
                self.buf.slots[(a & !BUF_FLAG) as usize].version
            } else {
                v.held(a)
            };
            v.compare(lpn as u32, got, || format!("its copy ({a:#x})"))?;
        }
        Ok(())
    }
}

//! Full invariant checks (O(device)); run by tests, property tests and `--verify`.

use serde::Serialize;

use nandstack_core::{Error, Result};

use super::blocks::{BlockState, NONE};
use super::Ftl;

/// Where every physical 4 KiB unit is: valid + invalid + free = total.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UnitCensus {
    pub valid: u64,
    pub invalid: u64,
    pub free: u64,
    pub total: u64,
}

macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(Error::Invariant(format!($($fmt)+)));
        }
    };
}

impl Ftl {
    /// Count valid, invalid (written but stale or padding) and free (erased, unwritten) units.
    pub fn census(&self) -> UnitCensus {
        let mut c = UnitCensus {
            total: self.geo.total_units(),
            ..UnitCensus::default()
        };
        for b in 0..self.blocks.len() as usize {
            c.valid += self.blocks.valid[b] as u64;
            c.invalid += (self.blocks.written[b] - self.blocks.valid[b]) as u64;
            c.free += (self.upb - self.blocks.written[b]) as u64;
        }
        c
    }

    /// Check every structural invariant of the FTL; the error names the first violation.
    ///
    /// * each block's valid count equals the units whose reverse map points back through `l2p`;
    /// * units past a block's write pointer are unmapped; free blocks are empty and in their plane's pool;
    ///   every open block is the active block of exactly the (stream, plane) slot it is filed under;
    ///   sealed blocks are full; no block is left in the Victim state between operations;
    /// * every mapped logical unit's physical copy maps back to it (so each logical unit has exactly one
    ///   valid physical copy);
    /// * valid + invalid + free units = total units; the free-block total matches the pools.
    pub fn check_invariants(&self) -> Result<()> {
        let upb = self.upb as usize;
        let mut free_seen = 0u32;
        for b in 0..self.blocks.len() {
            let i = b as usize;
            let w = self.blocks.written[i] as usize;
            check!(w <= upb, "block {b}: write pointer {w} beyond {upb} units");
            let mut valid = 0u32;
            for off in 0..upb {
                let pua = b as usize * upb + off;
                if let Some(lpn) = self.map.owner(pua as u32) {
                    check!(off < w, "block {b}: unit {off} past the write pointer {w} holds the copy of lpn {lpn}");
                    valid += 1;
                }
            }
            check!(
                valid == self.blocks.valid[i],
                "block {b}: valid count {} but {valid} units map back",
                self.blocks.valid[i]
            );
            let plane = self.blocks.plane_of(b);
            match self.blocks.state[i] {
                BlockState::Free => {
                    check!(w == 0, "free block {b} has {w} units written");
                    check!(
                        self.free[plane as usize].contains(&b),
                        "free block {b} is missing from plane {plane}'s pool"
                    );
                    free_seen += 1;
                }
                BlockState::Open => {
                    let slot = (self.blocks.stream[i] as u32 * self.planes + plane) as usize;
                    check!(
                        self.active[slot] == b,
                        "open block {b} is not the active block of its slot {slot}"
                    );
                    check!(w < upb, "open block {b} is full");
                }
                BlockState::Sealed => check!(
                    w == upb,
                    "sealed block {b} has only {w} of {upb} units written"
                ),
                BlockState::Victim => check!(false, "block {b} left in the victim state"),
            }
        }
        check!(
            free_seen == self.free_total,
            "free-block total {} but {free_seen} blocks are free",
            self.free_total
        );
        let pooled: usize = self.free.iter().map(|q| q.len()).sum();
        check!(
            pooled as u32 == self.free_total,
            "free pools hold {pooled} blocks, total says {}",
            self.free_total
        );
        self.map.check("block FTL")?;
        for (lpn, &pua) in self.map.l2p.iter().enumerate() {
            if pua != NONE {
                let b = (pua / self.upb) as usize;
                check!(
                    pua % self.upb < self.blocks.written[b]
                        && self.blocks.state[b] != BlockState::Free,
                    "lpn {lpn} maps to physical unit {pua}, which is not written (block {b})"
                );
            }
        }
        for (slot, &b) in self.active.iter().enumerate() {
            if b != NONE {
                check!(
                    self.blocks.state[b as usize] == BlockState::Open,
                    "active slot {slot} holds non-open block {b}"
                );
            }
        }
        let c = self.census();
        check!(
            c.valid + c.invalid + c.free == c.total,
            "census {c:?} does not add up"
        );
        let mapped = self.map.mapped_units();
        check!(
            mapped == c.valid,
            "{mapped} logical units are mapped but {} physical units are valid",
            c.valid
        );
        Ok(())
    }

    /// Verification mode: check every logical unit's current copy against the version last written.
    pub fn verify_all_versions(&self) -> Result<()> {
        let Some(v) = self.versions.as_ref() else {
            return Ok(());
        };
        for lpn in 0..self.logical_units {
            let pua = self.map.get(lpn);
            let got = if pua == NONE { 0 } else { v.held(pua) };
            v.compare(lpn, got, || format!("physical unit {pua}"))?;
        }
        Ok(())
    }
}

//! Cost-benefit (Rosenblum & Ousterhout, LFS): maximise age × (1 − u) / (2u), where u is the block's valid
//! fraction and age the logical time (host units written) since the block was last modified. u = 0 scores
//! infinity. Ties go to the lower block id.
//!
//! The choice is that of a full scan of the candidates (the twins in the device tests scan), found
//! without scoring every candidate: candidates are filed per plane by (program mode, valid count) — the
//! blocks of one bucket share u — and each bucket is a list in non-decreasing `modified_at`. Along a
//! bucket the age can only fall and every floating-point step of the score is monotone, so the score
//! never rises: a bucket's best blocks are its head and the blocks after it with the head's score (the
//! lowest id of those is the bucket's pick). A selection scores those for each non-empty bucket (found
//! in a bitmap), O(buckets) instead of O(blocks).
//!
//! Filing: the FTL sets `modified_at` to its clock when a block gains or loses a unit and tells the
//! policy when a sealed block loses one, so a re-filed block normally goes to its bucket's tail; a block
//! sealed after its last write (a flush's padding, the hybrid sealing its full block at the next append)
//! walks back from the tail to its place.

use nandstack_core::Rng;

use super::{Scope, VictimPolicy};
use crate::ftl::blocks::{BlockTable, NONE};

/// A block's place in the bucket lists (as the greedy index's).
#[derive(Copy, Clone)]
#[repr(C)]
struct Link {
    next: u32,
    prev: u32,
    /// Bucket slot the block is filed under, or NONE when not a candidate.
    slot: u32,
}

const UNLINKED: Link = Link {
    next: NONE,
    prev: NONE,
    slot: NONE,
};

#[derive(Clone)]
pub struct CostBenefit {
    /// Buckets per program mode: valid counts 0..=units_per_block.
    per_mode: usize,
    /// Buckets per plane (modes × per_mode).
    per_plane: usize,
    /// Bitmap words per plane.
    words: usize,
    head: Vec<u32>,
    tail: Vec<u32>,
    links: Vec<Link>,
    /// Non-empty buckets, `words` per plane.
    nonempty: Vec<u64>,
}

impl CostBenefit {
    pub fn new(planes: u32, table: &BlockTable) -> CostBenefit {
        let per_mode = table.units_per_block as usize + 1;
        let per_plane = per_mode * table.units_per_mode.len().max(1);
        let words = per_plane.div_ceil(64);
        let slots = planes as usize * per_plane;
        CostBenefit {
            per_mode,
            per_plane,
            words,
            head: vec![NONE; slots],
            tail: vec![NONE; slots],
            links: vec![UNLINKED; table.len() as usize],
            nonempty: vec![0; planes as usize * words],
        }
    }

    /// The cost-benefit score of a block at logical time `now`.
    #[inline]
    pub fn score(table: &BlockTable, block: u32, now: u64) -> f64 {
        let u = table.utilization(block);
        if u == 0.0 {
            return f64::INFINITY;
        }
        let age = now.saturating_sub(table.modified_at[block as usize]) as f64 + 1.0;
        age * (1.0 - u) / (2.0 * u)
    }

    fn slot_of(&self, block: u32, table: &BlockTable) -> usize {
        let mode = table.mode.get(block as usize).copied().unwrap_or(0) as usize;
        table.plane_of(block) as usize * self.per_plane
            + mode * self.per_mode
            + table.valid[block as usize] as usize
    }

    fn mark(&mut self, slot: usize, nonempty: bool) {
        let (plane, i) = (slot / self.per_plane, slot % self.per_plane);
        let w = &mut self.nonempty[plane * self.words + i / 64];
        if nonempty {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// File `block` in its bucket after the last block not modified later than it.
    fn file(&mut self, block: u32, table: &BlockTable) {
        let s = self.slot_of(block, table);
        let at = table.modified_at[block as usize];
        let mut prev = self.tail[s];
        while prev != NONE && table.modified_at[prev as usize] > at {
            prev = self.links[prev as usize].prev;
        }
        let next = if prev == NONE {
            self.head[s]
        } else {
            self.links[prev as usize].next
        };
        self.links[block as usize] = Link {
            next,
            prev,
            slot: s as u32,
        };
        if prev == NONE {
            self.head[s] = block;
        } else {
            self.links[prev as usize].next = block;
        }
        if next == NONE {
            self.tail[s] = block;
        } else {
            self.links[next as usize].prev = block;
        }
        self.mark(s, true);
    }

    fn unlink(&mut self, block: u32) {
        let Link { next, prev, slot } = self.links[block as usize];
        if slot == NONE {
            return;
        }
        let s = slot as usize;
        if prev == NONE {
            self.head[s] = next;
        } else {
            self.links[prev as usize].next = next;
        }
        if next == NONE {
            self.tail[s] = prev;
        } else {
            self.links[next as usize].prev = prev;
        }
        self.links[block as usize] = UNLINKED;
        if self.head[s] == NONE {
            self.mark(s, false);
        }
    }

    /// The best (score, block) of one bucket: its head, or a lower id after it with the same score.
    fn bucket_best(&self, slot: usize, table: &BlockTable, now: u64) -> (f64, u32) {
        let mut b = self.head[slot];
        let top = Self::score(table, b, now);
        let mut pick = b;
        loop {
            b = self.links[b as usize].next;
            if b == NONE {
                break;
            }
            let s = Self::score(table, b, now);
            debug_assert!(s <= top, "bucket {slot} out of modified_at order");
            if s != top {
                break;
            }
            pick = pick.min(b);
        }
        (top, pick)
    }
}

impl VictimPolicy for CostBenefit {
    fn needs_age(&self) -> bool {
        true
    }
    fn memory_bytes(&self) -> usize {
        4 * (self.head.len() + self.tail.len())
            + 8 * self.nonempty.len()
            + std::mem::size_of::<Link>() * self.links.len()
    }
    fn name(&self) -> &'static str {
        "cost_benefit"
    }
    fn on_sealed(&mut self, block: u32, table: &BlockTable) {
        debug_assert_eq!(
            self.links[block as usize].slot, NONE,
            "block {block} sealed twice"
        );
        self.file(block, table);
    }
    fn on_invalidated(&mut self, block: u32, table: &BlockTable) {
        if self.links[block as usize].slot == NONE {
            return;
        }
        self.unlink(block);
        self.file(block, table);
    }
    fn remove(&mut self, block: u32, _table: &BlockTable) {
        self.unlink(block);
    }
    fn select(
        &mut self,
        scope: Scope,
        table: &BlockTable,
        now: u64,
        _rng: &mut Rng,
    ) -> Option<u32> {
        let planes = match scope {
            Scope::Plane(p) => p as usize..p as usize + 1,
            Scope::Device => 0..self.nonempty.len() / self.words,
        };
        let mut best: Option<(f64, u32)> = None;
        for plane in planes {
            for w in 0..self.words {
                let mut bits = self.nonempty[plane * self.words + w];
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let (s, b) = self.bucket_best(plane * self.per_plane + i, table, now);
                    if best.is_none_or(|(bs, bb)| s > bs || (s == bs && b < bb)) {
                        best = Some((s, b));
                    }
                }
            }
        }
        let b = best?.1;
        self.unlink(b);
        Some(b)
    }
}

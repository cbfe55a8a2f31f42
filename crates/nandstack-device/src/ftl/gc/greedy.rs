//! Greedy: the sealed block with the fewest valid units. O(1) per event via per-plane valid-count buckets
//! (intrusive doubly-linked lists). A block enters the tail of its bucket when it is sealed or loses a
//! valid unit, so a bucket is ordered by when its blocks reached that count: `TieBreak::Oldest` takes the
//! head (FIFO within a bucket, as in the Cosmos+ OpenSSD firmware), `TieBreak::Newest` the tail. Device
//! scope takes the plane whose best bucket is lowest (lower plane id on ties), then applies the tie-break
//! inside that plane's bucket.

use nandstack_core::Rng;

use super::{Scope, VictimPolicy};
use crate::ftl::blocks::{BlockTable, NONE};
use crate::ftl::config::TieBreak;

/// A block's place in the bucket lists: its neighbours and its bucket, side by side so that one cache
/// line holds all three (a host overwrite of a random block touches them together; 12 bytes, as the three
/// separate arrays they replace).
#[derive(Copy, Clone)]
#[repr(C)]
struct Link {
    next: u32,
    prev: u32,
    /// Bucket (valid count) the block is filed under, or NONE when not a candidate.
    bucket: u32,
}

const _: () = assert!(std::mem::size_of::<Link>() == 12);

const UNLINKED: Link = Link {
    next: NONE,
    prev: NONE,
    bucket: NONE,
};

#[derive(Clone)]
pub struct Greedy {
    buckets_per_plane: usize,
    head: Vec<u32>,
    tail: Vec<u32>,
    links: Vec<Link>,
    /// Lowest possibly non-empty bucket per plane.
    low: Vec<u32>,
    tie_break: TieBreak,
}

impl Greedy {
    pub fn new(planes: u32, table: &BlockTable, tie_break: TieBreak) -> Greedy {
        let b = table.units_per_block as usize + 1;
        let n = table.len() as usize;
        Greedy {
            buckets_per_plane: b,
            head: vec![NONE; planes as usize * b],
            tail: vec![NONE; planes as usize * b],
            links: vec![UNLINKED; n],
            low: vec![0; planes as usize],
            tie_break,
        }
    }

    #[inline]
    fn slot(&self, plane: u32, bucket: u32) -> usize {
        plane as usize * self.buckets_per_plane + bucket as usize
    }

    #[inline]
    fn push_back(&mut self, block: u32, bucket: u32, table: &BlockTable) {
        let plane = table.plane_of(block);
        let s = self.slot(plane, bucket);
        let t = self.tail[s];
        self.links[block as usize] = Link {
            next: NONE,
            prev: t,
            bucket,
        };
        if t == NONE {
            self.head[s] = block;
        } else {
            self.links[t as usize].next = block;
        }
        self.tail[s] = block;
        if bucket < self.low[plane as usize] {
            self.low[plane as usize] = bucket;
        }
    }

    #[inline]
    fn unlink(&mut self, block: u32, table: &BlockTable) {
        let Link {
            next: n,
            prev: p,
            bucket,
        } = self.links[block as usize];
        if bucket == NONE {
            return;
        }
        let s = self.slot(table.plane_of(block), bucket);
        if p == NONE {
            self.head[s] = n;
        } else {
            self.links[p as usize].next = n;
        }
        if n == NONE {
            self.tail[s] = p;
        } else {
            self.links[n as usize].prev = p;
        }
        self.links[block as usize].bucket = NONE;
    }

    /// Lowest non-empty bucket of a plane (advancing the hint), if any.
    fn lowest(&mut self, plane: u32) -> Option<u32> {
        let mut b = self.low[plane as usize];
        while (b as usize) < self.buckets_per_plane {
            if self.head[self.slot(plane, b)] != NONE {
                self.low[plane as usize] = b;
                return Some(b);
            }
            b += 1;
        }
        self.low[plane as usize] = b;
        None
    }
}

impl VictimPolicy for Greedy {
    #[inline]
    fn prefetch(&self, block: u32) {
        crate::ftl::bigvec::prefetch(&self.links, block as usize);
    }
    #[inline]
    fn prefetch_neighbours(&self, block: u32, table: &BlockTable) {
        use crate::ftl::bigvec::prefetch;
        let b = block as usize;
        let Link {
            next: n, prev: p, ..
        } = self.links[b];
        if p != NONE {
            prefetch(&self.links, p as usize);
        }
        if n != NONE {
            prefetch(&self.links, n as usize);
        }
        // The block will move to the tail of the bucket one below its current count.
        let v = table.valid[b];
        if v > 0 {
            let s = self.slot(table.plane_of(block), v - 1);
            let t = self.tail[s];
            if t != NONE {
                prefetch(&self.links, t as usize);
            }
        }
    }
    fn memory_bytes(&self) -> usize {
        4 * (self.head.len() + self.tail.len() + self.low.len())
            + std::mem::size_of::<Link>() * self.links.len()
    }
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn on_sealed(&mut self, block: u32, table: &BlockTable) {
        self.push_back(block, table.valid[block as usize], table);
    }
    /// `unlink`, then `push_back` at the block's new count, with the plane found once (the hot path
    /// of every overwrite of a sealed block). Written out rather than calling the two through
    /// plane-taking helpers: that version cost 1.5–2 % more instructions on the write paths
    /// (cachegrind, 2026-12-08), since it stores the block's link twice and its slot is computed twice.
    #[inline]
    fn on_invalidated(&mut self, block: u32, table: &BlockTable) {
        let plane = table.plane_of(block);
        let base = plane as usize * self.buckets_per_plane;
        let b = block as usize;
        let Link {
            next: n,
            prev: p,
            bucket: old,
        } = self.links[b];
        if old != NONE {
            let s = base + old as usize;
            if p == NONE {
                self.head[s] = n;
            } else {
                self.links[p as usize].next = n;
            }
            if n == NONE {
                self.tail[s] = p;
            } else {
                self.links[n as usize].prev = p;
            }
        }
        let bucket = table.valid[b];
        let s = base + bucket as usize;
        let t = self.tail[s];
        self.links[b] = Link {
            next: NONE,
            prev: t,
            bucket,
        };
        if t == NONE {
            self.head[s] = block;
        } else {
            self.links[t as usize].next = block;
        }
        self.tail[s] = block;
        if bucket < self.low[plane as usize] {
            self.low[plane as usize] = bucket;
        }
    }
    fn remove(&mut self, block: u32, table: &BlockTable) {
        self.unlink(block, table);
    }
    fn select(
        &mut self,
        scope: Scope,
        table: &BlockTable,
        _now: u64,
        _rng: &mut Rng,
    ) -> Option<u32> {
        let plane = match scope {
            Scope::Plane(p) => {
                self.lowest(p)?;
                p
            }
            Scope::Device => {
                let planes = self.low.len() as u32;
                let mut best: Option<(u32, u32)> = None;
                for p in 0..planes {
                    if let Some(b) = self.lowest(p) {
                        if best.is_none_or(|(bb, _)| b < bb) {
                            best = Some((b, p));
                        }
                    }
                }
                best?.1
            }
        };
        let s = self.slot(plane, self.low[plane as usize]);
        let block = match self.tie_break {
            TieBreak::Oldest => self.head[s],
            TieBreak::Newest => self.tail[s],
        };
        self.unlink(block, table);
        Some(block)
    }
}

//! Swap slot allocation policies.
//!
//! # Contract of [`SlotAllocator`]
//! * The caller owns the slot map (`map[slot] == 0` means free; [`super::MAP_BAD`] marks the header
//!   and the padding after the last slot). The allocator keeps its own per-cluster accounting in step
//!   with the map: every slot it returns from `alloc` had `map[slot] == 0`, and the caller marks it used
//!   before the next call; `free(slot)` is called once for each such slot, after the caller set
//!   `map[slot] = 0`.
//! * `alloc` returns `None` only when no free slot exists outside clusters withheld for discard that
//!   cannot complete. When it had to wait for a discard to finish, the returned time is later than `now`
//!   (the allocating thread waits until then).
//! * Whole-cluster discard: with `discard_clusters`, a cluster whose last slot is freed is withheld and
//!   reported by `take_discards` (cluster index); the caller discards it on the device and calls
//!   `discard_issued` with the completion time; the cluster is reusable from then on.
//! * Deterministic: the same sequence of calls gives the same slots.

use nandstack_core::Nanos;

mod cluster;
mod cluster_v5;
mod next_fit;

pub use cluster::ClusterAllocator;
pub use cluster_v5::{ClusterV5Allocator, ScanBase, SWAP_TRUNK_STREAM, TRUNK_SLOTS};
pub use next_fit::NextFitAllocator;

/// Chooses a free slot for each page written to swap.
pub trait SlotAllocator {
    fn name(&self) -> &'static str;
    /// A free slot for a page reclaimed on `cpu` at `now`, and when it is ready (≥ now).
    fn alloc(&mut self, cpu: usize, map: &[u8], now: Nanos) -> Option<(u32, Nanos)>;
    /// `slot` (previously returned by `alloc`) is free again.
    fn free(&mut self, slot: u32);
    /// Clusters emptied since the last call that must be discarded before reuse (none, for an
    /// allocator that keeps no clusters).
    fn take_discards(&mut self, _out: &mut Vec<u32>) {}
    /// The discard of `cluster` completes at `done` (nothing to do without clusters).
    fn discard_issued(&mut self, _cluster: u32, _done: Nanos) {}
    /// Counters for the report (name, value).
    fn stats(&self) -> Vec<(&'static str, u64)>;
    /// Check internal consistency against the slot map; an error names the first mismatch.
    fn verify(&self, map: &[u8]) -> Result<(), String>;
}

/// Next fit over the slots `[first, first + len)`: the offset (from `first`) of the first free slot at
/// or after offset `cursor`, wrapping around the range; `None` when every slot is used.
pub(crate) fn next_free(map: &[u8], first: u32, len: u32, cursor: u32) -> Option<u32> {
    (0..len)
        .map(|i| (cursor + i) % len)
        .find(|&k| map[(first + k) as usize] == 0)
}

#[cfg(test)]
pub(crate) mod conformance {
    //! Shared conformance test: every allocator must hand out each free slot exactly once, never a bad
    //! slot, reuse freed slots, and stay consistent under random alloc/free.
    use super::SlotAllocator;
    use crate::swap::MAP_BAD;
    use nandstack_core::{Nanos, Rng};

    pub fn run(make: &dyn Fn(u32) -> (Box<dyn SlotAllocator>, Vec<u8>), seed: u64) {
        let nslots = 3000;
        let (mut a, mut map) = make(nslots);
        let usable = map.iter().filter(|&&m| m == 0).count();
        // Fill completely.
        let mut used = Vec::new();
        while let Some((s, t)) = a.alloc(0, &map, Nanos(0)) {
            assert_eq!(t, Nanos(0));
            assert_eq!(
                map[s as usize],
                0,
                "{}: slot {s} handed out twice",
                a.name()
            );
            assert_ne!(map[s as usize], MAP_BAD);
            map[s as usize] = 1;
            used.push(s);
        }
        assert_eq!(used.len(), usable, "{}: not every free slot used", a.name());
        a.verify(&map).unwrap();
        // Random frees and allocations on several CPUs.
        let mut rng = Rng::new(seed);
        for step in 0..20_000u64 {
            if !used.is_empty() && rng.chance(0.5) {
                let i = rng.below(used.len() as u64) as usize;
                let s = used.swap_remove(i);
                map[s as usize] = 0;
                a.free(s);
                let mut d = Vec::new();
                a.take_discards(&mut d);
                for c in d {
                    a.discard_issued(c, Nanos(step));
                }
            } else if let Some((s, _)) = a.alloc(rng.below(3) as usize, &map, Nanos(step)) {
                assert_eq!(map[s as usize], 0, "{}: slot {s} not free", a.name());
                map[s as usize] = 1;
                used.push(s);
            } else {
                assert_eq!(
                    used.len(),
                    usable,
                    "{}: alloc failed with free slots",
                    a.name()
                );
            }
            if step % 997 == 0 {
                a.verify(&map)
                    .unwrap_or_else(|e| panic!("{} step {step}: {e}", a.name()));
            }
        }
        a.verify(&map).unwrap();
    }
}

//! A range of pages referenced with Zipf popularity, the ranks scattered over the range by a seeded
//! permutation (so the hot pages are not the first ones).

use nandstack_core::Rng;
use nandstack_workload::perm::Permutation;
use nandstack_workload::zipf::Zipf;

/// Ranks whose pages are kept in a table (16 KiB per region): with θ = 1.1 over diss's apps, four draws
/// in five, which would otherwise each walk the permutation.
const HEAD_RANKS: u64 = 4096;

pub(crate) struct Region {
    pub start: u32,
    pub len: u32,
    zipf: Zipf,
    perm: Permutation,
    /// `perm.apply(r)` for the ranks r < min(n, HEAD_RANKS).
    head: Box<[u32]>,
}

impl Region {
    /// Pages `start .. start + len`, Zipf `theta`, the permutation of `seed` (an empty range draws
    /// from one page).
    pub fn new(start: u32, len: u32, theta: f64, seed: u64) -> Region {
        let n = len.max(1) as u64;
        let perm = Permutation::new(n, seed);
        let head = (0..n.min(HEAD_RANKS))
            .map(|r| perm.apply(r) as u32)
            .collect();
        Region {
            start,
            len,
            zipf: Zipf::new(n, theta),
            perm,
            head,
        }
    }

    /// One page, drawn by popularity (inline always: a generator's loop keeps its `Rng` in registers).
    #[inline(always)]
    pub fn pick(&self, rng: &mut Rng) -> u32 {
        let r = self.zipf.sample(rng) - 1;
        let offset = match self.head.get(r as usize) {
            Some(&p) => p,
            None => self.perm.apply(r) as u32,
        };
        self.start + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_table_picks_the_permuted_rank() {
        for (len, theta) in [
            (0u32, 1.1),
            (1, 0.9),
            (7, 1.1),
            (4096, 1.1),
            (4097, 0.5),
            (76_800, 1.1),
        ] {
            let region = Region::new(1000, len, theta, 77 + len as u64);
            let (zipf, perm) = (
                Zipf::new(len.max(1) as u64, theta),
                Permutation::new(len.max(1) as u64, 77 + len as u64),
            );
            let (mut a, mut b) = (Rng::new(5), Rng::new(5));
            for _ in 0..200_000 {
                let want = 1000 + perm.apply(zipf.sample(&mut b) - 1) as u32;
                assert_eq!(region.pick(&mut a), want, "len {len} θ {theta}");
            }
        }
    }
}

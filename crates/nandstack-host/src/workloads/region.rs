//! A range of pages referenced with Zipf popularity, the ranks scattered over the range by a seeded
//! permutation (so the hot pages are not the first ones).

use nandstack_core::Rng;
use nandstack_workload::perm::Permutation;
use nandstack_workload::zipf::Zipf;

pub(crate) struct Region {
    pub start: u32,
    pub len: u32,
    zipf: Zipf,
    perm: Permutation,
}

impl Region {
    /// Pages `start .. start + len`, Zipf `theta`, the permutation of `seed` (an empty range draws
    /// from one page).
    pub fn new(start: u32, len: u32, theta: f64, seed: u64) -> Region {
        let n = len.max(1) as u64;
        Region {
            start,
            len,
            zipf: Zipf::new(n, theta),
            perm: Permutation::new(n, seed),
        }
    }

    /// One page, drawn by popularity.
    pub fn pick(&self, rng: &mut Rng) -> u32 {
        self.start + self.perm.apply(self.zipf.sample(rng) - 1) as u32
    }
}

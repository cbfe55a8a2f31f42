//! ezswap's compressibility-aware replacement (CA, §III-C): pool pages in 18 categories, a lottery
//! over the categories, the tail page of the winning category's list as the victim.
//!
//! * A pool page's category is (objects n ∈ 1..=3, file objects f ∈ 0..=n, free space < 25% or ≥ 25%
//!   of its 63 usable chunks): 9 × 2 = 18. The paper's Figure 7 is not in the text we have; the two
//!   free-space ranges are the reading under which its worked example holds (30% free → "the lowest
//!   number in the free space range" 25% → ratio 0.75 / 2).
//! * Weight W_i = 10,000 ÷ (cost ÷ ratio) with ratio = (1 − lowest free fraction of the range) ÷ n and
//!   cost = Σ of the objects' costs (file 1, anonymous 4): the paper's example (one file and one
//!   anonymous object, 30% free) gives 10,000 × 0.375 ÷ 5 = 750. Integer: `used% × 10⁶ ÷ (n × Σcost)`
//!   with costs in the authors' units (10,000 / 40,000).
//! * Tickets T_i = N_i × W_i (N_i pages on list i); a seeded draw in [0, ΣT) picks the list; the victim
//!   is its tail page; its objects are handed to the writeback worker one by one (anonymous ones are
//!   written back, file ones dropped).
//! * A page whose objects change is re-filed on the list of its new category: at the head if its time
//!   stamp sum (each object stamped by a global clock when it entered the pool) is above the list's
//!   average, else at the tail.
//! * Lists are per cgroup (a pool page shared by two cgroups is two groups); the paper has one.

use nandstack_core::Rng;

use super::pool_pages::{Filing, Group, PoolPages, USABLE_CHUNKS};
use super::{EntryId, Pick, Placement, Replacement};

/// Categories of pool pages.
pub const CATEGORIES: usize = 18;

/// The category of a pool page with `n` objects of which `f` are file pages, `used_chunks` of the 63
/// in use (a headless page is full).
pub fn category(n: u32, f: u32, used_chunks: u32, headless: bool) -> usize {
    let n = n.clamp(1, 3);
    let f = f.min(n);
    let nf = ((n - 1) * (n + 2) / 2 + f) as usize;
    let free = if headless {
        0
    } else {
        USABLE_CHUNKS.saturating_sub(used_chunks)
    };
    nf * 2 + usize::from(free * 4 >= USABLE_CHUNKS)
}

/// (objects, file objects, free space ≥ 25%) of a category.
pub fn describe(cat: usize) -> (u32, u32, bool) {
    let nf = (cat / 2) as u32;
    let (n, base) = match nf {
        0..=1 => (1, 0),
        2..=4 => (2, 2),
        _ => (3, 5),
    };
    (n, nf - base, cat % 2 == 1)
}

/// The victim-selection weight of each category (costs in the authors' units: file 10,000, anonymous
/// 40,000).
pub fn weights(cost_file: u32, cost_anon: u32) -> [u64; CATEGORIES] {
    let mut w = [0u64; CATEGORIES];
    for (c, wc) in w.iter_mut().enumerate() {
        let (n, f, roomy) = describe(c);
        let used_pct: u64 = if roomy { 75 } else { 100 };
        let cost = f as u64 * cost_file as u64 + (n - f) as u64 * cost_anon as u64;
        *wc = (used_pct * 1_000_000 / (n as u64 * cost)).max(1);
    }
    w
}

struct CaFiling;

impl Filing for CaFiling {
    fn lists(&self) -> usize {
        CATEGORIES
    }
    fn list_of(&self, g: &Group, used_chunks: u32, headless: bool) -> usize {
        category(g.members.len() as u32, g.files, used_chunks, headless)
    }
    fn refile(&self, _grew: bool) -> bool {
        true
    }
    fn at_head(&self, stamp_sum: u64, list_avg: Option<f64>, _grew: bool) -> bool {
        list_avg.is_none_or(|a| stamp_sum as f64 > a)
    }
}

/// CA. See the module documentation.
pub struct Lottery {
    pages: PoolPages,
    weights: [u64; CATEGORIES],
    rng: Rng,
    /// Victims drawn, per category.
    pub draws: [u64; CATEGORIES],
}

impl Lottery {
    pub fn new(cost_file: u32, cost_anon: u32, seed: u64) -> Lottery {
        Lottery {
            pages: PoolPages::default(),
            weights: weights(cost_file, cost_anon),
            rng: Rng::new(seed ^ 0x006c_6f74_7465_7279),
            draws: [0; CATEGORIES],
        }
    }

    pub fn weights(&self) -> &[u64; CATEGORIES] {
        &self.weights
    }

    /// Tickets of each category of cgroup `memcg` (N_i × W_i).
    pub fn tickets(&self, memcg: u16) -> [u64; CATEGORIES] {
        let mut t = [0u64; CATEGORIES];
        for (c, tc) in t.iter_mut().enumerate() {
            *tc = self.pages.list_len(memcg, c) * self.weights[c];
        }
        t
    }

    /// Draw a category by lottery (None when the cgroup has no page).
    pub fn draw(&mut self, memcg: u16) -> Option<usize> {
        let t = self.tickets(memcg);
        let total: u64 = t.iter().sum();
        if total == 0 {
            return None;
        }
        let mut r = self.rng.below(total);
        for (c, &tc) in t.iter().enumerate() {
            if r < tc {
                return Some(c);
            }
            r -= tc;
        }
        unreachable!("r < total")
    }

    /// The pool-page bookkeeping (tests, reports).
    pub fn pages(&self) -> &PoolPages {
        &self.pages
    }
}

impl Replacement for Lottery {
    fn name(&self) -> &'static str {
        "lottery"
    }

    fn victim_mix(&self) -> Vec<((u32, u32), u64)> {
        self.pages.victim_mix()
    }

    fn draws(&self) -> (Vec<u64>, u64) {
        (self.draws.to_vec(), 0)
    }

    fn stored(&mut self, e: EntryId, memcg: u16) {
        self.pages.stored(e, memcg);
    }

    fn placed(&mut self, e: EntryId, p: Placement) {
        self.pages.placed(&CaFiling, e, p);
    }

    fn removed(&mut self, e: EntryId) {
        self.pages.removed(&CaFiling, e);
    }

    fn pick(&mut self, memcg: u16) -> Pick {
        if let Some(e) = self.pages.next_victim_entry(memcg) {
            return Pick::Writeback(e);
        }
        let Some(c) = self.draw(memcg) else {
            return Pick::Empty;
        };
        self.draws[c] += 1;
        self.pages.take_tail(memcg, c)
    }

    fn count(&self, memcg: u16) -> u64 {
        self.pages.count(memcg)
    }

    fn check(&self) -> nandstack_core::Result<()> {
        self.pages.check_filing("lottery", &CaFiling)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_weights_by_hand() {
        // The paper's example: one file and one anonymous object, 30% free (19 of 63 chunks) → 750.
        let c = category(2, 1, 63 - 19, false);
        assert_eq!(describe(c), (2, 1, true));
        assert_eq!(weights(10_000, 40_000)[c], 750);
        // Every (n, f, range) is one category and back.
        let mut seen = [false; CATEGORIES];
        for n in 1..=3 {
            for f in 0..=n {
                for (used, roomy) in [(63, false), (40, true)] {
                    let c = category(n, f, used, false);
                    assert_eq!(describe(c), (n, f, roomy));
                    assert!(!seen[c]);
                    seen[c] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        // 16 free of 63 is 25.4%: roomy; 15 is not. A headless page is full.
        assert!(describe(category(1, 0, 47, false)).2);
        assert!(!describe(category(1, 0, 48, false)).2);
        assert!(!describe(category(1, 0, 0, true)).2);
        // One full anonymous page: 10⁸ ÷ 40,000 = 2,500; one roomy file page: 7.5 × 10⁷ ÷ 10⁴ = 7,500;
        // three full anonymous objects (ratio 1/3 each, cost 12): 10,000 ÷ 36 = 277.
        let w = weights(10_000, 40_000);
        assert_eq!(w[category(1, 0, 63, false)], 2_500);
        assert_eq!(w[category(1, 1, 10, false)], 7_500);
        assert_eq!(w[category(3, 0, 63, false)], 277);
    }
}

//! ezswap's CA as the authors' code has it (J-S-Kim/ezswap at 37586286, `mm/z3fold.c`; read for
//! docs/platforms/ezswap-sources.md, which gives the line numbers), where the paper describes 18
//! categories ([`super::lottery`]):
//!
//! * 19 lists. One-object pages by file count (0, 1) × four free-space bins (free chunks ÷ 8: < 8,
//!   8–15, 16–23, 24–31); two-object pages by file count (0–2) × two bins (< 16, 16–31 free chunks);
//!   three-object pages by file count (0–3); and one list for every page of one or two objects with 32
//!   free chunks or more. A headless page (one object over 3,968 bytes) is a one-object page in bin 0.
//! * Weights (the code's constants): one object, anonymous 1751 / 1501 / 1250 / 1000 by bin, file
//!   7018 / 6015 / 5000 / 4000; two objects, both anonymous 500 / 250, one file 800 / 400, two files
//!   2000 / 1000; three objects 222 / 296 / 444 / 889 by file count; the roomy list 1.
//! * Tickets of a list = (its pages × 1000 ÷ the pool's pages) × its weight, in integers; a seeded
//!   draw in [0, Σ tickets) picks the list and its tail page is the victim. When every list's tickets
//!   round to 0 nothing is drawn: the shrink fails (the code draws a list and finds it empty), a
//!   [`Pick::Rotate`] for the worker. A list whose share rounds to 0 is never drawn while it stays so:
//!   its pages can wait indefinitely (the code's behaviour; the conformance suite's starvation check
//!   exempts this policy).
//! * A page that gains an object goes to the head of its list; any other re-filing (an object left,
//!   or a neighbour's change moved it) goes to the head when the mean age of its objects, in entries
//!   stored since (the pool's clock), is below `age_threshold` (the code: 150,000), else to the tail.
//! * Lists are per cgroup, as in the paper's reading ([`super::lottery`]).

use nandstack_core::Rng;

use super::pool_pages::{Filing, Group, PoolPages, USABLE_CHUNKS};
use super::{EntryId, Pick, Placement, Replacement};

/// Lists of pool pages.
pub const LISTS: usize = 19;
/// The list of pages of one or two objects with at least `ROOMY_FREE` free chunks.
pub const ROOMY: usize = 18;
const ROOMY_FREE: u32 = 32;
/// The code's weights, by list.
pub const WEIGHTS: [u64; LISTS] = [
    1751, 1501, 1250, 1000, // one anonymous object, by free-space bin
    7018, 6015, 5000, 4000, // one file object
    500, 250, // two objects, no file
    800, 400, // two objects, one file
    2000, 1000, // two objects, two files
    222, 296, 444, 889, // three objects, 0–3 files
    1,   // one or two objects, ≥ 32 free chunks
];
/// The code's age threshold, entries stored (at its full-size pool).
pub const CODE_AGE_THRESHOLD: u64 = 150_000;

/// The list of a pool page with `n` objects of which `f` are file pages, `used_chunks` of the 63 in use.
pub fn list_of(n: u32, f: u32, used_chunks: u32, headless: bool) -> usize {
    let n = n.clamp(1, 3);
    let f = f.min(n) as usize;
    let free = if headless {
        0
    } else {
        USABLE_CHUNKS.saturating_sub(used_chunks)
    };
    if n < 3 && free >= ROOMY_FREE {
        return ROOMY;
    }
    match n {
        1 => f * 4 + (free / 8).min(3) as usize,
        2 => 8 + f * 2 + (free / 16).min(1) as usize,
        _ => 14 + f,
    }
}

struct CodeFiling {
    age_threshold: u64,
}

impl Filing for CodeFiling {
    fn lists(&self) -> usize {
        LISTS
    }
    fn list_of(&self, g: &Group, used_chunks: u32, headless: bool) -> usize {
        list_of(g.members.len() as u32, g.files, used_chunks, headless)
    }
    fn refile(&self, _grew: bool) -> bool {
        true
    }
    fn at_head(&self, _stamp_sum: u64, _list_avg: Option<f64>, grew: bool) -> bool {
        grew
    }
    fn at_head_aged(
        &self,
        stamp_sum: u64,
        members: u32,
        clock: u64,
        _list_avg: Option<f64>,
        grew: bool,
    ) -> bool {
        // mean age = clock − stamp_sum ÷ members < threshold, in integers.
        let m = members.max(1) as u128;
        grew || (clock as u128 * m).saturating_sub(stamp_sum as u128)
            < self.age_threshold as u128 * m
    }
}

/// CA as the authors' code has it. See the module documentation.
pub struct LotteryCode {
    pages: PoolPages,
    filing: CodeFiling,
    rng: Rng,
    /// Victims drawn, per list.
    pub draws: [u64; LISTS],
    /// Draws that found no ticket (the shrink failed).
    pub empty_draws: u64,
}

impl LotteryCode {
    pub fn new(age_threshold: u64, seed: u64) -> LotteryCode {
        LotteryCode {
            pages: PoolPages::default(),
            filing: CodeFiling { age_threshold },
            rng: Rng::new(seed ^ 0x636f_6465_6c6f_7474),
            draws: [0; LISTS],
            empty_draws: 0,
        }
    }

    /// Tickets of each list of cgroup `memcg`: (pages × 1000 ÷ the cgroup's pool pages) × weight.
    pub fn tickets(&self, memcg: u16) -> [u64; LISTS] {
        let lens: [u64; LISTS] = std::array::from_fn(|l| self.pages.list_len(memcg, l));
        let total = lens.iter().sum::<u64>().max(1);
        std::array::from_fn(|l| lens[l] * 1000 / total * WEIGHTS[l])
    }

    /// The pool-page bookkeeping (tests, reports).
    pub fn pages(&self) -> &PoolPages {
        &self.pages
    }
}

impl Replacement for LotteryCode {
    fn name(&self) -> &'static str {
        "lottery_code"
    }

    fn victim_mix(&self) -> Vec<((u32, u32), u64)> {
        self.pages.victim_mix()
    }

    fn draws(&self) -> (Vec<u64>, u64) {
        (self.draws.to_vec(), self.empty_draws)
    }

    fn stored(&mut self, e: EntryId, memcg: u16) {
        self.pages.stored(e, memcg);
    }

    fn placed(&mut self, e: EntryId, p: Placement) {
        self.pages.placed(&self.filing, e, p);
    }

    fn removed(&mut self, e: EntryId) {
        self.pages.removed(&self.filing, e);
    }

    fn pick(&mut self, memcg: u16) -> Pick {
        if let Some(e) = self.pages.next_victim_entry(memcg) {
            return Pick::Writeback(e);
        }
        let t = self.tickets(memcg);
        let total: u64 = t.iter().sum();
        if total == 0 {
            if self.pages.count(memcg) == 0 {
                return Pick::Empty;
            }
            // Every list's share rounded to no ticket: the code's shrink fails (a failed step).
            self.empty_draws += 1;
            return Pick::Rotate;
        }
        let mut r = self.rng.below(total);
        let mut l = 0;
        while r >= t[l] {
            r -= t[l];
            l += 1;
        }
        self.draws[l] += 1;
        self.pages.take_tail(memcg, l)
    }

    fn count(&self, memcg: u16) -> u64 {
        self.pages.count(memcg)
    }

    fn check(&self) -> nandstack_core::Result<()> {
        self.pages.check_filing("lottery_code", &self.filing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_weights_by_hand() {
        // One anonymous object with 5 free chunks: bin 0 (1751); a file one with 20 free: bin 2 (5000).
        assert_eq!(WEIGHTS[list_of(1, 0, 58, false)], 1751);
        assert_eq!(WEIGHTS[list_of(1, 1, 43, false)], 5000);
        // 31 free: bin 3; 32 free: the roomy list (weight 1), for one or two objects, not three.
        assert_eq!(list_of(1, 0, 32, false), 3);
        assert_eq!(list_of(1, 0, 31, false), ROOMY);
        assert_eq!(list_of(2, 1, 31, false), ROOMY);
        assert_eq!(list_of(3, 1, 10, false), 15);
        // Two objects: bins < 16 and 16–31 free chunks.
        assert_eq!(WEIGHTS[list_of(2, 0, 50, false)], 500);
        assert_eq!(WEIGHTS[list_of(2, 2, 40, false)], 1000);
        // A headless page is a one-object page in bin 0.
        assert_eq!(WEIGHTS[list_of(1, 1, 0, true)], 7018);
        // Every list is reached.
        let mut seen = [false; LISTS];
        for n in 1..=3 {
            for f in 0..=n {
                for used in 0..=63 {
                    seen[list_of(n, f, used, false)] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn the_age_rule_by_hand() {
        let f = CodeFiling { age_threshold: 100 };
        // A page that gains an object: head.
        assert!(f.at_head_aged(0, 1, 10_000, None, true));
        // Two objects stamped 900 and 950 at clock 1,000: mean age 75 < 100 → head; at 1,030: 105 → tail.
        assert!(f.at_head_aged(1850, 2, 1000, None, false));
        assert!(!f.at_head_aged(1850, 2, 1030, None, false));
        // Exactly the threshold: not below → tail.
        assert!(!f.at_head_aged(900, 1, 1000, None, false));
    }
}

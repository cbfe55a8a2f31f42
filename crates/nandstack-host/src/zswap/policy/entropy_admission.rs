//! ezswap's selective admission (SA, §III-B): a page is compressed and stored only if its *expected
//! benefit* is at least the pool's *average benefit*.
//!
//! * Expected benefit = cost ÷ estimated compression ratio (Equation 1): cost 10,000 for a clean file
//!   page (one read to reload it) and 40,000 for an anonymous page (a write and a read), the authors'
//!   integer units; the ratio (compressed/original, × 10,000) is estimated from the Shannon entropy of
//!   a sample of the page (the leading 512 bytes, or every 4th byte) through the map fitted on real
//!   pages with the configured compressor ([`super::ratio_fit`]) — the page is not compressed to decide.
//! * Average benefit = capacity × avg cost × hit rate ÷ avg compression ratio (Equation 2): capacity =
//!   chunks in use ÷ chunks of the pool limit; avg cost and avg ratio over the live entries (the ratio
//!   from their stored lengths); hit rate = hits among the last 256 page-in requests (the *hit window*:
//!   shift right, set the top bit on a hit). With n live entries, avg cost ÷ avg ratio = Σcost × 4096 ÷
//!   Σlength, so the rule is evaluated exactly in integers:
//!   `cost × 10⁴ × 256 × limit × Σlength ≥ ratio × used × Σcost × hits × 4096`.
//! * An empty pool or an empty hit window gives an average of 0: everything is admitted until the pool
//!   starts to serve hits.
//!
//! The estimate depends on the sampled bytes only, so it is remembered by their content (XXH3-128 of
//! the sample's span, as `MemoCompressor` remembers compressed lengths): a launch-cycle page offered
//! again on a later pass is looked up, not histogrammed again. Probed, never iterated; emptied at
//! `MEMO_ENTRIES`.

use nandstack_compress::entropy::{EntropyTable, Sample};

use crate::compressor::{ContentMemo, KeyMemo};
use crate::contents::PageIn;

use super::ratio_fit::{RatioMap, SCALE};
use super::{Admission, AdmitQuery, PageKind, Verdict};

/// The estimated ratio of `page` through the content memo (see the module documentation).
fn hashed_ratio(
    memo: &mut ContentMemo<u32>,
    map: &RatioMap,
    entropy: &EntropyTable,
    sample: Sample,
    page: &[u8; 4096],
) -> u32 {
    let span = match sample {
        Sample::Leading(k) => &page[..k.min(page.len())],
        Sample::Stride(_) | Sample::Whole => &page[..],
    };
    let Ok(ratio) = memo.get_or_insert_with(span, || {
        Ok::<_, std::convert::Infallible>(map.estimate(entropy.bits_per_byte(page)))
    });
    ratio
}

/// Bits of the hit window.
pub const WINDOW: u32 = 256;

/// SA's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaStats {
    pub decisions: u64,
    pub admitted_anon: u64,
    pub admitted_file: u64,
    pub rejected_anon: u64,
    pub rejected_file: u64,
}

/// Selective admission. See the module documentation.
#[derive(Debug, Clone)]
pub struct EntropyAdmission {
    map: RatioMap,
    sample: Sample,
    /// `shannon_bits_per_byte` for `sample` over 4 KiB pages, without a logarithm per byte value.
    entropy: EntropyTable,
    cost_file: u64,
    cost_anon: u64,
    /// The hit window, most recent request in the top bit of `window[3]`.
    window: [u64; 4],
    /// XXH3-128 of a page's sampled span → its estimated ratio (see the module documentation).
    memo: ContentMemo<u32>,
    /// Page key → its estimated ratio ([`EntropyAdmission::estimated_ratio_of`]).
    by_key: KeyMemo,
    pub stats: SaStats,
}

impl EntropyAdmission {
    pub fn new(map: RatioMap, sample: Sample, cost_file: u32, cost_anon: u32) -> EntropyAdmission {
        EntropyAdmission {
            map,
            sample,
            entropy: EntropyTable::new(sample, 4096),
            cost_file: cost_file as u64,
            cost_anon: cost_anon as u64,
            window: [0; 4],
            memo: ContentMemo::default(),
            by_key: KeyMemo::default(),
            stats: SaStats::default(),
        }
    }

    /// The estimated ratio (× 10,000) of `page` from its sample's entropy, remembered by the content of
    /// the bytes the sample reads from (the leading `k` for `Leading(k)`, else the whole page).
    pub fn estimated_ratio(&mut self, page: &[u8; 4096]) -> u32 {
        hashed_ratio(&mut self.memo, &self.map, &self.entropy, self.sample, page)
    }

    /// [`EntropyAdmission::estimated_ratio`] of an offered page: by its key when it has one (the page
    /// is built only the first time its key is seen), else by its bytes.
    pub fn estimated_ratio_of(&mut self, page: &mut PageIn) -> u32 {
        let (memo, map, entropy, sample) = (&mut self.memo, &self.map, &self.entropy, self.sample);
        match page.key() {
            Some(k) => {
                let Ok(r) = self.by_key.get_or_insert_with(k, || {
                    Ok::<_, std::convert::Infallible>(hashed_ratio(
                        memo,
                        map,
                        entropy,
                        sample,
                        page.bytes(),
                    ))
                });
                r
            }
            None => hashed_ratio(memo, map, entropy, sample, page.bytes()),
        }
    }

    /// Hits among the last [`WINDOW`] page-in requests.
    pub fn hits(&self) -> u32 {
        self.window.iter().map(|w| w.count_ones()).sum()
    }

    fn cost(&self, kind: PageKind) -> u64 {
        match kind {
            PageKind::Anon => self.cost_anon,
            PageKind::File => self.cost_file,
        }
    }

    /// Expected benefit of a page of `kind` with estimated ratio `ratio` (× 10,000), cost units.
    pub fn expected_benefit(&self, kind: PageKind, ratio: u32) -> f64 {
        self.cost(kind) as f64 * SCALE as f64 / ratio.max(1) as f64
    }

    /// The pool's average benefit (Equation 2), cost units (for reports and tests).
    pub fn average_benefit(&self, q: &AdmitQuery) -> f64 {
        let live = q.live_anon + q.live_file;
        if live == 0 || q.stored_bytes == 0 || q.limit_bytes == 0 {
            return 0.0;
        }
        let capacity = q.used_chunk_bytes as f64 / q.limit_bytes as f64;
        let avg_cost = self.cost_sum(q) as f64 / live as f64;
        let hit_rate = self.hits() as f64 / WINDOW as f64;
        let avg_ratio = q.stored_bytes as f64 / (live as f64 * 4096.0);
        capacity * avg_cost * hit_rate / avg_ratio
    }

    fn cost_sum(&self, q: &AdmitQuery) -> u64 {
        q.live_anon * self.cost_anon + q.live_file * self.cost_file
    }

    /// The decision for a page of `kind` with estimated ratio `ratio` (× 10,000), exactly in integers.
    pub fn admits(&self, kind: PageKind, ratio: u32, q: &AdmitQuery) -> bool {
        if q.stored_bytes == 0 || q.limit_bytes == 0 {
            return true;
        }
        let lhs = self.cost(kind) as u128
            * SCALE as u128
            * WINDOW as u128
            * q.limit_bytes as u128
            * q.stored_bytes as u128;
        let rhs = ratio.max(1) as u128
            * q.used_chunk_bytes as u128
            * self.cost_sum(q) as u128
            * self.hits() as u128
            * 4096;
        lhs >= rhs
    }

    fn sampled_bytes(&self) -> u32 {
        match self.sample {
            Sample::Leading(n) => n.min(4096) as u32,
            Sample::Stride(k) => 4096u32.div_ceil(k.max(1) as u32),
            Sample::Whole => 4096,
        }
    }
}

impl Admission for EntropyAdmission {
    fn name(&self) -> &'static str {
        "entropy"
    }

    fn admit(&mut self, page: &[u8; 4096], memcg: u16) -> bool {
        let page = &mut PageIn::ready(page);
        let q = AdmitQuery {
            memcg,
            kind: PageKind::Anon,
            live_anon: 0,
            live_file: 0,
            stored_bytes: 0,
            used_chunk_bytes: 0,
            limit_bytes: 0,
        };
        self.decide(page, &q).admit
    }

    fn decide(&mut self, page: &mut PageIn, q: &AdmitQuery) -> Verdict {
        let ratio = self.estimated_ratio_of(page);
        let admit = self.admits(q.kind, ratio, q);
        self.stats.decisions += 1;
        let s = &mut self.stats;
        match (q.kind, admit) {
            (PageKind::Anon, true) => s.admitted_anon += 1,
            (PageKind::File, true) => s.admitted_file += 1,
            (PageKind::Anon, false) => s.rejected_anon += 1,
            (PageKind::File, false) => s.rejected_file += 1,
        }
        Verdict {
            admit,
            sampled_bytes: self.sampled_bytes(),
        }
    }

    fn forget_keys(&mut self) {
        self.by_key.clear();
    }

    fn lookup(&mut self, hit: bool) {
        // Shift the 256-bit window right by one; the new request enters at the top.
        for i in 0..3 {
            self.window[i] = (self.window[i] >> 1) | (self.window[i + 1] << 63);
        }
        self.window[3] = (self.window[3] >> 1) | ((hit as u64) << 63);
    }
}

#[cfg(test)]
mod tests {
    use super::super::ratio_fit::BINS;
    use super::*;

    /// ratio = entropy / 8 exactly at every bin centre.
    fn linear() -> RatioMap {
        let mut table = [0u16; BINS];
        for (i, t) in table.iter_mut().enumerate() {
            *t = (i as u32 * SCALE / 32) as u16;
        }
        RatioMap { table }
    }

    /// A page whose leading 512 bytes hold 2^k values equally often: entropy k bits.
    fn page_of_entropy(k: u32) -> [u8; 4096] {
        let mut p = [0u8; 4096];
        for (i, b) in p.iter_mut().enumerate() {
            *b = (i % (1 << k)) as u8;
        }
        p
    }

    fn query(kind: PageKind) -> AdmitQuery {
        // Capacity 0.5, two anonymous and two file entries (avg cost 25,000), avg ratio 0.5.
        AdmitQuery {
            memcg: 0,
            kind,
            live_anon: 2,
            live_file: 2,
            stored_bytes: 4 * 2048,
            used_chunk_bytes: 50 * 4096,
            limit_bytes: 100 * 4096,
        }
    }

    #[test]
    fn formula_on_hand_examples() {
        let mut sa = EntropyAdmission::new(linear(), Sample::PAPER, 10_000, 40_000);
        // Empty hit window: average 0, everything admitted (even a random-looking file page).
        assert_eq!(sa.average_benefit(&query(PageKind::File)), 0.0);
        assert!(
            sa.decide(
                &mut PageIn::ready(&page_of_entropy(8)),
                &query(PageKind::File)
            )
            .admit
        );
        // 128 hits of 256: average = 0.5 × 25,000 × 0.5 ÷ 0.5 = 12,500.
        for i in 0..256 {
            sa.lookup(i % 2 == 0);
        }
        assert_eq!(sa.hits(), 128);
        assert!((sa.average_benefit(&query(PageKind::File)) - 12_500.0).abs() < 1e-9);
        // File page at 6 bits: ratio 0.75 → 13,333 ≥ 12,500: admitted.
        let v = sa.decide(
            &mut PageIn::ready(&page_of_entropy(6)),
            &query(PageKind::File),
        );
        assert_eq!(
            v,
            Verdict {
                admit: true,
                sampled_bytes: 512
            }
        );
        // File page at 7 bits: ratio 0.875 → 11,429 < 12,500: refused.
        assert!(
            !sa.decide(
                &mut PageIn::ready(&page_of_entropy(7)),
                &query(PageKind::File)
            )
            .admit
        );
        // Exactly on the average: ratio 0.8 → 12,500 ≥ 12,500 (the paper's "greater than or equal").
        assert!(sa.admits(PageKind::File, 8_000, &query(PageKind::File)));
        assert!(!sa.admits(PageKind::File, 8_001, &query(PageKind::File)));
        // Anonymous page at 8 bits: 40,000 ÷ 1.0 ≥ 12,500.
        assert!(
            sa.decide(
                &mut PageIn::ready(&page_of_entropy(8)),
                &query(PageKind::Anon)
            )
            .admit
        );
        assert_eq!(
            sa.stats,
            SaStats {
                decisions: 4,
                admitted_anon: 1,
                admitted_file: 2,
                rejected_anon: 0,
                rejected_file: 1,
            }
        );
        // A full window of hits doubles the average (25,000): the 6-bit file page is refused now, an
        // anonymous page at 8 bits still goes in.
        for _ in 0..256 {
            sa.lookup(true);
        }
        assert_eq!(sa.hits(), 256);
        assert!(
            !sa.decide(
                &mut PageIn::ready(&page_of_entropy(6)),
                &query(PageKind::File)
            )
            .admit
        );
        assert!(
            sa.decide(
                &mut PageIn::ready(&page_of_entropy(8)),
                &query(PageKind::Anon)
            )
            .admit
        );
        // The window forgets: 256 misses empty it.
        for _ in 0..256 {
            sa.lookup(false);
        }
        assert_eq!(sa.hits(), 0);
    }

    #[test]
    fn the_code_sample_reads_every_fourth_byte() {
        let mut sa = EntropyAdmission::new(linear(), Sample::CODE, 10_000, 40_000);
        let v = sa.decide(
            &mut PageIn::ready(&page_of_entropy(4)),
            &query(PageKind::Anon),
        );
        assert_eq!(v.sampled_bytes, 1024);
    }

    /// The remembered estimate against computing it every time (the direct Shannon entropy through
    /// the same map, no table, no memo), for both samples, on a seeded stream of pages that repeat —
    /// constant, few-valued, text-like and random ones, some differing only past the leading 512
    /// bytes (the paper's sample ignores that difference; the code's must not) — and across the
    /// memo's emptying.
    #[test]
    fn remembered_estimates_equal_computing_every_time() {
        use nandstack_compress::entropy::shannon_bits_per_byte;
        use nandstack_core::Rng;
        let mut rng = Rng::new(23);
        let pages: Vec<[u8; 4096]> = (0..200)
            .map(|i| {
                let mut p = [0u8; 4096];
                match i % 5 {
                    0 => p.fill((i / 5) as u8),
                    1 => p
                        .iter_mut()
                        .for_each(|b| *b = (rng.below(1 + i as u64 % 7)) as u8),
                    2 => p.iter_mut().for_each(|b| *b = b'a' + rng.below(26) as u8),
                    3 => p.iter_mut().for_each(|b| *b = rng.next_u64() as u8),
                    _ => {
                        // Equal leading 512 bytes, a different tail.
                        p[512..]
                            .iter_mut()
                            .for_each(|b| *b = rng.below(1 + i as u64) as u8);
                    }
                }
                p
            })
            .collect();
        for sample in [Sample::PAPER, Sample::CODE, Sample::Whole] {
            let map = linear();
            let mut sa = EntropyAdmission::new(map, sample, 10_000, 40_000);
            let mut draws = Rng::new(5);
            for round in 0..3_000 {
                let page = &pages[draws.below(pages.len() as u64) as usize];
                let direct = map.estimate(shannon_bits_per_byte(page, sample));
                assert_eq!(sa.estimated_ratio(page), direct, "{sample:?} round {round}");
                if round == 1_500 {
                    sa.memo.clear(); // as at MEMO_ENTRIES
                }
            }
            // Each distinct span once; the paper's sample sees the equal-lead pages as one.
            assert!(sa.memo.len() <= pages.len());
            if sample == Sample::PAPER {
                assert!(sa.memo.len() < pages.len() - 30, "{}", sa.memo.len());
            }
        }
    }

    /// Estimates by page key against the direct entropy through the map, for every sample, on a
    /// seeded stream of offered pages: key k names page k mod 200 of the set above's kinds (several
    /// keys naming equal bytes), some offered without a key; a page whose key was seen is not built;
    /// forgetting the keys changes no estimate.
    #[test]
    fn estimates_by_key_equal_computing_every_time() {
        use crate::contents::PageContents;
        use nandstack_compress::entropy::shannon_bits_per_byte;
        use nandstack_core::Rng;
        struct Pages(Vec<[u8; 4096]>);
        impl PageContents for Pages {
            fn advance(&mut self, _refs: u64) {}
            fn page_bytes(&self, page: u32, out: &mut [u8; 4096]) {
                *out = self.0[page as usize % self.0.len()];
            }
            fn describe(&self) -> String {
                "pages".into()
            }
        }
        let mut rng = Rng::new(29);
        let pages: Vec<[u8; 4096]> = (0..200)
            .map(|i| {
                let mut p = [0u8; 4096];
                match i % 4 {
                    0 => p.fill((i / 4) as u8),
                    1 => p
                        .iter_mut()
                        .for_each(|b| *b = rng.below(1 + i as u64 % 9) as u8),
                    2 => p.iter_mut().for_each(|b| *b = rng.next_u64() as u8),
                    _ => p[512..]
                        .iter_mut()
                        .for_each(|b| *b = rng.below(1 + i as u64) as u8),
                }
                p
            })
            .collect();
        let contents = Pages(pages.clone());
        for sample in [Sample::PAPER, Sample::CODE, Sample::Whole] {
            let map = linear();
            let mut sa = EntropyAdmission::new(map, sample, 10_000, 40_000);
            let mut seen = std::collections::HashSet::new();
            let mut buf = [0u8; 4096];
            for round in 0..3_000u32 {
                let k = rng.below(600) as u32;
                let page = &pages[k as usize % pages.len()];
                let direct = map.estimate(shannon_bits_per_byte(page, sample));
                let key = (round % 7 != 0).then_some(k);
                let mut offered = PageIn::lazy(key, &contents, k, &mut buf);
                assert_eq!(
                    sa.estimated_ratio_of(&mut offered),
                    direct,
                    "{sample:?} round {round}"
                );
                if let Some(k) = key {
                    assert_eq!(offered.built(), !seen.contains(&k), "round {round}");
                    seen.insert(k);
                }
                if round == 1_500 {
                    sa.forget_keys();
                    seen.clear();
                }
            }
        }
    }
}

//! Multiple-Bloom-filter hot/cold identification (Park & Du, "Hot data identification for flash-based
//! storage systems using multiple Bloom filters", MSST 2011), the "BF-Optimized" baseline of SUP-GC.
//!
//! `filters` Bloom filters of `bits` bits and `hashes` hash functions each. Every host write of a logical
//! page is recorded in the *current* filter (if not already there); every `decay_writes` host writes the
//! oldest filter is cleared and becomes the current one, so a filter remembers one decay window. A page's
//! hotness is the recency-weighted number of filters holding it: the current filter counts `filters`, the
//! one before `filters − 1`, …, the oldest 1 (Park & Du weight recent windows higher). A write is hot when
//! the score — computed from the history *before* the write is recorded — reaches `hot_threshold`. Hot host
//! writes go to stream 0, cold ones to stream 1; GC and wear-levelling migrations are classified the same
//! way (and not recorded).
//!
//! Defaults: 4 filters × 2048 bits, 2 hashes, decay every 512 writes (the values suggested by Park & Du for
//! their evaluation and named in our issue); threshold = filters − 1 (written in the current or the previous
//! window, or in two older ones). Hashes: two independent multiplicative hashes of the logical page (double hashing
//! h_i = h1 + i·h2), deterministic.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PlacementPolicy, WriteCause, WriteCtx};

/// Most hash functions per filter (`hashes`).
pub const MAX_HASHES: usize = 8;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MbfConfig {
    /// Number of Bloom filters (≥ 1). Default 4.
    #[serde(default = "d_filters")]
    pub filters: u32,
    /// Bits per filter (≥ 8). Default 2048.
    #[serde(default = "d_bits")]
    pub bits: u32,
    /// Hash functions per filter (1–8). Default 2.
    #[serde(default = "d_hashes")]
    pub hashes: u32,
    /// Host writes per decay window (the oldest filter is reset at each window boundary). Default 512.
    #[serde(default = "d_decay")]
    pub decay_writes: u32,
    /// Recency-weighted score at which data is hot. Default: filters − 1.
    #[serde(default)]
    pub hot_threshold: Option<u32>,
    /// Controller CPU time per hash computation or bit test, ns (firmware cost model). Default 0.
    #[serde(default)]
    pub ns_per_hash: u64,
}
fn d_filters() -> u32 {
    4
}
fn d_bits() -> u32 {
    2048
}
fn d_hashes() -> u32 {
    2
}
fn d_decay() -> u32 {
    512
}
impl Default for MbfConfig {
    fn default() -> Self {
        MbfConfig {
            filters: 4,
            bits: 2048,
            hashes: 2,
            decay_writes: 512,
            hot_threshold: None,
            ns_per_hash: 0,
        }
    }
}

impl MbfConfig {
    pub fn validate(&self) -> nandstack_core::Result<()> {
        let bad = |k: &str, m: &str| {
            Err(nandstack_core::Error::config(
                format!("device.ftl.placement.{k}"),
                m.to_string(),
            ))
        };
        if self.filters == 0 || self.filters > 64 {
            return bad("filters", "must be in [1, 64]");
        }
        if self.bits < 8 {
            return bad("bits", "must be at least 8");
        }
        if self.hashes == 0 || self.hashes as usize > MAX_HASHES {
            return bad("hashes", &format!("must be in [1, {MAX_HASHES}]"));
        }
        if self.decay_writes == 0 {
            return bad("decay_writes", "must be at least 1");
        }
        Ok(())
    }
}

#[derive(Clone)]
pub struct Mbf {
    cfg: MbfConfig,
    /// filters × words of bits.
    words: Vec<u64>,
    words_per_filter: usize,
    current: usize,
    writes_in_window: u32,
    threshold: u32,
    /// Hash/bit operations performed so far (for the firmware cost model).
    pub hash_ops: u64,
}

impl Mbf {
    /// `cfg` must be valid ([`MbfConfig::validate`]).
    pub fn new(cfg: MbfConfig) -> Mbf {
        assert!(cfg.validate().is_ok(), "an unchecked MBF config: {cfg:?}");
        let words_per_filter = (cfg.bits as usize).div_ceil(64);
        let threshold = cfg
            .hot_threshold
            .unwrap_or(cfg.filters.saturating_sub(1).max(1));
        Mbf {
            words: vec![0; words_per_filter * cfg.filters as usize],
            words_per_filter,
            current: 0,
            writes_in_window: 0,
            threshold,
            hash_ops: 0,
            cfg,
        }
    }

    /// The filter bits of `lpn` (the first `hashes` entries; the same in every filter): double hashing,
    /// position i = (h1 + i · h2) mod bits.
    #[inline]
    fn positions(&self, lpn: u32) -> [usize; MAX_HASHES] {
        let h1 = (lpn as u64 ^ 0x9E37_79B9).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        let h1 = h1 ^ (h1 >> 33);
        let h2 = (lpn as u64).wrapping_mul(0xC4CE_B9FE_1A85_EC53) | 1;
        let bits = self.cfg.bits as u64;
        let mut out = [0; MAX_HASHES];
        let hashes = out.iter_mut().enumerate().take(self.cfg.hashes as usize);
        if bits.is_power_of_two() {
            // The default (2048 bits): the remainder is a mask, not a hardware divide per hash.
            for (i, b) in hashes {
                *b = (h1.wrapping_add((i as u64).wrapping_mul(h2)) & (bits - 1)) as usize;
            }
        } else {
            for (i, b) in hashes {
                *b = (h1.wrapping_add((i as u64).wrapping_mul(h2)) % bits) as usize;
            }
        }
        out
    }

    /// 1 if every bit at `pos` is set in `filter`, else 0. Every bit is read (no early exit): whether a
    /// page's bits are set is data, and a branch on it is mispredicted about as often as taken.
    #[inline]
    fn test(&self, filter: usize, pos: &[usize]) -> u32 {
        let words = &self.words[filter * self.words_per_filter..];
        let mut all = 1;
        for &b in pos {
            all &= words[b / 64] >> (b % 64);
        }
        (all & 1) as u32
    }

    /// Recency-weighted hotness of a logical page.
    pub fn score(&mut self, lpn: u32) -> u32 {
        let pos = self.positions(lpn);
        self.score_at(&pos[..self.cfg.hashes as usize])
    }

    /// [`Mbf::score`] of the page whose bits are `pos`: each filter is counted as `hashes` hash
    /// operations (the firmware computes them per filter), though the positions are computed once here.
    fn score_at(&mut self, pos: &[usize]) -> u32 {
        let n = self.cfg.filters as usize;
        let mut s = 0;
        // From the current filter back to the oldest: filter (current − age) mod n, stepped down.
        self.hash_ops += (n as u64) * self.cfg.hashes as u64;
        let mut f = self.current;
        for age in 0..n {
            s += (n - age) as u32 * self.test(f, pos);
            f = if f == 0 { n - 1 } else { f - 1 };
        }
        s
    }

    /// Record a host write: set its bits in the current filter; advance the window.
    pub fn record(&mut self, lpn: u32) {
        let pos = self.positions(lpn);
        self.record_at(&pos[..self.cfg.hashes as usize]);
    }

    fn record_at(&mut self, pos: &[usize]) {
        self.hash_ops += self.cfg.hashes as u64;
        let base = self.current * self.words_per_filter;
        for &b in pos {
            self.words[base + b / 64] |= 1 << (b % 64);
        }
        self.writes_in_window += 1;
        if self.writes_in_window >= self.cfg.decay_writes {
            self.writes_in_window = 0;
            let n = self.cfg.filters as usize;
            self.current = (self.current + 1) % n;
            let base = self.current * self.words_per_filter;
            self.words[base..base + self.words_per_filter]
                .iter_mut()
                .for_each(|w| *w = 0);
        }
    }

    pub fn is_hot(&mut self, lpn: u32) -> bool {
        self.score(lpn) >= self.threshold
    }
}

impl PlacementPolicy for Mbf {
    fn name(&self) -> &'static str {
        "mbf"
    }
    fn streams(&self) -> u32 {
        2
    }
    fn stream_for(&mut self, ctx: &WriteCtx) -> u8 {
        let pos = self.positions(ctx.lpn);
        let pos = &pos[..self.cfg.hashes as usize];
        let hot = self.score_at(pos) >= self.threshold;
        if ctx.cause == WriteCause::Host {
            self.record_at(pos);
        }
        if hot {
            0
        } else {
            1
        }
    }
    fn firmware_ns(&self) -> u64 {
        self.hash_ops * self.cfg.ns_per_hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_decay_as_configured() {
        let mut m = Mbf::new(MbfConfig {
            filters: 4,
            decay_writes: 10,
            ..MbfConfig::default()
        });
        m.record(7);
        assert_eq!(m.score(7), 4, "in the current window: full weight");
        // Nine more writes: the tenth write of the window closes it; page 7 is now one window old.
        for i in 100..108 {
            m.record(i);
        }
        assert_eq!(m.score(7), 4, "nine writes: still the current window");
        m.record(108);
        assert_eq!(m.score(7), 3, "the tenth write closed the window");
        m.record(200);
        assert_eq!(m.score(7), 3);
        for w in 0..3 {
            for i in 0..10 {
                m.record(1000 + w * 100 + i);
            }
        }
        // After four windows the filter that held page 7 has been reset.
        assert_eq!(m.score(7), 0);
    }

    #[test]
    fn repeated_writes_are_hot_single_writes_cold() {
        let mut m = Mbf::new(MbfConfig {
            decay_writes: 8,
            ..MbfConfig::default()
        });
        for round in 0..6u32 {
            for i in 0..4 {
                m.record(i); // hot set {0..3}, written every window
            }
            for i in 0..4 {
                m.record(10_000 + round * 4 + i); // cold: each written once
            }
        }
        assert!((0..4).all(|i| m.is_hot(i)));
        // Pages written once, two or more windows ago, are cold (up to a Bloom false positive); the last
        // window's once-written pages are recent, so recency makes them look hot — that is MBF's design.
        let old_hot = (0..20).filter(|i| m.is_hot(10_000 + i)).count();
        assert!(old_hot <= 1, "{old_hot} old once-written pages look hot");
        assert!((20..24).all(|i| m.is_hot(10_000 + i)));
        // Hash work is counted for the cost model.
        let mut costly = Mbf::new(MbfConfig {
            ns_per_hash: 10,
            ..MbfConfig::default()
        });
        let ctx = WriteCtx {
            lpn: 1,
            cause: WriteCause::Host,
            source_stream: None,
            request_bytes: 4096,
        };
        costly.stream_for(&ctx);
        // score: 4 filters × 2 hashes; record: 2 hashes.
        assert_eq!(costly.firmware_ns(), (8 + 2) * 10);
        // A page seen once before is hot on its next write (score 4 ≥ 3); a first write is cold.
        assert_eq!(costly.stream_for(&ctx), 0);
        assert_eq!(costly.stream_for(&WriteCtx { lpn: 99, ..ctx }), 1);
    }

    /// The plain multi-Bloom filter: one `Vec<bool>` of bits per window, each position computed where it
    /// is used by the double-hashing formula, windows rotated by hand, and the score summed filter by
    /// filter. Seeded host and GC writes with a small filter (false positives happen) and a short window:
    /// the same score and stream for every write, and the same hash-operation count.
    #[test]
    fn matches_a_plain_multi_bloom_filter() {
        // 600 bits: the remainder by division; 512: by mask (the default's path).
        for (seed, hashes, filters, hot, nbits) in [
            (1u64, 2u32, 4u32, None, 600u32),
            (2, 8, 3, Some(1), 600),
            (3, 1, 1, None, 600),
            (4, 5, 7, Some(9), 600),
            (5, 2, 4, None, 512),
            (6, 3, 5, Some(7), 512),
        ] {
            let cfg = MbfConfig {
                filters,
                hashes,
                bits: nbits,
                decay_writes: 37,
                hot_threshold: hot,
                ..MbfConfig::default()
            };
            let mut m = Mbf::new(cfg.clone());
            let n = filters as usize;
            let mut bits = vec![vec![false; nbits as usize]; n];
            let (mut current, mut in_window, mut hash_ops) = (0usize, 0u32, 0u64);
            let threshold = cfg
                .hot_threshold
                .unwrap_or(filters.saturating_sub(1).max(1));
            let bit = |lpn: u32, i: u64| {
                let h1 = (lpn as u64 ^ 0x9E37_79B9).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
                let h1 = h1 ^ (h1 >> 33);
                let h2 = (lpn as u64).wrapping_mul(0xC4CE_B9FE_1A85_EC53) | 1;
                (h1.wrapping_add(i.wrapping_mul(h2)) % u64::from(nbits)) as usize
            };
            let mut rng = nandstack_core::Rng::new(seed);
            for step in 0..20_000 {
                let lpn = rng.below(400) as u32;
                let host = rng.chance(0.8);
                let mut score = 0;
                for age in 0..n {
                    let f = (current + n - age) % n;
                    hash_ops += u64::from(hashes);
                    if (0..u64::from(hashes)).all(|i| bits[f][bit(lpn, i)]) {
                        score += (n - age) as u32;
                    }
                }
                assert_eq!(m.score(lpn), score, "seed {seed}, step {step}");
                hash_ops += u64::from(hashes) * n as u64; // the score just asked, and the write's own
                let want = if score >= threshold { 0 } else { 1 };
                if host {
                    hash_ops += u64::from(hashes);
                    for i in 0..u64::from(hashes) {
                        bits[current][bit(lpn, i)] = true;
                    }
                    in_window += 1;
                    if in_window == cfg.decay_writes {
                        in_window = 0;
                        current = (current + 1) % n;
                        bits[current].iter_mut().for_each(|b| *b = false);
                    }
                }
                let ctx = WriteCtx {
                    lpn,
                    cause: if host {
                        WriteCause::Host
                    } else {
                        WriteCause::Gc
                    },
                    source_stream: None,
                    request_bytes: 4096,
                };
                assert_eq!(m.stream_for(&ctx), want, "seed {seed}, step {step}");
                assert_eq!(m.hash_ops, hash_ops, "seed {seed}, step {step}");
            }
        }
    }
}

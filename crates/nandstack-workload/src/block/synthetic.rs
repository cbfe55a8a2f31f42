//! Seeded synthetic block workloads: access pattern × op mix × request-size mix over a footprint.

use nandstack_core::{Error, Result, Rng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{BlockRequest, Op};
use crate::perm::Permutation;
use crate::zipf::Zipf;

/// Address pattern.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Consecutive requests, wrapping at the end of the footprint.
    Sequential,
    /// Uniformly random aligned offsets.
    Uniform,
    /// Zipf(θ) over aligned slots; rank order scattered by a seeded permutation unless `scramble = false`.
    Zipf,
    /// `hot_ops_fraction` of the requests go uniformly to the first `hot_space_fraction` of the footprint,
    /// the rest uniformly to the remainder.
    HotCold,
}

/// One entry of a request-size mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    pub bytes: u64,
    pub weight: f64,
}

/// A synthetic block workload, fully described by TOML (`[workload]`) and `--set workload.KEY=VALUE`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    /// sequential, uniform (default), zipf or hot_cold.
    #[serde(default = "d_pattern")]
    pub pattern: Pattern,
    /// Requests in the measured phase. Default 2,000,000.
    #[serde(default = "d_requests")]
    pub requests: u64,
    /// Fraction of requests that are reads, in [0, 1]. Default 0.
    #[serde(default)]
    pub read_fraction: f64,
    /// Fraction of requests that are TRIMs, in [0, 1]; read + trim ≤ 1. Default 0.
    #[serde(default)]
    pub trim_fraction: f64,
    /// Request size in bytes when `request_sizes` is empty. Default 4096.
    #[serde(default = "d_size")]
    pub request_size_bytes: u64,
    /// Weighted request-size mix, e.g. `[{ bytes = 4096, weight = 3 }, { bytes = 65536, weight = 1 }]`.
    #[serde(default)]
    pub request_sizes: Vec<SizeWeight>,
    /// Request offsets are multiples of this (bytes, ≥ 512). Default 4096.
    #[serde(default = "d_align")]
    pub align_bytes: u64,
    /// Fraction of the logical space the workload addresses, from its start, in (0, 1]. Default 1.
    #[serde(default = "d_one")]
    pub footprint_fraction: f64,
    /// Zipf exponent θ > 0 (pattern = zipf only). Default 0.99.
    #[serde(default)]
    pub zipf_theta: Option<f64>,
    /// Scatter zipf ranks over the footprint (pattern = zipf only). Default true.
    #[serde(default)]
    pub scramble: Option<bool>,
    /// Fraction of requests that go to the hot region (pattern = hot_cold only). Default 0.8.
    #[serde(default)]
    pub hot_ops_fraction: Option<f64>,
    /// Fraction of the footprint that is hot (pattern = hot_cold only). Default 0.2.
    #[serde(default)]
    pub hot_space_fraction: Option<f64>,
    /// Open-loop arrival rate in requests per simulated second (Poisson arrivals), in [1e-6, 1e9]; only
    /// with `workload.io.mode = "open_loop"` and a synthetic workload (elsewhere it is an error, never
    /// silently ignored). Default: unset.
    #[serde(default)]
    pub arrival_iops: Option<f64>,
    /// fio's random map (pattern = uniform only, one request size): every request-sized block of the
    /// footprint is visited exactly once per pass, in a fresh seeded random order each pass, as fio does
    /// unless `norandommap` is set. Reads, writes and TRIMs share the map (fio keeps one per file).
    /// Default false (independent uniform offsets, i.e. fio's `norandommap`).
    #[serde(default)]
    pub random_map: bool,
}

fn d_pattern() -> Pattern {
    Pattern::Uniform
}
fn d_requests() -> u64 {
    2_000_000
}
fn d_size() -> u64 {
    4096
}
fn d_align() -> u64 {
    4096
}
fn d_one() -> f64 {
    1.0
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            pattern: d_pattern(),
            requests: d_requests(),
            read_fraction: 0.0,
            trim_fraction: 0.0,
            request_size_bytes: d_size(),
            request_sizes: Vec::new(),
            align_bytes: d_align(),
            footprint_fraction: 1.0,
            zipf_theta: None,
            scramble: None,
            hot_ops_fraction: None,
            hot_space_fraction: None,
            arrival_iops: None,
            random_map: false,
        }
    }
}

fn frac(key: &str, v: f64, lo_open: bool) -> Result<()> {
    let ok = v.is_finite() && v <= 1.0 && if lo_open { v > 0.0 } else { v >= 0.0 };
    if !ok {
        let range = if lo_open { "(0, 1]" } else { "[0, 1]" };
        return Err(Error::config(
            format!("workload.{key}"),
            format!("is {v}: must be in {range}"),
        ));
    }
    Ok(())
}

impl SyntheticConfig {
    /// Check the workload against a logical capacity (bytes).
    pub fn validate(&self, logical_bytes: u64) -> Result<()> {
        frac("read_fraction", self.read_fraction, false)?;
        frac("trim_fraction", self.trim_fraction, false)?;
        frac("footprint_fraction", self.footprint_fraction, true)?;
        if self.read_fraction + self.trim_fraction > 1.0 {
            return Err(Error::config(
                "workload.trim_fraction",
                "read_fraction + trim_fraction exceeds 1",
            ));
        }
        if self.align_bytes < 512 || !self.align_bytes.is_multiple_of(512) {
            return Err(Error::config(
                "workload.align_bytes",
                format!(
                    "is {}: must be a positive multiple of 512",
                    self.align_bytes
                ),
            ));
        }
        let only = |key: &str, set: bool, pattern: &str| -> Result<()> {
            if set {
                return Err(Error::config(
                    format!("workload.{key}"),
                    format!("applies only to pattern = \"{pattern}\""),
                ));
            }
            Ok(())
        };
        only(
            "zipf_theta",
            self.zipf_theta.is_some() && self.pattern != Pattern::Zipf,
            "zipf",
        )?;
        only(
            "scramble",
            self.scramble.is_some() && self.pattern != Pattern::Zipf,
            "zipf",
        )?;
        only(
            "hot_ops_fraction",
            self.hot_ops_fraction.is_some() && self.pattern != Pattern::HotCold,
            "hot_cold",
        )?;
        only(
            "hot_space_fraction",
            self.hot_space_fraction.is_some() && self.pattern != Pattern::HotCold,
            "hot_cold",
        )?;
        only(
            "random_map",
            self.random_map && self.pattern != Pattern::Uniform,
            "uniform",
        )?;
        if self.random_map && !self.request_sizes.is_empty() {
            return Err(Error::config(
                "workload.random_map",
                "needs a single request size (request_size_bytes), not a request_sizes mix",
            ));
        }
        if let Some(t) = self.zipf_theta {
            if !(t.is_finite() && t > 0.0 && t <= 10.0) {
                return Err(Error::config(
                    "workload.zipf_theta",
                    format!("is {t}: must be in (0, 10]"),
                ));
            }
        }
        if let Some(h) = self.hot_ops_fraction {
            frac("hot_ops_fraction", h, false)?;
        }
        if let Some(h) = self.hot_space_fraction {
            frac("hot_space_fraction", h, true)?;
            if h >= 1.0 {
                return Err(Error::config(
                    "workload.hot_space_fraction",
                    "must be below 1 (there must be a cold region)",
                ));
            }
        }
        if let Some(r) = self.arrival_iops {
            if !(r.is_finite() && (1e-6..=1e9).contains(&r)) {
                return Err(Error::config(
                    "workload.arrival_iops",
                    format!("is {r}: must be in [1e-6, 1e9] requests per second"),
                ));
            }
        }
        let footprint = (logical_bytes as f64 * self.footprint_fraction) as u64 / self.align_bytes
            * self.align_bytes;
        let sizes: Vec<u64> = if self.request_sizes.is_empty() {
            vec![self.request_size_bytes]
        } else {
            self.request_sizes.iter().map(|s| s.bytes).collect()
        };
        for (i, s) in self.request_sizes.iter().enumerate() {
            if !(s.weight.is_finite() && s.weight >= 0.0) {
                return Err(Error::config(
                    format!("workload.request_sizes[{i}].weight"),
                    "must be a finite number ≥ 0",
                ));
            }
        }
        if !self.request_sizes.is_empty() && self.request_sizes.iter().all(|s| s.weight == 0.0) {
            return Err(Error::config(
                "workload.request_sizes",
                "all weights are zero",
            ));
        }
        for s in sizes {
            if s == 0 || s > footprint / 2 {
                return Err(Error::config(
                    "workload.request_size_bytes",
                    format!("request size {s} must be between 1 and half the footprint ({footprint} bytes)"),
                ));
            }
        }
        Ok(())
    }
}

/// Generates the requests of a [`SyntheticConfig`] over a logical space.
#[derive(Clone)]
pub struct BlockGenerator {
    cfg: SyntheticConfig,
    rng: Rng,
    slots: u64,
    align: u64,
    cursor: u64,
    zipf: Option<Zipf>,
    perm: Option<Permutation>,
    hot_slots: u64,
    size_cdf: Vec<(f64, u64)>,
    arrival_rng: Rng,
    /// fio random map: the permutation of the current pass, its position, the pass number and the seed.
    map: Option<RandomMap>,
}

/// One pass over `blocks` request-sized blocks in a seeded random order; a new order every pass.
#[derive(Clone)]
struct RandomMap {
    blocks: u64,
    pass: u64,
    next: u64,
    order: Permutation,
    seed: u64,
}

impl RandomMap {
    fn new(blocks: u64, seed: u64) -> RandomMap {
        RandomMap {
            blocks,
            pass: 0,
            next: 0,
            order: Permutation::new(blocks, seed),
            seed,
        }
    }
    fn next_block(&mut self) -> u64 {
        if self.next == self.blocks {
            self.pass += 1;
            self.next = 0;
            self.order =
                Permutation::new(self.blocks, self.seed ^ self.pass.wrapping_mul(0x9e37_79b9));
        }
        self.next += 1;
        self.order.apply(self.next - 1)
    }
}

impl BlockGenerator {
    pub fn new(cfg: &SyntheticConfig, logical_bytes: u64, seed: u64) -> Result<BlockGenerator> {
        cfg.validate(logical_bytes)?;
        let align = cfg.align_bytes;
        let slots = (logical_bytes as f64 * cfg.footprint_fraction) as u64 / align;
        let zipf = (cfg.pattern == Pattern::Zipf)
            .then(|| Zipf::new(slots, cfg.zipf_theta.unwrap_or(0.99)));
        let perm = (cfg.pattern == Pattern::Zipf && cfg.scramble.unwrap_or(true))
            .then(|| Permutation::new(slots, seed));
        let hot_slots =
            ((slots as f64 * cfg.hot_space_fraction.unwrap_or(0.2)) as u64).clamp(1, slots - 1);
        let mut size_cdf = Vec::new();
        let total: f64 = cfg.request_sizes.iter().map(|s| s.weight).sum();
        let mut acc = 0.0;
        for s in &cfg.request_sizes {
            acc += s.weight / total;
            size_cdf.push((acc, s.bytes));
        }
        Ok(BlockGenerator {
            cfg: cfg.clone(),
            rng: Rng::derive(seed, 0x776b_6c64),
            slots,
            align,
            cursor: 0,
            zipf,
            perm,
            hot_slots,
            size_cdf,
            arrival_rng: Rng::derive(seed, 0x6172_7276),
            map: cfg.random_map.then(|| {
                let span = cfg.request_size_bytes.div_ceil(align);
                RandomMap::new(slots / span, seed ^ 0x006d_6170)
            }),
        })
    }

    fn size(&mut self) -> u64 {
        if self.size_cdf.is_empty() {
            return self.cfg.request_size_bytes;
        }
        let u = self.rng.unit_f64();
        self.size_cdf
            .iter()
            .find(|(c, _)| u < *c)
            .map_or(self.size_cdf.last().unwrap().1, |&(_, b)| b)
    }

    /// Arrival time (ns) of the next request under Poisson arrivals at `arrival_iops`, if set.
    ///
    /// Simulated time past 2^64 ns (584 years) is an error naming `workload.arrival_iops`.
    pub fn next_arrival_ns(&mut self, now_ns: u64) -> Result<Option<u64>> {
        let Some(rate) = self.cfg.arrival_iops else {
            return Ok(None);
        };
        let gap_ns = (-(1.0 - self.arrival_rng.unit_f64()).ln() / rate * 1e9).round();
        let at = (gap_ns < u64::MAX as f64)
            .then(|| now_ns.checked_add(gap_ns as u64))
            .flatten();
        at.map(Some).ok_or_else(|| {
            Error::config(
                "workload.arrival_iops",
                format!(
                    "at {rate} requests per second the arrivals pass 2^64 ns (584 years) of simulated \
                     time; raise the rate or lower workload.requests"
                ),
            )
        })
    }

    /// The next request (the generator is endless; the driver decides how many to take).
    pub fn next_request(&mut self) -> BlockRequest {
        let u = self.rng.unit_f64();
        let op = if u < self.cfg.read_fraction {
            Op::Read
        } else if u < self.cfg.read_fraction + self.cfg.trim_fraction {
            Op::Trim
        } else {
            Op::Write
        };
        let len = self.size();
        let span = len.div_ceil(self.align); // slots the request covers
        let last_start = self.slots - span; // validated: span ≤ slots / 2
        let slot = match self.cfg.pattern {
            Pattern::Sequential => {
                if self.cursor > last_start {
                    self.cursor = 0;
                }
                let s = self.cursor;
                self.cursor += span;
                s
            }
            Pattern::Uniform => match self.map.as_mut() {
                Some(m) => m.next_block() * span,
                None => self.rng.below(last_start + 1),
            },
            Pattern::Zipf => {
                let rank = self.zipf.as_ref().unwrap().sample(&mut self.rng) - 1;
                let s = self.perm.as_ref().map_or(rank, |p| p.apply(rank));
                s.min(last_start)
            }
            Pattern::HotCold => {
                let hot = self.rng.chance(self.cfg.hot_ops_fraction.unwrap_or(0.8));
                let s = if hot {
                    self.rng.below(self.hot_slots)
                } else {
                    self.hot_slots + self.rng.below(self.slots - self.hot_slots)
                };
                s.min(last_start)
            }
        };
        BlockRequest {
            op,
            offset: slot * self.align,
            len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: u64 = 1 << 30;

    fn gen(cfg: SyntheticConfig) -> BlockGenerator {
        BlockGenerator::new(&cfg, CAP, 7).unwrap()
    }

    #[test]
    fn random_map_visits_every_block_once_per_pass_in_a_new_order() {
        let cfg = SyntheticConfig {
            random_map: true,
            request_size_bytes: 8192,
            footprint_fraction: 0.001,
            read_fraction: 0.3,
            ..Default::default()
        };
        let mut g = gen(cfg.clone());
        let blocks = (CAP as f64 * 0.001) as u64 / 4096 / 2;
        let mut passes = Vec::new();
        for _ in 0..3 {
            let mut seen: Vec<u64> = (0..blocks).map(|_| g.next_request().offset).collect();
            let order = seen.clone();
            seen.sort_unstable();
            let want: Vec<u64> = (0..blocks).map(|b| b * 8192).collect();
            assert_eq!(seen, want, "each 8 KiB block exactly once per pass");
            passes.push(order);
        }
        assert_ne!(passes[0], passes[1]);
        assert_ne!(passes[1], passes[2]);
        // Not the identity order either.
        assert_ne!(passes[0], (0..blocks).map(|b| b * 8192).collect::<Vec<_>>());
        // Only for the uniform pattern, and a single size.
        let e = SyntheticConfig {
            pattern: Pattern::Zipf,
            ..cfg.clone()
        }
        .validate(CAP)
        .unwrap_err()
        .to_string();
        assert!(e.contains("random_map"), "{e}");
        let e = SyntheticConfig {
            request_sizes: vec![SizeWeight {
                bytes: 4096,
                weight: 1.0,
            }],
            ..cfg
        }
        .validate(CAP)
        .unwrap_err()
        .to_string();
        assert!(e.contains("random_map"), "{e}");
    }

    #[test]
    fn sequential_wraps_and_is_contiguous() {
        let mut g = gen(SyntheticConfig {
            pattern: Pattern::Sequential,
            request_size_bytes: 8192,
            footprint_fraction: 0.0001,
            ..Default::default()
        });
        let reqs: Vec<_> = (0..20).map(|_| g.next_request()).collect();
        assert_eq!(reqs[0].offset, 0);
        assert_eq!(reqs[1].offset, 8192);
        assert!(reqs.iter().all(|r| r.op == Op::Write
            && r.len == 8192
            && r.offset + r.len <= CAP / 10_000 + 8192));
        assert!(reqs.iter().skip(1).any(|r| r.offset == 0), "wraps");
    }

    #[test]
    fn op_mix_and_size_mix_match_the_config() {
        let mut g = gen(SyntheticConfig {
            read_fraction: 0.3,
            trim_fraction: 0.1,
            request_sizes: vec![
                SizeWeight {
                    bytes: 4096,
                    weight: 3.0,
                },
                SizeWeight {
                    bytes: 65536,
                    weight: 1.0,
                },
            ],
            ..Default::default()
        });
        let n = 100_000;
        let (mut r, mut t, mut big) = (0, 0, 0);
        for _ in 0..n {
            let q = g.next_request();
            assert_eq!(q.offset % 4096, 0);
            assert!(q.offset + q.len <= CAP);
            r += (q.op == Op::Read) as u32;
            t += (q.op == Op::Trim) as u32;
            big += (q.len == 65536) as u32;
        }
        assert!((r as f64 / n as f64 - 0.3).abs() < 0.01);
        assert!((t as f64 / n as f64 - 0.1).abs() < 0.01);
        assert!((big as f64 / n as f64 - 0.25).abs() < 0.01);
    }

    #[test]
    fn hot_cold_sends_the_configured_share_to_the_hot_region() {
        let mut g = gen(SyntheticConfig {
            pattern: Pattern::HotCold,
            hot_ops_fraction: Some(0.9),
            hot_space_fraction: Some(0.1),
            ..Default::default()
        });
        let n = 100_000;
        let hot = (0..n)
            .filter(|_| g.next_request().offset < CAP / 10)
            .count();
        assert!((hot as f64 / n as f64 - 0.9).abs() < 0.01, "{hot}");
    }

    #[test]
    fn zipf_concentrates_on_few_slots() {
        let mut g = gen(SyntheticConfig {
            pattern: Pattern::Zipf,
            zipf_theta: Some(1.2),
            ..Default::default()
        });
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..50_000 {
            *counts.entry(g.next_request().offset).or_insert(0u32) += 1;
        }
        let mut v: Vec<u32> = counts.into_values().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = v.iter().take(10).sum();
        assert!(top10 > 20_000, "top-10 slots got {top10} of 50000");
    }

    #[test]
    fn same_seed_same_requests() {
        let cfg = SyntheticConfig {
            pattern: Pattern::Zipf,
            read_fraction: 0.5,
            ..Default::default()
        };
        let a: Vec<_> = {
            let mut g = BlockGenerator::new(&cfg, CAP, 1).unwrap();
            (0..100).map(|_| g.next_request()).collect()
        };
        let b: Vec<_> = {
            let mut g = BlockGenerator::new(&cfg, CAP, 1).unwrap();
            (0..100).map(|_| g.next_request()).collect()
        };
        let c: Vec<_> = {
            let mut g = BlockGenerator::new(&cfg, CAP, 2).unwrap();
            (0..100).map(|_| g.next_request()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn bad_values_are_named() {
        let e = |cfg: SyntheticConfig| BlockGenerator::new(&cfg, CAP, 0).err().unwrap().to_string();
        assert!(e(SyntheticConfig {
            read_fraction: 1.5,
            ..Default::default()
        })
        .contains("workload.read_fraction"));
        assert!(e(SyntheticConfig {
            zipf_theta: Some(0.9),
            ..Default::default()
        })
        .contains("only to pattern"));
        assert!(e(SyntheticConfig {
            request_size_bytes: 0,
            ..Default::default()
        })
        .contains("request_size_bytes"));
        assert!(e(SyntheticConfig {
            align_bytes: 100,
            ..Default::default()
        })
        .contains("align_bytes"));
        assert!(e(SyntheticConfig {
            pattern: Pattern::HotCold,
            hot_space_fraction: Some(1.0),
            ..Default::default()
        })
        .contains("hot_space_fraction"));
    }
}

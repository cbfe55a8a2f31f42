//! `[host.zswap.ezswap]`: the policies of ezswap (Kim, Kim and Seo, IEEE Access 2019) that replace or
//! extend zswap's — selective admission (SA), compressibility-aware lottery replacement (CA) and
//! all-page accommodation (APA). Everything defaults to plain zswap.

use nandstack_compress::entropy::Sample;
use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::zpool::ZpoolKind;

/// Which pages the compressed cache stores.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdmissionKind {
    /// zswap: every page that passes the pool limit.
    All,
    /// ezswap's SA: a page whose expected benefit (cost ÷ compression ratio estimated from the entropy
    /// of a sample) is at least the pool's average benefit.
    Entropy,
}

/// Which entries the writeback worker takes when the pool must shrink.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplacementKind {
    /// Linux 6.18 zswap: per-cgroup LRU of entries with a second chance.
    Lru,
    /// zswap of Linux 4.7 on z3fold/zbud (the paper's baseline): LRU of pool pages by their last store;
    /// the tail page's objects all go.
    PageLru,
    /// ezswap's CA: 18 categories of pool pages, a lottery with tickets N_i × W_i, the tail page of
    /// the chosen category's list.
    Lottery,
    /// CA as the authors' code has it: 19 lists, the code's weights, tickets by list share, head or
    /// tail by the objects' mean age (`lottery_code_age`). docs/ezswap.md.
    LotteryCode,
}

/// Which bytes of the page enter the entropy estimate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntropySample {
    /// The leading 512 bytes (the paper, §III-B).
    Leading512,
    /// Every 4th byte (the authors' code).
    Stride4,
}

impl EntropySample {
    pub fn sample(self) -> Sample {
        match self {
            EntropySample::Leading512 => Sample::PAPER,
            EntropySample::Stride4 => Sample::CODE,
        }
    }
}

/// ezswap's policies. See the module documentation and docs/ezswap.md.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EzswapConfig {
    /// `all` (zswap) or `entropy` (SA). Default `all`.
    #[serde(default = "d_admission")]
    pub admission: AdmissionKind,
    /// `lru` (zswap 6.18), `page_lru` (zswap 4.7 on z3fold), `lottery` (CA as the paper describes it)
    /// or `lottery_code` (CA as the authors' code has it); the last three need a page-granular pool
    /// (`zpool = "z3fold"`, `"z3fold_4_8"` or `"zbud"`). Default `lru`.
    #[serde(default = "d_replacement")]
    pub replacement: ReplacementKind,
    /// APA: clean file pages dropped from the page cache are stored in the pool too, and a file read
    /// is served from the pool where it holds the blocks. Default false.
    #[serde(default)]
    pub apa: bool,
    /// SA's entropy sample: `leading512` (the paper) or `stride4` (the authors' code). Default
    /// `leading512`.
    #[serde(default = "d_sample")]
    pub sample: EntropySample,
    /// SA's cost of a file page (one read to reload it), in the code's integer units. Default 10000.
    #[serde(default = "d_cost_file")]
    pub cost_file: u32,
    /// SA's cost of an anonymous page (a read and a write), in the same units. Default 40000.
    #[serde(default = "d_cost_anon")]
    pub cost_anon: u32,
    /// Entropy estimation CPU cost, cycles per sampled byte. Default 4.1 (compress_bench: 802 ns for
    /// the 512-byte sample at 2.6 GHz; every 4th byte measured 2.9 per sampled byte, docs/ezswap.md).
    #[serde(default = "d_entropy_cycles")]
    pub entropy_cycles_per_byte: f64,
    /// Seed of the lottery's generator (mixed with the run seed). Default 0.
    #[serde(default)]
    pub lottery_seed: u64,
    /// `lottery_code`: a page that lost an object goes to its list's head while the mean age of its
    /// objects, in entries stored since, is below this, else to the tail. Default 150000 (the code's,
    /// for its full-size pool: scale it with the pool). Left out of the resolved configuration while
    /// default.
    #[serde(default = "d_code_age", skip_serializing_if = "is_d_code_age")]
    pub lottery_code_age: u64,
}
fn d_code_age() -> u64 {
    super::lottery_code::CODE_AGE_THRESHOLD
}
fn is_d_code_age(v: &u64) -> bool {
    *v == d_code_age()
}
fn d_admission() -> AdmissionKind {
    AdmissionKind::All
}
fn d_replacement() -> ReplacementKind {
    ReplacementKind::Lru
}
fn d_sample() -> EntropySample {
    EntropySample::Leading512
}
fn d_cost_file() -> u32 {
    10_000
}
fn d_cost_anon() -> u32 {
    40_000
}
fn d_entropy_cycles() -> f64 {
    4.1
}
impl Default for EzswapConfig {
    fn default() -> Self {
        EzswapConfig {
            admission: d_admission(),
            replacement: d_replacement(),
            apa: false,
            sample: d_sample(),
            cost_file: d_cost_file(),
            cost_anon: d_cost_anon(),
            entropy_cycles_per_byte: d_entropy_cycles(),
            lottery_seed: 0,
            lottery_code_age: d_code_age(),
        }
    }
}

impl EzswapConfig {
    pub fn validate(&self, zpool: ZpoolKind) -> Result<()> {
        if self.replacement != ReplacementKind::Lru && zpool == ZpoolKind::Zsmalloc {
            return Err(Error::config(
                "host.zswap.ezswap.replacement",
                format!(
                    "`{:?}` ranks pool pages of up to three objects (z3fold, zbud); zsmalloc's zspages \
                     hold up to hundreds of objects of one size class and are never freed by evicting \
                     one page: set host.zswap.zpool = \"z3fold\" (the paper's) or \"zbud\"",
                    self.replacement
                )
                .to_lowercase(),
            ));
        }
        for (k, v) in [("cost_file", self.cost_file), ("cost_anon", self.cost_anon)] {
            if v == 0 || v > 1_000_000 {
                return Err(Error::config(
                    format!("host.zswap.ezswap.{k}"),
                    format!("is {v}: must be in [1, 1000000]"),
                ));
            }
        }
        let e = self.entropy_cycles_per_byte;
        if !(e.is_finite() && (0.0..1e6).contains(&e)) {
            return Err(Error::config(
                "host.zswap.ezswap.entropy_cycles_per_byte",
                format!("is {e}: must be finite and ≥ 0"),
            ));
        }
        Ok(())
    }

    /// Whether any policy differs from zswap's.
    pub fn is_zswap(&self) -> bool {
        self.admission == AdmissionKind::All
            && self.replacement == ReplacementKind::Lru
            && !self.apa
    }
}

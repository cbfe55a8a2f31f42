//! The compressors and their CPU cost (`[host.compression]`: the time of compressing and decompressing a
//! page), shared by zram (a backend) and zswap (the compressed cache); below both.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use nandstack_compress::{Algorithm, Compressor};
use nandstack_core::{Error, Nanos, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::contents::PageIn;

/// A compressor, named as the kernel names it (`/sys/module/zswap/parameters/compressor`,
/// `/sys/block/zram0/comp_algorithm`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CompressorKind {
    /// LZO1X-1 (`lib/lzo`).
    #[serde(rename = "lzo")]
    Lzo,
    /// The kernel's LZO1X-1 variant with zero-run encoding (zram's default).
    #[serde(rename = "lzo-rle")]
    LzoRle,
    /// LZ4 at the default acceleration.
    #[serde(rename = "lz4")]
    Lz4,
    /// Raw deflate, level 6, 2 KiB window (`crypto/deflate.c`).
    #[serde(rename = "deflate")]
    Deflate,
    /// zstd level 3 with the kernel's parameters.
    #[serde(rename = "zstd")]
    Zstd,
}

impl CompressorKind {
    pub fn algorithm(self) -> Algorithm {
        match self {
            CompressorKind::Lzo => Algorithm::Lzo,
            CompressorKind::LzoRle => Algorithm::LzoRle,
            CompressorKind::Lz4 => Algorithm::Lz4,
            CompressorKind::Deflate => Algorithm::Deflate,
            CompressorKind::Zstd => Algorithm::Zstd,
        }
    }
}

/// CPU cost of one algorithm, cycles per byte of the page (4096 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmCost {
    /// Compressing a page, cycles per input byte.
    pub compress_cycles_per_byte: f64,
    /// Decompressing a page, cycles per output byte.
    pub decompress_cycles_per_byte: f64,
}

/// `[host.compression]`: the CPU time of compression, charged to the thread that compresses (the
/// reclaiming task, the zswap writeback worker) or decompresses (the faulting task). Defaults measured
/// by `cargo run --release -p nandstack-compress --example compress_bench` on Silesia pages at 2.6 GHz
/// (docs/kernel-compressed-swap.md): compression on a quiet machine; decompression on a loaded one,
/// scaled by the compression rate of the same run (LZO through this project's checking decoder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompressionCosts {
    /// Clock of the modelled CPU, MHz. Default 2600.
    #[serde(default = "d_mhz")]
    pub cpu_mhz: f64,
    /// Copying a page stored uncompressed (zswap's incompressible pages, zram's huge pages), cycles per
    /// byte. Default 0.25.
    #[serde(default = "d_copy")]
    pub copy_cycles_per_byte: f64,
    /// Default 6.51 / 3.6.
    #[serde(default = "d_lzo_cost")]
    pub lzo: AlgorithmCost,
    /// Default 6.53 / 3.6.
    #[serde(default = "d_lzo_rle_cost")]
    pub lzo_rle: AlgorithmCost,
    /// Default 4.06 / 0.8.
    #[serde(default = "d_lz4_cost")]
    pub lz4: AlgorithmCost,
    /// Default 54.08 / 7.0.
    #[serde(default = "d_deflate_cost")]
    pub deflate: AlgorithmCost,
    /// Default 11.25 / 2.0.
    #[serde(default = "d_zstd_cost")]
    pub zstd: AlgorithmCost,
}
fn d_mhz() -> f64 {
    2600.0
}
fn d_copy() -> f64 {
    0.25
}
fn cost(c: f64, d: f64) -> AlgorithmCost {
    AlgorithmCost {
        compress_cycles_per_byte: c,
        decompress_cycles_per_byte: d,
    }
}
fn d_lzo_cost() -> AlgorithmCost {
    cost(6.51, 3.6)
}
fn d_lzo_rle_cost() -> AlgorithmCost {
    cost(6.53, 3.6)
}
fn d_lz4_cost() -> AlgorithmCost {
    cost(4.06, 0.8)
}
fn d_deflate_cost() -> AlgorithmCost {
    cost(54.08, 7.0)
}
fn d_zstd_cost() -> AlgorithmCost {
    cost(11.25, 2.0)
}
impl Default for CompressionCosts {
    fn default() -> Self {
        CompressionCosts {
            cpu_mhz: d_mhz(),
            copy_cycles_per_byte: d_copy(),
            lzo: d_lzo_cost(),
            lzo_rle: d_lzo_rle_cost(),
            lz4: d_lz4_cost(),
            deflate: d_deflate_cost(),
            zstd: d_zstd_cost(),
        }
    }
}

impl CompressionCosts {
    pub fn of(&self, c: CompressorKind) -> AlgorithmCost {
        match c {
            CompressorKind::Lzo => self.lzo,
            CompressorKind::LzoRle => self.lzo_rle,
            CompressorKind::Lz4 => self.lz4,
            CompressorKind::Deflate => self.deflate,
            CompressorKind::Zstd => self.zstd,
        }
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |k: &str, v: f64| {
            Error::config(
                format!("host.compression.{k}"),
                format!("is {v}: must be finite and ≥ 0"),
            )
        };
        if !(self.cpu_mhz.is_finite() && self.cpu_mhz >= 1.0) {
            return Err(Error::config(
                "host.compression.cpu_mhz",
                format!("is {}: must be ≥ 1", self.cpu_mhz),
            ));
        }
        let ok = |v: f64| (0.0..1e6).contains(&v);
        if !ok(self.copy_cycles_per_byte) {
            return Err(bad("copy_cycles_per_byte", self.copy_cycles_per_byte));
        }
        for (name, c) in [
            ("lzo", self.lzo),
            ("lzo_rle", self.lzo_rle),
            ("lz4", self.lz4),
            ("deflate", self.deflate),
            ("zstd", self.zstd),
        ] {
            if !ok(c.compress_cycles_per_byte) {
                return Err(bad(
                    &format!("{name}.compress_cycles_per_byte"),
                    c.compress_cycles_per_byte,
                ));
            }
            if !ok(c.decompress_cycles_per_byte) {
                return Err(bad(
                    &format!("{name}.decompress_cycles_per_byte"),
                    c.decompress_cycles_per_byte,
                ));
            }
        }
        Ok(())
    }
}

/// CPU time of `cycles_per_byte` over a 4 KiB page at `mhz`, ns (zswap's and zram's compression costs).
pub fn page_ns(cycles_per_byte: f64, mhz: f64) -> Nanos {
    Nanos((cycles_per_byte * 4096.0 * 1000.0 / mhz).round() as u64)
}

/// A compressor that remembers the compressed length of every page it has seen, by content: the same
/// bytes always compress to the same length with the same algorithm, so a page stored again (a
/// launch-cycle page on its fifth swap-out, a zero-filled or repeated page) is looked up instead of
/// compressed again. Only the length is kept (zswap and zram model sizes, not bytes). The key is the
/// page's XXH3-128: two pages of different bytes would have to share a 128-bit hash for a length to
/// differ from compressing. The lengths by content are the thread's ([`LENGTHS`]), kept across runs:
/// a length depends on the algorithm and the bytes alone, so the runs of one lockstep group (the same
/// pages under several schemes) and a worker's later tasks reuse what an earlier run computed.
pub struct MemoCompressor {
    inner: Compressor,
    /// Index of the algorithm in `Algorithm::ALL` (its memo in [`LENGTHS`]).
    slot: usize,
    /// Lengths by page key ([`MemoCompressor::compressed_len_of`]); keys are the run's own.
    by_key: KeyMemo,
}

thread_local! {
    /// Compressed lengths by content, one memo per algorithm (`Algorithm::ALL` order), kept by the
    /// thread across runs. Each is probed, never iterated (its order cannot reach a result), and
    /// emptied at [`MEMO_ENTRIES`], which bounds its memory (~40 MiB per algorithm in use).
    static LENGTHS: RefCell<[ContentMemo<u32>; 5]> = RefCell::new(Default::default());
}

/// Forget the compressed lengths this thread remembers (as when a memo fills: no length changes).
#[cfg(test)]
fn forget_lengths() {
    LENGTHS.with_borrow_mut(|m| m.iter_mut().for_each(ContentMemo::clear));
}

/// Distinct contents whose `algorithm` length this thread remembers.
#[cfg(test)]
fn remembered_lengths(algorithm: Algorithm) -> usize {
    LENGTHS.with_borrow(|m| m[slot_of(algorithm)].len())
}

fn slot_of(algorithm: Algorithm) -> usize {
    Algorithm::ALL
        .iter()
        .position(|&a| a == algorithm)
        .expect("every algorithm is in ALL")
}

/// A map keyed by a page's XXH3-128. The key is already a uniform hash, so the table is indexed by its
/// two halves folded together ([`KeyBits`]) instead of hashing it a second time (SipHash over 16
/// bytes cost as much as the probe). Probed, never iterated: its order cannot reach a result.
pub type ContentMap<V> = HashMap<u128, V, BuildHasherDefault<KeyBits>>;

/// Values remembered by page content: `get_or_insert_with(bytes, f)` returns the value of bytes with
/// the same XXH3-128, else `f()` remembered. Emptied at [`MEMO_ENTRIES`], which bounds its memory.
#[derive(Clone, Debug, Default)]
pub struct ContentMemo<V> {
    map: ContentMap<V>,
}

impl<V: Copy> ContentMemo<V> {
    /// The value remembered for `bytes`, or `f()`'s (remembered when it succeeds).
    pub fn get_or_insert_with<E>(
        &mut self,
        bytes: &[u8],
        f: impl FnOnce() -> std::result::Result<V, E>,
    ) -> std::result::Result<V, E> {
        let key = twox_hash::XxHash3_128::oneshot(bytes);
        if let Some(&v) = self.map.get(&key) {
            return Ok(v);
        }
        let v = f()?;
        if self.map.len() >= MEMO_ENTRIES {
            self.map.clear();
        }
        self.map.insert(key, v);
        Ok(v)
    }
    /// Distinct contents remembered.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Forget everything (as at `MEMO_ENTRIES`).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

/// The hasher of [`ContentMap`]: a `u128` key's halves XORed.
#[derive(Default)]
pub struct KeyBits(u64);

impl Hasher for KeyBits {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u128` is used by `ContentMap`; any other key still spreads its bytes.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, key: u128) {
        self.0 = key as u64 ^ (key >> 64) as u64;
    }
}

/// Entries before the memo is emptied (~40 MiB at most with the map's overhead).
pub const MEMO_ENTRIES: usize = 1 << 20;

/// Values remembered by page key ([`PageIn::key`]: equal keys, equal bytes): a table indexed by the
/// key, grown to the next power of two above the largest key seen (keys are below the host's page
/// count). A hit costs one load instead of building the page and hashing it. Never emptied: at most
/// one 4-byte entry per page of the processes. `u32::MAX` is not remembered (it marks an empty entry).
#[derive(Clone, Debug, Default)]
pub struct KeyMemo {
    vals: Vec<u32>,
}

const UNKNOWN: u32 = u32::MAX;

impl KeyMemo {
    /// The value remembered for `key`, or `f()`'s (remembered when it succeeds).
    #[inline]
    pub fn get_or_insert_with<E>(
        &mut self,
        key: u32,
        f: impl FnOnce() -> std::result::Result<u32, E>,
    ) -> std::result::Result<u32, E> {
        let k = key as usize;
        if let Some(&v) = self.vals.get(k) {
            if v != UNKNOWN {
                return Ok(v);
            }
        }
        let v = f()?;
        if v != UNKNOWN {
            if k >= self.vals.len() {
                self.vals.resize((k + 1).next_power_of_two(), UNKNOWN);
            }
            self.vals[k] = v;
        }
        Ok(v)
    }
    /// Keys remembered.
    pub fn len(&self) -> usize {
        self.vals.iter().filter(|&&v| v != UNKNOWN).count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Forget everything (the keys were given out by other contents).
    pub fn clear(&mut self) {
        self.vals = Vec::new();
    }
}

impl MemoCompressor {
    pub fn new(algorithm: Algorithm) -> Result<MemoCompressor> {
        Ok(MemoCompressor {
            inner: Compressor::new(algorithm)?,
            slot: slot_of(algorithm),
            by_key: KeyMemo::default(),
        })
    }

    /// Compressed length of `page` in bytes: `Compressor::compressed_len`, remembered.
    pub fn compressed_len(&mut self, page: &[u8]) -> Result<usize> {
        Ok(hashed_len(&mut self.inner, self.slot, page)? as usize)
    }

    /// [`MemoCompressor::compressed_len`] of an offered page: by its key when it has one (the page is
    /// built only the first time its key is seen), else by its bytes.
    pub fn compressed_len_of(&mut self, page: &mut PageIn) -> Result<usize> {
        let (inner, slot) = (&mut self.inner, self.slot);
        let len = match page.key() {
            Some(k) => self
                .by_key
                .get_or_insert_with(k, || hashed_len(inner, slot, page.bytes()))?,
            None => hashed_len(inner, slot, page.bytes())?,
        };
        Ok(len as usize)
    }

    /// Forget the lengths remembered by key (the host's contents were replaced).
    pub fn forget_keys(&mut self) {
        self.by_key.clear();
    }
}

/// `compressed_len` through the thread's content memo of the algorithm in `slot`.
fn hashed_len(inner: &mut Compressor, slot: usize, page: &[u8]) -> Result<u32> {
    LENGTHS.with_borrow_mut(|m| {
        m[slot].get_or_insert_with(page, || inner.compressed_len(page).map(|l| l as u32))
    })
}

#[cfg(test)]
mod memo_tests {
    use super::*;
    use nandstack_core::Rng;

    /// The memo against compressing every time (a separate compressor, no memo), on a seeded stream
    /// of pages that repeat — zero, sparse, text-like and random ones, each revisited — for every
    /// algorithm, and across the memo's emptying.
    #[test]
    fn memoised_lengths_equal_compressing_every_time() {
        let mut rng = Rng::new(11);
        let pages: Vec<Vec<u8>> = (0..300)
            .map(|i| {
                let mut p = vec![0u8; 4096];
                match i % 4 {
                    0 => {}
                    1 => {
                        for w in p.chunks_exact_mut(8).step_by(64) {
                            w.copy_from_slice(&rng.next_u64().to_le_bytes());
                        }
                    }
                    2 => {
                        for b in p.iter_mut() {
                            *b = b"the quick brown fox "[(rng.next_u64() % 20) as usize];
                        }
                    }
                    _ => {
                        for w in p.chunks_exact_mut(8) {
                            w.copy_from_slice(&rng.next_u64().to_le_bytes());
                        }
                    }
                }
                p
            })
            .collect();
        for algorithm in Algorithm::ALL {
            let mut memo = MemoCompressor::new(algorithm).unwrap();
            let mut plain = Compressor::new(algorithm).unwrap();
            for k in 0..3000u64 {
                let p = &pages[(rng.next_u64() % pages.len() as u64) as usize];
                let want = plain.compressed_len(p).unwrap();
                assert_eq!(
                    memo.compressed_len(p).unwrap(),
                    want,
                    "{algorithm:?} draw {k}"
                );
                if k == 1500 {
                    forget_lengths(); // as when the memo fills: lengths stay the same
                }
            }
            assert!(remembered_lengths(algorithm) <= pages.len());
        }
    }

    /// Two runs in turn on one thread (two compressors, one after the other, as a worker's tasks or a
    /// lockstep group's schemes): the second finds the first's lengths — it compresses nothing already
    /// seen — and every length equals compressing every time.
    #[test]
    fn a_later_run_reuses_the_lengths_and_they_are_right() {
        let mut rng = Rng::new(5);
        let pages: Vec<Vec<u8>> = (0..64)
            .map(|i| {
                let mut p = vec![0u8; 4096];
                for b in p.iter_mut().step_by(1 + i % 7) {
                    *b = rng.next_u64() as u8;
                }
                p
            })
            .collect();
        forget_lengths();
        for algorithm in Algorithm::ALL {
            let mut plain = Compressor::new(algorithm).unwrap();
            let mut first = MemoCompressor::new(algorithm).unwrap();
            for p in &pages[..40] {
                assert_eq!(
                    first.compressed_len(p).unwrap(),
                    plain.compressed_len(p).unwrap()
                );
            }
            drop(first);
            assert_eq!(remembered_lengths(algorithm), 40, "{algorithm:?}");
            let mut second = MemoCompressor::new(algorithm).unwrap();
            for p in &pages {
                assert_eq!(
                    second.compressed_len(p).unwrap(),
                    plain.compressed_len(p).unwrap()
                );
            }
            // Only the 24 pages the first run did not see were compressed (and remembered).
            assert_eq!(remembered_lengths(algorithm), 64, "{algorithm:?}");
        }
    }

    /// Page `p` of a fixed set of seeded pages.
    struct Pages(Vec<[u8; 4096]>);
    impl crate::contents::PageContents for Pages {
        fn advance(&mut self, _refs: u64) {}
        fn page_bytes(&self, page: u32, out: &mut [u8; 4096]) {
            *out = self.0[page as usize];
        }
        fn describe(&self) -> String {
            "pages".into()
        }
    }

    /// Lengths by key against compressing every time, for every algorithm, on a seeded stream of
    /// offered pages: each key names one page (keys spread over 0..10⁵, several keys naming equal
    /// bytes), some offered without a key; a page whose key was seen is not built; forgetting the
    /// keys changes no length.
    #[test]
    fn lengths_by_key_equal_compressing_every_time() {
        let mut rng = Rng::new(17);
        let pages: Vec<[u8; 4096]> = (0..120)
            .map(|i| {
                let mut p = [0u8; 4096];
                match i % 3 {
                    0 => p.fill((i / 3) as u8 % 4),
                    1 => p
                        .iter_mut()
                        .for_each(|b| *b = b"abcdefgh"[rng.below(1 + i as u64 % 8) as usize]),
                    _ => p
                        .chunks_exact_mut(8)
                        .for_each(|w| w.copy_from_slice(&rng.next_u64().to_le_bytes())),
                }
                p
            })
            .collect();
        // Key k names page page_of[k]; 400 keys, some naming the same page.
        let keys: Vec<u32> = (0..400).map(|_| rng.below(100_000) as u32).collect();
        let page_of = |k: usize| (k * 7) % pages.len();
        let contents = Pages(pages.clone());
        for algorithm in Algorithm::ALL {
            let mut memo = MemoCompressor::new(algorithm).unwrap();
            let mut plain = Compressor::new(algorithm).unwrap();
            let mut seen = std::collections::HashSet::new();
            let mut buf = [0u8; 4096];
            for draw in 0..4000 {
                let ki = rng.below(keys.len() as u64) as usize;
                let p = page_of(ki);
                let want = plain.compressed_len(&pages[p]).unwrap();
                let key = (draw % 5 != 0).then_some(keys[ki]);
                let mut offered = PageIn::lazy(key, &contents, p as u32, &mut buf);
                assert_eq!(
                    memo.compressed_len_of(&mut offered).unwrap(),
                    want,
                    "{algorithm:?} draw {draw}"
                );
                if let Some(k) = key {
                    assert_eq!(offered.built(), !seen.contains(&k), "draw {draw}");
                    seen.insert(k);
                }
                if draw == 2000 {
                    memo.forget_keys();
                    seen.clear();
                }
            }
            assert!(memo.by_key.len() <= keys.len());
        }
    }
}

//! ezswap's entropy → compression-ratio mapping (§III-B: "this entropy value is scaled and mapped to the
//! estimated compression ratio"). The paper gives neither the scale nor the map, so the map here is
//! fitted on real data with the configured compressor: the mean compressed/original ratio of the pages
//! whose sample entropy falls in each quarter-bit bin, over the fit set of [`fit_pages`] (Silesia pages,
//! high-entropy pages standing for already-compressed media, same-filled pages), made non-decreasing
//! (pool-adjacent violators) and interpolated linearly between bin centres.
//!
//! The fitted tables of every compressor × sample are compiled in ([`builtin`], `ratio_fit_tables.rs`,
//! written by `cargo run --release -p nandstack-host --example ezswap_fit`); a test refits them from
//! `../shared/traces/compress` and asks for the same tables.

use nandstack_compress::entropy::{shannon_bits_per_byte, Sample};
use nandstack_compress::{Algorithm, Compressor};
use nandstack_core::{Result, Rng};

/// Bins of a quarter bit over [0, 8] bits per byte; bin `i` is centred on `i / 4` bits.
pub const BINS: usize = 33;
/// Ratios are integers: compressed/original × 10,000 (the authors' code scales by 10,000).
pub const SCALE: u32 = 10_000;

/// An entropy → ratio map: the ratio (× [`SCALE`]) at the centre of each bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatioMap {
    pub table: [u16; BINS],
}

impl RatioMap {
    /// The estimated ratio (× [`SCALE`], at least 1) of a page whose sample entropy is `bits`.
    pub fn estimate(&self, bits: f64) -> u32 {
        let x = (bits.clamp(0.0, 8.0)) * 4.0;
        let i = (x.floor() as usize).min(BINS - 2);
        let frac = x - i as f64;
        let (a, b) = (self.table[i] as f64, self.table[i + 1] as f64);
        ((a + (b - a) * frac).round() as u32).clamp(1, SCALE)
    }

    /// The map fitted on (entropy, ratio × SCALE) pairs. Empty bins take the linear interpolation of
    /// their non-empty neighbours (the ends: the nearest non-empty bin); the result is made
    /// non-decreasing by pool-adjacent violators, weighted by bin counts.
    pub fn fit(points: &[(f64, u32)]) -> RatioMap {
        let mut sum = [0f64; BINS];
        let mut n = [0u64; BINS];
        for &(h, r) in points {
            let i = ((h.clamp(0.0, 8.0) * 4.0).round() as usize).min(BINS - 1);
            sum[i] += r as f64;
            n[i] += 1;
        }
        // Pool-adjacent violators over the non-empty bins: blocks of (mean, weight, bins).
        let mut blocks: Vec<(f64, f64, Vec<usize>)> = Vec::new();
        for i in 0..BINS {
            if n[i] == 0 {
                continue;
            }
            blocks.push((sum[i] / n[i] as f64, n[i] as f64, vec![i]));
            while blocks.len() >= 2 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
                let (m2, w2, b2) = blocks.pop().expect("two blocks");
                let (m1, w1, mut b1) = blocks.pop().expect("two blocks");
                b1.extend(b2);
                blocks.push(((m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, b1));
            }
        }
        let mut val = [f64::NAN; BINS];
        for (m, _, bins) in &blocks {
            for &i in bins {
                val[i] = *m;
            }
        }
        let known: Vec<usize> = (0..BINS).filter(|&i| !val[i].is_nan()).collect();
        let mut table = [SCALE as u16; BINS];
        if known.is_empty() {
            return RatioMap { table };
        }
        for (i, t) in table.iter_mut().enumerate() {
            let v = match known.binary_search(&i) {
                Ok(_) => val[i],
                Err(0) => val[known[0]],
                Err(k) if k == known.len() => val[known[k - 1]],
                Err(k) => {
                    let (lo, hi) = (known[k - 1], known[k]);
                    val[lo] + (val[hi] - val[lo]) * (i - lo) as f64 / (hi - lo) as f64
                }
            };
            *t = v.round().clamp(1.0, SCALE as f64) as u16;
        }
        RatioMap { table }
    }
}

/// The Silesia files the fit reads (`silesia_NAME.zip`).
pub const SILESIA: [&str; 7] = ["dickens", "mr", "nci", "ooffice", "osdb", "reymont", "xml"];

/// The fit set: every 3rd page of each Silesia file (at most 800 per file), 400 pages of seeded
/// uniform bytes (already-compressed media), 16 same-filled pages. `dir` holds the Silesia zips.
pub fn fit_pages(dir: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    let mut pages = Vec::new();
    for name in SILESIA {
        let c = nandstack_workload::content::Corpus::load(dir, name)?;
        for chunk in (0..c.chunks()).step_by(3).take(800) {
            pages.push(c.chunk(chunk).to_vec());
        }
    }
    let mut rng = Rng::new(0x657a_7377_6170);
    for _ in 0..400 {
        let mut p = vec![0u8; 4096];
        for w in p.chunks_exact_mut(8) {
            w.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        pages.push(p);
    }
    for v in 1..=16u8 {
        pages.push(vec![v.wrapping_mul(37); 4096]);
    }
    Ok(pages)
}

/// (sample entropy, ratio × SCALE) of each page with `algorithm` (a page that does not shrink counts
/// 1.0, as zswap stores it whole).
pub fn points(pages: &[Vec<u8>], algorithm: Algorithm, sample: Sample) -> Result<Vec<(f64, u32)>> {
    let mut c = Compressor::new(algorithm)?;
    pages
        .iter()
        .map(|p| {
            let len = c.compressed_len(p)?.min(4096) as u32;
            Ok((shannon_bits_per_byte(p, sample), len * SCALE / 4096))
        })
        .collect()
}

/// Entropy-vs-ratio agreement on the Silesia pages of the fit set (every 3rd page, ≤ 800 per file) for
/// every compressor and both samples: Pearson's r of (sample entropy, compressed/original), the mean
/// absolute error of the compiled-in map, and the r over the whole fit set; as JSON rows.
pub fn silesia_correlation(dir: &std::path::Path) -> Result<serde_json::Value> {
    let pages = fit_pages(dir)?;
    let silesia = pages.len() - 416;
    let mut rows = Vec::new();
    for a in Algorithm::ALL {
        for (name, s) in [("leading512", Sample::PAPER), ("stride4", Sample::CODE)] {
            let pts = points(&pages, a, s)?;
            let map = builtin(a, s);
            let r = |p: &[(f64, u32)]| {
                let (h, y): (Vec<f64>, Vec<f64>) = p.iter().map(|&(h, r)| (h, r as f64)).unzip();
                nandstack_compress::entropy::pearson(&h, &y)
            };
            let mae = pts[..silesia]
                .iter()
                .map(|&(h, y)| (map.estimate(h) as f64 - y as f64).abs())
                .sum::<f64>()
                / silesia as f64
                / SCALE as f64;
            rows.push(serde_json::json!({
                "compressor": a.name(),
                "sample": name,
                "silesia_pages": silesia,
                "pearson_silesia": r(&pts[..silesia]),
                "pearson_fit_set": r(&pts),
                "map_mean_abs_error_silesia": mae,
                "mean_ratio_silesia": pts[..silesia].iter().map(|p| p.1 as f64).sum::<f64>()
                    / silesia as f64 / SCALE as f64,
            }));
        }
    }
    Ok(serde_json::Value::Array(rows))
}

include!("ratio_fit_tables.rs");

/// The compiled-in map of `algorithm` with `sample` (fitted as described in the module documentation).
pub fn builtin(algorithm: Algorithm, sample: Sample) -> RatioMap {
    let a = Algorithm::ALL
        .iter()
        .position(|&x| x == algorithm)
        .expect("a known algorithm");
    let s = usize::from(sample != Sample::PAPER);
    RatioMap {
        table: TABLES[a][s],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_by_hand() {
        // Bin 0 (0 bits): 1000, 3000 → 2000; bin 16 (4 bits): 5000; bin 32 (8 bits): 10000; bin 24 (6
        // bits) violates the order (4000 < 5000): pooled with bin 16 into (5000×1 + 4000×1)/2 = 4500.
        let m = RatioMap::fit(&[
            (0.0, 1000),
            (0.05, 3000),
            (4.0, 5000),
            (6.0, 4000),
            (8.0, 10000),
        ]);
        assert_eq!(m.table[0], 2000);
        assert_eq!(m.table[16], 4500);
        assert_eq!(m.table[24], 4500);
        assert_eq!(m.table[32], 10000);
        // Empty bins in between interpolate: bin 8 halfway between 2000 and 4500.
        assert_eq!(m.table[8], 3250);
        assert_eq!(m.table[28], 7250);
        // estimate() interpolates between bin centres.
        // Bin 1 = 2000 + 2500/16 = 2156; halfway into it (0.125 bits): 2078.
        assert_eq!(m.table[1], 2156);
        assert_eq!(m.estimate(0.125), 2078);
        assert_eq!(m.estimate(9.0), 10000);
        assert_eq!(m.estimate(-1.0), 2000);
        for w in m.table.windows(2) {
            assert!(w[0] <= w[1]);
        }
    }

    #[test]
    fn builtin_tables_are_monotone_and_span_the_range() {
        for a in Algorithm::ALL {
            for s in [Sample::PAPER, Sample::CODE] {
                let m = builtin(a, s);
                assert!(m.table.windows(2).all(|w| w[0] <= w[1]), "{a:?} {s:?}");
                assert!(
                    m.table[0] < 1000 && m.table[BINS - 1] >= 9000,
                    "{a:?} {s:?}"
                );
            }
        }
    }

    #[test]
    fn builtin_tables_are_the_fit_of_the_corpus() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/compress");
        if !dir.is_dir() {
            eprintln!(
                "SKIPPED: {} not found (the Silesia corpus of ../shared)",
                dir.display()
            );
            return;
        }
        let pages = fit_pages(&dir).unwrap();
        for a in Algorithm::ALL {
            for s in [Sample::PAPER, Sample::CODE] {
                let fitted = RatioMap::fit(&points(&pages, a, s).unwrap());
                assert_eq!(
                    fitted,
                    builtin(a, s),
                    "{a:?} {s:?}: regenerate with the ezswap_fit example"
                );
            }
        }
    }
}

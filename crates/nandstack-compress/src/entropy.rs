//! Shannon entropy of a page sample, the estimate ezswap's selective admission uses instead of
//! compressing (Equation 3 of the paper: `H = −Σ p_i log2 p_i` over byte values, 0 for constant data, 8
//! for uniform noise).
//!
//! Two samples, as the brief records them: the paper's (the leading 512 bytes of the page) and the
//! ezswap code's (every 4th byte of the page). [`pearson`] measures how well either predicts a
//! compressor's ratio.

/// Which bytes of the page enter the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// The first `n` bytes (the paper: 512).
    Leading(usize),
    /// Every `k`-th byte, from the first (the ezswap code: 4).
    Stride(usize),
    /// All bytes.
    Whole,
}

impl Sample {
    /// The paper's sample: the leading 512 bytes.
    pub const PAPER: Sample = Sample::Leading(512);
    /// The ezswap code's sample: every 4th byte.
    pub const CODE: Sample = Sample::Stride(4);
}

/// Entropy in bits per byte of the sampled bytes (0 for an empty sample).
pub fn shannon_bits_per_byte(page: &[u8], sample: Sample) -> f64 {
    let (counts, n) = histogram(page, sample);
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// How often each byte value occurs in `page`'s sample, and the sample's length.
fn histogram(page: &[u8], sample: Sample) -> ([u32; 256], usize) {
    let mut counts = [0u32; 256];
    let mut n = 0usize;
    let mut add = |b: u8| {
        counts[b as usize] += 1;
        n += 1;
    };
    match sample {
        Sample::Leading(k) => page.iter().take(k).for_each(|&b| add(b)),
        Sample::Stride(k) => page.iter().step_by(k.max(1)).for_each(|&b| add(b)),
        Sample::Whole => page.iter().for_each(|&b| add(b)),
    }
    (counts, n)
}

/// [`shannon_bits_per_byte`] for one sample kind and page size, without a logarithm per call: the
/// term `−p·log2 p` of every possible count is computed once, by the same expression, and the terms of
/// a page are added in the same order, so the result is bit for bit the same.
#[derive(Debug, Clone)]
pub struct EntropyTable {
    sample: Sample,
    /// `terms[c]` for a byte value seen `c` times (index 0 unused).
    terms: Vec<f64>,
}

impl EntropyTable {
    /// The table for `sample` over pages of `page_len` bytes.
    pub fn new(sample: Sample, page_len: usize) -> EntropyTable {
        let n = match sample {
            Sample::Leading(k) => k.min(page_len),
            Sample::Stride(k) => page_len.div_ceil(k.max(1)),
            Sample::Whole => page_len,
        };
        let nf = n as f64;
        let terms = (0..=n)
            .map(|c| {
                let p = c as f64 / nf;
                -p * p.log2()
            })
            .collect();
        EntropyTable { sample, terms }
    }

    /// Entropy in bits per byte of `page`'s sample; `page` must be `page_len` bytes long (else the
    /// direct computation is used).
    pub fn bits_per_byte(&self, page: &[u8]) -> f64 {
        let (counts, n) = histogram(page, self.sample);
        if n + 1 != self.terms.len() {
            return shannon_bits_per_byte(page, self.sample);
        }
        if n == 0 {
            return 0.0;
        }
        counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| self.terms[c as usize])
            .sum()
    }
}

/// Pearson's correlation coefficient of paired samples (`None` with fewer than two pairs or no spread).
pub fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return None;
    }
    let mx = xs[..n].iter().sum::<f64>() / n as f64;
    let my = ys[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (xs[i] - mx, ys[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some(sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against the direct computation, bit for bit, on pages of every kind of spread
    /// (constant, few values, skewed, uniform noise) for the paper's and the code's samples and the
    /// whole page; a page of another length falls back to the direct computation.
    #[test]
    fn the_table_gives_the_direct_entropy_bit_for_bit() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for sample in [
            Sample::PAPER,
            Sample::CODE,
            Sample::Whole,
            Sample::Leading(100),
        ] {
            let table = EntropyTable::new(sample, 4096);
            for k in 0..400u64 {
                let spread = [1u64, 2, 3, 16, 40, 97, 256][(k % 7) as usize];
                let page: Vec<u8> = (0..4096)
                    .map(|_| {
                        let r = next();
                        // Skew: half the draws pick from the first eighth of the spread.
                        let m = if r & 1 == 0 {
                            spread.div_ceil(8)
                        } else {
                            spread
                        };
                        ((r >> 8) % m) as u8
                    })
                    .collect();
                let direct = shannon_bits_per_byte(&page, sample);
                assert_eq!(
                    table.bits_per_byte(&page).to_bits(),
                    direct.to_bits(),
                    "{sample:?} {k}"
                );
            }
            let short = [3u8, 4, 5];
            assert_eq!(
                table.bits_per_byte(&short),
                shannon_bits_per_byte(&short, sample)
            );
        }
    }

    #[test]
    fn hand_computed_entropies() {
        assert_eq!(shannon_bits_per_byte(&[7u8; 4096], Sample::Whole), 0.0);
        // Two values, equally often: 1 bit.
        let two: Vec<u8> = (0..4096).map(|i| (i % 2) as u8).collect();
        assert!((shannon_bits_per_byte(&two, Sample::PAPER) - 1.0).abs() < 1e-12);
        // Every byte value 16 times: 8 bits.
        let all: Vec<u8> = (0..4096).map(|i| i as u8).collect();
        assert!((shannon_bits_per_byte(&all, Sample::Whole) - 8.0).abs() < 1e-12);
        // Every 4th byte of 0,1,2,…: only multiples of 4 appear, 64 values equally: 6 bits.
        assert!((shannon_bits_per_byte(&all, Sample::CODE) - 6.0).abs() < 1e-12);
        // The leading 512 bytes of 0..=255 twice: 8 bits; an empty sample: 0.
        assert!((shannon_bits_per_byte(&all, Sample::Leading(512)) - 8.0).abs() < 1e-12);
        assert_eq!(shannon_bits_per_byte(&[], Sample::Whole), 0.0);
    }

    #[test]
    fn pearson_of_lines_and_noise() {
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|v| 3.0 * v - 1.0).collect();
        assert!((pearson(&x, &y).unwrap() - 1.0).abs() < 1e-12);
        let z: Vec<f64> = x.iter().map(|v| -v).collect();
        assert!((pearson(&x, &z).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[1.0; 10]), None);
        assert_eq!(pearson(&[1.0], &[2.0]), None);
    }
}

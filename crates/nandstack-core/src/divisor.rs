//! Division of `u32` values by a divisor fixed at run time (units per block, units per page, planes)
//! without the hardware divide, which costs 20–40 cycles on the FTLs' per-unit paths: a multiply by a
//! precomputed reciprocal, exact for every `u32` dividend and divisor (Lemire, Kaser and Kurz, "Faster
//! remainder by direct computation", 2019: with M = ⌈2⁶⁴ / d⌉, n / d = ⌊M·n / 2⁶⁴⌋ and
//! n mod d = ⌊((M·n) mod 2⁶⁴)·d / 2⁶⁴⌋). `tests` compare both with `/` and `%`.

/// A non-zero `u32` divisor and its reciprocal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u32,
    /// ⌈2⁶⁴ / d⌉, or 0 for d = 1 (2⁶⁴ does not fit; division by 1 is the identity).
    m: u64,
}

impl Divisor {
    /// # Panics
    /// If `d` is 0 (callers validate their geometry first).
    pub const fn new(d: u32) -> Divisor {
        assert!(d > 0, "division by zero");
        let m = if d == 1 { 0 } else { u64::MAX / d as u64 + 1 };
        Divisor { d, m }
    }
    /// `n / d`.
    #[inline(always)]
    pub fn quotient(self, n: u32) -> u32 {
        if self.m == 0 {
            return n;
        }
        ((self.m as u128 * n as u128) >> 64) as u32
    }
    /// `n % d`.
    #[inline(always)]
    pub fn remainder(self, n: u32) -> u32 {
        if self.m == 0 {
            return 0;
        }
        let low = self.m.wrapping_mul(n as u64);
        ((low as u128 * self.d as u128) >> 64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(d: u32, n: u32) {
        let x = Divisor::new(d);
        assert_eq!(x.quotient(n), n / d, "{n} / {d}");
        assert_eq!(x.remainder(n), n % d, "{n} % {d}");
    }

    #[test]
    fn agrees_with_the_hardware_divide() {
        let edges = [0u32, 1, 2, 3, 63, 64, 65, 1 << 31, u32::MAX - 1, u32::MAX];
        let mut divisors: Vec<u32> = (1..=1100).collect();
        divisors.extend([
            4095,
            4096,
            4097,
            393_216,
            1 << 31,
            (1 << 31) + 1,
            u32::MAX - 1,
            u32::MAX,
        ]);
        let mut rng = crate::Rng::new(7);
        for _ in 0..2000 {
            divisors.push(1 + (rng.next_u64() >> 33) as u32);
        }
        for &d in &divisors {
            for &n in &edges {
                check(d, n);
            }
            // Around multiples of d (where quotients step) and random dividends.
            for k in [1u64, 2, 7, 1000, u32::MAX as u64 / d as u64] {
                let m = k * d as u64;
                for n in [m.saturating_sub(1), m, m + 1] {
                    if n <= u32::MAX as u64 {
                        check(d, n as u32);
                    }
                }
            }
            for _ in 0..200 {
                check(d, rng.next_u64() as u32);
            }
        }
        // Every dividend below 2^20 for a few divisors of the FTLs' kind.
        for d in [3u32, 48, 64, 96, 256, 768, 1536] {
            for n in 0..1 << 20 {
                check(d, n);
            }
        }
    }
}

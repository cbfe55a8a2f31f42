//! A seeded pseudo-random permutation of `[0, n)`: an invertible mix on the next power of two, with
//! cycle-walking for values ≥ n. O(1) memory, O(1) expected time.

#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    bits: u32,
    mask: u64,
    keys: [u64; 3],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        assert!(n > 0, "permutation of an empty range");
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut r = nandstack_core::Rng::derive(seed, 0x7065_726d);
        let keys = [r.next_u64() | 1, r.next_u64() | 1, r.next_u64()];
        Permutation {
            n,
            bits,
            mask,
            keys,
        }
    }

    /// Each step is a bijection on `bits`-bit integers: odd multiplication, xor-shift, xor with a key.
    #[inline]
    fn mix(&self, mut x: u64) -> u64 {
        let half = self.bits / 2;
        for k in self.keys {
            x = x.wrapping_mul(k | 1) & self.mask;
            x ^= x >> half.max(1);
            x = (x ^ (k >> 7)) & self.mask;
        }
        x
    }

    /// The image of `i` (< n).
    #[inline]
    pub fn apply(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.mix(i);
        while x >= self.n {
            x = self.mix(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn is_a_bijection() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = p.apply(i);
                assert!(j < n);
                assert!(!seen[j as usize], "n={n}: {j} hit twice");
                seen[j as usize] = true;
            }
        }
    }
    #[test]
    fn scatters() {
        let p = Permutation::new(1 << 20, 1);
        let fixed = (0..1000u64).filter(|&i| p.apply(i) == i).count();
        assert!(fixed < 5);
        let first: Vec<u64> = (0..4).map(|i| p.apply(i)).collect();
        assert!(
            first.windows(2).any(|w| w[0].abs_diff(w[1]) > 1000),
            "{first:?}"
        );
    }
}

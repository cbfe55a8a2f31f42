//! Zipf-distributed ranks in `[1, n]` with P(k) ∝ k^−θ, by rejection-inversion (Hörmann & Derflinger,
//! "Rejection-inversion to generate variates from monotone discrete distributions", 1996). Works for any
//! θ > 0 including θ = 1, in O(1) memory and expected O(1) time.

use nandstack_core::Rng;

#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

/// (e^x − 1) / x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}
/// ln(1 + x) / x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Zipf {
        assert!(n >= 1 && theta > 0.0);
        let mut z = Zipf {
            n: n as f64,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.theta) * lx) * lx
    }
    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.theta)).max(-1.0);
        (helper1(t) * x).exp()
    }
    /// A rank in `[1, n]`; rank 1 is the most popular.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit_f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_against_exact(n: u64, theta: f64) {
        let z = Zipf::new(n, theta);
        let norm: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
        let mut rng = Rng::new(11);
        let draws = 200_000;
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            let k = z.sample(&mut rng);
            assert!((1..=n).contains(&k));
            counts[k as usize] += 1;
        }
        for k in 1..=n.min(5) {
            let p = (k as f64).powf(-theta) / norm;
            let expect = p * draws as f64;
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (counts[k as usize] as f64 - expect).abs() < 5.0 * sd + 1.0,
                "n={n} θ={theta} rank {k}: {} vs {expect:.0}",
                counts[k as usize]
            );
        }
    }

    #[test]
    fn matches_exact_probabilities() {
        check_against_exact(100, 0.99);
        check_against_exact(1000, 1.0);
        check_against_exact(50, 1.5);
        check_against_exact(10, 0.5);
        check_against_exact(1, 0.9);
    }
}

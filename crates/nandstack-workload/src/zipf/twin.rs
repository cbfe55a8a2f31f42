//! The slow twin: the Zipf sampler as it was before its fast path (every draw through libm's `log1p` and
//! `exp`), kept verbatim and sharing no code with the sampler, which must draw exactly what it draws.

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
            if let Some(k) = self.trial(u) {
                return k;
            }
        }
    }
    /// The loop's body at `u` (the rank, or `None` when rejected), for the tests at chosen u.
    pub fn trial(&self, u: f64) -> Option<u64> {
        let x = self.h_integral_inv(u);
        let k = (x + 0.5).floor().clamp(1.0, self.n);
        if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
            return Some(k as u64);
        }
        None
    }
}

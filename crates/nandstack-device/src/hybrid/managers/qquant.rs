//! A Q-table held in few bits per entry (the paper's 5,186-byte table ≈ 1,296 states × 8 actions × 4 bits;
//! this agent has 9 actions, so 5,832 bytes at 4 bits).
//!
//! The paper gives the table's size only, not its number format. The grid here is derived from the
//! algorithm, not from any result: Eq. 1 with rewards in [r−, r+] and γ < 1 keeps every Q value within
//! ±B, B = max(|r−|, |r+|) / (1 − γ) (a table starting at zero never leaves that interval). A `bits`-bit
//! signed code k ∈ [−2^(bits−1), 2^(bits−1) − 1] stands for k × B / (2^(bits−1) − 1), so 0 and ±B are
//! exact. After every Eq. 1 update the new value is rounded onto the grid: `nearest` (ties away from
//! zero), or `stochastic` (up with probability equal to the fraction of a step, so the rounded value's
//! expectation is the exact update — without it an update smaller than half a step is lost).

use nandstack_core::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a Q value is rounded onto the grid.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QRounding {
    #[default]
    Stochastic,
    Nearest,
}

/// Rounds Q values onto a `bits`-bit signed grid over ±`bound`.
#[derive(Clone, Debug)]
pub struct Quantizer {
    step: f64,
    lo: f64,
    hi: f64,
    rounding: QRounding,
    rng: Rng,
}

impl Quantizer {
    /// `bits` in 2..=16 (checked by the config); `bound` > 0.
    pub fn new(bits: u32, bound: f64, rounding: QRounding, rng: Rng) -> Quantizer {
        let top = ((1u32 << (bits - 1)) - 1) as f64;
        Quantizer {
            step: bound / top,
            lo: -(top + 1.0),
            hi: top,
            rounding,
            rng,
        }
    }
    /// The grid's spacing.
    pub fn step(&self) -> f64 {
        self.step
    }
    /// The Eq. 1 bound B for rewards `r_neg`, `r_pos` and discount `gamma` (never below one step's worth).
    pub fn bound(r_neg: f64, r_pos: f64, gamma: f64) -> f64 {
        let b = r_neg.abs().max(r_pos.abs()) / (1.0 - gamma);
        if b > 0.0 {
            b
        } else {
            1.0
        }
    }
    /// `x` rounded onto the grid (clamped to the codes' range).
    pub fn apply(&mut self, x: f64) -> f64 {
        let c = x / self.step;
        let k = match self.rounding {
            QRounding::Nearest => c.round(),
            QRounding::Stochastic => {
                let f = c.floor();
                if self.rng.chance(c - f) {
                    f + 1.0
                } else {
                    f
                }
            }
        };
        k.clamp(self.lo, self.hi) * self.step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_bit_grid_by_hand() {
        // r = ±1, γ = 0.8: B = 5, step = 5/7; codes −8..7 → −40/7 … 5.
        let b = Quantizer::bound(-1.0, 1.0, 0.8);
        assert!((b - 5.0).abs() < 1e-12);
        let mut q = Quantizer::new(4, b, QRounding::Nearest, Rng::new(1));
        assert!((q.step() - 5.0 / 7.0).abs() < 1e-12);
        assert_eq!(q.apply(0.0), 0.0);
        // 0.3 = 0.42 steps → 0; 1.0 = 1.4 steps → 1 step; 0.36 = 0.504 steps → 1 step.
        assert_eq!(q.apply(0.3), 0.0);
        assert!((q.apply(1.0) - 5.0 / 7.0).abs() < 1e-12);
        assert!((q.apply(0.36) - 5.0 / 7.0).abs() < 1e-12);
        assert!((q.apply(100.0) - 5.0).abs() < 1e-12, "clamped to code 7");
        assert!(
            (q.apply(-100.0) + 40.0 / 7.0).abs() < 1e-12,
            "clamped to code −8"
        );
        assert!((q.apply(-1.0) + 5.0 / 7.0).abs() < 1e-12);
    }

    #[test]
    fn stochastic_rounding_is_unbiased_and_on_the_grid() {
        let mut q = Quantizer::new(4, 5.0, QRounding::Stochastic, Rng::new(9));
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let v = q.apply(0.3);
            assert!(v == 0.0 || (v - 5.0 / 7.0).abs() < 1e-12, "{v}");
            sum += v;
        }
        // P(up) = 0.42: sd of the mean = (5/7) × sqrt(0.42 × 0.58 / n) ≈ 0.0011; allow 5 sd.
        assert!((sum / n as f64 - 0.3).abs() < 0.0056, "{}", sum / n as f64);
        // Values on the grid stay where they are.
        assert!((q.apply(10.0 / 7.0) - 10.0 / 7.0).abs() < 1e-12);
    }
}

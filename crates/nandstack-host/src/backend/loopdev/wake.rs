//! The loop worker's wake-up tail: extra latency of each wake-up of the idle worker on another vCPU,
//! drawn from a distribution given by points of its inverse CDF (`host.swap.backend.wake_tail`).

use nandstack_core::rng::Rng;
use nandstack_core::Nanos;

/// The random stream label of the loop worker's wake-up tail (`Rng::derive(seed, LOOP_WAKE_STREAM)`).
pub const LOOP_WAKE_STREAM: u64 = 0x6c6f_6f70_7761_6b65;

/// A distribution of extra wake-up latency given by points `(quantile, ns)` of its inverse CDF, linear
/// between points; sampled with its own seeded stream. Empty: always 0.
#[derive(Clone, Debug)]
pub struct WakeTail {
    points: Vec<(f64, u64)>,
    rng: Rng,
}

impl WakeTail {
    /// From `[quantile, µs]` points: quantiles rising strictly from exactly 0 to exactly 1, times finite,
    /// ≥ 0 and not falling. `Err` says what is wrong.
    pub fn new(points: &[[f64; 2]], rng: Rng) -> std::result::Result<WakeTail, String> {
        if !points.is_empty() {
            let (first, last) = (points[0][0], points[points.len() - 1][0]);
            if points.len() < 2 || first != 0.0 || last != 1.0 {
                return Err(format!(
                    "needs points [quantile, µs] from quantile 0 to quantile 1 (at least two), \
                     got {} point(s) from {first} to {last}",
                    points.len()
                ));
            }
        }
        for (i, p) in points.iter().enumerate() {
            if !(p[1].is_finite() && p[1] >= 0.0) {
                return Err(format!("point {i}: the time must be ≥ 0 µs, got {}", p[1]));
            }
            if i > 0 && !(p[0] > points[i - 1][0] && p[1] >= points[i - 1][1]) {
                return Err(format!(
                    "point {i} [{}, {}]: quantiles must rise and times must not fall \
                     (previous [{}, {}])",
                    p[0],
                    p[1],
                    points[i - 1][0],
                    points[i - 1][1]
                ));
            }
        }
        Ok(WakeTail {
            points: points
                .iter()
                .map(|p| (p[0], (p[1] * 1e3).round() as u64))
                .collect(),
            rng,
        })
    }

    /// No extra latency.
    pub fn none() -> WakeTail {
        WakeTail {
            points: Vec::new(),
            rng: Rng::new(0),
        }
    }

    /// The latency at quantile `u` ∈ [0, 1) (linear between the points), ns.
    fn at(&self, u: f64) -> u64 {
        let i = self.points.partition_point(|p| p.0 <= u);
        if i == 0 || i == self.points.len() {
            return self.points.last().map_or(0, |p| p.1);
        }
        let (a, b) = (self.points[i - 1], self.points[i]);
        let f = (u - a.0) / (b.0 - a.0);
        a.1 + (f * (b.1 - a.1) as f64).round() as u64
    }

    /// One draw, ns (no random number is used when there is no tail).
    pub(super) fn sample(&mut self) -> Nanos {
        if self.points.is_empty() {
            return Nanos::ZERO;
        }
        let u = self.rng.unit_f64();
        Nanos(self.at(u))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(points: &[[f64; 2]]) -> WakeTail {
        WakeTail::new(points, Rng::new(7)).expect("valid tail")
    }

    #[test]
    fn a_wake_tail_is_its_inverse_cdf_linear_between_points() {
        let t = tail(&[[0.0, 0.0], [0.5, 0.0], [0.9, 10.0], [1.0, 110.0]]);
        assert_eq!(t.at(0.0), 0);
        assert_eq!(t.at(0.49), 0);
        assert_eq!(t.at(0.5), 0);
        assert_eq!(t.at(0.7), 5_000);
        assert_eq!(t.at(0.9), 10_000);
        assert_eq!(t.at(0.95), 60_000);
        assert_eq!(t.at(0.999_999), 109_999);
        // Sampled: half the draws are 0, a tenth land in (10, 110] µs, the mean is the area under the
        // inverse CDF: 0.4 × 5 + 0.1 × 60 = 8 µs.
        let mut t = t;
        let n = 200_000;
        let v: Vec<u64> = (0..n).map(|_| t.sample().0).collect();
        let zero = v.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        let high = v.iter().filter(|&&x| x > 10_000).count() as f64 / n as f64;
        let mean = v.iter().sum::<u64>() as f64 / n as f64 / 1e3;
        assert!((zero - 0.5).abs() < 0.005, "{zero}");
        assert!((high - 0.1).abs() < 0.003, "{high}");
        assert!((mean - 8.0).abs() < 0.2, "{mean}");
    }

    #[test]
    fn a_wake_tail_rejects_what_is_not_a_distribution() {
        let bad = |p: &[[f64; 2]]| WakeTail::new(p, Rng::new(1)).unwrap_err();
        assert!(bad(&[[0.0, 1.0]]).contains("at least two"));
        assert!(bad(&[[0.1, 0.0], [1.0, 5.0]]).contains("from quantile 0"));
        assert!(bad(&[[0.0, 0.0], [0.9, 5.0]]).contains("to quantile 1"));
        assert!(bad(&[[0.0, 0.0], [0.5, 5.0], [0.5, 6.0], [1.0, 7.0]]).contains("must rise"));
        assert!(bad(&[[0.0, 0.0], [0.5, 5.0], [1.0, 4.0]]).contains("must not fall"));
        assert!(bad(&[[0.0, -1.0], [1.0, 4.0]]).contains("≥ 0"));
        assert!(bad(&[[0.0, 0.0], [1.0, f64::NAN]]).contains("≥ 0"));
        assert!(WakeTail::new(&[], Rng::new(1)).is_ok());
    }

    #[test]
    fn the_same_seed_draws_the_same_wake_ups() {
        let pts = [[0.0, 0.0], [0.9, 7.0], [0.999, 400.0], [1.0, 9000.0]];
        let draw = |seed| {
            let mut t = WakeTail::new(&pts, Rng::derive(seed, LOOP_WAKE_STREAM)).unwrap();
            (0..1000).map(|_| t.sample()).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }
}

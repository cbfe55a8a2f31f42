//! Running summary statistics.

use serde::Serialize;

/// min / mean / max / population standard deviation of a set of values.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub stddev: f64,
}

impl Summary {
    /// Summarise an iterator of values (Welford's algorithm: one pass, numerically stable).
    pub fn of<I: IntoIterator<Item = f64>>(values: I) -> Summary {
        let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for x in values {
            n += 1;
            let d = x - mean;
            mean += d / n as f64;
            m2 += d * (x - mean);
            min = min.min(x);
            max = max.max(x);
        }
        if n == 0 {
            return Summary::default();
        }
        Summary {
            count: n,
            min,
            mean,
            max,
            stddev: (m2 / n as f64).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hand_computed_summary() {
        let s = Summary::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.count, 8);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert!((s.mean - 5.0).abs() < 1e-12);
        assert!((s.stddev - 2.0).abs() < 1e-12);
        assert_eq!(Summary::of(std::iter::empty()), Summary::default());
    }
}

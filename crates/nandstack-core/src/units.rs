//! Unit newtypes. Time is simulated nanoseconds; sizes are bytes.

use serde::{Deserialize, Serialize};

/// Simulated time or duration in nanoseconds.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub fn from_micros(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl std::ops::Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 + rhs.0)
    }
}

// The ops below are the integer ops on the inner `u64`, nothing more: `-` underflows as `u64` does
// (a panic in debug and test builds), `*`/`/` by a count and `/` by a duration round as `u64` does.
// They let code that held times in raw `u64` hold `Nanos` with the same integers at every step.

impl Nanos {
    pub const MAX: Nanos = Nanos(u64::MAX);
    /// `u64::saturating_sub` on the nanoseconds.
    pub fn saturating_sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
    /// `u64::saturating_add` on the nanoseconds.
    pub fn saturating_add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}

impl std::ops::Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 - rhs.0)
    }
}

impl std::ops::AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}

impl std::ops::SubAssign for Nanos {
    fn sub_assign(&mut self, rhs: Nanos) {
        self.0 -= rhs.0;
    }
}

/// A duration times a count.
impl std::ops::Mul<u64> for Nanos {
    type Output = Nanos;
    fn mul(self, rhs: u64) -> Nanos {
        Nanos(self.0 * rhs)
    }
}

/// A count times a duration.
impl std::ops::Mul<Nanos> for u64 {
    type Output = Nanos;
    fn mul(self, rhs: Nanos) -> Nanos {
        Nanos(self * rhs.0)
    }
}

/// A duration divided by a count (rounded down).
impl std::ops::Div<u64> for Nanos {
    type Output = Nanos;
    fn div(self, rhs: u64) -> Nanos {
        Nanos(self.0 / rhs)
    }
}

/// How many whole `rhs` fit in `self`.
impl std::ops::Div for Nanos {
    type Output = u64;
    fn div(self, rhs: Nanos) -> u64 {
        self.0 / rhs.0
    }
}

/// What is left of `self` after the whole `rhs` in it.
impl std::ops::Rem for Nanos {
    type Output = Nanos;
    fn rem(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 % rhs.0)
    }
}

impl std::iter::Sum for Nanos {
    fn sum<I: Iterator<Item = Nanos>>(iter: I) -> Nanos {
        Nanos(iter.map(|n| n.0).sum())
    }
}

/// A size in bytes.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const KIB: u64 = 1024;
    pub const MIB: u64 = 1024 * 1024;
    pub const GIB: u64 = 1024 * 1024 * 1024;
}

/// Human-readable binary size ("16 GiB", "4 KiB", "1.5 MiB").
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[i])
    } else {
        format!("{:.2} {}", v, UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn formats_sizes() {
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(16 * Bytes::GIB), "16 GiB");
        assert_eq!(fmt_bytes(1536 * Bytes::KIB), "1.50 MiB");
        assert_eq!(fmt_bytes(7), "7 B");
    }
    #[test]
    fn nanos_conversions() {
        assert_eq!(Nanos::from_micros(75), Nanos(75_000));
        assert_eq!(Nanos(4_000).as_micros_f64(), 4.0);
        assert_eq!(Nanos(1) + Nanos(2), Nanos(3));
    }
    /// Every op gives the integers the same op on `u64` gives.
    #[test]
    fn nanos_ops_are_the_u64_ops() {
        for (a, b) in [
            (7u64, 3u64),
            (1_000_000, 999),
            (5, 5),
            (0, 1),
            (u64::MAX, 2),
        ] {
            let (x, y) = (Nanos(a), Nanos(b));
            assert_eq!(x.saturating_sub(y).0, a.saturating_sub(b));
            assert_eq!(y.saturating_sub(x).0, b.saturating_sub(a));
            assert_eq!(x.saturating_add(y).0, a.saturating_add(b));
            if a >= b {
                assert_eq!((x - y).0, a - b);
                let mut z = x;
                z -= y;
                assert_eq!(z.0, a - b);
            }
            if let Some(s) = a.checked_add(b) {
                let mut z = x;
                z += y;
                assert_eq!(z.0, s);
            }
            if let Some(p) = b.checked_mul(3) {
                assert_eq!((y * 3).0, p);
                assert_eq!((3 * y).0, p);
            }
            if b != 0 {
                assert_eq!((x / b).0, a / b);
                assert_eq!(x / y, a / b);
                assert_eq!((x % y).0, a % b);
            }
        }
        assert_eq!(
            [Nanos(1), Nanos(2), Nanos(4)].into_iter().sum::<Nanos>(),
            Nanos(7)
        );
        assert_eq!(Nanos::MAX.0, u64::MAX);
    }
}

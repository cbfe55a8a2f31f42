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
}

//! Cell modes (bits per cell) with their endurance and default timings.
//!
//! Sources: SLC/TLC/QLC from Table 1 of the RL SLC-cache paper (`rl-slc-cache.md`, citing [12]).
//! MLC: tR 75 µs, tPROG 750 µs, tBERS 3.8 ms — the MLC defaults of MQSim (Tavakkol et al., FAST'18;
//! `ssdconfig.xml` of CMU-SAFARI/MQSim, see docs/peers.md); endurance 10,000 P/E, the usual rating of
//! planar MLC. Every block's mode carries both its endurance and its speed.

use nandstack_core::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bits stored per cell.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CellMode {
    Slc,
    Mlc,
    Tlc,
    Qlc,
}

/// Page read, page program and block erase times of one cell mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellTiming {
    pub read: Nanos,
    pub program: Nanos,
    pub erase: Nanos,
}

impl CellMode {
    pub fn bits_per_cell(self) -> u32 {
        match self {
            CellMode::Slc => 1,
            CellMode::Mlc => 2,
            CellMode::Tlc => 3,
            CellMode::Qlc => 4,
        }
    }

    /// Rated program/erase cycles.
    pub fn endurance_pe_cycles(self) -> u32 {
        match self {
            CellMode::Slc => 100_000,
            CellMode::Mlc => 10_000,
            CellMode::Tlc => 3_000,
            CellMode::Qlc => 1_000,
        }
    }

    /// Default tR / tPROG / tBERS.
    pub fn default_timing(self) -> CellTiming {
        let us = Nanos::from_micros;
        match self {
            CellMode::Slc => CellTiming {
                read: us(30),
                program: us(160),
                erase: us(3_000),
            },
            CellMode::Mlc => CellTiming {
                read: us(75),
                program: us(750),
                erase: us(3_800),
            },
            CellMode::Tlc => CellTiming {
                read: us(66),
                program: us(730),
                erase: us(4_800),
            },
            CellMode::Qlc => CellTiming {
                read: us(140),
                program: us(3_102),
                erase: us(3_500),
            },
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CellMode::Slc => "slc",
            CellMode::Mlc => "mlc",
            CellMode::Tlc => "tlc",
            CellMode::Qlc => "qlc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn table1_values() {
        assert_eq!(
            CellMode::Qlc.default_timing().program,
            Nanos::from_micros(3102)
        );
        assert_eq!(CellMode::Tlc.default_timing().read, Nanos::from_micros(66));
        assert_eq!(CellMode::Slc.endurance_pe_cycles(), 100_000);
        assert_eq!(CellMode::Qlc.endurance_pe_cycles(), 1_000);
        assert!(CellMode::Slc.bits_per_cell() < CellMode::Qlc.bits_per_cell());
    }
}

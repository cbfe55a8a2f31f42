//! Per-level page latencies: in a multi-level cell every word line stores one page per bit (LSB, CSB,
//! MSB, TSB — lower, centre, upper, top), and the pages of one word line take different times to read and
//! program (more reference voltages to sense or place for the upper bits).
//!
//! A page's type follows from its index in the block under one of two orders:
//! * `word_line` (default): the pages of a word line are consecutive, page `i` has type `i mod bits`
//!   (3D NAND's one-shot programming writes all of a word line's pages together, in this order);
//! * `mqsim`: MQSim's tables (CMU-SAFARI/MQSim `Flash_Chip.h`, `Get_command_execution_latency`): MLC
//!   `i mod 2`; TLC after Yaakobi et al. (ICNC 2012), pages 0–5 LSB, 6–7 CSB, then `((i − 8) / 2) mod 3`
//!   (the shadow program order of planar TLC). MQSim has no QLC table; `mqsim` with QLC is an error.
//!
//! The times themselves are inputs (datasheets rarely publish them); see docs/model-timing.md.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CellMode;

/// How a page's index in its block maps to its type (0 = LSB, 1 = CSB, …).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LevelOrder {
    /// Page `i` has type `i mod bits per cell` (default).
    #[default]
    WordLine,
    /// MQSim's tables: MLC `i mod 2`; TLC 0–5 LSB, 6–7 CSB, then `((i − 8) / 2) mod 3`.
    Mqsim,
}

/// `[device.timing.page_levels]`: read and program time per page type, replacing the single tR and
/// tPROG. Off by default (every page takes the cell mode's tR / tPROG).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageLevels {
    /// Page read time per type in µs, LSB first: one entry per bit of the cell mode (SLC 1, MLC 2, TLC 3,
    /// QLC 4). Required.
    pub read_us: Vec<f64>,
    /// Page program time per type in µs, LSB first, as `read_us`. Required.
    pub program_us: Vec<f64>,
    /// `word_line` (default) or `mqsim`.
    #[serde(default)]
    pub order: LevelOrder,
}

impl PageLevels {
    /// The levels' times in ns for `mode`; errors name the key and the expected length.
    pub fn resolve(&self, mode: CellMode) -> Result<LevelTimes> {
        let bits = mode.bits_per_cell() as usize;
        let mut out = [Vec::new(), Vec::new()];
        for (slot, (key, v)) in out
            .iter_mut()
            .zip([("read_us", &self.read_us), ("program_us", &self.program_us)])
        {
            if v.len() != bits {
                return Err(Error::config(
                    format!("device.timing.page_levels.{key}"),
                    format!(
                        "has {} entries: a {} cell has {bits} page types (LSB first)",
                        v.len(),
                        mode.name()
                    ),
                ));
            }
            for &x in v {
                if !(x.is_finite() && x > 0.0 && x < 1e7) {
                    return Err(Error::config(
                        format!("device.timing.page_levels.{key}"),
                        format!("has {x}: every time must be in (0, 1e7) µs"),
                    ));
                }
                slot.push((x * 1000.0).round() as u64);
            }
        }
        if self.order == LevelOrder::Mqsim && mode == CellMode::Qlc {
            return Err(Error::config(
                "device.timing.page_levels.order",
                "MQSim has no QLC page-type table; use order = \"word_line\"",
            ));
        }
        let [read_ns, program_ns] = out;
        Ok(LevelTimes {
            read_ns,
            program_ns,
            order: self.order,
            bits: bits as u32,
        })
    }
}

/// Resolved per-level times (ns).
#[derive(Clone, Debug, PartialEq)]
pub struct LevelTimes {
    pub read_ns: Vec<u64>,
    pub program_ns: Vec<u64>,
    pub order: LevelOrder,
    pub bits: u32,
}

impl LevelTimes {
    /// Type of page `page` of a block (0 = LSB).
    #[inline]
    pub fn level(&self, page: u32) -> usize {
        level_of(page, self.bits, self.order)
    }
}

/// Type of page `page` of a block of `bits`-bit cells under `order` (0 = LSB).
pub fn level_of(page: u32, bits: u32, order: LevelOrder) -> usize {
    match (order, bits) {
        (_, 1) => 0,
        (LevelOrder::WordLine, b) => (page % b) as usize,
        (LevelOrder::Mqsim, 2) => (page % 2) as usize,
        (LevelOrder::Mqsim, _) => match page {
            0..=5 => 0,
            6..=7 => 1,
            p => (((p - 8) >> 1) % 3) as usize,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_types_follow_the_order() {
        let wl: Vec<usize> = (0..8)
            .map(|p| level_of(p, 3, LevelOrder::WordLine))
            .collect();
        assert_eq!(wl, [0, 1, 2, 0, 1, 2, 0, 1]);
        assert_eq!(level_of(7, 4, LevelOrder::WordLine), 3);
        // MQSim's TLC table (Yaakobi et al.): 0-5 LSB, 6-7 CSB, 8-9 LSB, 10-11 CSB, 12-13 MSB, 14-15 LSB.
        let mq: Vec<usize> = (0..16).map(|p| level_of(p, 3, LevelOrder::Mqsim)).collect();
        assert_eq!(mq, [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 0, 0]);
        assert_eq!(level_of(5, 2, LevelOrder::Mqsim), 1);
        assert_eq!(level_of(5, 1, LevelOrder::Mqsim), 0);
    }

    #[test]
    fn lengths_and_values_are_checked() {
        let p = PageLevels {
            read_us: vec![50.0, 70.0],
            program_us: vec![400.0, 900.0, 1200.0],
            order: LevelOrder::WordLine,
        };
        let e = p.resolve(CellMode::Tlc).unwrap_err().to_string();
        assert!(
            e.contains("page_levels.read_us") && e.contains("3 page types"),
            "{e}"
        );
        let ok = PageLevels {
            read_us: vec![50.0, 70.0, 90.0],
            ..p.clone()
        }
        .resolve(CellMode::Tlc)
        .unwrap();
        assert_eq!(ok.read_ns, [50_000, 70_000, 90_000]);
        assert_eq!(ok.level(4), 1);
        let q = PageLevels {
            read_us: vec![1.0; 4],
            program_us: vec![1.0; 4],
            order: LevelOrder::Mqsim,
        };
        assert!(q
            .resolve(CellMode::Qlc)
            .unwrap_err()
            .to_string()
            .contains("order"));
    }
}

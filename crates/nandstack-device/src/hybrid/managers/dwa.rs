//! DWA (dynamic write acceleration, Micron; as in the Intel 660p): the SLC region's size follows the
//! space utilisation by Table 2 of the paper; θ is fixed (32 KiB in the paper's comparison). Table 2
//! gives the SLC cache size as a percentage of the blocks; Setting 1 comes from a commercial SSD.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{check_theta, Decision, Observation, SlcManager};

/// Table 2: utilisation bins (lower edges, %) and SLC cache size (% of blocks) for Settings 1 and 2.
/// The last bin is 70–100%.
pub const TABLE2: [(f64, u32, u32); 7] = [
    (0.0, 56, 40),
    (20.0, 50, 40),
    (30.0, 40, 30),
    (40.0, 30, 25),
    (50.0, 25, 20),
    (60.0, 20, 10),
    (70.0, 10, 5),
];

/// DWA parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DwaConfig {
    /// Table 2 setting: 1 (the commercial SSD's, more aggressive; default) or 2.
    #[serde(default = "d_setting")]
    pub setting: u8,
    /// θ in bytes. Default 32,768 (the paper's comparison).
    #[serde(default = "d_theta")]
    pub theta_bytes: u64,
}
fn d_setting() -> u8 {
    1
}
fn d_theta() -> u64 {
    32 * 1024
}
impl Default for DwaConfig {
    fn default() -> Self {
        DwaConfig {
            setting: d_setting(),
            theta_bytes: d_theta(),
        }
    }
}
impl DwaConfig {
    pub fn validate(&self) -> Result<()> {
        if !(1..=2).contains(&self.setting) {
            return Err(Error::config(
                "device.manager.dwa.setting",
                format!("is {}: must be 1 or 2", self.setting),
            ));
        }
        check_theta("device.manager.dwa.theta_bytes", self.theta_bytes)
    }
}

/// The Table 2 bin of a utilisation in [0, 1].
pub fn table2_bin(utilization: f64) -> usize {
    let pct = utilization * 100.0;
    TABLE2
        .iter()
        .rposition(|&(lo, _, _)| pct >= lo)
        .unwrap_or(0)
}

/// SLC size by utilisation.
#[derive(Clone, Debug)]
pub struct DwaManager {
    setting: u8,
    theta: u64,
    bin: usize,
    decisions: u64,
}

impl DwaManager {
    pub fn new(cfg: &DwaConfig) -> DwaManager {
        DwaManager {
            setting: cfg.setting,
            theta: cfg.theta_bytes,
            bin: 0,
            decisions: 0,
        }
    }
    /// The SLC size (blocks) Table 2 gives for a bin.
    pub fn blocks_for(&self, bin: usize, total_blocks: u32) -> u32 {
        let (_, s1, s2) = TABLE2[bin];
        let pct = if self.setting == 1 { s1 } else { s2 };
        (pct as u64 * total_blocks as u64 / 100) as u32
    }
}

impl SlcManager for DwaManager {
    fn name(&self) -> &'static str {
        "dwa"
    }
    fn initial(&mut self, obs: &Observation) -> Decision {
        self.bin = table2_bin(obs.utilization);
        Decision {
            slc_blocks: self.blocks_for(self.bin, obs.total_blocks),
            theta_bytes: self.theta,
        }
    }
    fn after_write(&mut self, obs: &Observation) -> Option<Decision> {
        let bin = table2_bin(obs.utilization);
        if bin == self.bin {
            return None;
        }
        self.bin = bin;
        self.decisions += 1;
        Some(Decision {
            slc_blocks: self.blocks_for(bin, obs.total_blocks),
            theta_bytes: self.theta,
        })
    }
    fn report(&self) -> super::ManagerReport {
        super::ManagerReport {
            decisions: self.decisions,
            rl: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn table2_bins_and_sizes() {
        assert_eq!(table2_bin(0.0), 0);
        assert_eq!(table2_bin(0.1999), 0);
        assert_eq!(table2_bin(0.2), 1);
        assert_eq!(table2_bin(0.65), 5);
        assert_eq!(table2_bin(0.7), 6);
        assert_eq!(table2_bin(1.0), 6);
        let s1 = DwaManager::new(&DwaConfig::default());
        let s2 = DwaManager::new(&DwaConfig {
            setting: 2,
            ..Default::default()
        });
        assert_eq!(s1.blocks_for(0, 2138), 1197);
        assert_eq!(s1.blocks_for(6, 2138), 213);
        assert_eq!(s2.blocks_for(0, 2138), 855);
        assert_eq!(s2.blocks_for(6, 2138), 106);
    }
}

//! Static: a fixed SLC region and a fixed θ, set once (the "static scheme" of Section 2.1). The device
//! only shrinks it if the data grows past what the region leaves room for; the default size (3% of the
//! blocks) fits up to about 97% utilisation on the paper preset.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{check_theta, Decision, Observation, SlcManager};
use crate::hybrid::config::HybridParams;

/// Static manager parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticConfig {
    /// SLC region size as a fraction of all blocks, in [0, 1] (rounded). Default 0.03 (64 blocks, 256 MiB of
    /// SLC cache, on the paper preset).
    #[serde(default = "d_fraction")]
    pub slc_fraction: f64,
    /// θ: host write requests of at most this many bytes go to SLC. Default 32,768.
    #[serde(default = "d_theta")]
    pub theta_bytes: u64,
}
fn d_fraction() -> f64 {
    0.03
}
fn d_theta() -> u64 {
    32 * 1024
}
impl Default for StaticConfig {
    fn default() -> Self {
        StaticConfig {
            slc_fraction: d_fraction(),
            theta_bytes: d_theta(),
        }
    }
}
impl StaticConfig {
    pub fn validate(&self) -> Result<()> {
        let f = self.slc_fraction;
        if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
            return Err(Error::config(
                "device.manager.static.slc_fraction",
                format!("is {f}: must be in [0, 1]"),
            ));
        }
        check_theta("device.manager.static.theta_bytes", self.theta_bytes)
    }
}

/// Fixed size and θ.
#[derive(Clone, Debug)]
pub struct StaticManager {
    decision: Decision,
}

impl StaticManager {
    pub fn new(cfg: &StaticConfig, p: &HybridParams) -> StaticManager {
        StaticManager {
            decision: Decision {
                slc_blocks: (cfg.slc_fraction * p.total_blocks as f64).round() as u32,
                theta_bytes: cfg.theta_bytes,
            },
        }
    }
}

impl SlcManager for StaticManager {
    fn name(&self) -> &'static str {
        "static"
    }
    fn initial(&mut self, _obs: &Observation) -> Decision {
        self.decision
    }
    fn after_write(&mut self, _obs: &Observation) -> Option<Decision> {
        None
    }
    fn observes(&self, _host_write_bytes: u64) -> bool {
        false
    }
}

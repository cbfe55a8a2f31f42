//! Keys of the DISS comparison (docs/diss.md) that extend `[host.swap.discard]`: the idle-time TRIM of
//! iTRIM (and of STRIM, which adds swap-in TRIMs to it).

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[host.swap.discard.idle]`: deferred TRIM of freed swap slots, issued when the device is idle (modes
/// `itrim` and `strim`). The paper gives no parameters; the round size and interval are F2FS's
/// background discard thread's (`DEF_MAX_DISCARD_REQUEST`, `DEF_MIN_DISCARD_ISSUE_TIME`), the idle
/// threshold is ours (docs/diss.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleTrimConfig {
    /// The device counts as idle once no read or write has been in flight for this long, ms. Default 100.
    #[serde(default = "d_idle")]
    pub idle_ms: f64,
    /// TRIM commands issued together at the start of a round. Default 8.
    #[serde(default = "d_requests")]
    pub requests_per_round: u32,
    /// While the device stays idle, a new round starts this long after the previous one, ms. Default 50.
    #[serde(default = "d_interval")]
    pub round_interval_ms: f64,
    /// Largest TRIM command, slots: contiguous freed slots merge up to it. Default 512 (2 MiB).
    #[serde(default = "d_max")]
    pub max_slots: u32,
}
fn d_idle() -> f64 {
    100.0
}
fn d_requests() -> u32 {
    8
}
fn d_interval() -> f64 {
    50.0
}
fn d_max() -> u32 {
    512
}
impl Default for IdleTrimConfig {
    fn default() -> Self {
        IdleTrimConfig {
            idle_ms: d_idle(),
            requests_per_round: d_requests(),
            round_interval_ms: d_interval(),
            max_slots: d_max(),
        }
    }
}

impl IdleTrimConfig {
    pub fn validate(&self) -> Result<()> {
        let key = |k: &str| format!("host.swap.discard.idle.{k}");
        for (k, v) in [
            ("idle_ms", self.idle_ms),
            ("round_interval_ms", self.round_interval_ms),
        ] {
            if !(v.is_finite() && (0.0..=3.6e6).contains(&v)) {
                return Err(Error::config(
                    key(k),
                    format!("is {v}: must be in [0, 3600000] ms"),
                ));
            }
        }
        if self.requests_per_round == 0 || self.requests_per_round > 4096 {
            return Err(Error::config(
                key("requests_per_round"),
                format!("is {}: must be in [1, 4096]", self.requests_per_round),
            ));
        }
        if self.max_slots == 0 || self.max_slots > 1 << 20 {
            return Err(Error::config(
                key("max_slots"),
                format!("is {}: must be in [1, 1048576]", self.max_slots),
            ));
        }
        Ok(())
    }
}

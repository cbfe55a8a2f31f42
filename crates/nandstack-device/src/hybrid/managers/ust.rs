//! UST (utilisation-aware self-tuning, Yang et al., TVLSI 2016, as summarised in Section 4 of the
//! paper): every host write goes to SLC first, into SLC blocks owned by its logical block (a QLC block's
//! worth of logical space), at most `max_slc_per_logical_block` (MAX_SLC = 6) each. When a logical block
//! needs more, or the SLC region runs out of free blocks, SLC GC keeps the logical block's hot units in
//! SLC (SLC→SLC) and moves the cold ones to QLC (SLC→QLC); the device implements that mechanism
//! (`SlcLayout::PerLogicalBlock`).
//!
//! This file is the sizing policy: the SLC region follows demand. It grows to keep
//! `slc_free_threshold + headroom_blocks` free SLC blocks while the data leaves room (the utilisation
//! awareness: the device's `max_slc_blocks` falls as the space fills), and gives free blocks back to QLC
//! when more than twice the headroom sits unused. So the total number of SLC blocks changes with the
//! number of hot logical blocks, as the paper describes.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Decision, ManagerReport, Observation, SlcManager};
use crate::hybrid::ftl::SlcLayout;

/// UST parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UstConfig {
    /// MAX_SLC: SLC blocks one logical block may own, ≥ 1. Default 6 (the paper's).
    #[serde(default = "d_max")]
    pub max_slc_per_logical_block: u32,
    /// Free SLC blocks kept beyond the SLC free threshold by growing the region. Default 8.
    #[serde(default = "d_headroom")]
    pub headroom_blocks: u32,
}
fn d_max() -> u32 {
    6
}
fn d_headroom() -> u32 {
    8
}
impl Default for UstConfig {
    fn default() -> Self {
        UstConfig {
            max_slc_per_logical_block: d_max(),
            headroom_blocks: d_headroom(),
        }
    }
}
impl UstConfig {
    pub fn validate(&self) -> Result<()> {
        if !(1..=1024).contains(&self.max_slc_per_logical_block) {
            return Err(Error::config(
                "device.manager.ust.max_slc_per_logical_block",
                format!(
                    "is {}: must be in [1, 1024]",
                    self.max_slc_per_logical_block
                ),
            ));
        }
        if self.headroom_blocks > 100_000 {
            return Err(Error::config(
                "device.manager.ust.headroom_blocks",
                format!("is {}: must be at most 100000", self.headroom_blocks),
            ));
        }
        Ok(())
    }
}

/// Demand-following SLC size, all writes to SLC.
#[derive(Clone, Debug)]
pub struct UstManager {
    max_per_lb: u32,
    headroom: u32,
    decisions: u64,
}

impl UstManager {
    pub fn new(cfg: &UstConfig) -> UstManager {
        UstManager {
            max_per_lb: cfg.max_slc_per_logical_block,
            headroom: cfg.headroom_blocks,
            decisions: 0,
        }
    }
    fn want(&self, obs: &Observation) -> u32 {
        (obs.slc_used_blocks + obs.slc_free_threshold + self.headroom).min(obs.max_slc_blocks)
    }
}

impl SlcManager for UstManager {
    fn name(&self) -> &'static str {
        "ust"
    }
    fn layout(&self) -> SlcLayout {
        SlcLayout::PerLogicalBlock {
            max_blocks: self.max_per_lb,
        }
    }
    fn initial(&mut self, obs: &Observation) -> Decision {
        Decision {
            slc_blocks: self.want(obs),
            theta_bytes: u64::MAX,
        }
    }
    fn after_write(&mut self, obs: &Observation) -> Option<Decision> {
        let want = self.want(obs);
        let grow = want > obs.slc_blocks && obs.slc_blocks < obs.max_slc_blocks;
        let shrink = obs.slc_blocks > want + self.headroom;
        if !(grow || shrink) {
            return None;
        }
        self.decisions += 1;
        Some(Decision {
            slc_blocks: want,
            theta_bytes: u64::MAX,
        })
    }
    fn report(&self) -> ManagerReport {
        ManagerReport {
            decisions: self.decisions,
            rl: None,
        }
    }
}

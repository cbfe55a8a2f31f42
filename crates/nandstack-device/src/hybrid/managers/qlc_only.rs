//! QLC-only: no SLC cache; every host write is programmed in QLC mode. The normalisation baseline of
//! Fig. 4.

use super::{Decision, Observation, SlcManager};

/// The baseline without an SLC cache.
#[derive(Clone, Debug, Default)]
pub struct QlcOnlyManager;

impl SlcManager for QlcOnlyManager {
    fn name(&self) -> &'static str {
        "qlc_only"
    }
    fn initial(&mut self, _obs: &Observation) -> Decision {
        Decision {
            slc_blocks: 0,
            theta_bytes: 0,
        }
    }
    fn after_write(&mut self, _obs: &Observation) -> Option<Decision> {
        None
    }
    fn observes(&self, _host_write_bytes: u64) -> bool {
        false
    }
}

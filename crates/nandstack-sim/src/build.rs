//! The hybrid device behind a `Device` (its RL Q-table and manager); the factory itself is
//! `nandstack_device::build`.

use nandstack_core::{Error, Result};
use nandstack_device::hybrid::HybridSsd;
use nandstack_device::Device;

/// The hybrid device behind a `Device`, for its RL Q-table and report.
pub fn as_hybrid(dev: &dyn Device) -> Result<&HybridSsd> {
    dev.as_any()
        .downcast_ref::<HybridSsd>()
        .ok_or_else(|| Error::Invariant("not a hybrid device".into()))
}

//! Which swap backend fits which device: each backend checks its own keys beside its model
//! (`crate::backend`); this gathers what they need to know of the rest of the configuration.

use nandstack_core::Result;
use nandstack_device::spec::{DeviceKindName, DeviceSpec};

use super::host::{DiscardMode, HostConfig, SwapBackendConfig};
use crate::backend::{block, BackendEnv};

/// Which backend fits which device, checked before anything is built: ZNSwap needs a zoned device,
/// Linux block swap a device that takes writes in place. Errors name the key.
pub fn validate_backend(host: &HostConfig, device: &DeviceSpec) -> Result<()> {
    let s = &host.swap;
    let env = BackendEnv {
        zoned: device.kind == DeviceKindName::Zoned,
        device_kind: device.kind.name(),
        size_mib: s.size_mib,
        offset_mib: s.offset_mib,
        discard: s.discard.mode != DiscardMode::Off,
        slot_cache: s.slot_cache,
        zswap: host.zswap.enabled,
        cgroups: host.cgroups.iter().map(|c| c.name.as_str()).collect(),
    };
    match &s.backend {
        SwapBackendConfig::Block => block::validate(&env),
        // Swap in RAM (a loop device over a RAM file, zram): the device holds file pages only.
        SwapBackendConfig::Loop(l) => l.validate(),
        SwapBackendConfig::Zram(_) => Ok(()),
        SwapBackendConfig::Znswap(z) => z.validate(&env),
    }
}

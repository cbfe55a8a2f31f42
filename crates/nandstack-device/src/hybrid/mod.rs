//! The hybrid SLC/QLC SSD of "Reinforcement Learning-Based SLC Cache Technique for Enhancing SSD Write
//! Performance" (Yoo & Shin; `../shared/papers/rl-slc-cache.md`), modelled like the paper's trace-driven
//! single-chip simulator: each write request's cost is the time of the flash reads, programs and erases
//! it causes (Table 1 times, serial on one chip, no queueing), split by cause as Fig. 7.
//!
//! * [`config`]: the device section (`paper` preset + overrides) and its validated [`HybridParams`].
//! * [`HybridFtl`]: page-level 4 KiB mapping in DRAM, a FIFO DRAM write buffer, blocks programmed in SLC
//!   or QLC mode, an SLC region of run-time size (a block budget), SLC→QLC migration, QLC GC, UST's
//!   per-logical-block SLC GC, invariant checks and read-after-write versions. Its mapping table, block
//!   table, victim policies, write buffer and version table are the block FTL's (`crate::ftl`,
//!   `crate::cache`), extended with program modes and one victim policy per region.
//! * DISS: the host may register its swap range (`ExtCommand::RegisterSwapRange`); CL-SDI
//!   (`swap.invalidate_on_read`) and SDS (`placement = swap_file`) as on the block SSD.
//! * [`managers`]: the SLC-cache managers behind [`SlcManager`] — QLC-only, static, DWA, UST, RL.
//! * [`HybridSsd`]: a device = FTL + manager; routes each host write by θ and applies the manager's
//!   decisions.
//!
//! Model notes, open choices and results: `docs/hybrid.md`.

mod as_device;
mod blocks;
pub mod config;
pub mod cost;
mod device;
mod ftl;
mod host;
pub mod managers;
mod reclaim;
pub mod report;
mod verify;

#[cfg(test)]
mod swap_tests;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use config::{HybridDeviceConfig, HybridParams, HybridPlacement, HybridPreset};
pub use cost::{CostBreakdown, CostKind, OpCost};
pub use device::{DeviceStats, HybridSsd};
pub use ftl::{FtlCounters, HybridFtl, SlcLayout};
pub use managers::{
    Decision, ManagerConfig, ManagerKind, ManagerReport, Observation, QTable, SlcManager,
};
pub use report::HybridDetails;

/// Which region a host write is destined for (or a block belongs to).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    Slc,
    Qlc,
}

//! nandstack-device: what sits below the host interface.
//!
//! * [`nand`]: geometry (channels → chips → dies → planes → blocks → pages), cell modes and their endurance
//!   and timing parameters.
//! * [`ftl`]: the page-mapped flash translation layer: 4 KiB mapping, out-of-place updates, read-modify-write
//!   of sub-unit writes, placement streams, allocation across parallel units, garbage collection with
//!   pluggable victim policies, TRIM, static wear levelling, invariant checks and read-after-write
//!   verification.

pub mod cache;
pub mod config;
pub mod device;
pub mod exact;
pub mod ftl;
pub mod hybrid;
pub mod nand;
pub mod spec;
pub mod ssd;
pub mod zoned;

pub use device::{
    Command, Completion, Device, DeviceKind, DeviceStats, ExtCommand, Tag, ZoneCommand,
};
pub use ftl::{Ftl, FtlConfig};
pub use nand::{CellMode, Geometry};
pub use spec::{build, DeviceKindName, DeviceSpec};

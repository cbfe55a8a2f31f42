//! nandstack-device: what sits below the host interface.
//!
//! * [`nand`]: geometry (channels → chips → dies → planes → blocks → pages), cell modes and their endurance
//!   and timing parameters.
//! * [`ftl`]: the page-mapped flash translation layer: 4 KiB mapping, out-of-place updates, read-modify-write
//!   of sub-unit writes, placement streams, allocation across parallel units, garbage collection with
//!   pluggable victim policies, TRIM, static wear levelling, invariant checks and read-after-write
//!   verification.

/// `$cl`, a supertrait of the policy trait `$tr` giving a boxed copy (`clone_box`) to every `$tr` that
/// is `Clone`, and `Clone` for `Box<dyn $tr>`: a device is copied whole (an aged device kept per
/// process, `Device::snapshot`), its policies with it.
macro_rules! boxed_clone {
    ($tr:ident, $cl:ident) => {
        /// A boxed copy of the policy (see `boxed_clone!` in the crate root).
        pub trait $cl {
            fn clone_box(&self) -> Box<dyn $tr>;
        }

        impl<T: $tr + Clone + 'static> $cl for T {
            fn clone_box(&self) -> Box<dyn $tr> {
                Box::new(self.clone())
            }
        }

        impl Clone for Box<dyn $tr> {
            fn clone(&self) -> Self {
                self.clone_box()
            }
        }
    };
}

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

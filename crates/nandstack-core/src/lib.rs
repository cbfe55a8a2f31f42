//! nandstack-core: the vocabulary every other nandstack crate shares.
//!
//! * [`units`]: `Nanos` and `Bytes` newtypes (units last in names, never raw integers in APIs).
//! * [`rng`]: a seeded, portable, fast PRNG (xoshiro256++), so results are byte-identical everywhere.
//! * [`error`]: the one error enum of the engine (config, geometry, trace, invariant, capacity).
//! * [`alloc`]: fallible allocation of big tables (an out-of-memory is an error, never an abort).
//! * [`stats`]: running summaries (min/mean/max/stddev) used by every report.
//! * [`hint`]: cache prefetch hints for the simulators' software pipelines.
//! * [`divisor`]: exact `u32` division by a run-time constant without the hardware divide.

pub mod alloc;
pub mod divisor;
pub mod error;
pub mod hint;
pub mod histogram;
pub mod rng;
pub mod stats;
pub mod units;

pub use divisor::Divisor;
pub use error::{Error, Result};
pub use histogram::Histogram;
pub use rng::Rng;
pub use units::{Bytes, Nanos};

/// Size of the logical mapping unit (a "logical page") in bytes: 4 KiB everywhere in nandstack.
pub const MAPPING_UNIT_BYTES: u64 = 4096;

//! nandstack-workload: where requests come from.
//!
//! * [`block`]: block requests and seeded synthetic generators (sequential, uniform, zipf, hot/cold; read,
//!   write and TRIM mixes; request-size mixes). Trace parsers and memory-reference generators join here.
//! * [`perm`]: a seeded bijection on `[0, n)` used to scatter ranks and to fill space in random order
//!   without materialising a shuffle.
//! * [`zipf`]: a rejection-inversion Zipf sampler (any θ > 0; a guide of at most 128 KiB decides most draws).

pub mod block;
pub mod content;
pub mod perm;
pub mod trace;
pub mod zipf;

pub use block::{standin, BlockGenerator, BlockRequest, Op, Pattern, SyntheticConfig};

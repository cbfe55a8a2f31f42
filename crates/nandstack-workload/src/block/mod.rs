//! Block requests and the synthetic block workload.

pub mod standin;
mod synthetic;

pub use synthetic::{BlockGenerator, Pattern, SizeWeight, SyntheticConfig};

/// A host block operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
}

/// One block request: `len` bytes at byte `offset` of the logical space.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
}

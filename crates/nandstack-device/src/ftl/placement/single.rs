//! Single stream: host and GC writes share one open block per plane (the classic FTL).

use super::{PlacementPolicy, WriteCtx};

#[derive(Clone)]
pub struct Single;

impl PlacementPolicy for Single {
    fn name(&self) -> &'static str {
        "single"
    }
    fn streams(&self) -> u32 {
        1
    }
    #[inline]
    fn stream_for(&mut self, _ctx: &WriteCtx) -> u8 {
        0
    }
}

//! Single stream: host and GC writes share one open block per plane (the classic FTL).

use super::{PlacementPolicy, WriteCause, WriteCtx};

#[derive(Clone)]
pub struct Single;

impl PlacementPolicy for Single {
    fn name(&self) -> &'static str {
        "single"
    }
    fn streams(&self) -> u32 {
        1
    }
    fn migration_stream(&self, _source_stream: u8, _cause: WriteCause) -> Option<u8> {
        Some(0)
    }
    #[inline]
    fn stream_for(&mut self, _ctx: &WriteCtx) -> u8 {
        0
    }
}

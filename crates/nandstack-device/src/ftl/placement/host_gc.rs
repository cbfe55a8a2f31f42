//! Host/GC separation: host writes to stream 0, migrated data (GC, wear levelling) to stream 1. Data that
//! survived a GC is likely colder than fresh writes; keeping them apart is the core of SUP-GC-style schemes.

use super::{PlacementPolicy, WriteCause, WriteCtx};

#[derive(Clone)]
pub struct HostGc;

impl PlacementPolicy for HostGc {
    fn name(&self) -> &'static str {
        "host_gc"
    }
    fn streams(&self) -> u32 {
        2
    }
    fn migration_stream(&self, _source_stream: u8, _cause: WriteCause) -> Option<u8> {
        Some(1)
    }
    #[inline]
    fn stream_for(&mut self, ctx: &WriteCtx) -> u8 {
        match ctx.cause {
            WriteCause::Host => 0,
            WriteCause::Gc | WriteCause::WearLeveling => 1,
        }
    }
}

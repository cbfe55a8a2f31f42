//! Whole-cluster discard (`swapon --discard=pages`): nothing is discarded slot by slot; the allocator
//! withholds a cluster whose last slot is freed and the swap layer discards all of it before reuse.

use super::DiscardPolicy;

pub struct ClusterDiscard;

impl DiscardPolicy for ClusterDiscard {
    fn name(&self) -> &'static str {
        "cluster"
    }
    fn whole_clusters(&self) -> bool {
        true
    }
    fn slot_freed(&mut self, _slot: u32, _map: &[u8], _out: &mut Vec<(u32, u32)>) {}
}

//! Discard (TRIM) policies for freed swap space.
//!
//! # Contract of [`DiscardPolicy`]
//! * `whole_clusters()` is constant. When true, the slot allocator withholds every emptied cluster,
//!   the swap layer discards the whole cluster, and the cluster is reusable only after the discard
//!   completes (Linux `SWP_PAGE_DISCARD`); the allocator also prefers free clusters.
//! * `slot_freed(slot, map, out)` is called after every slot is freed (`map[slot] == 0`); the policy
//!   appends the slot ranges `(first, count)` to discard now. Ranges must contain only free slots and
//!   lie inside the area. A policy may keep state but must be deterministic.

mod cluster;
mod fine;

pub use cluster::ClusterDiscard;
pub use fine::FineDiscard;

pub trait DiscardPolicy {
    fn name(&self) -> &'static str;
    fn whole_clusters(&self) -> bool;
    fn slot_freed(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>);
}

/// No discard (the distribution default).
pub struct NoDiscard;

impl DiscardPolicy for NoDiscard {
    fn name(&self) -> &'static str {
        "off"
    }
    fn whole_clusters(&self) -> bool {
        false
    }
    fn slot_freed(&mut self, _slot: u32, _map: &[u8], _out: &mut Vec<(u32, u32)>) {}
}

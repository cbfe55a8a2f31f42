//! Discard (TRIM) policies for freed swap space.
//!
//! # Contract of [`DiscardPolicy`]
//! * `whole_clusters()` is constant. When true, the slot allocator withholds every emptied cluster,
//!   the swap layer discards the whole cluster, and the cluster is reusable only after the discard
//!   completes (Linux `SWP_PAGE_DISCARD`); the allocator also prefers free clusters.
//! * `slot_freed(slot, map, out)` is called after every slot is freed (`map[slot] == 0`); the policy
//!   appends the slot ranges `(first, count)` to discard now. Ranges must contain only slots that are
//!   [`discardable`](DiscardPolicy::discardable) and lie inside the area. A policy may keep state but
//!   must be deterministic.
//! * The swap layer tells the policy of every slot it reads from the device (`slot_read`: a swap-in,
//!   the faulting page or read ahead) and of every write it submits (`slot_written`), in order; a
//!   policy may append ranges at a read as at a free (STRIM).
//! * A slot is `discardable` when the device copy holds nothing the host will read: by default when the
//!   slot is free. Ranges are queued and issued a little later (at the end of the fault or reclaim
//!   pass); the swap layer re-checks every slot of a range when it is issued and leaves out those that
//!   are no longer discardable (written again meanwhile), so a TRIM never destroys data the host needs.
//!   The header and padding slots (`MAP_BAD`) are never discardable.
//! * Deferred discard (`next_deferred`): the host asks, before it next uses the device at `now`, which
//!   TRIMs the policy would have issued while the device was idle since `idle_from` (no read or write
//!   in flight); each answer is a submission time in `[idle_from, now)` and a range of discardable
//!   slots. The host issues it and asks again until the answer is `None`.

mod cluster;
mod config;
mod fine;
mod itrim;
mod strim;

pub use cluster::ClusterDiscard;
pub use config::IdleTrimConfig;
pub use fine::FineDiscard;
pub use itrim::IdleTrim;
use nandstack_core::Nanos;
pub use strim::SwapInTrim;

pub trait DiscardPolicy {
    fn name(&self) -> &'static str;
    /// Whether the policy discards whole clusters (see the contract). Default: no, slot ranges.
    fn whole_clusters(&self) -> bool {
        false
    }
    fn slot_freed(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>);
    /// The swap layer read `slot` from the device. Default: nothing.
    fn slot_read(&mut self, _slot: u32, _map: &[u8], _out: &mut Vec<(u32, u32)>) {}
    /// The swap layer submitted a write of `slot`. Default: nothing.
    fn slot_written(&mut self, _slot: u32) {}
    /// Whether the device copy of `slot` may be discarded now. Default: the slot is free.
    fn discardable(&self, slot: u32, map: &[u8]) -> bool {
        map[slot as usize] == 0
    }
    /// The next deferred TRIM to issue before `now`, the device having been idle since `idle_from`:
    /// `(submission time, first slot, slots)`. Default: none.
    fn next_deferred(
        &mut self,
        _idle_from: Nanos,
        _now: Nanos,
        _map: &[u8],
    ) -> Option<(Nanos, u32, u32)> {
        None
    }
    /// The policy's own figures for the report (`host.swap.discard`). Default: none.
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// No discard (the distribution default).
pub struct NoDiscard;

impl DiscardPolicy for NoDiscard {
    fn name(&self) -> &'static str {
        "off"
    }
    fn slot_freed(&mut self, _slot: u32, _map: &[u8], _out: &mut Vec<(u32, u32)>) {}
}

#[cfg(test)]
mod conformance;

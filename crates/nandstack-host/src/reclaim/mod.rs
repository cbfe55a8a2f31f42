//! Page reclaim policies: which resident pages to evict.
//!
//! # Contract of [`ReclaimPolicy`]
//! * The host puts every newly resident frame at the head of its LRU list (inactive, or active when a
//!   refault is activated and `uses_active_lists()`); a policy that does not use active lists never
//!   sees PG_active set.
//! * `reclaim` tries to free `nr_to_reclaim` frames charged to `req.memcg` (or to any cgroup when it
//!   is `None`), only through the host's eviction mechanisms ([`ReclaimHost`]); it returns the
//!   number freed. Every frame it isolates is back on a list or freed when it returns. It charges its
//!   CPU time (`scan_ns` per page looked at) and any wait to `ctx.now`.
//! * It terminates: each call looks at a bounded number of pages (at most a few passes over the lists).
//! * It is deterministic and never touches a page whose read is in flight.
//! * Under a cgroup limit the cgroup's usage stays within it (reclaim makes room before a charge).
//!
//! Every policy runs the same conformance suite (`nandstack-sim`'s `tests/host/conformance.rs`: the
//! limit and every invariant under verification, no active page for a policy without active lists,
//! determinism per seed); a new policy is added to its list.

mod clock;
mod fifo;
mod linux;
mod linux_shrink;

pub use clock::ClockReclaim;
pub use fifo::FifoReclaim;
pub use linux::LinuxReclaim;

use nandstack_core::{Nanos, Result};

use crate::vm::counters::{Ctx, HostStats, Params};
use crate::vm::Vm;

/// One reclaim request.
#[derive(Clone, Copy, Debug)]
pub struct ReclaimRequest {
    /// Limit reclaim of this cgroup, or global reclaim (`None`).
    pub memcg: Option<u16>,
    pub nr_to_reclaim: u64,
    /// Background reclaim by kswapd.
    pub kswapd: bool,
    /// Anonymous pages may be swapped out.
    pub may_swap: bool,
}

/// What a reclaim policy sees of the host: the VM (frames, LRU lists, cgroups), the host's counters and
/// costs, the swap area's fill, and the eviction mechanisms (the kernel's `folio_referenced`,
/// `add_to_swap`, `try_to_unmap`, `pageout`, `remove_mapping`, …). The host implements it; a policy never
/// names the host, so reclaim sits below it.
pub trait ReclaimHost {
    fn vm(&self) -> &Vm;
    fn vm_mut(&mut self) -> &mut Vm;
    fn stats_mut(&mut self) -> &mut HostStats;
    fn params(&self) -> &Params;
    /// Swap slots usable in all, and free now.
    fn swap_usable(&self) -> u64;
    fn swap_free_slots(&self) -> u64;
    /// Swap is more than `full_ratio` full (the swap cache is then reclaimed eagerly).
    fn swap_is_full(&self) -> bool;
    /// zswap's shrinker counts cgroup `m`'s pages (reclaim flushes its statistics first).
    fn zswap_shrinker_counts(&self, m: u16) -> bool;
    /// Wake the flusher (dirty file pages met at the tail).
    fn wake_flusher(&mut self);
    /// The page's read is in flight (locked) at `now`.
    fn read_locked(&self, f: u32, now: Nanos) -> bool;
    /// Test and clear the referenced bits of the page's mappings; how many were set.
    fn folio_referenced(&mut self, f: u32) -> u32;
    /// Cache hint, no effect on any result: `folio_referenced` of each page of `batch` comes next.
    /// Default: none.
    fn prefetch_referenced(&self, _batch: &[u32]) {}
    /// Evict the page now if it can be (FIFO, CLOCK): true when freed.
    fn evict_sync(&mut self, ctx: &mut Ctx, f: u32) -> Result<bool>;
    fn blk_start_plug(&mut self);
    fn blk_finish_plug(&mut self, ctx: &Ctx) -> Result<()>;
    fn process_completions(&mut self, now: Nanos);
    /// Drop the page's swap-cache copy (swap full); true when dropped.
    fn free_swap_cache(&mut self, f: u32, cpu: u16) -> bool;
    fn end_writeback(&mut self, f: u32, at: Nanos);
    fn wait_writeback(&mut self, ctx: &mut Ctx, f: u32) -> Result<()>;
    fn add_to_swap(&mut self, ctx: &mut Ctx, f: u32) -> bool;
    fn try_to_unmap(&mut self, f: u32, now: Nanos);
    fn pageout(&mut self, ctx: &mut Ctx, f: u32) -> Result<()>;
    /// All-page accommodation: store a clean file page in the pool before it goes.
    fn apa_evict(&mut self, ctx: &mut Ctx, f: u32) -> Result<()>;
    fn remove_mapping(&mut self, f: u32, cpu: u16);
}

/// A reclaim policy over a host `H` (the host model's `Host`; a test's stand-in).
pub trait ReclaimPolicy<H: ReclaimHost + ?Sized> {
    fn name(&self) -> &'static str;
    /// Whether pages may be active (refault activation, promotion on reference).
    fn uses_active_lists(&self) -> bool;
    fn reclaim(&mut self, host: &mut H, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64>;
}

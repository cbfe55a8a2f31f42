//! Page reclaim policies: which resident pages to evict.
//!
//! # Contract of [`ReclaimPolicy`]
//! * The host puts every newly resident frame at the head of its LRU list (inactive, or active when a
//!   refault is activated and `uses_active_lists()`); a policy that does not use active lists never
//!   sees PG_active set.
//! * `reclaim` tries to free `nr_to_reclaim` frames charged to `req.memcg` (or to any cgroup when it
//!   is `None`), only through the host's eviction mechanisms ([`crate::host::evict`]); it returns the
//!   number freed. Every frame it isolates is back on a list or freed when it returns. It charges its
//!   CPU time (`scan_ns` per page looked at) and any wait to `ctx.now`.
//! * It terminates: each call looks at a bounded number of pages (at most a few passes over the lists).
//! * It is deterministic and never touches a page whose read is in flight.

mod clock;
mod fifo;
mod linux;
mod linux_shrink;

pub use clock::ClockReclaim;
pub use fifo::FifoReclaim;
pub use linux::LinuxReclaim;

use nandstack_core::Result;

use crate::host::{Ctx, Host};

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

pub trait ReclaimPolicy {
    fn name(&self) -> &'static str;
    /// Whether pages may be active (refault activation, promotion on reference).
    fn uses_active_lists(&self) -> bool;
    fn reclaim(&mut self, host: &mut Host, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64>;
}

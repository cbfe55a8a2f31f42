//! Textbook FIFO replacement: evict the page that became resident first, whatever its use. Pages stay
//! on the inactive lists in arrival order (anonymous pages first, then file pages); each eviction
//! waits for its own write.

use nandstack_core::{Nanos, Result};

use super::ReclaimHost;
use super::{ReclaimPolicy, ReclaimRequest};
use crate::vm::counters::Ctx;
use crate::vm::page::*;

#[derive(Default)]
pub struct FifoReclaim {
    batch: Vec<u32>,
}

/// The cgroups a request may take pages from.
pub(super) fn scope<H: ReclaimHost + ?Sized>(h: &H, req: &ReclaimRequest) -> Vec<u16> {
    match req.memcg {
        Some(m) => vec![m],
        None => (0..h.vm().memcgs.len() as u16).collect(),
    }
}

impl<H: ReclaimHost + ?Sized> ReclaimPolicy<H> for FifoReclaim {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn uses_active_lists(&self) -> bool {
        false
    }
    fn reclaim(&mut self, h: &mut H, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64> {
        // One look at each page: a page whose read is in flight stays, all others go in arrival order.
        evict_tails(h, ctx, req, &mut self.batch, |len| len, read_locked)
    }
}

/// Only a page whose read is in flight stays.
fn read_locked<H: ReclaimHost + ?Sized>(h: &mut H, now: Nanos, folio: u32) -> bool {
    h.read_locked(folio, now)
}

/// The scan FIFO and CLOCK share: evict from the tails of the inactive lists (anonymous, then file) of
/// `req`'s cgroups, one page at a time, until `req.nr_to_reclaim` pages are freed. At most
/// `budget(len)` pages are taken from a list of `len` pages, each charged `scan_ns`. A page that
/// `keep(h, now, folio)` keeps goes back to the head, as does one whose eviction fails; the others are
/// evicted, each waiting for its own write. Returns the pages freed.
pub(super) fn evict_tails<H: ReclaimHost + ?Sized>(
    h: &mut H,
    ctx: &mut Ctx,
    req: &ReclaimRequest,
    batch: &mut Vec<u32>,
    budget: impl Fn(u64) -> u64,
    mut keep: impl FnMut(&mut H, Nanos, u32) -> bool,
) -> Result<u64> {
    let mut freed = 0;
    for m in scope(h, req) {
        for list in [LRU_INACTIVE_ANON, LRU_INACTIVE_FILE] {
            let mut budget = budget(h.vm_mut().memcgs[m as usize].lru_len(list));
            while freed < req.nr_to_reclaim && budget > 0 {
                budget -= 1;
                batch.clear();
                if h.vm_mut().isolate_tail(m, list, 1, batch) == 0 {
                    break;
                }
                let f = batch[0];
                ctx.now += h.params().scan_ns;
                h.stats_mut().pgscan += 1;
                if keep(h, ctx.now, f) {
                    h.vm_mut().lru_add_head(f, list);
                    continue;
                }
                if h.evict_sync(ctx, f)? {
                    freed += 1;
                    h.stats_mut().pgsteal += 1;
                } else {
                    h.vm_mut().lru_add_head(f, list);
                }
            }
        }
    }
    Ok(freed)
}

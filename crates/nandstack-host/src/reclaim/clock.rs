//! Textbook CLOCK (second chance): the hand is the tail of the inactive list; a page whose accessed bit
//! is set loses it and goes to the head (one more round), otherwise it is evicted (waiting for its
//! write). Bounded to two passes over the list per call.

use nandstack_core::{Nanos, Result};

use super::fifo::evict_tails;
use super::ReclaimHost;
use super::{ReclaimPolicy, ReclaimRequest};
use crate::vm::counters::Ctx;

#[derive(Default)]
pub struct ClockReclaim {
    batch: Vec<u32>,
}

impl<H: ReclaimHost + ?Sized> ReclaimPolicy<H> for ClockReclaim {
    fn name(&self) -> &'static str {
        "clock"
    }
    fn uses_active_lists(&self) -> bool {
        false
    }
    fn reclaim(&mut self, h: &mut H, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64> {
        // Up to two passes: a referenced page comes round again with its bit cleared.
        evict_tails(
            h,
            ctx,
            req,
            &mut self.batch,
            |len| 2 * len + 1,
            second_chance,
        )
    }
}

/// A page whose read is in flight or whose accessed bit was set (now cleared) goes round again.
fn second_chance<H: ReclaimHost + ?Sized>(h: &mut H, now: Nanos, folio: u32) -> bool {
    let again = h.read_locked(folio, now) || h.folio_referenced(folio) > 0;
    if again {
        h.stats_mut().pgrotated += 1;
    }
    again
}

//! Textbook CLOCK (second chance): the hand is the tail of the inactive list; a page whose accessed bit
//! is set loses it and goes to the head (one more round), otherwise it is evicted (waiting for its
//! write). Bounded to two passes over the list per call.

use nandstack_core::Result;

use super::fifo::evict_tails;
use super::{ReclaimPolicy, ReclaimRequest};
use crate::host::{Ctx, Host};

#[derive(Default)]
pub struct ClockReclaim {
    batch: Vec<u32>,
}

impl ReclaimPolicy for ClockReclaim {
    fn name(&self) -> &'static str {
        "clock"
    }
    fn uses_active_lists(&self) -> bool {
        false
    }
    fn reclaim(&mut self, h: &mut Host, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64> {
        // Up to two passes: a referenced page comes round again with its bit cleared.
        evict_tails(
            h,
            ctx,
            req,
            &mut self.batch,
            |len| 2 * len + 1,
            |h, now, f| {
                let second_chance = h.read_locked(f, now) || h.folio_referenced(f) > 0;
                if second_chance {
                    h.stats.pgrotated += 1;
                }
                second_chance
            },
        )
    }
}

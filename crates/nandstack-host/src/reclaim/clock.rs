//! Textbook CLOCK (second chance): the hand is the tail of the inactive list; a page whose accessed bit
//! is set loses it and goes to the head (one more round), otherwise it is evicted (waiting for its
//! write). Bounded to two passes over the list per call.

use nandstack_core::Result;

use super::fifo::scope;
use super::{ReclaimPolicy, ReclaimRequest};
use crate::host::{Ctx, Host};
use crate::vm::page::*;

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
        let mut freed = 0;
        for m in scope(h, req) {
            for list in [LRU_INACTIVE_ANON, LRU_INACTIVE_FILE] {
                let mut budget = 2 * h.vm.memcgs[m as usize].lru_len(list) + 1;
                while freed < req.nr_to_reclaim && budget > 0 {
                    budget -= 1;
                    self.batch.clear();
                    if h.vm.isolate_tail(m, list, 1, &mut self.batch) == 0 {
                        break;
                    }
                    let f = self.batch[0];
                    ctx.now += h.p.scan_ns;
                    h.stats.pgscan += 1;
                    if h.read_locked(f, ctx.now) || h.folio_referenced(f) > 0 {
                        h.vm.lru_add_head(f, list);
                        h.stats.pgrotated += 1;
                        continue;
                    }
                    if h.evict_sync(ctx, f)? {
                        freed += 1;
                        h.stats.pgsteal += 1;
                    } else {
                        h.vm.lru_add_head(f, list);
                    }
                }
            }
        }
        Ok(freed)
    }
}

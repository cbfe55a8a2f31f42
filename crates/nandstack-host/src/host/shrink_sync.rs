//! Linux 4.7's store at a full pool (`host.zswap.full_pool = "shrink_sync"`), the zswap the ezswap paper
//! ran (Linux 3.10 with the zswap and zpool modules of 4.7).
//!
//! What `zswap_frontswap_store` of 4.x does (read from 4.x-era copies of `mm/zswap.c`; the 8 retries
//! of the allocators' reclaim from `zbud_reclaim_page(pool, 8)` in the 3.x store, z3fold's taken as the
//! same): when `zswap_is_full()` — the pool's pages exceed `max_pool_percent` of RAM, strictly — it counts
//! `pool_limit_hit` and calls `zswap_shrink()`, which asks the allocator for one page
//! (`zpool_shrink(pool, 1)` → `z3fold_reclaim_page`/`zbud_reclaim_page` with 8 retries): the allocator
//! takes its LRU tail page and hands every object on it to zswap's evict callback
//! (`zswap_writeback_entry`: decompress into a new swap-cache page, write it to the swap device
//! asynchronously with PG_reclaim); if the page ends up empty it is freed and the shrink succeeds,
//! otherwise the page goes back on the list and the next tail is tried. A failed shrink refuses the store
//! (`reject_reclaim_fail`); a successful one is followed by the compression and the allocation without a
//! second check of the limit (a later kernel added one). There is no accept threshold and no worker: every
//! store over the limit pays for one page of writeback on the storing task.
//!
//! In the model the victim is the replacement policy's (`page_lru` is the 4.7 allocators' LRU of pool
//! pages; the lottery is ezswap's): its picks are the victim page's entries in turn, each written back by
//! [`Host::zswap_writeback_entry`] on the storing task's clock, until the pool has one page fewer. A pick
//! that rotates or a writeback that cannot happen (the slot's page is already in the swap cache) is a
//! failed try; after `SHRINK_RETRIES` of them, or `SHRINK_RETRIES` × 3 writebacks without a page freed
//! (an entry-granular policy such as 6.18's `lru` may scatter its victims over many pages), or when no
//! cgroup has an entry, the shrink has failed. Cgroups are asked from the storing page's on (4.7 had one
//! list per pool; the model's policies keep one per cgroup).

use nandstack_core::Result;

use super::{Ctx, Host};
use crate::zswap::policy::Pick;

/// `z3fold_reclaim_page(pool, 8)` / `zbud_reclaim_page(pool, 8)`: victim pages tried per shrink.
pub const SHRINK_RETRIES: u32 = 8;

/// Objects per pool page at most (z3fold), for the bound on writebacks per shrink.
const MAX_OBJECTS_PER_PAGE: u32 = 3;

impl Host {
    /// Before a store of a page of cgroup `memcg` under `shrink_sync`: if the pool is over its limit,
    /// shrink it by one page on `ctx`. False when the store must be refused (nothing could be freed).
    /// True at once under `reject` or below the limit.
    pub(crate) fn zswap_shrink_sync(&mut self, ctx: &mut Ctx, memcg: u16) -> Result<bool> {
        let Some(z) = self.store.zswap.as_mut() else {
            return Ok(true);
        };
        if !z.over_limit_sync() {
            return Ok(true);
        }
        z.stats.pool_limit_hit += 1;
        let freed = self.zswap_shrink_page(ctx, memcg)?;
        let z = self.store.zswap.as_mut().expect("zswap on");
        if freed {
            z.stats.sync_shrink_pages += 1;
        } else {
            z.stats.reject_reclaim_fail += 1;
        }
        Ok(freed)
    }

    /// `zswap_shrink`: write back the entries of victim pages until the pool has one page fewer.
    fn zswap_shrink_page(&mut self, ctx: &mut Ctx, memcg: u16) -> Result<bool> {
        let ncg = self.vm.memcgs.len().max(1);
        let before = self.store.zswap.as_ref().expect("zswap on").pool_pages();
        let mut m = memcg as usize % ncg;
        let (mut failures, mut writebacks, mut empty) = (0, 0, 0);
        while failures < SHRINK_RETRIES && writebacks < SHRINK_RETRIES * MAX_OBJECTS_PER_PAGE {
            let z = self.store.zswap.as_mut().expect("zswap on");
            match z.pick(m as u16) {
                Pick::Empty => {
                    empty += 1;
                    if empty >= ncg {
                        return Ok(false);
                    }
                    m = (m + 1) % ncg;
                }
                Pick::Rotate => failures += 1,
                Pick::Writeback(e) => {
                    empty = 0;
                    writebacks += 1;
                    if !self.zswap_writeback_entry(ctx, e)? {
                        failures += 1;
                    }
                    if self.store.zswap.as_ref().expect("zswap on").pool_pages() < before {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }
}

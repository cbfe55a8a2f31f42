//! zswap as the paper ran it (Linux 4.7 zswap on z3fold, `z3fold_reclaim_page`): one LRU list of pool
//! pages per pool, a page moving to the head whenever it stores a new object; when the pool is full the
//! tail page is the victim and all its objects are written back. Frees and compaction moves leave a
//! page where it is. (Lists are per cgroup here, as the writeback walk asks per cgroup.)

use super::pool_pages::{Filing, Group, PoolPages};
use super::{EntryId, Pick, Placement, Replacement};

struct LruFiling;

impl Filing for LruFiling {
    fn lists(&self) -> usize {
        1
    }
    fn list_of(&self, _g: &Group, _used: u32, _headless: bool) -> usize {
        0
    }
    fn refile(&self, grew: bool) -> bool {
        grew
    }
    fn at_head(&self, _stamp_sum: u64, _avg: Option<f64>, _grew: bool) -> bool {
        true
    }
}

/// The page LRU. See the module documentation.
#[derive(Default)]
pub struct PageLru {
    pages: PoolPages,
}

impl PageLru {
    pub fn new() -> PageLru {
        PageLru::default()
    }

    /// Groups of cgroup `memcg`, head (most recently stored into) first.
    pub fn order(&self, memcg: u16) -> Vec<u32> {
        self.pages.list(memcg, 0)
    }
}

impl Replacement for PageLru {
    fn name(&self) -> &'static str {
        "page_lru"
    }

    fn stored(&mut self, e: EntryId, memcg: u16) {
        self.pages.stored(e, memcg);
    }

    fn placed(&mut self, e: EntryId, p: Placement) {
        self.pages.placed(&LruFiling, e, p);
    }

    fn removed(&mut self, e: EntryId) {
        self.pages.removed(&LruFiling, e);
    }

    fn pick(&mut self, memcg: u16) -> Pick {
        if let Some(e) = self.pages.next_victim_entry(memcg) {
            return Pick::Writeback(e);
        }
        match self
            .pages
            .tail(memcg, 0)
            .and_then(|g| self.pages.set_victim(g))
        {
            Some(e) => Pick::Writeback(e),
            None => Pick::Empty,
        }
    }

    fn count(&self, memcg: u16) -> u64 {
        self.pages.count(memcg)
    }

    fn check(&self) -> nandstack_core::Result<()> {
        self.pages.check("page_lru")
    }

    fn victim_mix(&self) -> Vec<((u32, u32), u64)> {
        self.pages.victim_mix()
    }
}

#[cfg(test)]
mod tests {
    use super::super::PageKind;
    use super::*;

    fn at(c: u64) -> Placement {
        Placement {
            container: c,
            len_bytes: 1000,
            kind: PageKind::Anon,
        }
    }

    #[test]
    fn the_tail_page_goes_whole() {
        let mut l = PageLru::new();
        // Entries 0, 1 on page 7; 2 on page 8; then 3 joins page 7 (it moves to the head).
        for (e, c) in [(0, 7), (1, 7), (2, 8), (3, 7)] {
            l.stored(e, 0);
            l.placed(e, at(c));
        }
        assert_eq!(l.order(0).len(), 2);
        // Page 8 is the tail: its one entry goes.
        assert_eq!(l.pick(0), Pick::Writeback(2));
        l.removed(2);
        // Then page 7, all three objects in order.
        assert_eq!(l.pick(0), Pick::Writeback(0));
        l.removed(0);
        assert_eq!(l.pick(0), Pick::Writeback(1));
        l.removed(1);
        assert_eq!(l.pick(0), Pick::Writeback(3));
        l.removed(3);
        assert_eq!(l.pick(0), Pick::Empty);
        l.check().unwrap();
    }
}

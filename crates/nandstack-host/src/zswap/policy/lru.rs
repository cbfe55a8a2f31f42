//! zswap's replacement (`mm/zswap.c`, `shrink_memcg_cb`): one LRU list per cgroup (`list_lru`), new
//! entries added at the tail with their referenced bit set; a walk step looks at the head (the oldest):
//! a referenced entry loses the bit and goes to the tail (second chance, `LRU_ROTATE`), an unreferenced
//! one is moved to the tail and written back (removed from the list when its writeback frees it).

use super::{EntryId, Pick, Replacement};
use crate::vm::page::NONE;

#[derive(Debug, Clone, Copy)]
struct Node {
    prev: u32,
    next: u32,
    memcg: u16,
    referenced: bool,
    live: bool,
}

#[derive(Debug, Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    len: u64,
}

#[derive(Debug, Default)]
pub struct LruSecondChance {
    nodes: Vec<Node>,
    lists: Vec<List>,
}

const EMPTY: List = List {
    head: NONE,
    tail: NONE,
    len: 0,
};

impl LruSecondChance {
    pub fn new() -> LruSecondChance {
        LruSecondChance::default()
    }

    fn list(&mut self, memcg: u16) -> &mut List {
        let m = memcg as usize;
        if self.lists.len() <= m {
            self.lists.resize(m + 1, EMPTY);
        }
        &mut self.lists[m]
    }

    fn unlink(&mut self, e: EntryId) {
        let Node {
            prev, next, memcg, ..
        } = self.nodes[e as usize];
        if prev != NONE {
            self.nodes[prev as usize].next = next;
        }
        if next != NONE {
            self.nodes[next as usize].prev = prev;
        }
        let l = self.list(memcg);
        if l.head == e {
            l.head = next;
        }
        if l.tail == e {
            l.tail = prev;
        }
        l.len -= 1;
    }

    fn push_tail(&mut self, e: EntryId) {
        let memcg = self.nodes[e as usize].memcg;
        let old = self.list(memcg).tail;
        {
            let n = &mut self.nodes[e as usize];
            n.prev = old;
            n.next = NONE;
        }
        if old != NONE {
            self.nodes[old as usize].next = e;
        }
        let l = self.list(memcg);
        l.tail = e;
        if l.head == NONE {
            l.head = e;
        }
        l.len += 1;
    }

    /// Entries of `memcg` from the head (oldest), for tests.
    pub fn order(&self, memcg: u16) -> Vec<EntryId> {
        let mut v = Vec::new();
        let mut cur = self.lists.get(memcg as usize).map_or(NONE, |l| l.head);
        while cur != NONE {
            v.push(cur);
            cur = self.nodes[cur as usize].next;
        }
        v
    }
}

impl Replacement for LruSecondChance {
    fn name(&self) -> &'static str {
        "lru_second_chance"
    }

    fn stored(&mut self, e: EntryId, memcg: u16) {
        let i = e as usize;
        if self.nodes.len() <= i {
            self.nodes.resize(
                i + 1,
                Node {
                    prev: NONE,
                    next: NONE,
                    memcg: 0,
                    referenced: false,
                    live: false,
                },
            );
        }
        debug_assert!(!self.nodes[i].live, "entry {e} stored twice");
        self.nodes[i] = Node {
            prev: NONE,
            next: NONE,
            memcg,
            referenced: true,
            live: true,
        };
        self.push_tail(e);
    }

    fn removed(&mut self, e: EntryId) {
        debug_assert!(self.nodes[e as usize].live, "entry {e} not stored");
        self.unlink(e);
        self.nodes[e as usize].live = false;
    }

    fn pick(&mut self, memcg: u16) -> Pick {
        let head = self.list(memcg).head;
        if head == NONE {
            return Pick::Empty;
        }
        self.unlink(head);
        self.push_tail(head);
        let n = &mut self.nodes[head as usize];
        if n.referenced {
            n.referenced = false;
            Pick::Rotate
        } else {
            Pick::Writeback(head)
        }
    }

    fn count(&self, memcg: u16) -> u64 {
        self.lists.get(memcg as usize).map_or(0, |l| l.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_chance_by_hand() {
        // Store 0, 1, 2 (all referenced): the first three steps rotate them in order, the next three
        // write back 0, 1, 2 — FIFO after one full round.
        let mut l = LruSecondChance::new();
        for e in 0..3 {
            l.stored(e, 1);
        }
        assert_eq!(l.pick(0), Pick::Empty);
        assert_eq!(
            (l.pick(1), l.pick(1), l.pick(1)),
            (Pick::Rotate, Pick::Rotate, Pick::Rotate)
        );
        assert_eq!(l.order(1), vec![0, 1, 2]);
        assert_eq!(l.pick(1), Pick::Writeback(0));
        l.removed(0);
        // A new entry arrives referenced behind the rotated ones.
        l.stored(7, 1);
        assert_eq!(l.order(1), vec![1, 2, 7]);
        assert_eq!(l.pick(1), Pick::Writeback(1));
        // A failed writeback leaves 1 at the tail.
        assert_eq!(l.order(1), vec![2, 7, 1]);
        assert_eq!(l.pick(1), Pick::Writeback(2));
        l.removed(2);
        assert_eq!(l.pick(1), Pick::Rotate);
        assert_eq!(l.pick(1), Pick::Writeback(1));
        assert_eq!(l.count(1), 2);
    }
}

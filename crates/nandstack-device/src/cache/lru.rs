//! An LRU set of integer keys with a dirty bit, O(1) per operation: a direct index from key to slot
//! (keys are logical unit numbers, so a `Vec` beats hashing and keeps iteration order out of the
//! picture), and an intrusive doubly-linked recency list over the slots.

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct LruMap {
    slot_of: Vec<u32>,
    key_of: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    dirty: Vec<bool>,
    /// Most recently used slot.
    head: u32,
    /// Least recently used slot.
    tail: u32,
    free: Vec<u32>,
    len: u32,
}

impl LruMap {
    /// A map for keys in `[0, key_space)` holding at most `capacity` (≥ 1) entries.
    pub fn new(key_space: u32, capacity: u32) -> LruMap {
        let cap = capacity.max(1) as usize;
        // Allocation failures unwind to the run boundary as `Error::Memory` (nandstack_core::alloc).
        let table = |n: usize| nandstack_core::alloc::filled_or_unwind(NONE, n, "cache table");
        LruMap {
            slot_of: table(key_space as usize),
            key_of: table(cap),
            prev: table(cap),
            next: table(cap),
            dirty: nandstack_core::alloc::filled_or_unwind(false, cap, "cache table"),
            head: NONE,
            tail: NONE,
            free: (0..cap as u32).rev().collect(),
            len: 0,
        }
    }
    pub fn len(&self) -> u32 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn capacity(&self) -> u32 {
        self.key_of.len() as u32
    }
    pub fn is_full(&self) -> bool {
        self.len == self.capacity()
    }
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.slot_of[key as usize] != NONE
    }
    pub fn is_dirty(&self, key: u32) -> Option<bool> {
        let s = self.slot_of[key as usize];
        (s != NONE).then(|| self.dirty[s as usize])
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }
    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NONE {
            self.tail = s;
        }
    }

    /// If present: mark most recently used, OR the dirty bit in, return true.
    #[inline]
    pub fn touch(&mut self, key: u32, dirty: bool) -> bool {
        let s = self.slot_of[key as usize];
        if s == NONE {
            return false;
        }
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
        self.dirty[s as usize] |= dirty;
        true
    }

    /// Insert an absent key as most recently used; if full, first evict and return the LRU entry.
    pub fn insert(&mut self, key: u32, dirty: bool) -> Option<(u32, bool)> {
        debug_assert!(!self.contains(key));
        let evicted = if self.free.is_empty() {
            self.pop_lru()
        } else {
            None
        };
        let s = self.free.pop().expect("a free slot after eviction");
        self.slot_of[key as usize] = s;
        self.key_of[s as usize] = key;
        self.dirty[s as usize] = dirty;
        self.push_front(s);
        self.len += 1;
        evicted
    }

    /// Remove and return the least recently used entry.
    pub fn pop_lru(&mut self) -> Option<(u32, bool)> {
        let s = self.tail;
        if s == NONE {
            return None;
        }
        let key = self.key_of[s as usize];
        let d = self.dirty[s as usize];
        self.remove_slot(s);
        Some((key, d))
    }

    /// Remove a key; returns its dirty bit if it was present.
    pub fn remove(&mut self, key: u32) -> Option<bool> {
        let s = self.slot_of[key as usize];
        if s == NONE {
            return None;
        }
        let d = self.dirty[s as usize];
        self.remove_slot(s);
        Some(d)
    }

    fn remove_slot(&mut self, s: u32) {
        self.unlink(s);
        let key = self.key_of[s as usize];
        self.slot_of[key as usize] = NONE;
        self.key_of[s as usize] = NONE;
        self.free.push(s);
        self.len -= 1;
    }

    /// Up to `n` keys starting from the least recently used.
    pub fn peek_lru(&self, n: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(n.min(self.len as usize));
        let mut s = self.tail;
        while s != NONE && out.len() < n {
            out.push(self.key_of[s as usize]);
            s = self.prev[s as usize];
        }
        out
    }

    /// Keys from least to most recently used.
    pub fn keys_lru_first(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len as usize);
        let mut s = self.tail;
        while s != NONE {
            out.push(self.key_of[s as usize]);
            s = self.prev[s as usize];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_lru_sequence() {
        // Capacity 3; reference string 1 2 3 1 4 5: 4 evicts 2 (LRU), 5 evicts 3.
        let mut m = LruMap::new(10, 3);
        let mut evicted = Vec::new();
        for k in [1, 2, 3, 1, 4, 5] {
            if !m.touch(k, false) {
                if let Some((e, _)) = m.insert(k, k == 4) {
                    evicted.push(e);
                }
            }
        }
        assert_eq!(evicted, vec![2, 3]);
        assert_eq!(m.keys_lru_first(), vec![1, 4, 5]);
        assert_eq!(m.is_dirty(4), Some(true));
        assert_eq!(m.remove(4), Some(true));
        assert_eq!(m.remove(4), None);
        assert_eq!(m.pop_lru(), Some((1, false)));
        assert_eq!(m.len(), 1);
        m.touch(5, true);
        assert_eq!(m.pop_lru(), Some((5, true)));
        assert!(m.is_empty() && m.pop_lru().is_none());
    }
}

//! A recency-ordered set of integer keys, each with a small value (a dirty bit for the block controller's
//! caches), O(1) per operation: a direct index from key to slot ([`KeyIndex`]) and an intrusive
//! doubly-linked list over the slots.
//!
//! The order is a parameter: **LRU** ([`LruMap::new`]: a touch makes the entry the most recent) or
//! **FIFO** ([`LruMap::fifo`]: insertion order; touching an entry updates its value in place and leaves
//! its position alone). Either way the "least recent" end is the one that leaves first. The write
//! buffers in FIFO order use the ring [`super::FifoMap`]; `LruMap::fifo` is the linked-list twin it is
//! tested against.

use super::keys::KeyIndex;

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct LruMap<V = bool> {
    /// Key → slot.
    slot_of: KeyIndex,
    key_of: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    value: Vec<V>,
    /// Most recently used (or inserted) slot.
    head: u32,
    /// Least recently used (or oldest inserted) slot.
    tail: u32,
    /// Head of the free slots, chained through `next` (`NONE` when every slot is in use).
    free: u32,
    len: u32,
    /// LRU: a touch moves the entry to the head; FIFO: it does not.
    refresh_on_touch: bool,
}

impl<V: Copy + Default> LruMap<V> {
    /// An LRU map for keys in `[0, key_space)` holding at most `capacity` (≥ 1) entries.
    pub fn new(key_space: u32, capacity: u32) -> LruMap<V> {
        Self::with_order(key_space, capacity, true)
    }
    /// Like [`LruMap::new`], in insertion (FIFO) order: touches never reorder.
    pub fn fifo(key_space: u32, capacity: u32) -> LruMap<V> {
        Self::with_order(key_space, capacity, false)
    }
    fn with_order(key_space: u32, capacity: u32, refresh_on_touch: bool) -> LruMap<V> {
        let cap = capacity.max(1) as usize;
        // Allocation failures unwind to the run boundary as `Error::Memory` (nandstack_core::alloc).
        let table = |n: usize| nandstack_core::alloc::filled_or_unwind(NONE, n, "cache table");
        LruMap {
            // slot + 1 per key; 0 = absent.
            slot_of: KeyIndex::new(key_space),
            key_of: table(cap),
            prev: table(cap),
            // Free slots chained in order 0, 1, 2, …
            next: {
                let mut next = table(cap);
                for (s, n) in next.iter_mut().enumerate().take(cap - 1) {
                    *n = s as u32 + 1;
                }
                next
            },
            value: nandstack_core::alloc::filled_or_unwind(V::default(), cap, "cache table"),
            head: NONE,
            tail: NONE,
            free: 0,
            len: 0,
            refresh_on_touch,
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
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.capacity()
    }
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.slot_of.contains(key)
    }
    /// The slot of `key`, or `NONE`.
    #[inline]
    fn slot(&self, key: u32) -> u32 {
        self.slot_of.slot(key)
    }
    /// The key `d` places from the least recent end (0: the next to leave), if there are that many.
    #[inline]
    pub fn key_from_tail(&self, d: u32) -> Option<u32> {
        self.iter_lru().nth(d as usize)
    }
    /// Hint the CPU to bring `key`'s index entry into cache (pure hint).
    #[inline]
    pub fn prefetch(&self, key: u32) {
        self.slot_of.prefetch(key);
    }
    /// The value of `key`, if present (no reordering).
    #[inline]
    pub fn get(&self, key: u32) -> Option<V> {
        let s = self.slot(key);
        (s != NONE).then(|| self.value[s as usize])
    }
    /// The value of `key` to modify in place, if present (no reordering).
    #[inline]
    pub fn get_mut(&mut self, key: u32) -> Option<&mut V> {
        let s = self.slot(key);
        (s != NONE).then(|| &mut self.value[s as usize])
    }

    #[inline]
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
    #[inline]
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

    /// If present: mark most recently used (LRU order only), apply `update` to its value, return true.
    #[inline]
    pub fn touch_with(&mut self, key: u32, update: impl FnOnce(&mut V)) -> bool {
        let s = self.slot(key);
        if s == NONE {
            return false;
        }
        if self.refresh_on_touch && self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
        update(&mut self.value[s as usize]);
        true
    }

    /// Insert an absent key as most recent; if full, first evict and return the least recent entry.
    #[inline]
    pub fn insert(&mut self, key: u32, value: V) -> Option<(u32, V)> {
        debug_assert!(!self.contains(key));
        let evicted = if self.free == NONE {
            self.pop_lru()
        } else {
            None
        };
        let s = self.free;
        debug_assert!(s != NONE, "a free slot after eviction");
        self.free = self.next[s as usize];
        self.slot_of.set(key, s);
        self.key_of[s as usize] = key;
        self.value[s as usize] = value;
        self.push_front(s);
        self.len += 1;
        evicted
    }

    /// Remove and return the least recent entry.
    #[inline]
    pub fn pop_lru(&mut self) -> Option<(u32, V)> {
        let s = self.tail;
        if s == NONE {
            return None;
        }
        let key = self.key_of[s as usize];
        let v = self.value[s as usize];
        self.remove_slot(s);
        Some((key, v))
    }

    /// Remove a key; returns its value if it was present.
    #[inline]
    pub fn remove(&mut self, key: u32) -> Option<V> {
        let s = self.slot(key);
        if s == NONE {
            return None;
        }
        let v = self.value[s as usize];
        self.remove_slot(s);
        Some(v)
    }

    #[inline]
    fn remove_slot(&mut self, s: u32) {
        self.unlink(s);
        let key = self.key_of[s as usize];
        self.slot_of.clear(key);
        self.key_of[s as usize] = NONE;
        self.next[s as usize] = self.free;
        self.free = s;
        self.len -= 1;
    }

    /// The least recently used key, if any.
    #[inline]
    pub fn lru_key(&self) -> Option<u32> {
        (self.tail != NONE).then(|| self.key_of[self.tail as usize])
    }

    /// Keys from the least recently used on, lazily (no allocation).
    #[inline]
    pub fn iter_lru(&self) -> impl Iterator<Item = u32> + '_ {
        let mut s = self.tail;
        std::iter::from_fn(move || {
            (s != NONE).then(|| {
                let k = self.key_of[s as usize];
                s = self.prev[s as usize];
                k
            })
        })
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

impl LruMap<bool> {
    /// If present: mark most recently used (LRU order only), OR the dirty bit in, return true.
    #[inline]
    pub fn touch(&mut self, key: u32, dirty: bool) -> bool {
        self.touch_with(key, |d| *d |= dirty)
    }
    pub fn is_dirty(&self, key: u32) -> Option<bool> {
        self.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `key_from_tail(d)` names the key that `d` more evictions leave next: after `d` inserts of new
    /// keys into a full map, it is the one the next insert evicts (on a seeded mix of touches).
    #[test]
    fn the_key_from_the_tail_is_the_one_evicted_that_many_misses_later() {
        let mut rng = nandstack_core::Rng::new(9);
        let mut m: LruMap = LruMap::new(1 << 20, 16);
        let mut fresh = 100u32; // new keys, never repeated (at most ~5,000 of them)
        for k in 0..16 {
            m.insert(k, false);
        }
        assert_eq!(m.key_from_tail(16), None);
        for _ in 0..500 {
            let (d, probe) = (rng.below(8) as u32, m.clone());
            let want = probe.key_from_tail(d).unwrap();
            let mut ev = probe;
            for _ in 0..d {
                fresh += 1;
                ev.insert(fresh, false);
            }
            assert_eq!(ev.insert(1 << 19, false).map(|(k, _)| k), Some(want));
            // Move on: touch some present key, or insert a new one.
            let keys = m.keys_lru_first();
            if rng.chance(0.5) {
                m.touch(keys[rng.below(keys.len() as u64) as usize], false);
            } else {
                fresh += 1;
                m.insert(fresh, false);
            }
        }
    }

    #[test]
    fn textbook_lru_sequence() {
        // Capacity 3; reference string 1 2 3 1 4 5: 4 evicts 2 (LRU), 5 evicts 3.
        let mut m: LruMap = LruMap::new(10, 3);
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

    #[test]
    fn fifo_order_ignores_touches_and_keeps_values() {
        // Capacity 3, insertion order 1 2 3; touching 1 updates its value but 1 still leaves first.
        let mut m: LruMap<u64> = LruMap::fifo(10, 3);
        for k in [1, 2, 3] {
            assert_eq!(m.insert(k, 10 * k as u64), None);
        }
        assert!(m.touch_with(1, |v| *v = 99));
        assert!(!m.touch_with(7, |v| *v = 1));
        assert_eq!(m.keys_lru_first(), vec![1, 2, 3]);
        assert_eq!(m.insert(4, 40), Some((1, 99)));
        *m.get_mut(3).unwrap() += 1;
        assert_eq!(m.get(3), Some(31));
        assert_eq!(m.remove(2), Some(20));
        assert_eq!(m.pop_lru(), Some((3, 31)));
        assert_eq!(m.pop_lru(), Some((4, 40)));
        assert!(m.is_empty());
    }

    /// `lru_key` and `iter_lru` (the eviction path's allocation-free walk) against a plain `Vec` of keys
    /// kept in recency order by hand (least recent first), over seeded random operations, LRU and FIFO.
    #[test]
    fn lru_walk_matches_a_plain_list() {
        for (seed, lru) in [(1u64, true), (2, false), (3, true), (4, false)] {
            let (keys, cap) = (64u32, 16u32);
            let mut m: LruMap = if lru {
                LruMap::new(keys, cap)
            } else {
                LruMap::fifo(keys, cap)
            };
            let mut model: Vec<u32> = Vec::new();
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for step in 0..5_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let key = (x % keys as u64) as u32;
                match (x >> 32) % 4 {
                    0 => {
                        m.remove(key);
                        model.retain(|&k| k != key);
                    }
                    1 => {
                        m.pop_lru();
                        if !model.is_empty() {
                            model.remove(0);
                        }
                    }
                    _ => {
                        if let Some(at) = model.iter().position(|&k| k == key) {
                            assert!(m.touch(key, false));
                            if lru {
                                model.remove(at);
                                model.push(key);
                            }
                        } else {
                            m.insert(key, false);
                            if model.len() == cap as usize {
                                model.remove(0);
                            }
                            model.push(key);
                        }
                    }
                }
                let walked: Vec<u32> = m.iter_lru().collect();
                assert_eq!(walked, model, "seed {seed}, step {step}");
                assert_eq!(
                    m.lru_key(),
                    model.first().copied(),
                    "seed {seed}, step {step}"
                );
                let n = (x >> 40) as usize % 20;
                let first: Vec<u32> = m.iter_lru().take(n).collect();
                assert_eq!(
                    first,
                    model[..n.min(model.len())],
                    "seed {seed}, step {step}"
                );
            }
        }
    }
}

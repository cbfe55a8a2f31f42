//! A first-in-first-out set of integer keys, each with a small value: the write buffer's order when an
//! overwrite does not refresh an entry ([`super::Eviction::Fifo`], the hybrid device's buffer). The
//! operations and order of [`super::LruMap::fifo`], kept as a ring instead of a linked list: entries sit
//! in insertion order between `head` and `tail`, so the oldest leaves by moving `head` and a new one
//! enters at `tail` — no neighbours to relink. A removed entry (TRIM, a swapped-in unit) leaves a
//! tombstone that `head` steps over; when tombstones fill the ring's spare half it is compacted in
//! place (order kept), which happens at most once per `capacity` removals.
//!
//! The key index (key → ring position) is the caches' shared [`KeyIndex`].

use super::keys::KeyIndex;

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct FifoMap<V = bool> {
    /// Key → slot.
    slot_of: KeyIndex,
    /// The ring: the key at each position, `NONE` for a tombstone or an unused position.
    keys: Vec<u32>,
    values: Vec<V>,
    /// Ring size − 1 (the size is a power of two, at least twice the capacity).
    mask: u32,
    /// Position counters (free-running, wrapping; masked on access): the oldest live entry when
    /// there is one (never a tombstone), and the next position written.
    head: u32,
    tail: u32,
    len: u32,
    cap: u32,
}

impl<V: Copy + Default> FifoMap<V> {
    /// A FIFO map for keys in `[0, key_space)` holding at most `capacity` (≥ 1) entries.
    pub fn new(key_space: u32, capacity: u32) -> FifoMap<V> {
        let cap = capacity.max(1);
        // At least twice the capacity (so compaction is rare), at most 2^31 positions.
        let size = (2 * cap as u64).next_power_of_two().min(1 << 31) as usize;
        FifoMap {
            slot_of: KeyIndex::new(key_space),
            keys: nandstack_core::alloc::filled_or_unwind(NONE, size, "cache table"),
            values: nandstack_core::alloc::filled_or_unwind(V::default(), size, "cache table"),
            mask: (size - 1) as u32,
            head: 0,
            tail: 0,
            len: 0,
            cap,
        }
    }
    pub fn len(&self) -> u32 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn capacity(&self) -> u32 {
        self.cap
    }
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.cap
    }
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.slot_of.contains(key)
    }
    /// The ring position of `key`, or `NONE`.
    #[inline]
    fn slot(&self, key: u32) -> u32 {
        self.slot_of.slot(key)
    }
    /// Hint the CPU to bring `key`'s index entry into cache (pure hint).
    #[inline]
    pub fn prefetch(&self, key: u32) {
        self.slot_of.prefetch(key);
    }
    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u32) -> Option<V> {
        let s = self.slot(key);
        (s != NONE).then(|| self.values[s as usize])
    }
    /// The value of `key` to modify in place, if present.
    #[inline]
    pub fn get_mut(&mut self, key: u32) -> Option<&mut V> {
        let s = self.slot(key);
        (s != NONE).then(|| &mut self.values[s as usize])
    }
    /// If present: apply `update` to its value (its place in the order stays), return true.
    #[inline]
    pub fn touch_with(&mut self, key: u32, update: impl FnOnce(&mut V)) -> bool {
        match self.get_mut(key) {
            Some(v) => {
                update(v);
                true
            }
            None => false,
        }
    }

    /// Insert an absent key as the newest; if full, first evict and return the oldest entry.
    #[inline]
    pub fn insert(&mut self, key: u32, value: V) -> Option<(u32, V)> {
        debug_assert!(!self.contains(key));
        let evicted = if self.len == self.cap {
            self.pop_lru()
        } else {
            None
        };
        if self.tail.wrapping_sub(self.head) > self.mask {
            self.compact();
        }
        let s = self.tail & self.mask;
        self.keys[s as usize] = key;
        self.values[s as usize] = value;
        self.slot_of.set(key, s);
        self.tail = self.tail.wrapping_add(1);
        self.len += 1;
        evicted
    }

    /// Remove and return the oldest entry.
    #[inline(always)]
    pub fn pop_lru(&mut self) -> Option<(u32, V)> {
        if self.len == 0 {
            return None;
        }
        let s = (self.head & self.mask) as usize;
        let (key, v) = (self.keys[s], self.values[s]);
        self.slot_of.clear(key);
        self.keys[s] = NONE;
        self.len -= 1;
        self.head = self.head.wrapping_add(1);
        if self.len == 0 {
            self.head = self.tail; // only tombstones were left
        } else {
            self.skip_tombstones();
        }
        Some((key, v))
    }

    /// Remove a key; returns its value if it was present.
    #[inline]
    pub fn remove(&mut self, key: u32) -> Option<V> {
        let s = self.slot(key);
        if s == NONE {
            return None;
        }
        let v = self.values[s as usize];
        self.slot_of.clear(key);
        self.keys[s as usize] = NONE;
        self.len -= 1;
        if self.len == 0 {
            self.head = self.tail;
        } else {
            // A live entry is left: the loops stop at it.
            self.skip_tombstones();
            while self.keys[(self.tail.wrapping_sub(1) & self.mask) as usize] == NONE {
                self.tail = self.tail.wrapping_sub(1);
            }
        }
        Some(v)
    }

    /// Step `head` over the tombstones it starts with (a live entry is left).
    #[inline]
    fn skip_tombstones(&mut self) {
        while self.keys[(self.head & self.mask) as usize] == NONE {
            self.head = self.head.wrapping_add(1);
        }
    }

    /// Close the tombstones' gaps: the live entries move towards `head`, in order (the ring is full of
    /// positions, not of entries: at least half of them are tombstones).
    #[cold]
    fn compact(&mut self) {
        let m = self.mask;
        let mut w = self.head;
        let mut r = self.head;
        while r != self.tail {
            let (from, to) = ((r & m) as usize, (w & m) as usize);
            let k = self.keys[from];
            if k != NONE {
                if from != to {
                    self.keys[to] = k;
                    self.values[to] = self.values[from];
                    self.keys[from] = NONE;
                    self.slot_of.set(k, to as u32);
                }
                w = w.wrapping_add(1);
            }
            r = r.wrapping_add(1);
        }
        self.tail = w;
    }

    /// The oldest key, if any.
    #[inline]
    pub fn lru_key(&self) -> Option<u32> {
        (self.len > 0).then(|| self.keys[(self.head & self.mask) as usize])
    }

    /// Keys from the oldest on, lazily (no allocation).
    #[inline]
    pub fn iter_lru(&self) -> impl Iterator<Item = u32> + '_ {
        let span = self.tail.wrapping_sub(self.head);
        (0..span)
            .map(move |i| self.keys[(self.head.wrapping_add(i) & self.mask) as usize])
            .filter(|&k| k != NONE)
    }

    /// Keys from the oldest to the newest.
    pub fn keys_lru_first(&self) -> Vec<u32> {
        self.iter_lru().collect()
    }
}

impl FifoMap<bool> {
    /// If present: OR the dirty bit in (its place stays), return true.
    #[inline]
    pub fn touch(&mut self, key: u32, dirty: bool) -> bool {
        self.touch_with(key, |d| *d |= dirty)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// Every operation against a plain queue of (key, value) pairs searched by scanning, over seeded
    /// mixes of inserts, touches, removals and pops — removals heavy enough to force compactions, on
    /// small and odd capacities.
    #[test]
    fn matches_a_plain_queue() {
        for (seed, keys, cap) in [(1u64, 64u32, 16u32), (2, 40, 1), (3, 300, 37), (4, 20, 19)] {
            let mut m: FifoMap<u64> = FifoMap::new(keys, cap);
            let mut q: VecDeque<(u32, u64)> = VecDeque::new();
            let mut rng = nandstack_core::Rng::new(seed);
            let mut removals = 0u32;
            for step in 0..20_000u64 {
                let key = rng.below(keys as u64) as u32;
                let at = q.iter().position(|&(k, _)| k == key);
                match rng.below(10) {
                    0..=2 => {
                        let want = at.map(|i| q.remove(i).expect("present").1);
                        assert_eq!(m.remove(key), want, "seed {seed}, step {step}");
                        removals += u32::from(want.is_some());
                    }
                    3 => assert_eq!(m.pop_lru(), q.pop_front(), "seed {seed}, step {step}"),
                    _ => match at {
                        Some(i) => {
                            assert!(m.touch_with(key, |v| *v += step));
                            q[i].1 += step;
                        }
                        None => {
                            let want = if q.len() == cap as usize {
                                q.pop_front()
                            } else {
                                None
                            };
                            q.push_back((key, step));
                            assert_eq!(m.insert(key, step), want, "seed {seed}, step {step}");
                        }
                    },
                }
                let model: Vec<u32> = q.iter().map(|&(k, _)| k).collect();
                assert_eq!(m.keys_lru_first(), model, "seed {seed}, step {step}");
                assert_eq!(m.len() as usize, q.len());
                assert_eq!(m.is_full(), q.len() == cap as usize);
                assert_eq!(m.lru_key(), model.first().copied());
                for &(k, v) in q.iter() {
                    assert_eq!(m.get(k), Some(v), "seed {seed}, step {step}");
                    assert!(m.contains(k));
                }
                assert_eq!(m.get(key).is_some(), q.iter().any(|&(k, _)| k == key));
            }
            assert!(removals > 2 * cap, "seed {seed}: too few removals");
        }
    }

    /// The same order as `LruMap::fifo` (the linked-list FIFO it replaces in the write buffer), on a
    /// seeded stream of buffer-like operations.
    #[test]
    fn agrees_with_the_linked_list_fifo() {
        let (keys, cap) = (1_000u32, 64u32);
        let mut ring: FifoMap<u32> = FifoMap::new(keys, cap);
        let mut list: crate::cache::LruMap<u32> = crate::cache::LruMap::fifo(keys, cap);
        let mut rng = nandstack_core::Rng::new(11);
        for step in 0..50_000u32 {
            let key = rng.below(keys as u64) as u32;
            if rng.below(20) == 0 {
                assert_eq!(ring.remove(key), list.remove(key), "step {step}");
            } else if !ring.touch_with(key, |v| *v = step) {
                assert!(!list.touch_with(key, |v| *v = step));
                assert_eq!(
                    ring.insert(key, step),
                    list.insert(key, step),
                    "step {step}"
                );
            } else {
                assert!(list.touch_with(key, |v| *v = step));
            }
        }
        assert_eq!(ring.keys_lru_first(), list.keys_lru_first());
        while let Some(e) = list.pop_lru() {
            assert_eq!(ring.pop_lru(), Some(e));
        }
        assert!(ring.is_empty() && ring.pop_lru().is_none());
    }

    /// Tombstones in the middle (every other entry removed, the oldest kept) fill the ring's spare
    /// positions until an insert compacts it: the order and every key's value survive the move.
    #[test]
    fn compaction_keeps_the_order_and_the_index() {
        let (cap, size) = (8u32, 16u32);
        let mut m: FifoMap<u32> = FifoMap::new(1_000, cap);
        let mut model: VecDeque<u32> = VecDeque::new();
        let mut next = 0u32;
        let mut compacted = false;
        for _ in 0..200 {
            // Insert one, then remove the second oldest: the head never moves past the tombstones.
            if m.is_full() {
                model.pop_front();
            }
            // Every position in use (live or tombstone): this insert compacts.
            compacted |= m.tail.wrapping_sub(m.head) == size;
            m.insert(next, 10 * next);
            model.push_back(next);
            next += 1;
            if model.len() > 2 {
                let k = model.remove(1).expect("three entries");
                assert_eq!(m.remove(k), Some(10 * k));
            }
            assert_eq!(m.keys_lru_first(), Vec::from(model.clone()));
            for &k in &model {
                assert_eq!(m.get(k), Some(10 * k), "key {k}");
            }
        }
        assert!(next > 4 * size && compacted);
    }

    #[test]
    fn touches_update_in_place_and_the_dirty_bit_ors() {
        let mut m: FifoMap = FifoMap::new(10, 3);
        for k in [1, 2, 3] {
            assert_eq!(m.insert(k, false), None);
        }
        assert!(m.touch(1, true) && !m.touch(7, true));
        assert_eq!(m.keys_lru_first(), vec![1, 2, 3]);
        assert!(m.touch(1, false));
        assert_eq!(m.get(1), Some(true));
        assert_eq!(m.insert(4, false), Some((1, true)));
        assert_eq!(m.capacity(), 3);
    }
}

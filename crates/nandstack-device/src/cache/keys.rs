//! The direct key index the controller's caches share ([`super::LruMap`], [`super::FifoMap`]): key →
//! slot + 1, 0 = absent. Keys are logical unit numbers, so a `Vec` beats hashing and keeps iteration
//! order out of the picture; a fresh index is zeroed memory the OS maps lazily (a small map over a large
//! key space costs only the pages its keys touch), and a dropped one goes back to the process's kept
//! tables for the next device (`nandstack_core::alloc::keep`).

#[derive(Clone, Debug)]
pub(crate) struct KeyIndex(Vec<u32>);

impl Drop for KeyIndex {
    fn drop(&mut self) {
        nandstack_core::alloc::keep(std::mem::take(&mut self.0));
    }
}

impl KeyIndex {
    /// An empty index over keys in `[0, key_space)`.
    pub(crate) fn new(key_space: u32) -> KeyIndex {
        KeyIndex(nandstack_core::alloc::kept_or_filled(
            0,
            key_space as usize,
            "cache table",
        ))
    }
    #[inline]
    pub(crate) fn contains(&self, key: u32) -> bool {
        self.0[key as usize] != 0
    }
    /// The slot of `key`, or `u32::MAX` when absent.
    #[inline]
    pub(crate) fn slot(&self, key: u32) -> u32 {
        self.0[key as usize].wrapping_sub(1)
    }
    #[inline]
    pub(crate) fn set(&mut self, key: u32, slot: u32) {
        self.0[key as usize] = slot + 1;
    }
    #[inline]
    pub(crate) fn clear(&mut self, key: u32) {
        self.0[key as usize] = 0;
    }
    /// Hint the CPU to bring `key`'s entry into cache (pure hint).
    #[inline]
    pub(crate) fn prefetch(&self, key: u32) {
        nandstack_core::hint::prefetch(&self.0, key as usize);
    }
}

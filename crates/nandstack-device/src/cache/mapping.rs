//! DFTL-style mapping cache: the full page map lives in translation pages on flash (page_size / 8 entries
//! each, 8 bytes per entry as in DFTL); the controller caches N entries in DRAM, LRU. A lookup that misses
//! reads the entry's translation page; evicting a dirty entry writes its translation page back, and with it
//! every other dirty cached entry of that page (DFTL's batch update: they become clean). Translation
//! pages are spread over the planes (tpage mod planes); their space is not taken from the data blocks and
//! they are not garbage collected (their programs are counted and timed, cause `translation`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::LruMap;

/// Mapping cache. Off by default (the whole map in DRAM, every lookup free).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MappingCacheConfig {
    /// Cached mapping entries; 0 = off. Default 0.
    #[serde(default)]
    pub entries: u64,
}

/// How far from the LRU end [`MappingCache::prefetch`] reaches for the entry a miss will evict.
const EVICT_LEAD: u32 = 4;

/// What one lookup cost.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// Translation page to read (miss), if any.
    pub read_tpage: Option<u32>,
    /// Translation page to write back (dirty eviction), if any.
    pub write_tpage: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct MappingCache {
    lru: LruMap,
    entries_per_tpage: u32,
    /// Write-backs of each translation page so far; a cached entry is dirty only if it was dirtied since
    /// its page's last write-back (batch update without scanning the cache).
    tpage_epoch: Vec<u32>,
    /// Per logical page: the epoch of its translation page when the cached entry was last dirtied.
    dirtied_in: Vec<u32>,
    pub hits: u64,
    pub misses: u64,
    pub dirty_evictions: u64,
}

impl MappingCache {
    pub fn new(logical_units: u32, entries: u32, page_size_bytes: u32) -> MappingCache {
        let entries_per_tpage = page_size_bytes / 8;
        MappingCache {
            lru: LruMap::new(logical_units, entries),
            entries_per_tpage,
            tpage_epoch: vec![0; logical_units.div_ceil(entries_per_tpage) as usize],
            dirtied_in: vec![0; logical_units as usize],
            hits: 0,
            misses: 0,
            dirty_evictions: 0,
        }
    }
    pub fn tpage_of(&self, lpn: u32) -> u32 {
        lpn / self.entries_per_tpage
    }
    /// Hint the CPU to bring the lines a lookup of `lpn` reads into cache — its index entry in the LRU
    /// and its dirtied-in epoch — and those of the entry [`EVICT_LEAD`] places from the LRU end, which
    /// a run of misses evicts that many lookups from now (pure hint; a drive's prefetch pipeline calls
    /// it once per request, requests ahead).
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        self.lru.prefetch(lpn);
        nandstack_core::hint::prefetch(&self.dirtied_in, lpn as usize);
        if let Some(old) = self.lru.key_from_tail(EVICT_LEAD) {
            self.lru.prefetch(old);
            nandstack_core::hint::prefetch(&self.dirtied_in, old as usize);
        }
    }
    /// Look up (and, for `update`, modify) the entry of `lpn`.
    #[inline]
    pub fn access(&mut self, lpn: u32, update: bool) -> Access {
        if update {
            self.dirtied_in[lpn as usize] = self.tpage_epoch[self.tpage_of(lpn) as usize];
        }
        if self.lru.touch(lpn, update) {
            self.hits += 1;
            return Access::default();
        }
        self.misses += 1;
        let mut a = Access {
            read_tpage: Some(self.tpage_of(lpn)),
            write_tpage: None,
        };
        if let Some((old, dirty)) = self.lru.insert(lpn, update) {
            let t = self.tpage_of(old) as usize;
            if dirty && self.dirtied_in[old as usize] == self.tpage_epoch[t] {
                self.dirty_evictions += 1;
                self.tpage_epoch[t] = self.tpage_epoch[t].wrapping_add(1);
                a.write_tpage = Some(t as u32);
            }
        }
        a
    }

    /// Checkpoint: every cached entry becomes clean (all translation pages written back, uncounted), and
    /// the counters restart. Used after preconditioning, as a drive's idle-time map flush would.
    pub fn checkpoint(&mut self) {
        for t in self.tpage_epoch.iter_mut() {
            *t = t.wrapping_add(1);
        }
        self.hits = 0;
        self.misses = 0;
        self.dirty_evictions = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_read_and_dirty_evictions_write() {
        // 4 KiB pages: 512 entries per translation page. Capacity 2.
        let mut c = MappingCache::new(10_000, 2, 4096);
        assert_eq!(
            c.access(0, false),
            Access {
                read_tpage: Some(0),
                write_tpage: None
            }
        );
        assert_eq!(
            c.access(600, true),
            Access {
                read_tpage: Some(1),
                write_tpage: None
            }
        );
        assert_eq!(c.access(0, false), Access::default()); // hit
                                                           // 1100 evicts 600 (LRU, dirty) → write tpage 1.
        assert_eq!(
            c.access(1100, false),
            Access {
                read_tpage: Some(2),
                write_tpage: Some(1)
            }
        );
        // 5 evicts 0 (clean) → no write.
        assert_eq!(
            c.access(5, false),
            Access {
                read_tpage: Some(0),
                write_tpage: None
            }
        );
        assert_eq!((c.hits, c.misses, c.dirty_evictions), (1, 4, 1));
    }

    #[test]
    fn a_write_back_cleans_every_dirty_entry_of_its_page() {
        let mut c = MappingCache::new(10_000, 3, 4096);
        for lpn in [1, 2, 3] {
            c.access(lpn, true); // three dirty entries of translation page 0
        }
        // 600 evicts 1: page 0 is written back once; 2 and 3 are now clean.
        assert_eq!(c.access(600, false).write_tpage, Some(0));
        assert_eq!(c.access(601, false).write_tpage, None);
        assert_eq!(c.access(602, false).write_tpage, None);
        assert_eq!(c.dirty_evictions, 1);
        // Dirtied again after the write-back: dirty again.
        c.access(602, true);
        c.access(700, false);
        c.access(701, false);
        assert_eq!(c.access(702, false).write_tpage, Some(1));
        // A checkpoint cleans everything and restarts the counters.
        c.access(5, true);
        c.checkpoint();
        assert_eq!((c.hits, c.misses, c.dirty_evictions), (0, 0, 0));
        for lpn in 800..803 {
            assert_eq!(c.access(lpn, false).write_tpage, None);
        }
    }
}

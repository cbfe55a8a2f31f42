//! DFTL-style mapping cache: the full page map lives in translation pages on flash (page_size / 8 entries
//! each, 8 bytes per entry as in DFTL); the controller caches N entries in DRAM, LRU. A lookup that misses
//! reads the entry's translation page; evicting a dirty entry writes its translation page back (one
//! program per dirty eviction — DFTL's batching of co-resident dirty entries is not modelled). Translation
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
    pub hits: u64,
    pub misses: u64,
    pub dirty_evictions: u64,
}

impl MappingCache {
    pub fn new(logical_units: u32, entries: u32, page_size_bytes: u32) -> MappingCache {
        MappingCache {
            lru: LruMap::new(logical_units, entries),
            entries_per_tpage: page_size_bytes / 8,
            hits: 0,
            misses: 0,
            dirty_evictions: 0,
        }
    }
    pub fn tpage_of(&self, lpn: u32) -> u32 {
        lpn / self.entries_per_tpage
    }
    /// Look up (and, for `update`, modify) the entry of `lpn`.
    #[inline]
    pub fn access(&mut self, lpn: u32, update: bool) -> Access {
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
            if dirty {
                self.dirty_evictions += 1;
                a.write_tpage = Some(self.tpage_of(old));
            }
        }
        a
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
}

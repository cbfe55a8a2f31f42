//! The controller's DRAM write buffer: write-back, whole 4 KiB units, LRU or FIFO. A write to a buffered
//! unit is absorbed (no flash write); reads of buffered units are served from DRAM; when full, the least
//! recently written unit (LRU) or the one buffered longest ago (FIFO) is evicted to the FTL, whose open
//! page programs once it is full — so the flash sees whole pages. TRIM drops buffered units it covers.
//! Flush (FLUSH command / end of run) writes everything back. Each entry carries a value: the block
//! controller's dirty bit, or the hybrid device's destination region and version.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{FifoMap, LruMap};

/// Write buffer. Off by default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteBufferConfig {
    /// Buffer size in bytes (rounded down to 4 KiB units), at most the drive's logical capacity; 0 = no
    /// buffer. Default 0.
    #[serde(default)]
    pub bytes: u64,
    /// DRAM access time for a buffer hit or insert, per request, in ns. Default 1000.
    #[serde(default = "d_dram")]
    pub dram_access_ns: u64,
    /// `lru` (default), `fifo` (evict the unit buffered longest ago; an overwrite of a buffered unit
    /// updates it in place without refreshing it) or `gc_aware`: GCaR-style replacement that, among the
    /// `gc_aware_scan` least recently used units, evicts the first whose target die is not busy with GC
    /// (falling back to the LRU unit). Needs static allocation (the target die of a logical page must be
    /// known).
    #[serde(default = "d_evict")]
    pub eviction: Eviction,
    /// Entries examined per eviction by `gc_aware`. Default 8.
    #[serde(default = "d_scan")]
    pub gc_aware_scan: u32,
    /// Controller CPU time per entry examined by `gc_aware` (firmware cost model), ns. Default 0.
    #[serde(default)]
    pub ns_per_scanned_entry: u64,
}

/// Write-buffer replacement policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Eviction {
    Lru,
    Fifo,
    GcAware,
}
fn d_evict() -> Eviction {
    Eviction::Lru
}
fn d_scan() -> u32 {
    8
}
fn d_dram() -> u64 {
    1000
}
impl Default for WriteBufferConfig {
    fn default() -> Self {
        WriteBufferConfig {
            bytes: 0,
            dram_access_ns: d_dram(),
            eviction: d_evict(),
            gc_aware_scan: d_scan(),
            ns_per_scanned_entry: 0,
        }
    }
}

/// The buffer: its entries (keyed by logical unit, in eviction order) and its parameters.
#[derive(Clone, Debug)]
pub struct WriteBuffer<V = bool> {
    pub lru: Entries<V>,
    pub dram_access_ns: u64,
    pub eviction: Eviction,
    pub scan: u32,
    pub ns_per_scanned_entry: u64,
}

impl<V: Copy + Default> WriteBuffer<V> {
    /// The buffer a config describes over `logical_units` keys; `None` when it has no whole unit.
    pub fn new(logical_units: u32, cfg: &WriteBufferConfig) -> Option<WriteBuffer<V>> {
        let units = cfg.bytes / nandstack_core::MAPPING_UNIT_BYTES;
        let cap = units.min(u32::MAX as u64) as u32;
        (units > 0).then(|| WriteBuffer {
            lru: match cfg.eviction {
                Eviction::Fifo => Entries::Fifo(FifoMap::new(logical_units, cap)),
                Eviction::Lru | Eviction::GcAware => Entries::Lru(LruMap::new(logical_units, cap)),
            },
            dram_access_ns: cfg.dram_access_ns,
            eviction: cfg.eviction,
            scan: cfg.gc_aware_scan.max(1),
            ns_per_scanned_entry: cfg.ns_per_scanned_entry,
        })
    }
}

/// The buffer's entries in eviction order: a linked list for LRU order ([`LruMap`]), a ring for FIFO
/// order ([`FifoMap`]: no neighbours to relink when the oldest leaves). The same operations on both;
/// "lru" in a name means the end that leaves first.
#[derive(Clone, Debug)]
pub enum Entries<V> {
    Lru(LruMap<V>),
    Fifo(FifoMap<V>),
}

/// `Entries::iter_lru`: either map's walk.
pub enum Walk<A, B> {
    Lru(A),
    Fifo(B),
}

impl<A: Iterator<Item = u32>, B: Iterator<Item = u32>> Iterator for Walk<A, B> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Walk::Lru(a) => a.next(),
            Walk::Fifo(b) => b.next(),
        }
    }
}

/// Forward a method to whichever map the buffer has.
macro_rules! either {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            Entries::Lru($m) => $e,
            Entries::Fifo($m) => $e,
        }
    };
}

impl<V: Copy + Default> Entries<V> {
    #[inline]
    pub fn len(&self) -> u32 {
        either!(self, m => m.len())
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        either!(self, m => m.is_empty())
    }
    #[inline]
    pub fn is_full(&self) -> bool {
        either!(self, m => m.is_full())
    }
    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        either!(self, m => m.contains(key))
    }
    #[inline]
    pub fn prefetch(&self, key: u32) {
        either!(self, m => m.prefetch(key))
    }
    #[inline]
    pub fn get(&self, key: u32) -> Option<V> {
        either!(self, m => m.get(key))
    }
    #[inline]
    pub fn get_mut(&mut self, key: u32) -> Option<&mut V> {
        either!(self, m => m.get_mut(key))
    }
    /// If present: refresh it (LRU order only), apply `update` to its value, return true.
    #[inline]
    pub fn touch_with(&mut self, key: u32, update: impl FnOnce(&mut V)) -> bool {
        either!(self, m => m.touch_with(key, update))
    }
    /// Insert an absent key as the newest; if full, first evict and return the entry that leaves.
    #[inline]
    pub fn insert(&mut self, key: u32, value: V) -> Option<(u32, V)> {
        either!(self, m => m.insert(key, value))
    }
    /// Remove and return the entry that leaves first.
    #[inline(always)]
    pub fn pop_lru(&mut self) -> Option<(u32, V)> {
        either!(self, m => m.pop_lru())
    }
    #[inline]
    pub fn remove(&mut self, key: u32) -> Option<V> {
        either!(self, m => m.remove(key))
    }
    /// The key that leaves first, if any.
    #[inline]
    pub fn lru_key(&self) -> Option<u32> {
        either!(self, m => m.lru_key())
    }
    /// Keys from the one that leaves first on, lazily.
    #[inline]
    pub fn iter_lru(&self) -> Walk<impl Iterator<Item = u32> + '_, impl Iterator<Item = u32> + '_> {
        match self {
            Entries::Lru(m) => Walk::Lru(m.iter_lru()),
            Entries::Fifo(m) => Walk::Fifo(m.iter_lru()),
        }
    }
    /// Keys from the one that leaves first to the newest.
    pub fn keys_lru_first(&self) -> Vec<u32> {
        either!(self, m => m.keys_lru_first())
    }
}

impl Entries<bool> {
    /// If present: refresh it (LRU order only), OR the dirty bit in, return true.
    #[inline]
    pub fn touch(&mut self, key: u32, dirty: bool) -> bool {
        either!(self, m => m.touch(key, dirty))
    }
}

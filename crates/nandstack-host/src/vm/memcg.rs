//! Memory cgroups: a limit, a usage counter, and the cgroup's lruvec (its four LRU lists, reclaim cost
//! averages and workingset counters). The root cgroup (index 0) has no limit.

use super::page::{NONE, NR_LRU};
use nandstack_core::Nanos;

/// Head of an intrusive doubly-linked list of frames (head = most recently added, tail = oldest).
#[derive(Clone, Copy, Debug)]
pub struct ListHead {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
}
impl Default for ListHead {
    fn default() -> Self {
        ListHead {
            head: NONE,
            tail: NONE,
            len: 0,
        }
    }
}

/// Per-cgroup event counters (reported).
#[derive(Clone, Debug, Default)]
pub struct MemcgStats {
    pub pswpin: u64,
    pub pswpout: u64,
    pub major_faults: u64,
    pub minor_faults: u64,
    pub swap_cache_hits: u64,
    pub reclaim_runs: u64,
    pub pgscan: u64,
    pub pgsteal: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    pub workingset_refault_anon: u64,
    pub workingset_refault_file: u64,
    pub workingset_activate_anon: u64,
    pub workingset_activate_file: u64,
    pub workingset_restore_anon: u64,
    pub workingset_restore_file: u64,
    pub oom_stalls: u64,
    pub swap_read_bytes: u64,
    pub swap_write_bytes: u64,
    pub max_usage_pages: u64,
}

/// blk-throttle state on the swap partition: the earliest time the next request may be dispatched.
#[derive(Clone, Debug, Default)]
pub struct Throttle {
    /// Bytes per second (None = unlimited).
    pub read_bps: Option<f64>,
    pub write_bps: Option<f64>,
    pub read_next_ns: Nanos,
    pub write_next_ns: Nanos,
    /// Time requests spent waiting in the throttle, ns.
    pub delayed_ns: Nanos,
}

#[derive(Clone, Debug)]
pub struct Memcg {
    pub name: String,
    /// Limit in pages (u64::MAX = none).
    pub limit: u64,
    /// Charged pages (LRU pages, pages in flight, page tables).
    pub usage: u64,
    pub swappiness: u32,
    pub lru: [ListHead; NR_LRU],
    /// Reclaim cost averages (`lru_note_cost`, [`Vm::lru_note_cost`](super::Vm::lru_note_cost)).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// `lruvec->nonresident_age`: evictions + activations, the workingset clock.
    pub nonresident_age: u64,
    /// Snapshot of workingset activations at the end of the last reclaim (`snapshot_refaults`).
    pub refaults_snapshot: [u64; 2],
    pub throttle: Throttle,
    pub stats: MemcgStats,
}

impl Memcg {
    pub fn new(name: &str, limit: u64, swappiness: u32) -> Memcg {
        Memcg {
            name: name.into(),
            limit,
            usage: 0,
            swappiness,
            lru: [ListHead::default(); NR_LRU],
            anon_cost: 0,
            file_cost: 0,
            nonresident_age: 0,
            refaults_snapshot: [0; 2],
            throttle: Throttle::default(),
            stats: MemcgStats::default(),
        }
    }
    #[inline]
    pub fn lru_len(&self, list: u8) -> u64 {
        self.lru[list as usize].len
    }
    pub fn lru_pages(&self) -> u64 {
        self.lru.iter().map(|l| l.len).sum()
    }
    /// Workingset activations so far, [anon, file] (live; reclaim reads them as flushed,
    /// [`super::vmstats`]).
    pub fn activations(&self) -> [u64; 2] {
        [
            self.stats.workingset_activate_anon,
            self.stats.workingset_activate_file,
        ]
    }
}

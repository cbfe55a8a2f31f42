//! The running thread (`Ctx`), the model's derived costs (`Params`) and the host-wide event counters
//! (`HostStats`, /proc/vmstat's figures and the fault latencies): plain data every floor above reads.

use nandstack_core::{Histogram, Nanos};

/// The thread on whose behalf host work runs: its clock, CPU and name.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Simulated time of the thread, ns.
    pub now: Nanos,
    pub cpu: u16,
    pub comm: u16,
    /// Running as kswapd (background reclaim).
    pub kswapd: bool,
}

/// Model parameters derived from the config.
#[derive(Clone, Debug)]
pub struct Params {
    pub ns_per_ref: Nanos,
    pub minor_ns: Nanos,
    pub major_ns: Nanos,
    pub scan_ns: Nanos,
    /// Reclaim CPU time per page written out, on top of `scan_ns`.
    pub write_ns: Nanos,
    /// SWAP_CLUSTER_MAX.
    pub scm: u64,
    pub cgroup_v1: bool,
    pub retries: u32,
    pub workingset: bool,
    pub swappiness: u32,
    /// `host.fault.swapin_write`.
    pub swapin_write: super::fault::SwapinWrite,
}

/// Fault kinds (histogram index).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Swap-in that read the device.
    SwapMajor = 0,
    /// Page found in the swap cache.
    SwapCache = 1,
    /// First touch of an anonymous page (zero page mapped or new page), copy-on-write, write-protect.
    Anon = 2,
    /// File page read from the device.
    FileMajor = 3,
    /// File page found in the page cache.
    FileMinor = 4,
}
pub const FAULT_KINDS: [&str; 5] = [
    "swap_major",
    "swap_cache",
    "anon",
    "file_major",
    "file_minor",
];

/// Host-wide event counters.
#[derive(Clone, Debug)]
pub struct HostStats {
    pub references: u64,
    pub hits: u64,
    pub faults: [u64; 5],
    pub fault_latency: Vec<Histogram>,
    pub readahead_pages: u64,
    pub readahead_hits: u64,
    pub zero_page_maps: u64,
    pub cow_faults: u64,
    pub pswpin: u64,
    pub pswpout: u64,
    pub file_pages_read: u64,
    pub file_pages_written: u64,
    pub memcg_reclaims: u64,
    pub direct_reclaims: u64,
    pub kswapd_runs: u64,
    pub pgscan: u64,
    pub pgsteal: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    pub pgrotated: u64,
    pub writeback_waits: u64,
    pub writeback_wait_ns: Nanos,
    pub swap_slot_freed_on_fault: u64,
    /// Write faults that kept the slot: the page waited in another CPU's `lru_rotate` batch.
    pub swap_slot_kept_batched: u64,
    /// Pages whose write ended at another time than first given (a packed loop worker ran it when
    /// the task slept).
    pub writebacks_moved: u64,
    pub swapcache_dropped_full: u64,
    pub swapcache_reclaimed_full: u64,
    pub alloc_stall_ns: Nanos,
    /// Limit and direct reclaim invocations (not kswapd) by the lowest priority they reached
    /// (index = priority, 0..=12), and the pages each swapped out.
    pub reclaim_lowest_priority: [u64; 13],
    pub reclaim_written: Histogram,
    pub reclaim_writing_nothing: u64,
    /// `shrink_inactive_list` calls of the `linux` policy summed per priority (index), with the
    /// figures of the kernel's `mm_vmscan_lru_shrink_inactive` tracepoint.
    pub shrink_inactive_by_priority: [ShrinkStats; 13],
}

/// What `shrink_inactive_list` calls did, summed: pages isolated (`nr_scanned`), freed, activated, kept
/// as referenced once (`nr_ref_keep`), activated because under writeback (`nr_writeback`), written.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct ShrinkStats {
    pub calls: u64,
    pub scanned: u64,
    pub reclaimed: u64,
    pub activated: u64,
    pub ref_keep: u64,
    pub writeback: u64,
    pub pageout: u64,
}
impl Default for HostStats {
    fn default() -> Self {
        HostStats {
            references: 0,
            hits: 0,
            faults: [0; 5],
            fault_latency: vec![Histogram::new(); 5],
            readahead_pages: 0,
            readahead_hits: 0,
            zero_page_maps: 0,
            cow_faults: 0,
            pswpin: 0,
            pswpout: 0,
            file_pages_read: 0,
            file_pages_written: 0,
            memcg_reclaims: 0,
            direct_reclaims: 0,
            kswapd_runs: 0,
            pgscan: 0,
            pgsteal: 0,
            pgactivate: 0,
            pgdeactivate: 0,
            pgrotated: 0,
            writeback_waits: 0,
            writeback_wait_ns: Nanos::ZERO,
            swap_slot_freed_on_fault: 0,
            swap_slot_kept_batched: 0,
            writebacks_moved: 0,
            swapcache_dropped_full: 0,
            swapcache_reclaimed_full: 0,
            alloc_stall_ns: Nanos::ZERO,
            reclaim_lowest_priority: [0; 13],
            reclaim_written: Histogram::new(),
            reclaim_writing_nothing: 0,
            shrink_inactive_by_priority: [ShrinkStats::default(); 13],
        }
    }
}

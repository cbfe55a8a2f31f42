//! ZNGC, ZNSwap's host-side garbage collector (the `kznsd` thread, `kznsd.rs`), run by the host's
//! [`crate::backend::SwapBackend::service`] calls because it works on the swap layer's own state, seen
//! through [`crate::backend::SlotHost`]: the slot map tells it which slots are garbage (no TRIM), the swap
//! cache which pages are resident (their copies are dropped, not copied), the page tables are remapped
//! after a copy (the reverse map is the per-LBA metadata read with the data).
//!
//! * **Wake-up**: when fewer than the low watermark of zones are free and the full zones hold at least
//!   two zones' worth of invalid + swap-cached slots (`check_low_wmark`); checked when a zone was taken
//!   and at least every 100 ms (kznsd's sleep timeout). It runs until the high watermark of free zones
//!   or until less than two zones' worth is left to reclaim (`check_high_wmark`).
//! * **Victim**: the policy's choice, else the full zone with the most invalid + swap-cached slots.
//! * **Batches** of `gc_batch_pages` (1024), each in three phases on the GC's own clock, each phase run
//!   when the simulation reaches it (the GC competes for the device with the application):
//!   *gather* — swap-cache-only slots of mapped pages are dropped (the page keeps its memory copy and
//!   loses the swap copy: `try_to_free_swap`), slots in use are gathered; *read* (with metadata) at the
//!   GC clock; *write* — at the reads' completion each slot is examined again (freed or dropped since:
//!   skipped) and the rest appended to the victim's swap-zone (its current zone if it has room, else
//!   the GC's zone: a free zone, else the emergency zone); *activate* — at the writes' completion each
//!   slot still in use is moved to its copy (swap count, swap cache and owner; the PTE is remapped); a
//!   slot freed in the meantime leaves its copy as garbage.
//! * When the victim has been traversed it is reset (its slots are all free then: checked).
//! * Zones whose every slot became garbage are reset at the next wake-up without any copy.
//! * **Suspend**: a swap-out that needs more new zones than are free waits for the GC, which then runs
//!   regardless of the simulation clock and the watermarks, from any zone with something to reclaim;
//!   the writes are issued when the zones they take have been reset.
//! * With cgroup accounting each page's GC read and write passes its cgroup's blk-throttle and is
//!   counted for it; without, the GC thread's I/O is the root cgroup's.

use nandstack_core::{Error, Nanos};

use super::ZnSwap;

/// The GC's phase within a batch.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Between batches: gather the next one (or pick a victim).
    #[default]
    Idle,
    /// Reads issued; the writes follow at `clock`.
    Read,
    /// Writes issued; activation follows at `clock`.
    Write,
}

/// One page being moved.
#[derive(Copy, Clone, Debug)]
pub struct Item {
    pub src: u32,
    /// Where its copy landed (`NONE` until written, or when skipped at the write).
    pub dst: u32,
    pub vpn: u32,
    pub memcg: u16,
}

/// The GC's state and counters.
#[derive(Clone, Debug, Default)]
pub struct Gc {
    pub running: bool,
    pub victim: Option<u32>,
    /// Next slot of the victim to gather.
    pub pos: u32,
    pub phase: Phase,
    /// When kznsd can do its next step, ns.
    pub clock: Nanos,
    pub batch: Vec<Item>,
    pub(crate) last_check_ns: Nanos,
    pub(crate) taken_seen: u64,
    pub(crate) changes_seen: u64,
    pub wakeups: u64,
    pub victims: u64,
    pub batches: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub pages_moved: u64,
    /// Copies written for slots freed before activation (garbage from birth).
    pub pages_freed_in_flight: u64,
    pub cache_dropped: u64,
    pub resets: u64,
    pub read_by_memcg: Vec<u64>,
    pub write_by_memcg: Vec<u64>,
}

pub(crate) fn out_of_zones(zn: &ZnSwap) -> Error {
    Error::config(
        "host.swap.size_mib",
        format!(
            "ZNSwap ran out of zones: {} free, nothing left for the GC to reclaim in {} zones of {} slots — \
             use a smaller swap size or more zones",
            zn.tbl.free,
            zn.zones(),
            zn.cap()
        ),
    )
}

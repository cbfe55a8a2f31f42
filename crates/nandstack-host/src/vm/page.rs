//! Page-table entries and page frames.
//!
//! A PTE is one `u32` per virtual page, indexed by a global virtual page number (vpn) — every process
//! owns a contiguous vpn range. A reference that hits RAM tests and sets bits of its PTE and nothing
//! else (no allocation, no list move), like the hardware does with the accessed and dirty bits.
//!
//! PTE encoding:
//! * present (bit 31): bit 30 young (accessed), bit 29 dirty, bit 28 writable, bits 0–27 frame index;
//! * not present: 0 = never touched; bit 30 set = swap entry (bits 0–29 slot); bit 29 alone = the
//!   shared zero page is mapped read-only (an untouched anonymous page that was read).

use nandstack_core::Nanos;

pub const PTE_PRESENT: u32 = 1 << 31;
pub const PTE_YOUNG: u32 = 1 << 30;
pub const PTE_DIRTY: u32 = 1 << 29;
pub const PTE_WRITE: u32 = 1 << 28;
pub const PTE_FRAME_MASK: u32 = (1 << 28) - 1;
pub const PTE_SWAP: u32 = 1 << 30;
pub const PTE_SLOT_MASK: u32 = (1 << 30) - 1;
pub const PTE_ZERO: u32 = 1 << 29;
pub const PTE_NONE: u32 = 0;

/// Largest number of frames a PTE can address.
pub const MAX_FRAMES: u64 = 1 << 28;
/// Largest number of swap slots a PTE can address.
pub const MAX_SLOTS: u64 = 1 << 30;

#[inline]
pub fn pte_present(frame: u32, writable: bool, dirty: bool) -> u32 {
    debug_assert!(frame <= PTE_FRAME_MASK);
    PTE_PRESENT
        | PTE_YOUNG
        | frame
        | if writable { PTE_WRITE } else { 0 }
        | if dirty { PTE_DIRTY } else { 0 }
}
#[inline]
pub fn pte_swap(slot: u32) -> u32 {
    debug_assert!(slot <= PTE_SLOT_MASK);
    PTE_SWAP | slot
}
#[inline]
pub fn is_present(pte: u32) -> bool {
    pte & PTE_PRESENT != 0
}
#[inline]
pub fn is_swap(pte: u32) -> bool {
    pte & (PTE_PRESENT | PTE_SWAP) == PTE_SWAP
}
#[inline]
pub fn pte_frame(pte: u32) -> u32 {
    pte & PTE_FRAME_MASK
}
#[inline]
pub fn pte_slot(pte: u32) -> u32 {
    pte & PTE_SLOT_MASK
}

/// "No frame / no slot / no link".
pub const NONE: u32 = u32::MAX;

// Frame flags (the folio flags the model needs).
/// Anonymous (swap-backed) page.
pub const F_ANON: u16 = 1 << 0;
/// Page-cache page of a file.
pub const F_FILE: u16 = 1 << 1;
/// PG_active.
pub const F_ACTIVE: u16 = 1 << 2;
/// PG_referenced.
pub const F_REFERENCED: u16 = 1 << 3;
/// PG_workingset.
pub const F_WORKINGSET: u16 = 1 << 4;
/// PG_dirty (the folio's, not the PTE's).
pub const F_DIRTY: u16 = 1 << 5;
/// PG_swapcache: the frame is in the swap cache, `key` is its slot.
pub const F_SWAPCACHE: u16 = 1 << 6;
/// PG_writeback: a write is in flight until `io_done`.
pub const F_WRITEBACK: u16 = 1 << 7;
/// PG_reclaim: reclaim wrote it; rotate to the inactive tail when the write ends.
pub const F_RECLAIM: u16 = 1 << 8;
/// PG_readahead: read ahead, not yet used.
pub const F_READAHEAD: u16 = 1 << 9;
/// PG_locked for a read in flight until `io_done`.
pub const F_LOCKED: u16 = 1 << 10;
/// Mapped by the PTE of `vpn`.
pub const F_MAPPED: u16 = 1 << 11;
/// Mapped by a VM_EXEC mapping (activated after first use).
pub const F_EXEC: u16 = 1 << 12;
/// A kernel page (page table), charged but never on an LRU list.
pub const F_KERNEL: u16 = 1 << 13;
/// Allocated (not on the free list).
pub const F_INUSE: u16 = 1 << 14;

/// LRU list indices.
pub const LRU_INACTIVE_ANON: u8 = 0;
pub const LRU_ACTIVE_ANON: u8 = 1;
pub const LRU_INACTIVE_FILE: u8 = 2;
pub const LRU_ACTIVE_FILE: u8 = 3;
pub const NR_LRU: usize = 4;
/// The lists' names in reports, by index (memory.stat's, without the `_pages` unit).
pub const LRU_NAMES: [&str; NR_LRU] = [
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
];
/// On no list (free, kernel).
pub const LIST_NONE: u8 = 0xff;
/// Isolated by reclaim (on a private batch).
pub const LIST_ISOLATED: u8 = 0xfe;

/// A frame's LRU links (towards the head / towards the tail), kept apart from the frame in
/// [`super::Vm::links`]: reclaim walks a list from its tail one dependent load per frame, and 8 bytes a
/// frame (2 MiB per GiB of RAM) stay in cache where the whole frame table does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub prev: u32,
    pub next: u32,
}

impl Link {
    pub const NONE: Link = Link {
        prev: NONE,
        next: NONE,
    };
}

/// One page frame (a folio of one page); its LRU links are in [`super::Vm::links`].
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The virtual page that maps it (anonymous: its owner even while unmapped in the swap cache;
    /// file: the mapping vpn, or NONE).
    pub vpn: u32,
    /// Swap slot (in the swap cache) or file page id (page cache); NONE otherwise.
    pub key: u32,
    pub flags: u16,
    /// LRU list, LIST_NONE or LIST_ISOLATED.
    pub list: u8,
    /// Memory cgroup charged.
    pub memcg: u16,
    /// Completion time of the read (F_LOCKED) or write (F_WRITEBACK) in flight, ns.
    pub io_done: Nanos,
    /// When a file page became dirty, ns (for the flusher's expiry).
    pub dirtied: Nanos,
}

impl Frame {
    pub const FREE: Frame = Frame {
        vpn: NONE,
        key: NONE,
        flags: 0,
        list: LIST_NONE,
        memcg: 0,
        io_done: Nanos::ZERO,
        dirtied: Nanos::ZERO,
    };
    #[inline]
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn set(&mut self, f: u16) {
        self.flags |= f;
    }
    #[inline]
    pub fn clear(&mut self, f: u16) {
        self.flags &= !f;
    }
    /// Test and clear.
    #[inline]
    pub fn take(&mut self, f: u16) -> bool {
        let had = self.flags & f != 0;
        self.flags &= !f;
        had
    }
    #[inline]
    pub fn is_file(&self) -> bool {
        self.flags & F_FILE != 0
    }
    /// The LRU list this frame belongs on given its type and PG_active.
    #[inline]
    pub fn lru_for(&self) -> u8 {
        let base = if self.is_file() {
            LRU_INACTIVE_FILE
        } else {
            LRU_INACTIVE_ANON
        };
        base + u8::from(self.has(F_ACTIVE))
    }
}

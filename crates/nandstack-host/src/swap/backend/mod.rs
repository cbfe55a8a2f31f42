//! Swap backends: where swapped-out pages are stored (`swap_writepage` / `swap_read_folio` and the swap
//! device below them). The swap layer above — slot map, swap cache, slot allocator, discard policy,
//! readahead — is the kernel's and shared by every backend; a backend decides what a swap write, read and
//! discard of slots *does*: block I/O to a partition of the device (Linux swap on a block SSD, [`block`]),
//! appends to zones under a host-side GC (ZNSwap), compression into RAM (zram); a compressed cache in front
//! of any backend (zswap, ezswap) sits between the swap layer and the backend.
//!
//! # Contract of [`SwapBackend`]
//! * Slots are the swap layer's (`1..nslots`, slot 0 is the header). A backend never allocates or frees
//!   slots itself; it is told of every write, read and discard, and of every slot the swap layer frees
//!   ([`SwapBackend::slot_freed`], `swap_entry_free` → `swap_slot_free_notify`), in the order they happen.
//! * `write` and `read` get the pages of one submission in submission order and fill `done` with each
//!   page's completion time (≥ the time the request was dispatched, which is ≥ `at`). A read of a slot
//!   returns the data of the last write of that slot (the device checks versions under `--verify`).
//! * A synchronous backend ([`SwapBackend::synchronous`], `SWP_SYNCHRONOUS_IO`) completes I/O in the
//!   submitting thread; the swap layer then frees pages as soon as their write returns.
//! * Requests pass the writer's cgroup throttle (`Dispatch`) before they reach the device: blk-throttle
//!   acts on bios, above the device and below the swap layer.
//! * Deterministic; no I/O is issued that the counters do not show.
//! * Backends that place pages themselves (zone appends: the location is known only when the append
//!   completes) report each relocation through [`SwapBackend::take_moves`] right after the `write` (or
//!   the host-side work) that made it; the swap layer moves the slot's state (swap count, swap cache,
//!   owner) to the new slot, remaps the page-table entry and frees the old slot, which the backend is
//!   then told of like any freed slot. Such a backend is paired with an allocator that hands out only
//!   staging slots (never slots the backend places).
//! * Host-side work that needs the swap layer (ZNSwap's garbage collector) is driven by the host through
//!   [`SwapBackend::as_any_mut`]; a backend that has none keeps the defaults.

pub mod block;
pub mod znswap;

pub use block::BlockSwap;
pub use znswap::ZnSwap;

use nandstack_core::Result;

use crate::block::BlockLayer;

/// One page of a swap I/O: its slot, its owner's virtual page and cgroup (for backends that place data
/// by owner or need the page's contents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapPage {
    pub slot: u32,
    pub vpn: u32,
    pub memcg: u16,
}

/// blk-throttle: `dispatch(memcg, write, bytes, at)` → when a request of `bytes` from `memcg` may be
/// dispatched (≥ `at`).
pub type Dispatch<'a> = dyn FnMut(u16, bool, u64, u64) -> u64 + 'a;

/// One submission of swap I/O: the block layer below (the host's device), the submission time, the
/// issuing task and the cgroup throttle.
pub struct Submit<'a, 'b> {
    pub io: &'a mut BlockLayer,
    pub at: u64,
    pub comm: u16,
    /// CPU of the submitting thread (per-core placement).
    pub cpu: u16,
    pub dispatch: &'a mut Dispatch<'b>,
}

/// Where swapped-out pages go. See the module documentation for the contract.
pub trait SwapBackend: Send {
    /// Short name for reports (`block`, …).
    fn name(&self) -> &'static str;

    /// `swapon`: called once before the run, with the swap layer's slot count (header included).
    fn swapon(&mut self, _io: &mut BlockLayer, _nslots: u32) -> Result<()> {
        Ok(())
    }

    /// `SWP_SYNCHRONOUS_IO`: I/O completes in the submitting thread.
    fn synchronous(&self) -> bool {
        false
    }

    /// Write `pages` submitted together; `done[i]` = completion of page i.
    fn write(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<u64>) -> Result<()>;

    /// Read `pages` into memory (a fault and its readahead window); `done[i]` as for `write`.
    fn read(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<u64>) -> Result<()>;

    /// Discard `n` slots from `first` (the swap layer's discard policy chose them; they are free);
    /// returns the completion time.
    fn discard(
        &mut self,
        io: &mut BlockLayer,
        first: u32,
        n: u32,
        at: u64,
        comm: u16,
    ) -> Result<u64>;

    /// The swap layer freed `slot` (no PTE and no swap-cache page holds it any more).
    fn slot_freed(&mut self, _slot: u32) {}

    /// Reclaim tested the accessed bit of the PTE of `vpn` (`folio_referenced`; `young`: it was set) —
    /// the per-page access history a placement policy may keep. Default: ignored.
    fn page_referenced(&mut self, _vpn: u32, _young: bool) {}

    /// Slot relocations `(from, to)` made since the last call, in order (see the module contract).
    /// Default: none.
    fn take_moves(&mut self, _out: &mut Vec<(u32, u32)>) {}

    /// Check the backend's own state against the swap layer's slot map (verification); the error names
    /// the first mismatch. Default: nothing to check.
    fn check(&self, _map: &[u8]) -> Result<(), String> {
        Ok(())
    }

    /// The concrete backend, for host-side work that needs it (ZNSwap's GC). Default: none.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }

    /// The backend's own section of the report (`host.swap.backend`).
    fn report(&self) -> serde_json::Value;
}

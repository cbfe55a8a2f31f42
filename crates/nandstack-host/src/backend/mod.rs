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
//! * A backend that keeps page contents gets each page's bytes through [`SwapBackend::write_page`]
//!   (synchronous backends are written page by page, from `swap_writeout`); a refused write leaves the
//!   page dirty in memory. RAM the backend holds ([`SwapBackend::ram_pages`]) comes out of the host's.
//! * Deterministic; no I/O is issued that the counters do not show.
//! * [`SwapBackend::completes_remotely`]: I/O completes on a CPU other than the submitter's (a loop
//!   device's worker). The end of writeback then rotates reclaimed pages through that CPU's per-CPU
//!   batch (`folio_rotate_reclaimable` → `lru_rotate`), which reaches the inactive tail 31 pages at a
//!   time — the reclaiming task's `lru_add_drain` only drains its own CPU. Local completion (the
//!   default) rotates at once.

//! * Backends that place pages themselves (zone appends: the location is known only when the append
//!   completes) report each relocation through [`SwapBackend::take_moves`] right after the `write` (or
//!   the host-side work) that made it; the swap layer moves the slot's state (swap count, swap cache,
//!   owner) to the new slot, remaps the page-table entry and frees the old slot, which the backend is
//!   then told of like any freed slot. Such a backend is paired with an allocator that hands out only
//!   staging slots (never slots the backend places).
//! * A backend whose swap I/O is block requests of consecutive slots (swap on a block or loop device)
//!   implements only [`SwapBackend::request`]: the default `write` and `read` issue a submission's runs
//!   of consecutive slots as requests, the default `discard` one request. Any other backend implements
//!   `write`, `read` and `discard` itself.
//! * Host-side work (ZNSwap's garbage collector, `kznsd`) runs in [`SwapBackend::service`], which the
//!   host calls before every swap write (with the pages about to be written: the backend may make room
//!   first, and move slots doing so) and at each background tick (`want` = `None`: the work that is due
//!   by `now`). The backend sees the host only through [`SlotHost`] — the slot map, the slots' owners,
//!   dropping a swap-cache copy, moving a slot's page, the block layer and the cgroups' throttle — and
//!   is told of every slot freed meanwhile through the `freed` it passes (itself), in order. A backend
//!   with no such work keeps the default (nothing).
//!
//! Every backend runs the same conformance suite (`nandstack-sim`'s `tests/host/conformance.rs`: reads
//! return the last write under verification, device I/O is exactly the swap layer's pages plus the
//! backend's own work — none for a backend in RAM —, determinism per seed, slots left to the swap layer);
//! a new backend is added to its list.

pub mod block;
pub mod loopdev;
pub mod znswap;
pub mod zram;

pub use block::BlockSwap;
pub use loopdev::{
    LoopConfig, LoopPacking, LoopSwap, WakeTail, LOOP_PACK_STREAM, LOOP_WAKE_STREAM,
};
pub use znswap::{ZnSwap, ZnswapConfig, ZonePolicyConfig};
pub use zram::{Zram, ZramConfig, ZramWritebackConfig, ZramWritebackMode};

use nandstack_core::{Error, Nanos, Result};

use crate::block::{run_end, BlockLayer, IoKind};
use crate::swap::SlotFreed;
pub use crate::swap::SwapPage;

/// The host as a backend's own work sees it ([`SwapBackend::service`]): what it may know and do of the
/// swap layer's slots and the pages above them, never the host itself.
pub trait SlotHost {
    /// The swap layer's slot map (`map[s] != 0`: slot `s` in use; `crate::swap::MAP_CACHE`: only the
    /// swap cache holds it).
    fn slot_map(&self) -> &[u8];

    /// The page (vpn) that holds `slot` and that page's memory cgroup.
    fn slot_owner(&self, slot: u32) -> (u32, u16);

    /// `try_to_free_swap`: drop the swap-cache copy of a resident, mapped page whose only reference to
    /// `slot` is the swap cache (the page keeps its memory copy, loses its swap copy). True when dropped.
    /// Every slot the swap layer frees meanwhile is passed to `freed` (after zswap's).
    fn drop_cached(&mut self, slot: u32, freed: &mut dyn SlotFreed) -> bool;

    /// Move the page of slot `from` to slot `to` (swap count, swap cache, owner; the page-table entry
    /// is remapped); `from` is freed and passed to `freed`. An error when `from`'s state does not
    /// allow it (an invariant).
    fn move_slot(&mut self, from: u32, to: u32, freed: &mut dyn SlotFreed) -> Result<()>;

    /// Run `f` with the block layer below and blk-throttle (`dispatch(memcg, write, bytes, at)`).
    fn with_io(
        &mut self,
        f: &mut dyn FnMut(&mut BlockLayer, &mut Dispatch) -> Result<()>,
    ) -> Result<()>;
}

/// A backend as the swap layer's [`SlotFreed`]: what a backend passes to [`SlotHost`] so that it hears
/// of the slots freed on its behalf ([`SwapBackend::slot_freed`]).
pub struct FreedTo<'a>(pub &'a mut dyn SwapBackend);

impl SlotFreed for FreedTo<'_> {
    fn slot_freed(&mut self, slot: u32) {
        self.0.slot_freed(slot);
    }
}

/// What a backend's configuration checks need to know of the rest of the run's configuration (the
/// host's `[host.swap]`, zswap, the cgroups, the device), gathered by the host's configuration
/// (`config::validate_backend`), so that each backend checks its own keys beside its model.
pub struct BackendEnv<'a> {
    /// The device is zoned (`device.kind = "zoned"`).
    pub zoned: bool,
    /// `device.kind`, for messages.
    pub device_kind: &'static str,
    /// `host.swap.size_mib`.
    pub size_mib: u64,
    /// `host.swap.offset_mib`.
    pub offset_mib: u64,
    /// `host.swap.discard.mode` is not `off`.
    pub discard: bool,
    /// `host.swap.slot_cache`.
    pub slot_cache: u32,
    /// `host.zswap.enabled`.
    pub zswap: bool,
    /// `host.cgroups`' names.
    pub cgroups: Vec<&'a str>,
}

/// A write request whose completion moved after it was issued (a packed loop worker got the CPU
/// earlier than the next tick): `n` slots from `first`, given `given`, done at `done`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retimed {
    pub first: u32,
    pub n: u32,
    pub given: Nanos,
    pub done: Nanos,
}

/// blk-throttle: `dispatch(memcg, write, bytes, at)` → when a request of `bytes` from `memcg` may be
/// dispatched (≥ `at`).
pub type Dispatch<'a> = dyn FnMut(u16, bool, u64, Nanos) -> Nanos + 'a;

/// One submission of swap I/O: the block layer below (the host's device), the submission time, the
/// issuing task and the cgroup throttle.
pub struct Submit<'a, 'b> {
    pub io: &'a mut BlockLayer,
    pub at: Nanos,
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

    /// I/O completes on another CPU than the submitter's (see the module documentation).
    fn completes_remotely(&self) -> bool {
        false
    }

    /// Whether the backend may move completions after it gave them ([`SwapBackend::take_retimed`]) and
    /// so needs to hear of the task's sleeps; constant. Default: false (the host skips those calls).
    fn may_retime(&self) -> bool {
        false
    }

    /// Whether the request completing at `done` completed on another CPU than its submitter's.
    /// Default: [`SwapBackend::completes_remotely`].
    fn completed_remotely(&self, _done: Nanos) -> bool {
        self.completes_remotely()
    }

    /// The submitting task goes to sleep at `at` (waits for I/O): work that waits for its CPU runs.
    /// Default: nothing waits for it.
    fn task_sleeps(&mut self, _at: Nanos) {}

    /// The submitting task slept from `from` to `to` (for utilisation). Default: ignored.
    fn task_slept(&mut self, _from: Nanos, _to: Nanos) {}

    /// Write requests whose completion moved since the last call ([`Retimed`]), in order; the host
    /// moves the writeback of their pages. Default: none.
    fn take_retimed(&mut self, _out: &mut Vec<Retimed>) {}

    /// Serve one block request of `kind` for the `n` consecutive slots from `first`, dispatched at `at`
    /// by task `comm`; returns its completion. Backends whose swap I/O is such requests (swap on a
    /// block or loop device) implement this and keep the default `write`, `read` and `discard`; the
    /// others implement those three instead. Default: an [`Error::Unsupported`], which only a backend
    /// that keeps a default `write`, `read` or `discard` without implementing this can reach.
    fn request(
        &mut self,
        _io: &mut BlockLayer,
        _kind: IoKind,
        _first: u32,
        _n: u32,
        _at: Nanos,
        _comm: u16,
    ) -> Result<Nanos> {
        Err(Error::Unsupported(format!(
            "the {} swap backend does not serve swap I/O as block requests",
            self.name()
        )))
    }

    /// Write `pages` submitted together; `done[i]` = completion of page i. Default: the runs of
    /// consecutive slots as requests ([`issue_runs`], [`SwapBackend::request`]).
    fn write(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<Nanos>) -> Result<()> {
        issue_runs(IoKind::Write, sub, pages, done, |io, slot, n, at, comm| {
            self.request(io, IoKind::Write, slot, n, at, comm)
        })
    }

    /// Read `pages` into memory (a fault and its readahead window); `done[i]` as for `write`. Default:
    /// as for `write`.
    fn read(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<Nanos>) -> Result<()> {
        issue_runs(IoKind::Read, sub, pages, done, |io, slot, n, at, comm| {
            self.request(io, IoKind::Read, slot, n, at, comm)
        })
    }

    /// Discard `n` slots from `first` (the swap layer's discard policy chose them; they are free);
    /// returns the completion time. Default: one discard request ([`SwapBackend::request`]).
    fn discard(
        &mut self,
        io: &mut BlockLayer,
        first: u32,
        n: u32,
        at: Nanos,
        comm: u16,
    ) -> Result<Nanos> {
        self.request(io, IoKind::Discard, first, n, at, comm)
    }

    /// The swap layer freed `slot` (no PTE and no swap-cache page holds it any more).
    fn slot_freed(&mut self, _slot: u32) {}

    /// Store one page synchronously with its bytes (`SWP_SYNCHRONOUS_IO` backends that keep contents:
    /// zram compresses them). Returns the completion time (≥ `sub.at`, the CPU time of the store
    /// included), or `None` when the device refused the write — an I/O error, after which the page stays
    /// dirty in memory as `end_swap_bio_write` leaves it. `bytes` is `None` when the workload has no
    /// content model. Default: a one-page [`SwapBackend::write`].
    fn write_page(
        &mut self,
        sub: &mut Submit,
        page: SwapPage,
        _bytes: Option<&[u8; 4096]>,
    ) -> Result<Option<Nanos>> {
        let mut done = Vec::with_capacity(1);
        self.write(sub, &[page], &mut done)?;
        Ok(done.first().copied())
    }

    /// Pages of RAM the backend holds (zram's compressed pool); 0 for a device outside RAM. The host
    /// takes them out of its free memory.
    fn ram_pages(&self) -> u64 {
        0
    }

    /// Whether the backend needs every page's bytes (the host refuses workloads without contents).
    fn needs_contents(&self) -> bool {
        false
    }

    /// Check the backend's own bookkeeping against the swap layer's slot map (`map[s] != 0`: slot `s`
    /// in use; verify mode). Default: nothing to check.
    fn check(&self, _map: &[u8]) -> Result<()> {
        Ok(())
    }

    /// Reclaim tested the accessed bit of the PTE of `vpn` (`folio_referenced`; `young`: it was set) —
    /// the per-page access history a placement policy may keep. Default: ignored.
    fn page_referenced(&mut self, _vpn: u32, _young: bool) {}

    /// Cache hints, no effect on any result: [`SwapBackend::page_referenced`] of `vpn` comes soon
    /// (reclaim's batch), and a read of `slot` (a fault ahead), for which the backend may ask the
    /// device through `io` ([`nandstack_device::Device::prefetch`]). Default: none.
    fn prefetch_page(&self, _vpn: u32) {}
    fn prefetch_read(&self, _io: &BlockLayer, _slot: u32) {}

    /// Slot relocations `(from, to)` made since the last call, in order (see the module contract).
    /// Default: none.
    fn take_moves(&mut self, _out: &mut Vec<(u32, u32)>) {}

    /// The backend's own work that needs the host (see the module contract): before a swap write of
    /// `want = Some((pages, cpu))`, make the room it needs; with `None`, the work due by `now`. The
    /// host refreshes the pages' slots and applies [`SwapBackend::take_moves`] afterwards. Default:
    /// nothing.
    fn service(
        &mut self,
        _host: &mut dyn SlotHost,
        _now: Nanos,
        _want: Option<(&[SwapPage], u16)>,
    ) -> Result<()> {
        Ok(())
    }

    /// The concrete backend, for tests that inspect it. Default: none.
    #[cfg(test)]
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }

    /// The backend's own section of the report (`host.swap.backend`).
    fn report(&self) -> serde_json::Value;
}

/// The requests a block-device backend makes of one submission: runs of consecutive slots, at most the
/// largest request each, dispatched through the first page's cgroup throttle; `serve(io, first_slot,
/// pages, dispatched_at, comm)` issues one and returns its completion. `done[i]` gets page i's.
pub(crate) fn issue_runs(
    kind: IoKind,
    sub: &mut Submit,
    pages: &[SwapPage],
    done: &mut Vec<Nanos>,
    mut serve: impl FnMut(&mut BlockLayer, u32, u32, Nanos, u16) -> Result<Nanos>,
) -> Result<()> {
    done.clear();
    let mut i = 0;
    while i < pages.len() {
        let j = run_end(pages.len(), i, sub.io.max_req_pages, |j| {
            pages[j].slot == pages[j - 1].slot + 1
        });
        let n = (j - i) as u32;
        let at = (sub.dispatch)(
            pages[i].memcg,
            kind == IoKind::Write,
            n as u64 * 4096,
            sub.at,
        );
        let d = serve(sub.io, pages[i].slot, n, at, sub.comm)?;
        done.extend(std::iter::repeat_n(d, j - i));
        i = j;
    }
    Ok(())
}

//! Compressed swap in the host model: zswap (`mm/zswap.c`, Linux 6.18) as a cache between the swap layer
//! and the swap backend, the swap layer's zero-page map, and the glue that puts them in the kernel's
//! swap-out and swap-in paths.
//!
//! * [`Zswap`]: entries indexed by swap slot (the xarray), the zsmalloc (or z3fold, zbud) pool, the
//!   compressor, the pool limit with its hysteresis (`zswap_check_limits`), the admission and
//!   replacement policies ([`policy`]), the kernel's counters (`zswpout`, `zswpin`, `zswpwb`,
//!   `stored_pages`, `pool_total_size`, `stored_incompressible_pages`, `pool_limit_hit`, `reject_*`),
//!   the pool's density sampled at the start of every request of the program (`density_samples`,
//!   `density_zpages_per_mib_mean`: ezswap's Table 3, the launch cycle's per-app samples) and the
//!   writeback worker's state;
//! * [`swapio`]: `swap_writeout` (zero page → a bit in the zero map, `swpout_zero`; else zswap; else the
//!   backend — synchronously for zram) and `swap_read_folio` (zero map → `swpin_zero`; zswap → load,
//!   which drops the entry and dirties the page; else the backend), the synchronous-device swap-in that
//!   bypasses the swap cache, page contents, and the RAM the pools hold;
//! * [`worker`]: `shrink_worker` and `zswap_writeback_entry`;
//! * [`shrink_sync`]: Linux 4.7's store at a full pool (`host.zswap.full_pool = "shrink_sync"`): one pool
//!   page written back on the storing task, then the store.
//!
//! What the kernel does and the model follows (read from `mm/zswap.c`, `mm/page_io.c`, `mm/memory.c`):
//! a store happens in `swap_writeout` of a page reclaim unmapped, synchronously — a stored page is clean
//! at once and reclaim frees it in the same pass; a page that does not compress below a page is stored
//! as it is (`length == PAGE_SIZE`); a store at or above `max_pool_percent` of RAM is refused
//! (`pool_limit_hit`), and so is every store until the pool is back at `accept_threshold_percent` of the
//! limit; a refused store queues the worker and the page goes to the backend (`pswpout`); a load into
//! the swap cache frees the entry and dirties the page, so the page is compressed again at its next
//! eviction; an entry is freed with its slot (`zswap_invalidate` in `swap_range_free`). The pool is not
//! charged to a cgroup-v1 memory cgroup (`obj_cgroup_charge_zswap` acts on cgroup v2 only): its pages
//! come out of RAM, not out of the cgroup's limit.

pub mod apa;
mod config;
pub mod policy;
mod report;

pub use config::{FullPoolPolicy, IncompressiblePolicy, ZswapConfig};

use nandstack_core::{Error, Nanos, Result};

use crate::compressor::{CompressionCosts, CompressorKind, MemoCompressor};
use crate::contents::PageIn;
use crate::vm::page::NONE;
use crate::zpool::{self, Handle, Zpool, PAGE_BYTES};
use policy::{
    Admission, AdmitAll, AdmitQuery, EntryId, LruSecondChance, PageKind, Pick, Placement,
    Replacement,
};

/// `MAX_RECLAIM_RETRIES`: the worker gives up after this many failed steps.
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// zswap's counters, named as the kernel names them (debugfs `/sys/kernel/debug/zswap/*` and
/// `/proc/vmstat`).
#[derive(Clone, Debug, Default)]
pub struct ZswapStats {
    /// Pool density samples taken at the start of each request of the program (the launch cycle: after
    /// every app's run, ezswap's Table 3), and the sum of their zpages per MiB of pool.
    pub density_samples: u64,
    pub density_sum_zpages_per_mib: f64,
    /// Pages stored (vmstat `zswpout`).
    pub zswpout: u64,
    /// Pages loaded (vmstat `zswpin`).
    pub zswpin: u64,
    /// Entries written back to the backend (vmstat `zswpwb`, debugfs `written_back_pages`).
    pub zswpwb: u64,
    /// Stores refused at the pool limit (`reject`); stores that found the pool over its limit and
    /// shrank it (`shrink_sync`, Linux 4.7's meaning).
    pub pool_limit_hit: u64,
    /// Pool pages freed by a storing task's synchronous shrink (`shrink_sync`).
    pub sync_shrink_pages: u64,
    /// Writeback attempts that failed (the slot's page was already in the swap cache).
    pub reject_reclaim_fail: u64,
    /// Stores the pool could not hold (no free RAM for its pages).
    pub reject_alloc_fail: u64,
    /// Stores whose compression failed (never: the compressors here do not fail).
    pub reject_compress_fail: u64,
    /// Stores too big for the allocator (zbud refuses objects above 3,968 bytes).
    pub reject_compress_poor: u64,
    /// Stores the admission policy refused (not a kernel counter: always 0 for zswap's own policy).
    pub reject_admission: u64,
    /// Entries dropped without a load or writeback (`zswap_invalidate`: slot freed, or a newer store or
    /// zero page for the slot). Stores = loads + writebacks + invalidations + stored pages.
    pub invalidated: u64,
    /// Writeback worker runs, and entries it rotated (second chance).
    pub worker_runs: u64,
    pub worker_rotations: u64,
    /// Times a refused store queued the worker (`queue_work` that found it idle or running).
    pub worker_queued: u64,
    /// CPU time spent compressing and decompressing, ns.
    pub compress_ns: Nanos,
    pub decompress_ns: Nanos,
    /// Largest pool seen, pages.
    pub pool_pages_max: u64,
    /// Pages compressed (stores that reached the compressor).
    pub compressions: u64,
    /// Stores the admission policy decided on by an entropy estimate, and the CPU time of those
    /// estimates, ns.
    pub estimates: u64,
    pub estimate_ns: Nanos,
    /// Clean file pages (all-page accommodation): stored, refused, served to a read (`file_hits`),
    /// dropped by the writeback worker, invalidated by a write to the block.
    pub file_stores: u64,
    pub file_refused: u64,
    pub file_hits: u64,
    pub file_dropped: u64,
    pub file_invalidated: u64,
    /// Page-in requests that reached the cache, and how many it held.
    pub lookups: u64,
    pub lookup_hits: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Swap slot (anonymous) or file page id (file).
    slot: u32,
    kind: PageKind,
    /// The file page's write version when stored (verify mode; 0 for anonymous pages).
    version: u32,
    handle: Handle,
    /// Stored length, bytes (4096 = stored uncompressed).
    len: u32,
    memcg: u16,
    /// Hash of the page's bytes when stored (verify mode: checked at load and writeback).
    sum: u64,
}

/// The writeback worker's state (`zswap_shrink_work` on `shrink_wq`).
#[derive(Clone, Debug, Default)]
pub struct WorkerState {
    /// `queue_work` was called and the work has not started yet; when.
    pub queued: Option<Nanos>,
    /// A run is in progress.
    pub running: bool,
    /// The worker's clock (its own CPU), ns.
    pub clock: Nanos,
    pub failures: u32,
    pub attempts: u32,
    /// `zswap_next_shrink`: the cgroup walk's cursor (index into the cgroups; `ncgroups` = end of walk).
    pub cursor: usize,
    /// The host is advancing the worker (its own allocations reclaim, and reclaim advances the worker).
    pub(crate) inside: bool,
}

/// Result of a store attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Stored; CPU time of the store, ns.
    Stored(Nanos),
    /// Not stored (the page goes to the backend); CPU time spent, ns.
    Refused(Nanos),
}

/// zswap. See the module documentation.
pub struct Zswap {
    compressor: MemoCompressor,
    kind: CompressorKind,
    pool: Box<dyn Zpool>,
    admission: Box<dyn Admission>,
    replacement: Box<dyn Replacement>,
    entries: Vec<Entry>,
    free_ids: Vec<EntryId>,
    /// Slot → entry (the xarray), NONE when the slot has none.
    by_slot: Vec<u32>,
    /// File page id → entry (all-page accommodation), NONE when none.
    pub(crate) by_file: Vec<u32>,
    /// Pool handle → entry, for the moves the pool reports.
    by_handle: Vec<u32>,
    moved: Vec<Handle>,
    live: u64,
    live_file: u64,
    stored_bytes: u64,
    used_chunk_bytes: u64,
    estimate_ns_per_byte: f64,
    apa: bool,
    incompressible: u64,
    max_pages: u64,
    accept_pages: u64,
    reached_full: bool,
    full_pool: FullPoolPolicy,
    incompressible_policy: IncompressiblePolicy,
    /// `host.zswap.exclusive_loads`.
    pub(crate) exclusive_loads: bool,
    compress_ns: Nanos,
    decompress_ns: Nanos,
    copy_ns: Nanos,
    pub(crate) wakeup_ns: Nanos,
    pub(crate) entry_ns: Nanos,
    pub(crate) writeback_ns: Nanos,
    pub(crate) shrinker_enabled: bool,
    /// Per cgroup: whether it ever had an entry on zswap's LRU (`list_lru_add` sets the cgroup's bit for
    /// the zswap shrinker; `shrink_slab_memcg` clears it only when the count says `SHRINK_EMPTY`, which
    /// `zswap_shrinker_count` never returns), so whether reclaim calls the shrinker's count for it.
    shrinker_bit: Vec<bool>,
    pub worker: WorkerState,
    pub stats: ZswapStats,
    verify: bool,
}

pub use crate::compressor::page_ns;

/// `sizeof(struct zswap_header)` of Linux 3.11–4.x: the swap entry stored before each object.
const ZSWAP_HEADER_BYTES: usize = 8;

/// Bytes of `len` rounded up to z3fold's 64-byte chunks.
fn chunk_bytes(len: u32) -> u64 {
    len.div_ceil(64) as u64 * 64
}

/// FNV-1a over the page (verify mode's content check).
pub fn page_hash(page: &[u8; 4096]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in page.chunks_exact(8) {
        h ^= u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Zswap {
    /// zswap for `slots` swap slots on a machine of `ram_pages` pages.
    pub fn new(
        cfg: &ZswapConfig,
        costs: &CompressionCosts,
        ram_pages: u64,
        slots: usize,
        verify: bool,
    ) -> Result<Zswap> {
        let c = costs.of(cfg.compressor);
        let max_pages = ram_pages * cfg.max_pool_percent as u64 / 100;
        Ok(Zswap {
            compressor: MemoCompressor::new(cfg.compressor.algorithm())?,
            kind: cfg.compressor,
            pool: zpool::build(cfg.zpool.name())?,
            admission: Box::new(AdmitAll),
            replacement: Box::new(LruSecondChance::new()),
            entries: Vec::new(),
            free_ids: Vec::new(),
            by_slot: vec![NONE; slots],
            by_file: Vec::new(),
            by_handle: Vec::new(),
            moved: Vec::new(),
            live: 0,
            live_file: 0,
            stored_bytes: 0,
            used_chunk_bytes: 0,
            estimate_ns_per_byte: cfg.ezswap.entropy_cycles_per_byte * 1000.0 / costs.cpu_mhz,
            apa: cfg.ezswap.apa,
            incompressible: 0,
            max_pages,
            accept_pages: max_pages * cfg.accept_threshold_percent as u64 / 100,
            reached_full: false,
            full_pool: cfg.full_pool,
            incompressible_policy: cfg.incompressible,
            exclusive_loads: cfg.exclusive_loads,
            compress_ns: page_ns(c.compress_cycles_per_byte, costs.cpu_mhz),
            decompress_ns: page_ns(c.decompress_cycles_per_byte, costs.cpu_mhz),
            copy_ns: page_ns(costs.copy_cycles_per_byte, costs.cpu_mhz),
            wakeup_ns: Nanos(cfg.worker_wakeup_ns),
            entry_ns: Nanos(cfg.worker_entry_ns),
            writeback_ns: Nanos(cfg.writeback_ns),
            shrinker_enabled: cfg.shrinker_enabled,
            shrinker_bit: Vec::new(),
            worker: WorkerState::default(),
            stats: ZswapStats::default(),
            verify,
        })
    }

    /// Replace the admission and replacement policies (ezswap's SA and CA plug in here).
    pub fn with_policies(
        mut self,
        admission: Box<dyn Admission>,
        replacement: Box<dyn Replacement>,
    ) -> Zswap {
        debug_assert_eq!(self.live, 0);
        self.admission = admission;
        self.replacement = replacement;
        self
    }

    /// Pages the pool holds (`zswap_total_pages`).
    pub fn pool_pages(&self) -> u64 {
        self.pool.total_pages()
    }

    /// `max_pool_percent` of RAM, pages.
    pub fn max_pages(&self) -> u64 {
        self.max_pages
    }

    /// `zswap_accept_thr_pages`.
    pub fn accept_pages(&self) -> u64 {
        self.accept_pages
    }

    /// Whether reclaim of cgroup `m` (0: the root, any cgroup) calls zswap's shrinker count, which
    /// flushes the cgroup's statistics: the shrinker is enabled and the cgroup has had an entry.
    pub fn shrinker_counts(&self, m: u16) -> bool {
        self.shrinker_enabled
            && if m == 0 {
                self.shrinker_bit.iter().any(|&b| b)
            } else {
                self.shrinker_bit.get(m as usize).copied().unwrap_or(false)
            }
    }

    /// Pages stored (`stored_pages`).
    pub fn stored_pages(&self) -> u64 {
        self.live
    }

    /// Record the pool's density now (stored pages per MiB of pool; an empty pool is not sampled).
    pub fn sample_density(&mut self) {
        let bytes = self.pool.total_bytes();
        if bytes > 0 {
            self.stats.density_samples += 1;
            self.stats.density_sum_zpages_per_mib +=
                self.live as f64 * (1u64 << 20) as f64 / bytes as f64;
        }
    }

    /// Whether `slot` has an entry.
    pub fn contains(&self, slot: u32) -> bool {
        self.by_slot.get(slot as usize).is_some_and(|&e| e != NONE)
    }

    /// The entry of `slot`, if any.
    pub fn entry_of(&self, slot: u32) -> Option<EntryId> {
        self.by_slot
            .get(slot as usize)
            .copied()
            .filter(|&e| e != NONE)
    }

    /// (slot, cgroup, stored length) of a live entry (for a file entry: its file page id).
    pub fn entry(&self, e: EntryId) -> (u32, u16, u32) {
        let en = &self.entries[e as usize];
        (en.slot, en.memcg, en.len)
    }

    /// Whether entry `e` holds a file page.
    pub fn is_file(&self, e: EntryId) -> bool {
        self.entries[e as usize].kind == PageKind::File
    }

    /// Entries of cgroup `memcg` on the replacement policy's lists.
    pub fn count(&self, memcg: u16) -> u64 {
        self.replacement.count(memcg)
    }

    /// `zswap_check_limits`: whether stores are refused now (updates the hysteresis and the counter).
    /// Under `shrink_sync` the limit is the host's business before the store
    /// ([`Host::zswap_shrink_sync`](crate::host::Host::zswap_shrink_sync)): never refused here.
    fn check_limits(&mut self) -> bool {
        if self.full_pool == FullPoolPolicy::ShrinkSync {
            return false;
        }
        let cur = self.pool_pages();
        if cur >= self.max_pages {
            self.stats.pool_limit_hit += 1;
            self.reached_full = true;
        } else if self.reached_full && cur <= self.accept_pages {
            self.reached_full = false;
        }
        self.reached_full
    }

    /// `zswap_store` of one page: `bytes` are its contents, `free_frames` the RAM free for the pool's
    /// growth. A refused store leaves no entry for the slot (an old one is invalidated) and, at the pool
    /// limit, asks for the worker ([`Zswap::wants_worker`]).
    pub fn store(
        &mut self,
        slot: u32,
        memcg: u16,
        bytes: &[u8; 4096],
        free_frames: u64,
    ) -> Result<Store> {
        self.store_page(slot, memcg, &mut PageIn::ready(bytes), free_frames)
    }

    /// Forget the compressed lengths and admission estimates remembered by page key (the host's
    /// contents were replaced: keys may name other bytes now).
    pub fn forget_keys(&mut self) {
        self.compressor.forget_keys();
        self.admission.forget_keys();
    }

    /// [`Zswap::store`] of an offered page (built only if admission or compression reads it).
    pub fn store_page(
        &mut self,
        slot: u32,
        memcg: u16,
        page: &mut PageIn,
        free_frames: u64,
    ) -> Result<Store> {
        let out = self.try_store_kind(slot, PageKind::Anon, 0, memcg, page, free_frames)?;
        if matches!(out, Store::Refused(_)) {
            // check_old: a stale entry must not be written back over the new data.
            self.invalidate(slot);
        }
        Ok(out)
    }

    /// A store of an anonymous page (`key` = slot) or a clean file page (`key` = file page id, at
    /// write `version`).
    fn try_store_kind(
        &mut self,
        key: u32,
        kind: PageKind,
        version: u32,
        memcg: u16,
        page: &mut PageIn,
        free_frames: u64,
    ) -> Result<Store> {
        if self.check_limits() {
            return Ok(Store::Refused(Nanos::ZERO));
        }
        let q = AdmitQuery {
            memcg,
            kind,
            live_anon: self.live - self.live_file,
            live_file: self.live_file,
            stored_bytes: self.stored_bytes,
            used_chunk_bytes: self.used_chunk_bytes,
            limit_bytes: self.max_pages * PAGE_BYTES as u64,
        };
        let v = self.admission.decide(page, &q);
        let mut cpu = Nanos::ZERO;
        if v.sampled_bytes > 0 {
            cpu = Nanos((v.sampled_bytes as f64 * self.estimate_ns_per_byte).round() as u64);
            self.stats.estimates += 1;
            self.stats.estimate_ns += cpu;
        }
        if !v.admit {
            self.stats.reject_admission += 1;
            return Ok(Store::Refused(cpu));
        }
        let compressed = self.compressor.compressed_len_of(page)?;
        if self.verify && page.key().is_some() {
            // A length remembered by key must be the length of these bytes.
            let direct = self.compressor.compressed_len(page.bytes())?;
            if direct != compressed {
                return Err(Error::Invariant(format!(
                    "zswap: page key {:?} gave compressed length {compressed}, its bytes {direct}",
                    page.key()
                )));
            }
        }
        cpu += self.compress_ns;
        self.stats.compressions += 1;
        self.stats.compress_ns += self.compress_ns;
        let len = match self.incompressible_policy {
            // Not smaller than a page: stored as it is (6.18 zswap_compress).
            IncompressiblePolicy::StoreAsIs => {
                if compressed == 0 || compressed >= PAGE_BYTES as usize {
                    PAGE_BYTES
                } else {
                    compressed as u32
                }
            }
            // 4.x zswap_frontswap_store: zpool_malloc(dlen + sizeof(struct zswap_header)), -ENOSPC
            // from the allocator when that exceeds a page.
            IncompressiblePolicy::Reject => {
                let with_header = compressed + ZSWAP_HEADER_BYTES;
                if compressed == 0 || with_header > PAGE_BYTES as usize {
                    self.stats.reject_compress_poor += 1;
                    return Ok(Store::Refused(cpu));
                }
                with_header as u32
            }
        };
        if len > self.pool.max_object_bytes() {
            self.stats.reject_compress_poor += 1;
            return Ok(Store::Refused(cpu));
        }
        let before = self.pool.total_pages();
        let handle = self.pool.alloc(len)?;
        if self.pool.total_pages() - before > free_frames {
            // zs_malloc with GFP_NOWAIT: no page to be had.
            self.pool.free(handle)?;
            self.stats.reject_alloc_fail += 1;
            return Ok(Store::Refused(cpu));
        }
        // A stale entry of the slot (the page was redirtied and swapped out again) is replaced.
        match kind {
            PageKind::Anon => self.invalidate(key),
            PageKind::File => self.invalidate_file(key),
        }
        let id = self.free_ids.pop().unwrap_or(self.entries.len() as u32);
        let entry = Entry {
            slot: key,
            kind,
            version,
            handle,
            len,
            memcg,
            sum: if self.verify {
                page_hash(page.bytes())
            } else {
                0
            },
        };
        if id as usize == self.entries.len() {
            self.entries.push(entry);
        } else {
            self.entries[id as usize] = entry;
        }
        let index = match kind {
            PageKind::Anon => &mut self.by_slot,
            PageKind::File => &mut self.by_file,
        };
        if index.len() <= key as usize {
            index.resize(key as usize + 1, NONE);
        }
        index[key as usize] = id;
        if self.by_handle.len() <= handle.0 as usize {
            self.by_handle.resize(handle.0 as usize + 1, NONE);
        }
        self.by_handle[handle.0 as usize] = id;
        self.live += 1;
        self.live_file += (kind == PageKind::File) as u64;
        self.stored_bytes += len as u64;
        self.used_chunk_bytes += chunk_bytes(len);
        self.incompressible += (len == PAGE_BYTES) as u64;
        self.replacement.stored(id, memcg);
        if self.shrinker_bit.len() <= memcg as usize {
            self.shrinker_bit.resize(memcg as usize + 1, false);
        }
        self.shrinker_bit[memcg as usize] = true;
        self.place(id);
        self.report_moves();
        match kind {
            PageKind::Anon => self.stats.zswpout += 1,
            PageKind::File => self.stats.file_stores += 1,
        }
        self.stats.pool_pages_max = self.stats.pool_pages_max.max(self.pool.total_pages());
        Ok(Store::Stored(cpu))
    }

    /// Tell the replacement policy where entry `e` sits.
    fn place(&mut self, e: EntryId) {
        let en = self.entries[e as usize];
        if let Some(x) = self.pool.extent(en.handle) {
            self.replacement.placed(
                e,
                Placement {
                    container: x.container,
                    len_bytes: en.len,
                    kind: en.kind,
                },
            );
        }
    }

    /// Tell the replacement policy of the objects the pool moved to other pages.
    fn report_moves(&mut self) {
        self.pool.take_moved(&mut self.moved);
        let moved = std::mem::take(&mut self.moved);
        for h in &moved {
            let e = self.by_handle.get(h.0 as usize).copied().unwrap_or(NONE);
            if e != NONE {
                self.place(e);
            }
        }
        self.moved = moved;
        self.moved.clear();
    }

    /// A page-in request reached the cache (`hit` if it holds the page): SA's hit window.
    pub fn lookup(&mut self, hit: bool) {
        self.stats.lookups += 1;
        self.stats.lookup_hits += hit as u64;
        self.admission.lookup(hit);
    }

    /// `zswap_is_full` of Linux 4.7 under `shrink_sync`: the pool's pages exceed the limit (always
    /// false under `reject`).
    pub fn over_limit_sync(&self) -> bool {
        self.full_pool == FullPoolPolicy::ShrinkSync && self.pool_pages() > self.max_pages
    }

    /// Whether a refused store should queue the worker (`zswap_pool_reached_full`).
    pub fn wants_worker(&self) -> bool {
        self.reached_full
    }

    /// Decompression time of a stored length, ns.
    fn decompress_cost(&self, len: u32) -> Nanos {
        if len == PAGE_BYTES {
            self.copy_ns
        } else {
            self.decompress_ns
        }
    }

    /// Check, in verify mode, that the page about to be restored from entry `e` holds the bytes it was
    /// stored with (the page was not changed while swapped out).
    fn check_bytes(&self, e: EntryId, bytes: Option<&[u8; 4096]>) -> Result<()> {
        if let (true, Some(b)) = (self.verify, bytes) {
            let en = &self.entries[e as usize];
            if page_hash(b) != en.sum {
                return Err(Error::Invariant(format!(
                    "zswap: slot {} would restore other bytes than it stored",
                    en.slot
                )));
            }
        }
        Ok(())
    }

    /// `zswap_load` into the swap cache: decompress, count, drop the entry. Returns the CPU time, or
    /// `None` when the slot has no entry. `bytes` (verify mode) are what the page should hold.
    pub fn load(&mut self, slot: u32, bytes: Option<&[u8; 4096]>) -> Result<Option<Nanos>> {
        let Some(e) = self.entry_of(slot) else {
            return Ok(None);
        };
        self.stats.zswpin += 1;
        self.take(e, bytes).map(Some)
    }

    /// A non-exclusive load (Linux before 6.5, `zswap_frontswap_load`): decompress the slot's entry and keep
    /// it; the CPU time, `None` when the slot has no entry.
    pub fn load_keep(&mut self, slot: u32, bytes: Option<&[u8; 4096]>) -> Result<Option<Nanos>> {
        let Some(e) = self.entry_of(slot) else {
            return Ok(None);
        };
        self.stats.zswpin += 1;
        self.check_bytes(e, bytes)?;
        let cpu = self.decompress_cost(self.entries[e as usize].len);
        self.stats.decompress_ns += cpu;
        Ok(Some(cpu))
    }

    /// The writeback worker decompresses entry `e` for its write to the backend and frees it; returns
    /// the CPU time.
    pub fn take_for_writeback(&mut self, e: EntryId, bytes: Option<&[u8; 4096]>) -> Result<Nanos> {
        self.stats.zswpwb += 1;
        self.take(e, bytes)
    }

    /// Decompress entry `e` (checking the bytes in verify mode) and free it; the CPU time.
    fn take(&mut self, e: EntryId, bytes: Option<&[u8; 4096]>) -> Result<Nanos> {
        self.check_bytes(e, bytes)?;
        let cpu = self.decompress_cost(self.entries[e as usize].len);
        self.stats.decompress_ns += cpu;
        self.erase(e)?;
        Ok(cpu)
    }

    /// `zswap_invalidate`: the slot is freed (or rewritten elsewhere); drop its entry if it has one.
    pub fn invalidate(&mut self, slot: u32) {
        if let Some(e) = self.entry_of(slot) {
            self.stats.invalidated += 1;
            self.erase(e).expect("a live entry frees");
        }
    }

    fn erase(&mut self, e: EntryId) -> Result<()> {
        let en = self.entries[e as usize];
        self.pool.free(en.handle)?;
        self.by_handle[en.handle.0 as usize] = NONE;
        self.replacement.removed(e);
        match en.kind {
            PageKind::Anon => self.by_slot[en.slot as usize] = NONE,
            PageKind::File => self.by_file[en.slot as usize] = NONE,
        }
        self.live -= 1;
        self.live_file -= (en.kind == PageKind::File) as u64;
        self.stored_bytes -= en.len as u64;
        self.used_chunk_bytes -= chunk_bytes(en.len);
        self.incompressible -= (en.len == PAGE_BYTES) as u64;
        self.free_ids.push(e);
        self.report_moves();
        Ok(())
    }

    /// One step of the writeback walk over cgroup `memcg` (see [`policy::Replacement::pick`]).
    pub fn pick(&mut self, memcg: u16) -> Pick {
        self.replacement.pick(memcg)
    }

    /// Check the entries, the slot index and the pool against each other (`ncgroups` cgroups).
    pub fn check(&self, ncgroups: usize) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(format!("zswap: {m}")));
        self.pool.check()?;
        if self.pool.objects() != self.live {
            return bad(format!(
                "{} pool objects for {} entries",
                self.pool.objects(),
                self.live
            ));
        }
        let mut n = 0u64;
        let mut incompressible = 0u64;
        let (mut files, mut bytes) = (0u64, 0u64);
        for (kind, index) in [
            (PageKind::Anon, &self.by_slot),
            (PageKind::File, &self.by_file),
        ] {
            for (slot, &e) in index.iter().enumerate() {
                if e == NONE {
                    continue;
                }
                n += 1;
                let en = &self.entries[e as usize];
                if en.slot as usize != slot || en.kind != kind {
                    return bad(format!(
                        "{kind:?} {slot} → entry {e} of {:?} {}",
                        en.kind, en.slot
                    ));
                }
                if self.by_handle.get(en.handle.0 as usize) != Some(&e) {
                    return bad(format!("entry {e}: handle index"));
                }
                incompressible += (en.len == PAGE_BYTES) as u64;
                files += (kind == PageKind::File) as u64;
                bytes += en.len as u64;
            }
        }
        if files != self.live_file || bytes != self.stored_bytes {
            return bad(format!(
                "{files} file entries, {bytes} bytes indexed; {} and {} counted",
                self.live_file, self.stored_bytes
            ));
        }
        self.replacement.check()?;
        if n != self.live || incompressible != self.incompressible {
            return bad(format!(
                "{n} indexed entries ({incompressible} incompressible) but {} live ({})",
                self.live, self.incompressible
            ));
        }
        let listed: u64 = (0..ncgroups)
            .map(|m| self.replacement.count(m as u16))
            .sum();
        if listed != self.live {
            return bad(format!("{listed} entries listed, {} live", self.live));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

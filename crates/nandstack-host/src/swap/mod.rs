//! The swap area: slot map (swap counts and the swap-cache bit), swap cache (slot → frame) and shadow
//! entries, slot owners, the slot allocator, the optional per-CPU slot cache, and discard.
//!
//! Slot life cycle (Linux terms): `folio_alloc_swap` takes a slot for a page being reclaimed and puts
//! the page in the swap cache (map = HAS_CACHE); unmapping adds one swap count per PTE; a fault drops
//! the count; removing the page from the swap cache drops HAS_CACHE (leaving a shadow). A slot with
//! neither count nor cache is free: it goes back to the allocator (through the slot cache, if any, in
//! batches) and may trigger a discard.

pub mod alloc;
pub mod discard;
pub mod readahead;
pub mod swapin;

use alloc::SlotAllocator;
use discard::DiscardPolicy;
use nandstack_core::Nanos;
use swapin::SwapIns;

use crate::vm::page::NONE;

/// Slot map values: swap count in the low 7 bits, HAS_CACHE in bit 7; 0xff = bad (header, padding).
pub const MAP_BAD: u8 = 0xff;
pub const MAP_CACHE: u8 = 0x80;
pub const MAP_COUNT: u8 = 0x7f;

#[inline]
pub fn map_count(m: u8) -> u8 {
    if m == MAP_BAD {
        0
    } else {
        m & MAP_COUNT
    }
}

/// One page of a swap I/O: its slot, its owner's virtual page and cgroup (for backends that place data
/// by owner or need the page's contents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapPage {
    pub slot: u32,
    pub vpn: u32,
    pub memcg: u16,
}

/// What keeps data by slot above the swap layer (the backend, zswap in front of it): told of every slot
/// the swap area frees, in order (`swap_range_free`: a zswap entry goes with the slot,
/// `swap_slot_free_notify` tells the device). The swap area owns neither; the caller of each method
/// that may free a slot passes it.
pub trait SlotFreed {
    fn slot_freed(&mut self, slot: u32);
}

#[derive(Clone, Debug, Default)]
pub struct SwapStats {
    pub allocations: u64,
    pub alloc_failures: u64,
    pub frees: u64,
    pub slot_cache_refills: u64,
    pub slot_cache_flushes: u64,
    pub used_max: u64,
    /// Highest slot ever allocated (how far into the partition swap reached).
    pub max_slot: u32,
    /// Zero-filled pages kept as a bit instead of being written (vmstat `swpout_zero`) and read back
    /// from that bit (`swpin_zero`).
    pub swpout_zero: u64,
    pub swpin_zero: u64,
}

pub struct SwapArea {
    /// Slots including the header (the partition size / 4 KiB); the map is padded to whole clusters.
    pub nslots: u32,
    /// Byte offset of slot 0 on the device.
    pub base: u64,
    pub map: Vec<u8>,
    /// Frame of a slot in the swap cache, or a shadow entry, or NONE.
    pub cache: Vec<u32>,
    /// The vpn whose PTE holds (or will hold) the slot.
    pub owner: Vec<u32>,
    /// Slots in use (allocated, including those parked in slot caches).
    pub used: u64,
    /// Usable slots (excluding header and padding).
    pub usable: u64,
    pub full_ratio: f64,
    pub cluster_slots: u32,
    alloc: Box<dyn SlotAllocator>,
    discard: Box<dyn DiscardPolicy>,
    /// `si->zeromap`: the slot's page was zero-filled and never written (one bit per slot).
    pub zeromap: Vec<u64>,
    /// Whether zero-filled pages go to `zeromap` at swap-out (`host.swap.zero_map`).
    pub zero_map: bool,
    slot_cache: usize,
    /// Per CPU: slots taken ahead from the allocator (last = next to use) and freed slots waiting.
    pcp_slots: Vec<Vec<u32>>,
    pcp_ret: Vec<Vec<u32>>,
    /// Ranges to discard (first slot, slots, whole cluster index or NONE), drained by the host.
    pub to_discard: Vec<(u32, u32, u32)>,
    scratch: Vec<(u32, u32)>,
    scratch_cl: Vec<u32>,
    pub stats: SwapStats,
    /// Swap-in history (normal vs swap-in-and-in) and the clean-data handler (DISS).
    pub swapins: SwapIns,
    /// Slots left out of queued discards because they held data again when issued.
    pub discards_filtered: u64,
}

/// Shape of a swap area.
#[derive(Clone, Copy, Debug)]
pub struct SwapGeometry {
    /// Slots including the header (0 = no swap).
    pub nslots: u32,
    /// Byte offset of slot 0 on the device.
    pub base: u64,
    pub cluster_slots: u32,
    /// `vm_swap_full` cutoff.
    pub full_ratio: f64,
    pub cpus: usize,
    /// Per-CPU slot cache size (0 = none).
    pub slot_cache: u32,
}

impl SwapArea {
    /// A swap area of geometry `g`; `make_alloc` builds the allocator from the padded slot map.
    pub fn new(
        g: SwapGeometry,
        make_alloc: &dyn Fn(&[u8]) -> Box<dyn SlotAllocator>,
        discard: Box<dyn DiscardPolicy>,
    ) -> SwapArea {
        let SwapGeometry {
            nslots,
            base,
            cluster_slots,
            full_ratio,
            cpus,
            slot_cache,
        } = g;
        let padded = if nslots == 0 {
            cluster_slots
        } else {
            nslots.div_ceil(cluster_slots) * cluster_slots
        };
        let mut map = vec![0u8; padded as usize];
        map[0] = MAP_BAD;
        for m in map.iter_mut().skip(nslots.max(1) as usize) {
            *m = MAP_BAD;
        }
        let usable = map.iter().filter(|&&m| m == 0).count() as u64;
        let alloc = make_alloc(&map);
        SwapArea {
            nslots,
            base,
            cache: vec![NONE; padded as usize],
            owner: vec![NONE; padded as usize],
            map,
            used: 0,
            usable,
            full_ratio,
            cluster_slots,
            alloc,
            discard,
            zeromap: vec![0; (padded as usize).div_ceil(64)],
            zero_map: true,
            slot_cache: slot_cache as usize,
            pcp_slots: vec![Vec::new(); cpus.max(1)],
            pcp_ret: vec![Vec::new(); cpus.max(1)],
            to_discard: Vec::new(),
            scratch: Vec::new(),
            scratch_cl: Vec::new(),
            stats: SwapStats::default(),
            swapins: SwapIns::new(padded, false),
            discards_filtered: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.usable > 0
    }
    /// CPUs (each with its own current cluster and slot cache).
    pub fn cpus(&self) -> usize {
        self.pcp_slots.len()
    }
    pub fn allocator_name(&self) -> &'static str {
        self.alloc.name()
    }
    pub fn discard_name(&self) -> &'static str {
        self.discard.name()
    }
    pub fn allocator_stats(&self) -> Vec<(&'static str, u64)> {
        self.alloc.stats()
    }

    /// Byte offset of a slot on the device.
    #[inline]
    pub fn offset(&self, slot: u32) -> u64 {
        self.base + slot as u64 * 4096
    }

    /// `vm_swap_full()`: more than `full_ratio` of the slots are used.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.used as f64 > self.usable as f64 * self.full_ratio
    }

    /// Free slots left (for `can_reclaim_anon_pages`).
    pub fn free_slots(&self) -> u64 {
        self.usable - self.used
    }

    /// Allocate a slot for a page reclaimed on `cpu` at `now`: the slot holds HAS_CACHE. Returns the
    /// slot and when it is ready (later than `now` if a discard had to finish first).
    pub fn alloc_slot(&mut self, cpu: usize, now: Nanos) -> Option<(u32, Nanos)> {
        if !self.enabled() {
            return None;
        }
        let cpu = cpu % self.pcp_slots.len();
        if self.slot_cache == 0 && self.used >= self.usable {
            return None;
        }
        let (slot, ready) = if self.slot_cache > 0 {
            if self.pcp_slots[cpu].is_empty() {
                self.refill(cpu, now);
            }
            let s = self.pcp_slots[cpu].pop()?;
            (s, now)
        } else {
            let (s, t) = self.alloc.alloc(cpu, &self.map, now)?;
            self.took(s);
            (s, t)
        };
        debug_assert_eq!(self.map[slot as usize], MAP_CACHE);
        self.stats.allocations += 1;
        Some((slot, ready))
    }

    fn took(&mut self, s: u32) {
        debug_assert_eq!(self.map[s as usize], 0);
        self.map[s as usize] = MAP_CACHE;
        self.used += 1;
        self.stats.used_max = self.stats.used_max.max(self.used);
        self.stats.max_slot = self.stats.max_slot.max(s);
    }

    /// Take a batch of slots ahead (`get_swap_pages` into the per-CPU slot cache).
    fn refill(&mut self, cpu: usize, now: Nanos) {
        self.stats.slot_cache_refills += 1;
        let mut got = Vec::with_capacity(self.slot_cache);
        for _ in 0..self.slot_cache {
            match self.alloc.alloc(cpu, &self.map, now) {
                Some((s, _)) => {
                    self.took(s);
                    got.push(s);
                }
                None => break,
            }
        }
        got.reverse();
        self.pcp_slots[cpu] = got;
    }

    /// A PTE now references `slot`.
    #[inline]
    pub fn dup(&mut self, slot: u32) {
        let m = &mut self.map[slot as usize];
        debug_assert!(*m != MAP_BAD && *m & MAP_COUNT < MAP_COUNT);
        *m += 1;
    }

    /// A PTE reference to `slot` is gone; frees the slot when nothing else holds it.
    pub fn put_count(&mut self, slot: u32, cpu: usize, to: &mut dyn SlotFreed) {
        let m = &mut self.map[slot as usize];
        debug_assert!(*m & MAP_COUNT > 0);
        *m -= 1;
        if *m == 0 {
            self.release(slot, cpu, to);
        }
    }

    /// The swap cache no longer holds `slot`; frees it when no PTE references it.
    pub fn put_cache(&mut self, slot: u32, cpu: usize, to: &mut dyn SlotFreed) {
        let m = &mut self.map[slot as usize];
        debug_assert!(*m & MAP_CACHE != 0);
        *m &= !MAP_CACHE;
        if *m == 0 {
            self.release(slot, cpu, to);
        }
    }

    /// Free an unreferenced slot, through the slot cache's return batch if there is one.
    fn release(&mut self, slot: u32, cpu: usize, to: &mut dyn SlotFreed) {
        self.cache[slot as usize] = NONE;
        self.owner[slot as usize] = NONE;
        if self.slot_cache > 0 {
            // Parked until the batch is flushed: still marked used.
            self.map[slot as usize] = MAP_CACHE;
            let cpu = cpu % self.pcp_ret.len();
            self.pcp_ret[cpu].push(slot);
            if self.pcp_ret[cpu].len() >= self.slot_cache {
                self.flush_ret(cpu, to);
            }
        } else {
            self.free_now(slot, to);
        }
    }

    /// `swapcache_free_entries`: free a CPU's returned slots, sorted.
    fn flush_ret(&mut self, cpu: usize, to: &mut dyn SlotFreed) {
        self.stats.slot_cache_flushes += 1;
        let mut v = std::mem::take(&mut self.pcp_ret[cpu]);
        v.sort_unstable();
        for s in v {
            self.map[s as usize] = 0;
            self.free_now_unmarked(s, to);
        }
    }

    fn free_now(&mut self, slot: u32, to: &mut dyn SlotFreed) {
        self.map[slot as usize] = 0;
        self.free_now_unmarked(slot, to);
    }

    fn free_now_unmarked(&mut self, slot: u32, to: &mut dyn SlotFreed) {
        self.used -= 1;
        self.stats.frees += 1;
        self.notify_freed(slot, to);
    }

    /// Tell the stores above (`to`: the backend, zswap), the allocator and the discard policy that `slot`
    /// is free (`swap_range_free`: the zero bit and any zswap entry go with the slot).
    fn notify_freed(&mut self, slot: u32, to: &mut dyn SlotFreed) {
        self.zeromap_set(slot, false);
        self.swapins.freed(slot);
        to.slot_freed(slot);
        self.alloc.free(slot);
        self.discard.slot_freed(slot, &self.map, &mut self.scratch);
        for (s, n) in self.scratch.drain(..) {
            self.to_discard.push((s, n, NONE));
        }
        self.alloc.take_discards(&mut self.scratch_cl);
        let cs = self.cluster_slots;
        for c in self.scratch_cl.drain(..) {
            self.to_discard.push((c * cs, cs, c));
        }
    }

    /// Whether `slot`'s page is kept as a zero bit.
    #[inline]
    pub fn is_zero(&self, slot: u32) -> bool {
        self.zeromap[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    /// Set or clear `slot`'s zero bit (`swap_zeromap_folio_set` / `_clear`).
    #[inline]
    pub fn zeromap_set(&mut self, slot: u32, zero: bool) {
        let w = &mut self.zeromap[slot as usize / 64];
        if zero {
            *w |= 1 << (slot % 64);
        } else {
            *w &= !(1 << (slot % 64));
        }
    }

    /// Limit the slots in use to `n` (a backend whose slot space is larger than the swap size the OS
    /// sees: ZNSwap's zones hold more slots than its logical size, the rest is its spare space).
    pub fn limit_usable(&mut self, n: u64) {
        self.usable = self.usable.min(n);
    }

    /// A backend relocated the page of in-use slot `from` to free slot `to` (a zone append that
    /// completed, a host-side GC copy): `to` takes over the swap count, the swap-cache entry and the
    /// owner, and `from` is freed (the backend, the allocator and the discard policy are told, as for
    /// any freed slot). The caller remaps the page-table entry and the swap-cache frame. Only for
    /// backends paired with an allocator that never hands out the slots they place.
    pub fn move_slot(&mut self, from: u32, to: u32, stores: &mut dyn SlotFreed) {
        let (f, t) = (from as usize, to as usize);
        debug_assert!(self.map[f] != 0 && self.map[f] != MAP_BAD && self.map[t] == 0);
        // Only slots whose data the backend holds move: never a zero bit (nor a zswap entry: the
        // caller checks).
        debug_assert!(!self.is_zero(from));
        self.map[t] = self.map[f];
        self.cache[t] = self.cache[f];
        self.owner[t] = self.owner[f];
        self.stats.max_slot = self.stats.max_slot.max(to);
        self.cache[f] = NONE;
        self.owner[f] = NONE;
        // `to` is counted in `used` in place of `from`.
        self.map[f] = 0;
        self.notify_freed(from, stores);
    }

    /// The pages of one swap-in were read from the device; `write_fault_slot` is the faulting page's
    /// slot if the fault writes (that page is dirty anyway), else `NONE`.
    pub fn swapped_in(&mut self, pages: &[SwapPage], write_fault_slot: u32) {
        for p in pages {
            self.swapins.read(p.slot, p.slot == write_fault_slot);
            self.discard.slot_read(p.slot, &self.map, &mut self.scratch);
        }
        for (s, n) in self.scratch.drain(..) {
            self.to_discard.push((s, n, NONE));
        }
    }

    /// The writes of `pages` were submitted.
    pub fn swapped_out(&mut self, pages: &[SwapPage]) {
        for p in pages {
            self.swapins.written(p.slot);
            self.discard.slot_written(p.slot);
        }
    }

    /// The queued discards, as they are issued now: cluster discards whole, other ranges cut to the
    /// slots that may still be discarded (a slot written again meanwhile is left out).
    pub fn take_discards(&mut self) -> Vec<(u32, u32, u32)> {
        let queued = std::mem::take(&mut self.to_discard);
        let mut out = Vec::with_capacity(queued.len());
        for (first, n, cluster) in queued {
            if cluster != NONE {
                out.push((first, n, cluster));
                continue;
            }
            let mut s = first;
            while s < first + n {
                if !self.discard.discardable(s, &self.map) {
                    self.discards_filtered += 1;
                    s += 1;
                    continue;
                }
                let a = s;
                while s < first + n && self.discard.discardable(s, &self.map) {
                    s += 1;
                }
                out.push((a, s - a, NONE));
            }
        }
        out
    }

    /// The next deferred (idle-time) discard to issue before `now`, the device idle since `idle_from`:
    /// `(submission time, first slot, slots)`.
    pub fn next_deferred(&mut self, idle_from: Nanos, now: Nanos) -> Option<(Nanos, u32, u32)> {
        self.discard.next_deferred(idle_from, now, &self.map)
    }

    /// The report's `swap.discard`: the policy, its own figures, and the slots left out of queued
    /// discards when they were issued.
    pub fn discard_section(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("policy".into(), self.discard.name().into());
        m.insert("filtered_slots".into(), self.discards_filtered.into());
        if let serde_json::Value::Object(o) = self.discard.report() {
            m.extend(o);
        }
        serde_json::Value::Object(m)
    }

    /// The discard of whole cluster `cluster` completes at `done`.
    pub fn discard_issued(&mut self, cluster: u32, done: Nanos) {
        self.alloc.discard_issued(cluster, done);
    }

    /// Flush every slot cache (end of run, verification).
    pub fn drain_slot_caches(&mut self, to: &mut dyn SlotFreed) {
        for cpu in 0..self.pcp_ret.len() {
            if !self.pcp_ret[cpu].is_empty() {
                self.flush_ret(cpu, to);
            }
        }
    }

    /// Slots parked in slot caches (allocated ahead or waiting to be freed).
    pub fn parked(&self) -> impl Iterator<Item = u32> + '_ {
        self.pcp_slots
            .iter()
            .chain(self.pcp_ret.iter())
            .flat_map(|v| v.iter().copied())
    }

    pub fn verify_allocator(&self) -> Result<(), String> {
        self.alloc.verify(&self.map)
    }
}

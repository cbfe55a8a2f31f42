//! ZNSwap (Bergman, Cassel, Bjørling, Silberstein, "ZNSwap: un-Block your Swap", USENIX ATC 2022) as a
//! swap backend on a zoned device: swap slots live in zones; a swap-out is a zone append through a
//! *swap-zone* (a stream backed by one open zone at a time) that a placement policy chooses; the slot is
//! known only when the append completes; a host-side garbage collector (ZNGC, `gc.rs`; its driver `kznsd.rs`) reclaims zones
//! using the swap layer's own slot map — no TRIM, no device GC, no swap-cache cutoff. docs/znswap.md.
//!
//! Slots: slot 0 is unused (the swap header's place); zone `z`'s slot `o` is slot `1 + z·cap + o`, at
//! byte `z·zone_size + o·4096` of the device; the staging slots (a page's temporary swap entry between
//! `folio_alloc_swap` and its append) follow the zone slots. The OS may use `host.swap.size_mib` worth
//! of slots; the zones hold more — the spare space the GC works with.
//!
//! The ordering problem (slots allocated in one order, submitted in another) does not arise: a page's
//! zone slot is assigned when its append is issued, from the location the device returns
//! (`Completion::written_at`), and the swap layer then moves the page from its staging slot to it
//! ([`SwapBackend::take_moves`]). A dirty page that already has a zone slot (re-dirtied in the swap
//! cache) is appended anew and its old slot becomes garbage: a zone slot is written once.
//!
//! Each written slot carries its reverse map in the per-LBA metadata word: `vpn + 1` in the low 32
//! bits (the page-table entry to remap — the paper stores `mapping` and `index`), the page's access
//! history in the high 32. Every read checks it: a page read from a slot that no longer holds it is an
//! invariant error, so a live page lost by the GC cannot go unnoticed.

mod config;
pub(crate) mod gc;
mod kznsd;
pub mod policy;
mod staging;
mod zones;

pub use config::{ZnswapConfig, ZonePolicyConfig};
pub use gc::Gc;
pub use policy::{PageInfo, ZonePolicy, ZoneStat};
pub use zones::{ZoneTable, ZoneUse};

use nandstack_core::{Error, Nanos, Result};
use nandstack_device::device::ZoneModel;
use nandstack_device::{Command, ZoneCommand};
use serde_json::json;

use super::{SlotHost, Submit, SwapBackend, SwapPage};
use crate::block::{BlockLayer, IoKind, Region};
use crate::swap::{SwapArea, SwapGeometry};
use staging::StagingAllocator;

/// Most swap-zones when the device does not limit open zones.
const MAX_STREAMS: u32 = 64;

/// Counters of the backend (the report's `swap.backend`).
#[derive(Clone, Debug, Default)]
pub struct ZnStats {
    /// Swap-out appends and the pages they wrote.
    pub appends: u64,
    pub append_pages: u64,
    /// Swap-in reads (requests, pages).
    pub reads: u64,
    pub read_pages: u64,
    /// Pages appended again because they were dirtied in the swap cache (their old slot is garbage).
    pub rewritten_pages: u64,
    /// Zones reset because every slot was garbage (no copy).
    pub free_resets: u64,
    /// Submissions that had to wait for the GC to free zones (ZNSwap's suspend), and GC steps run for
    /// them.
    pub suspended_writes: u64,
    pub suspended_gc_steps: u64,
}

/// The ZNSwap backend. See the module documentation.
pub struct ZnSwap {
    pub(crate) tbl: ZoneTable,
    /// Stride between zone starts on the device, bytes.
    zone_bytes: u64,
    /// First staging slot (= 1 + zones · cap) and how many there are.
    staging_first: u32,
    staging_len: u32,
    pub(crate) policy: Box<dyn ZonePolicy>,
    /// Swap-zones (the device's open-zone limit minus one, kept for the GC).
    pub(crate) streams: u32,
    pub(crate) low: u32,
    pub(crate) high: u32,
    pub(crate) batch_pages: u32,
    pub(crate) gc_page_ns: Nanos,
    /// The GC's I/O is charged to the pages' cgroups.
    pub(crate) accounting: bool,
    /// Block-trace issuer id of the GC thread.
    pub(crate) comm: u16,
    /// A swap-in read is an accessed-bit sample of its page (`swapin_heat_sample`).
    swapin_sample: bool,
    /// Per vpn: accessed-bit samples (newest in bit 0) and their number.
    hist: Vec<u32>,
    samples: Vec<u8>,
    moves: Vec<(u32, u32)>,
    order: Vec<(u32, u32)>,
    metas: Vec<u64>,
    pub(crate) gc: Gc,
    pub(crate) stats: ZnStats,
    /// Cgroup names, root first (report).
    cgroups: Vec<String>,
    logical_slots: u64,
    /// Slots the swap layer freed or the device wrote since the GC last looked (it rescans on change).
    pub(crate) changes: u64,
}

impl ZnSwap {
    /// Slots per zone.
    #[inline]
    pub fn cap(&self) -> u32 {
        self.tbl.cap
    }

    /// Zones used.
    pub fn zones(&self) -> u32 {
        self.tbl.zones.len() as u32
    }

    /// Zone `z`'s slot `off`.
    #[inline]
    pub fn slot_of(&self, z: u32, off: u32) -> u32 {
        1 + z * self.tbl.cap + off
    }

    /// The zone and offset of a zone slot; `None` for slot 0 and staging slots.
    #[inline]
    pub fn zone_of(&self, slot: u32) -> Option<(u32, u32)> {
        (slot >= 1 && slot < self.staging_first).then(|| {
            let i = slot - 1;
            (i / self.tbl.cap, i % self.tbl.cap)
        })
    }

    /// Whether `slot` is a staging slot.
    pub fn is_staging(&self, slot: u32) -> bool {
        slot >= self.staging_first && slot < self.staging_first + self.staging_len
    }

    fn lba(&self, z: u32, off: u32) -> u64 {
        z as u64 * self.zone_bytes + off as u64 * 4096
    }

    /// What the placement policy knows about a page reclaimed on `cpu`.
    fn page_info(&self, p: &SwapPage, cpu: u16) -> PageInfo {
        let (history, samples) = self.history(p.vpn);
        PageInfo {
            vpn: p.vpn,
            memcg: p.memcg,
            cpu,
            history,
            samples,
        }
    }

    /// Page `vpn`'s accessed-bit samples (newest in bit 0) and how many were taken (at most 32).
    pub(crate) fn history(&self, vpn: u32) -> (u32, u8) {
        let v = vpn as usize;
        (
            self.hist.get(v).copied().unwrap_or(0),
            self.samples.get(v).copied().unwrap_or(0),
        )
    }

    /// The metadata word written with page `vpn`.
    pub(crate) fn meta_word(&self, vpn: u32) -> u64 {
        (vpn as u64 + 1) | (self.hist.get(vpn as usize).copied().unwrap_or(0) as u64) << 32
    }

    /// New zones a submission of `pages` from `cpu` needs beyond its swap-zones' current zones.
    pub fn zones_needed(&self, pages: &[SwapPage], cpu: u16) -> u32 {
        let mut per = vec![0u32; self.streams as usize];
        for p in pages {
            per[self.policy.place(&self.page_info(p, cpu), self.streams) as usize] += 1;
        }
        per.iter()
            .enumerate()
            .map(|(s, &n)| {
                n.saturating_sub(self.tbl.stream_room(s as u32))
                    .div_ceil(self.tbl.cap)
            })
            .sum()
    }

    /// Append `metas.len()` pages to zone `z`, dispatched at `at` (not before the zone's reset
    /// completes); returns the offset they landed at and the completion time.
    pub(crate) fn append(
        &mut self,
        io: &mut BlockLayer,
        z: u32,
        metas: &[u64],
        at: Nanos,
        comm: u16,
    ) -> Result<(u32, Nanos)> {
        let n = metas.len() as u32;
        let expect = self.tbl.zones[z as usize].written;
        let cmd = Command::Zone(ZoneCommand::Append {
            zone: z,
            len: n as u64 * 4096,
            meta: metas,
        });
        let c = io.issue_command(IoKind::Write, Region::Swap, cmd, n, at, comm)?;
        let off = c
            .written_at
            .map(|w| ((w - z as u64 * self.zone_bytes) / 4096) as u32)
            .ok_or_else(|| Error::Invariant("a zone append returned no location".into()))?;
        if off != expect {
            return Err(Error::Invariant(format!(
                "ZNSwap: zone {z} append landed at slot {off}, the zone table expected {expect}"
            )));
        }
        self.tbl.appended(z, n);
        self.changes += 1;
        Ok((off, c.done))
    }

    /// A read of `slot` must find data the zone still holds.
    fn check_readable(&self, slot: u32) -> Result<(u32, u32)> {
        let Some((z, off)) = self.zone_of(slot) else {
            return Err(Error::Invariant(format!(
                "ZNSwap: swap-in from slot {slot}, which is not in a zone (a staging slot is never read)"
            )));
        };
        let zone = &self.tbl.zones[z as usize];
        let holds = matches!(zone.state, ZoneUse::Open | ZoneUse::Full | ZoneUse::Victim);
        if !holds || off >= zone.written {
            return Err(Error::Invariant(format!(
                "ZNSwap: swap-in from zone {z} slot {off}, but the zone is {:?} with {} slots written",
                zone.state, zone.written
            )));
        }
        Ok((z, off))
    }

    /// Read runs of consecutive slots of one zone; check every page's reverse map.
    pub(crate) fn read_pages(
        &mut self,
        io: &mut BlockLayer,
        pages: &[SwapPage],
        at: Nanos,
        comm: u16,
        dispatch: &mut dyn FnMut(u16, u64, Nanos) -> Nanos,
        done: &mut Vec<Nanos>,
    ) -> Result<()> {
        done.clear();
        let mut i = 0;
        while i < pages.len() {
            let (z, off) = self.check_readable(pages[i].slot)?;
            let mut j = i + 1;
            while j < pages.len()
                && pages[j].slot == pages[j - 1].slot + 1
                && self.zone_of(pages[j].slot).is_some_and(|(zz, _)| zz == z)
                && ((j - i) as u32) < io.max_req_pages
            {
                self.check_readable(pages[j].slot)?;
                j += 1;
            }
            let n = (j - i) as u32;
            let start = dispatch(pages[i].memcg, n as u64 * 4096, at);
            let cmd = Command::read(self.lba(z, off), n as u64 * 4096);
            let c = io.issue_command(IoKind::Read, Region::Swap, cmd, n, start, comm)?;
            for (k, p) in pages[i..j].iter().enumerate() {
                let m = c.meta.get(k).copied().unwrap_or(0);
                if m & 0xffff_ffff != p.vpn as u64 + 1 {
                    return Err(Error::Invariant(format!(
                        "ZNSwap: zone {z} slot {} holds page {} (metadata {m:#x}), not page {} whose \
                         PTE points there: a live page was lost",
                        off + k as u32,
                        (m & 0xffff_ffff) as i64 - 1,
                        p.vpn
                    )));
                }
            }
            done.extend(std::iter::repeat_n(c.done, j - i));
            i = j;
        }
        Ok(())
    }

    /// Statistics of every zone for victim selection: `map` gives the swap-cache-only slots.
    pub(crate) fn zone_stats(&self, map: &[u8]) -> Vec<ZoneStat> {
        let cap = self.tbl.cap;
        self.tbl
            .zones
            .iter()
            .enumerate()
            .map(|(z, zone)| {
                let z = z as u32;
                let cached = if zone.state == ZoneUse::Full {
                    let s0 = self.slot_of(z, 0) as usize;
                    count_cache_only(&map[s0..s0 + cap as usize])
                } else {
                    0
                };
                ZoneStat {
                    zone: z,
                    written: zone.written,
                    invalid: zone.invalid,
                    cached,
                    stream: zone.stream,
                    reclaimable: zone.state == ZoneUse::Full,
                    in_use: matches!(zone.state, ZoneUse::Open | ZoneUse::Full | ZoneUse::Victim),
                }
            })
            .collect()
    }

    /// Zones' worth of reclaimable (invalid or swap-cached) slots in full zones (`gc_calc_potential`).
    pub(crate) fn potential(stats: &[ZoneStat], cap: u32) -> u64 {
        stats
            .iter()
            .filter(|z| z.reclaimable)
            .map(|z| (z.invalid + z.cached) as u64)
            .sum::<u64>()
            / cap as u64
    }

    /// GC I/O accounting: pages read and written by the GC per cgroup.
    pub(crate) fn account_gc(&mut self, memcg: u16, write: bool, pages: u64) {
        let m = memcg as usize;
        let v = if write {
            &mut self.gc.write_by_memcg
        } else {
            &mut self.gc.read_by_memcg
        };
        if v.len() <= m {
            v.resize(m + 1, 0);
        }
        v[m] += pages;
    }
}

/// Slots of `map` that only the swap cache holds (`== MAP_CACHE`). Counted in blocks of 128 with a
/// byte-wide sum per block, which the compiler turns into 16-byte compares and subtracts: the victim
/// search scans every full zone's slots on each GC step, and a per-slot 64-bit count was ~20 % of a
/// 1,024-zone redis run.
pub(crate) fn count_cache_only(map: &[u8]) -> u32 {
    const BLOCK: usize = 128;
    let mut blocks = map.chunks_exact(BLOCK);
    let mut n = 0u32;
    for b in &mut blocks {
        let mut k = 0u8;
        for &m in b {
            k += (m == crate::swap::MAP_CACHE) as u8;
        }
        n += k as u32;
    }
    for &m in blocks.remainder() {
        n += (m == crate::swap::MAP_CACHE) as u32;
    }
    n
}

impl SwapBackend for ZnSwap {
    fn name(&self) -> &'static str {
        "znswap"
    }

    fn swapon(&mut self, io: &mut BlockLayer, nslots: u32) -> Result<()> {
        let Some(zm) = io.dev.zone_model() else {
            return Err(Error::config(
                "host.swap.backend.kind",
                "ZNSwap needs a zoned device",
            ));
        };
        if zm.zones < self.zones() || nslots != self.staging_first + self.staging_len {
            return Err(Error::Invariant(
                "ZNSwap's layout does not match the device".into(),
            ));
        }
        self.comm = io.comm("kznsd");
        Ok(())
    }

    /// Append each page to its swap-zone's zone: the pages of one swap-zone go together (zone-append
    /// merging in the plug), up to the maximum request size and the zone's end; each request passes
    /// the writer's cgroup throttle.
    fn write(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<Nanos>) -> Result<()> {
        done.clear();
        done.resize(pages.len(), Nanos::ZERO);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for (i, p) in pages.iter().enumerate() {
            let s = self.policy.place(&self.page_info(p, sub.cpu), self.streams);
            order.push((s, i as u32));
        }
        order.sort_unstable();
        let mut metas = std::mem::take(&mut self.metas);
        let mut k = 0;
        while k < order.len() {
            let s = order[k].0;
            let z = self.tbl.stream_zone(s).ok_or_else(|| {
                Error::Invariant(
                    "ZNSwap: no free zone for a swap-out the GC had made room for".into(),
                )
            })?;
            let room = self.tbl.room(z).min(sub.io.max_req_pages);
            let mut e = k + 1;
            while e < order.len() && order[e].0 == s && ((e - k) as u32) < room {
                e += 1;
            }
            metas.clear();
            metas.extend(
                order[k..e]
                    .iter()
                    .map(|&(_, i)| self.meta_word(pages[i as usize].vpn)),
            );
            let first = pages[order[k].1 as usize];
            let n = (e - k) as u64;
            let ready = sub.at.max(self.tbl.zones[z as usize].ready_ns);
            let start = (sub.dispatch)(first.memcg, true, n * 4096, ready);
            let (off, d) = self.append(sub.io, z, &metas, start, sub.comm)?;
            for (j, &(_, i)) in order[k..e].iter().enumerate() {
                let old = pages[i as usize].slot;
                if !self.is_staging(old) {
                    self.stats.rewritten_pages += 1;
                }
                self.moves.push((old, self.slot_of(z, off + j as u32)));
                done[i as usize] = d;
            }
            self.stats.appends += 1;
            self.stats.append_pages += n;
            k = e;
        }
        self.metas = metas;
        self.order = order;
        Ok(())
    }

    fn read(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<Nanos>) -> Result<()> {
        let d = &mut *sub.dispatch;
        self.read_pages(
            sub.io,
            pages,
            sub.at,
            sub.comm,
            &mut |m, b, t| d(m, false, b, t),
            done,
        )?;
        self.stats.reads += 1;
        self.stats.read_pages += pages.len() as u64;
        if self.swapin_sample {
            for p in pages {
                self.page_referenced(p.vpn, true);
            }
        }
        Ok(())
    }

    fn discard(
        &mut self,
        _: &mut BlockLayer,
        first: u32,
        n: u32,
        _: Nanos,
        _: u16,
    ) -> Result<Nanos> {
        Err(Error::Invariant(format!(
            "ZNSwap got a discard of slots {first}+{n}: discard must be off"
        )))
    }

    fn slot_freed(&mut self, slot: u32) {
        if let Some((z, _)) = self.zone_of(slot) {
            self.tbl.invalidate(z);
            self.changes += 1;
        }
    }

    fn page_referenced(&mut self, vpn: u32, young: bool) {
        let v = vpn as usize;
        if self.hist.len() <= v {
            self.hist.resize(v + 1, 0);
            self.samples.resize(v + 1, 0);
        }
        self.hist[v] = (self.hist[v] << 1) | young as u32;
        self.samples[v] = (self.samples[v] + 1).min(32);
    }

    fn prefetch_page(&self, vpn: u32) {
        nandstack_core::hint::prefetch(&self.hist, vpn as usize);
        nandstack_core::hint::prefetch(&self.samples, vpn as usize);
    }

    fn prefetch_read(&self, io: &BlockLayer, slot: u32) {
        if let Some((z, off)) = self.zone_of(slot) {
            io.dev.prefetch([None, None, Some(self.lba(z, off))]);
        }
    }

    fn take_moves(&mut self, out: &mut Vec<(u32, u32)>) {
        out.append(&mut self.moves);
    }

    fn check(&self, map: &[u8]) -> Result<()> {
        self.check_state(map).map_err(Error::Invariant)
    }

    fn service(
        &mut self,
        host: &mut dyn SlotHost,
        now: Nanos,
        want: Option<(&[SwapPage], u16)>,
    ) -> Result<()> {
        self.kznsd(host, now, want)
    }

    #[cfg(test)]
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn report(&self) -> serde_json::Value {
        let s = &self.stats;
        let g = &self.gc;
        let cap = self.tbl.cap as u64;
        let physical = self.zones() as u64 * cap;
        let by_memcg = |v: &Vec<u64>| -> serde_json::Map<String, serde_json::Value> {
            self.cgroups
                .iter()
                .enumerate()
                .map(|(m, n)| (n.clone(), json!(v.get(m).copied().unwrap_or(0))))
                .collect()
        };
        let written = s.append_pages + g.pages_written;
        json!({
            "kind": "znswap",
            "policy": self.policy.name(),
            "zones": self.zones(),
            "zone_capacity_slots": cap,
            "logical_slots": self.logical_slots,
            "effective_over_provisioning": physical as f64 / self.logical_slots as f64 - 1.0,
            "swap_zones": self.streams,
            "watermarks_zones": {"low": self.low, "high": self.high},
            "gc_batch_pages": self.batch_pages,
            "cgroup_accounting": self.accounting,
            "free_zones_end": self.tbl.free,
            "free_zones_min": self.tbl.min_free,
            "zones_taken": self.tbl.taken,
            "emergency_zone_uses": self.tbl.emergency_uses,
            "appends": s.appends,
            "append_pages": s.append_pages,
            "rewritten_pages": s.rewritten_pages,
            "read_requests": s.reads,
            "read_pages": s.read_pages,
            "free_resets": s.free_resets,
            "suspended_writes": s.suspended_writes,
            "suspended_gc_steps": s.suspended_gc_steps,
            "waf": if s.append_pages == 0 { serde_json::Value::Null } else { json!(written as f64 / s.append_pages as f64) },
            "gc": {
                "wakeups": g.wakeups,
                "victims": g.victims,
                "batches": g.batches,
                "pages_read": g.pages_read,
                "pages_written": g.pages_written,
                "pages_moved": g.pages_moved,
                "pages_freed_in_flight": g.pages_freed_in_flight,
                "swap_cache_dropped": g.cache_dropped,
                "zone_resets": g.resets,
                "read_pages_by_cgroup": by_memcg(&g.read_by_memcg),
                "write_pages_by_cgroup": by_memcg(&g.write_by_memcg),
            },
        })
    }
}

impl ZnSwap {
    /// The backend's own state against the swap layer's slot map; the error names the first mismatch.
    fn check_state(&self, map: &[u8]) -> std::result::Result<(), String> {
        self.tbl.check()?;
        let cap = self.tbl.cap;
        let mut pending = vec![0u32; self.zones() as usize];
        for item in &self.gc.batch {
            if let Some((z, _)) = self.zone_of(item.dst) {
                pending[z as usize] += 1;
            }
        }
        for (z, zone) in self.tbl.zones.iter().enumerate() {
            let s0 = self.slot_of(z as u32, 0) as usize;
            let slots = &map[s0..s0 + cap as usize];
            if let Some(o) = slots[zone.written as usize..].iter().position(|&m| m != 0) {
                return Err(format!(
                    "zone {z} ({:?}): slot {} in use beyond the {} slots written",
                    zone.state,
                    zone.written as usize + o,
                    zone.written
                ));
            }
            let valid = slots.iter().filter(|&&m| m != 0).count() as u32;
            if valid + zone.invalid + pending[z] != zone.written {
                return Err(format!(
                    "zone {z} ({:?}): {valid} slots in use + {} invalid + {} being copied ≠ {} written",
                    zone.state, zone.invalid, pending[z], zone.written
                ));
            }
        }
        let st = self.staging_first as usize;
        if let Some(o) = map[st..st + self.staging_len as usize]
            .iter()
            .position(|&m| m != 0)
        {
            return Err(format!(
                "staging slot {} still in use: a page was never placed in a zone",
                st + o
            ));
        }
        Ok(())
    }
}

/// The swap area and the backend of a ZNSwap host on a device with zone layout `zm` (`None`: not zoned — an error):
/// zone slots, then as many staging slots as the OS may use; the OS sees `host.swap.size_mib`.
/// `cgroups` are the cgroup names, root first; `size_mib`, `cluster_slots` and `cpus` are
/// `host.swap.size_mib`, `host.swap.cluster_slots` and `host.cpus`.
pub fn swap_area(
    cfg: &ZnswapConfig,
    (size_mib, cluster_slots, cpus): (u64, u32, u32),
    zm: Option<ZoneModel>,
    cgroups: Vec<String>,
) -> Result<(SwapArea, Box<dyn SwapBackend>)> {
    let zm = zm.ok_or_else(|| {
        Error::config(
            "host.swap.backend.kind",
            "ZNSwap needs device.kind = \"zoned\"",
        )
    })?;
    let zones = cfg.zones.unwrap_or(zm.zones);
    if zones > zm.zones {
        return Err(Error::config(
            "host.swap.backend.zones",
            format!("is {zones}: the device has {} zones", zm.zones),
        ));
    }
    let cap = (zm.zone_capacity_bytes / 4096) as u32;
    let open = zm.max_open_zones.min(zm.max_active_zones);
    if open < 2 {
        return Err(Error::config(
            "device.zoned.max_open_zones",
            format!(
                "is {open}: ZNSwap needs at least 2 open zones (swap-zones plus one for the GC)"
            ),
        ));
    }
    let streams = (open - 1)
        .min(MAX_STREAMS)
        .min(zones.saturating_sub(2).max(1));
    let policy = policy::build(&cfg.policy, &cgroups);
    let low = cfg.low_watermark_zones.unwrap_or(zones.div_ceil(50).max(2));
    let high = cfg
        .high_watermark_zones
        .unwrap_or(zones.div_ceil(25).max(low + 2));
    let logical = size_mib * 256;
    // Room the GC always needs: the emergency zone, the swap-zones' and the GC's open zones, the free
    // zones below the low watermark, and two zones' worth of garbage to start a GC round.
    let used = policy.streams_used(streams, cpus);
    let spare = 1 + used + 1 + low + 2;
    let max_logical = zones.saturating_sub(spare) as u64 * cap as u64;
    if logical > max_logical {
        return Err(Error::config(
            "host.swap.size_mib",
            format!(
                "is {} MiB: ZNSwap on {zones} zones of {cap} slots with {used} swap-zones in use needs \
                 {spare} zones of spare room (emergency, open zones, the low watermark, two zones of \
                 garbage), so at most {} MiB of swap",
                size_mib,
                max_logical / 256
            ),
        ));
    }
    let staging_first = 1 + zones * cap;
    let total = staging_first as u64 + logical;
    if total > crate::vm::page::MAX_SLOTS {
        return Err(Error::config(
            "host.swap.size_mib",
            "too many swap slots for the page-table encoding",
        ));
    }
    let staging_len = logical as u32;
    let accounting = cfg.cgroup_accounting.unwrap_or(policy.accounts_gc());
    let backend = ZnSwap {
        tbl: ZoneTable::new(zones, cap, streams),
        zone_bytes: zm.zone_size_bytes,
        staging_first,
        staging_len,
        policy,
        streams,
        low,
        high,
        batch_pages: cfg.gc_batch_pages.unwrap_or(1024),
        gc_page_ns: Nanos(cfg.gc_page_ns.unwrap_or(500)),
        accounting,
        comm: 0,
        swapin_sample: cfg.swapin_heat_sample,
        hist: Vec::new(),
        samples: Vec::new(),
        moves: Vec::new(),
        order: Vec::new(),
        metas: Vec::new(),
        gc: Gc::default(),
        stats: ZnStats::default(),
        cgroups,
        logical_slots: logical,
        changes: 0,
    };
    let geometry = SwapGeometry {
        nslots: total as u32,
        base: 0,
        cluster_slots,
        full_ratio: 1.0,
        cpus: cpus as usize,
        slot_cache: 0,
    };
    let make = move |_: &[u8]| -> Box<dyn crate::swap::alloc::SlotAllocator> {
        Box::new(StagingAllocator::new(staging_first, staging_len))
    };
    let mut area = SwapArea::new(geometry, &make, Box::new(crate::swap::discard::NoDiscard));
    area.limit_usable(logical);
    // No reclamation cutoff: swap counts as full only when every slot the OS may use is in use.
    area.full_ratio = (logical as f64 - 0.5) / logical as f64;
    Ok((area, Box::new(backend)))
}

#[cfg(test)]
mod count_tests {
    use super::count_cache_only;
    use nandstack_core::Rng;

    /// The blocked count against a plain per-slot loop on seeded maps of every length up to a few
    /// blocks, with runs of swap-cache-only slots long enough to fill a block (128 of 128).
    #[test]
    fn blocked_count_agrees_with_a_plain_loop() {
        let values = [0u8, 0x80, 1, 0x81, 0x7f, 0xff];
        for seed in 0..20u64 {
            let mut rng = Rng::new(seed);
            for len in (0..600).chain([4096, 65_536 + 17]) {
                let dense = rng.chance(0.3);
                let map: Vec<u8> = (0..len)
                    .map(|_| {
                        if dense && rng.chance(0.95) {
                            0x80
                        } else {
                            values[rng.below(values.len() as u64) as usize]
                        }
                    })
                    .collect();
                let mut plain = 0u32;
                for &m in &map {
                    if m == 0x80 {
                        plain += 1;
                    }
                }
                assert_eq!(count_cache_only(&map), plain, "seed {seed}, {len} slots");
            }
        }
    }
}

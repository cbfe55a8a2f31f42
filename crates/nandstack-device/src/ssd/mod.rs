//! `BlockSsd`: a block-interface SSD — controller (write buffer, TRIM cost, background GC) + FTL + NAND
//! timing. It answers each host command with its completion time and never reaches back into the host.

mod config;
mod device;
pub mod engine;
mod queued;
mod schedule;

pub use config::{BackgroundGcConfig, ControllerConfig, FirmwareConfig};
pub use engine::{
    EngineChoice, EngineCounters, GcPageMoves, GcPreemptionConfig, SchedulerKind, SchedulingConfig,
    SuspensionConfig,
};

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use serde::Serialize;

use crate::cache::{Eviction, WriteBuffer};
use crate::device::Tag;
use crate::ftl::ops::FlashOp;
use crate::ftl::Ftl;
use crate::nand::{Timelines, TimingConfig};
use queued::copyback;

/// Host-visible counters of the controller (the FTL keeps the flash-side ones).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostCounters {
    pub write_requests: u64,
    pub read_requests: u64,
    pub trim_requests: u64,
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub trim_bytes: u64,
    /// Units read from the write buffer instead of flash.
    pub buffer_read_hit_units: u64,
    /// DISS CL-SDI: swap-range units read from the write buffer and dropped (never flushed).
    pub buffer_swap_dropped_units: u64,
    /// DISS SDR: swap-range registrations received.
    pub swap_range_registrations: u64,
    /// Unit writes that overwrote a unit still in the buffer (no flash write for the older data).
    pub buffer_absorbed_units: u64,
    /// Units evicted from the buffer to flash to make room.
    pub buffer_evicted_units: u64,
    /// Units written back by flushes.
    pub buffer_flushed_units: u64,
    /// Evictions where GC-aware replacement skipped the LRU unit because its die was in GC.
    pub buffer_gc_aware_skips: u64,
    /// 4 KiB units read and rewritten to widen writes to the firmware mapping unit.
    pub mapping_unit_merges: u64,
    /// Partial-unit writes merged into the buffer (each reads the unit's old data if it has any).
    pub buffer_partial_merges: u64,
    /// Controller CPU time spent on host commands, ns (firmware cost model).
    pub firmware_ns: u64,
}

#[derive(Clone)]
pub struct BlockSsd {
    pub ftl: Ftl,
    timelines: Option<Timelines>,
    buffer: Option<WriteBuffer>,
    cfg: ControllerConfig,
    ops: Vec<FlashOp>,
    /// Arrival of the last host data transfer per plane (a page program waits for its data).
    last_xfer: Vec<u64>,
    copyback: bool,
    page_bytes: u64,
    counters: HostCounters,
    /// When the device last finished host work (it is idle after this).
    busy_until: u64,
    bg_target: u32,
    /// When the controller CPU is next free (firmware cost model).
    cpu_free: u64,
    /// Placement-policy CPU time already charged.
    placement_ns_charged: u64,
    /// The queued (event-driven) engine, when a mechanism needs it (`queued.rs`).
    engine: Option<engine::Engine>,
    /// The command being placed through the queued engine: its tag, and whether it is a host command.
    cur: Option<(Option<Tag>, bool)>,
    /// Completions taken from the engine, not yet handed to the caller.
    stash: Vec<(Tag, u64)>,
    /// The idle period (its start) in which background GC found nothing more to collect.
    bg_gave_up: Option<u64>,
}

impl BlockSsd {
    pub fn new(mut ftl: Ftl, timing: &TimingConfig, cfg: ControllerConfig) -> Result<BlockSsd> {
        cfg.validate()?;
        let geo = ftl.geometry().clone();
        timing.validate_for(geo.cell_mode)?;
        let timelines = timing.enabled.then(|| Timelines::new(&geo, timing));
        ftl.record_ops(timing.enabled);
        let buffer = WriteBuffer::new(ftl.logical_units(), &cfg.write_buffer);
        let copyback = copyback(&cfg, ftl.config().gc.migration)?;
        let queued = cfg.queued_engine()?;
        if cfg.scheduling.multi_plane && timing.plane_parallelism {
            return Err(Error::config(
                "device.controller.scheduling.multi_plane",
                "device.timing.plane_parallelism already makes every plane independent; use one or the other",
            ));
        }
        let engine = (queued && timing.enabled)
            .then(|| engine::Engine::new(&geo, timing.plane_parallelism, &cfg, copyback));
        let bg_target = cfg
            .background_gc
            .target_free_blocks
            .unwrap_or(ftl.config().gc.stop_free_blocks + 2);
        Ok(BlockSsd {
            copyback,
            engine,
            cur: None,
            stash: Vec::new(),
            bg_gave_up: None,
            page_bytes: geo.page_size_bytes as u64,
            last_xfer: vec![0; geo.planes() as usize],
            timelines,
            buffer,
            cfg,
            ops: Vec::new(),
            counters: HostCounters::default(),
            busy_until: 0,
            bg_target,
            cpu_free: 0,
            placement_ns_charged: 0,
            ftl,
        })
    }

    pub fn counters(&self) -> &HostCounters {
        &self.counters
    }
    pub fn timelines(&self) -> Option<&Timelines> {
        self.timelines.as_ref()
    }
    pub fn timed(&self) -> bool {
        self.timelines.is_some()
    }
    pub fn logical_bytes(&self) -> u64 {
        self.ftl.logical_bytes()
    }
    pub fn buffered_units(&self) -> u32 {
        self.buffer.as_ref().map_or(0, |b| b.lru.len())
    }

    /// Reset host and FTL counters (after preconditioning).
    pub fn reset_counters(&mut self) {
        self.counters = HostCounters::default();
        self.ftl.reset_counters();
        // Preconditioning may have switched recording off; the measured phase is timed again.
        self.ftl.record_ops(self.timelines.is_some());
        if let Some(t) = self.timelines.as_mut() {
            t.array_busy_ns = 0;
            t.channel_busy_ns = 0;
        }
        if let Some(e) = self.engine.as_mut() {
            e.reset();
        }
        self.stash.clear();
        self.bg_gave_up = None;
    }

    /// WAF: flash page programs ÷ (host-written bytes ÷ page size).
    pub fn waf(&self) -> f64 {
        let host_pages = self.counters.write_bytes as f64 / self.page_bytes as f64;
        if host_pages == 0.0 {
            f64::NAN
        } else {
            self.ftl.counters().flash_program_pages as f64 / host_pages
        }
    }

    /// A command beyond the logical space fails before it changes anything (counters included).
    fn check_range(&self, what: &str, offset: u64, len: u64) -> Result<()> {
        let cap = self.logical_bytes();
        match offset.checked_add(len) {
            Some(end) if end <= cap => Ok(()),
            _ => Err(Error::OutOfRange(format!(
                "{what} of {len} bytes at byte {offset} is beyond the logical capacity of {cap} bytes"
            ))),
        }
    }

    /// Host write of `len` bytes at `offset`, arriving at `now` (ns). Returns the completion time.
    pub fn write(&mut self, offset: u64, len: u64, now: u64) -> Result<u64> {
        self.check_range("write", offset, len)?;
        self.idle_work(now)?;
        self.counters.write_requests += 1;
        self.counters.write_bytes += len;
        let (offset, len) = self.expand_to_mapping_unit(offset, len)?;
        let done = if self.buffer.is_some() {
            let scan_ns = self.buffered_write(offset, len, now)?;
            let ready = self.cpu(now, len, scan_ns);
            let dram = ready + self.buffer.as_ref().map_or(0, |b| b.dram_access_ns);
            self.place(ready, false, dram, 0)
        } else {
            self.ftl.write(offset, len)?;
            let ready = self.cpu(now, len, 0);
            self.place(ready, true, 0, 0)
        };
        self.note_done(done);
        Ok(done)
    }

    /// With a firmware mapping unit larger than 4 KiB (Cosmos+ maps 16 KiB slices), a write is widened to
    /// whole mapping units: the old data of every 4 KiB unit the host did not fully cover is read first
    /// (read-modify-write) and written back with the new data.
    fn expand_to_mapping_unit(&mut self, offset: u64, len: u64) -> Result<(u64, u64)> {
        let mu = self.cfg.mapping_unit_bytes;
        if mu <= MAPPING_UNIT_BYTES || len == 0 {
            return Ok((offset, len));
        }
        let end = offset.saturating_add(len);
        let (start, stop) = (
            offset / mu * mu,
            end.div_ceil(mu)
                .saturating_mul(mu)
                .min(self.ftl.logical_bytes()),
        );
        if start >= stop || end > self.ftl.logical_bytes() {
            return Ok((offset, len)); // out of range: the FTL reports it
        }
        for u in start / MAPPING_UNIT_BYTES..stop / MAPPING_UNIT_BYTES {
            let (a, b) = (u * MAPPING_UNIT_BYTES, (u + 1) * MAPPING_UNIT_BYTES);
            let covered = offset <= a && b <= end;
            let buffered = self
                .buffer
                .as_ref()
                .is_some_and(|buf| buf.lru.contains(u as u32));
            if !covered && !buffered {
                self.ftl.read_for_merge(u as u32)?;
                self.counters.mapping_unit_merges += 1;
            }
        }
        Ok((start, stop - start))
    }

    /// Occupy the controller CPU for a command arriving at `now`; returns when its flash work may start.
    fn cpu(&mut self, now: u64, len: u64, extra_ns: u64) -> u64 {
        let placement = self.ftl.placement_firmware_ns();
        let fw = &self.cfg.firmware;
        let cost = fw.ns_per_request
            + fw.ns_per_page * len.div_ceil(MAPPING_UNIT_BYTES)
            + (placement - self.placement_ns_charged)
            + extra_ns;
        self.placement_ns_charged = placement;
        if cost == 0 || self.timelines.is_none() {
            return now;
        }
        self.counters.firmware_ns += cost;
        let start = now.max(self.cpu_free);
        self.cpu_free = start + cost;
        self.cpu_free
    }

    /// Cache hints for the requests ahead (`Device::prefetch`). Without a write buffer the FTL's pipeline
    /// follows the host's units. With one, host writes land in the buffer and the FTL rewrites the
    /// buffer's evictions instead: the host's units get their buffer index entry and mapping entry (reads,
    /// read-modify-write), and the FTL's pipeline follows the next evictions (the least recently used
    /// units: the nearest `EVICT_STAGE` of them for its last stage, the next for its middle one, the next
    /// for its first). Pure hints: no simulated state changes.
    #[inline]
    fn prefetch_ahead(&self, ahead: [Option<u64>; 3]) {
        let Some(buf) = self.buffer.as_ref() else {
            self.ftl.prefetch(ahead);
            return;
        };
        if let Some(o) = ahead[2] {
            buf.lru
                .prefetch((o / MAPPING_UNIT_BYTES).min(u32::MAX as u64) as u32);
            self.ftl.prefetch([None, None, ahead[2]]);
        }
        const EVICT_STAGE: usize = 4;
        let mut next = [None; 3 * EVICT_STAGE];
        for (slot, k) in next.iter_mut().zip(buf.lru.iter_lru()) {
            *slot = Some(k as u64);
        }
        for k in next[2 * EVICT_STAGE..].iter().flatten() {
            buf.lru.prefetch(*k as u32); // its index entry, cleared when it leaves
        }
        for j in 0..EVICT_STAGE {
            self.ftl
                .prefetch_units([next[j], next[EVICT_STAGE + j], next[2 * EVICT_STAGE + j]]);
        }
    }

    /// Choose the unit to evict: LRU, or (GC-aware) the first of the `scan` least recently used units
    /// whose die is not in GC. Returns the unit and the CPU time spent scanning.
    fn pick_eviction(&mut self, now: u64) -> (u32, u64) {
        let buf = self.buffer.as_ref().expect("buffered");
        let lru = buf
            .lru
            .lru_key()
            .expect("a full buffer has a least recent unit");
        let Some(tl) = self
            .timelines
            .as_ref()
            .filter(|_| buf.eviction == Eviction::GcAware)
        else {
            return (lru, 0);
        };
        let mut scanned = 0;
        for k in buf.lru.iter_lru().take(buf.scan as usize) {
            scanned += 1;
            if let Some(p) = self.ftl.static_plane_of(k) {
                if tl.in_gc(p, now) {
                    continue;
                }
            }
            if k != lru {
                self.counters.buffer_gc_aware_skips += 1;
            }
            return (k, scanned * buf.ns_per_scanned_entry);
        }
        (lru, scanned * buf.ns_per_scanned_entry)
    }

    /// Buffer the units of a write (evicting as needed); returns the CPU time of eviction scans.
    fn buffered_write(&mut self, offset: u64, len: u64, now: u64) -> Result<u64> {
        if offset
            .checked_add(len)
            .is_none_or(|e| e > self.ftl.logical_bytes())
            || len == 0
        {
            // Let the FTL produce the canonical out-of-range error.
            return self.ftl.write(offset, len).map(|_| 0);
        }
        let mut scan_ns = 0;
        let end = offset + len;
        let first = offset / MAPPING_UNIT_BYTES;
        let last = (end - 1) / MAPPING_UNIT_BYTES;
        for u in first..=last {
            let lpn = u as u32;
            if self.buffer.as_mut().expect("buffered").lru.touch(lpn, true) {
                self.counters.buffer_absorbed_units += 1;
                continue;
            }
            let unit_start = u * MAPPING_UNIT_BYTES;
            let partial = offset > unit_start || end < unit_start + MAPPING_UNIT_BYTES;
            if partial {
                self.counters.buffer_partial_merges += 1;
                self.ftl.read_for_merge(lpn)?;
            }
            if self.buffer.as_ref().expect("buffered").lru.is_full() {
                let (victim, ns) = self.pick_eviction(now);
                scan_ns += ns;
                self.buffer.as_mut().expect("buffered").lru.remove(victim);
                self.counters.buffer_evicted_units += 1;
                self.ftl
                    .write(victim as u64 * MAPPING_UNIT_BYTES, MAPPING_UNIT_BYTES)?;
            }
            self.buffer
                .as_mut()
                .expect("buffered")
                .lru
                .insert(lpn, true);
        }
        Ok(scan_ns)
    }

    /// Host read. Buffered units come from DRAM; contiguous runs of the rest from flash.
    pub fn read(&mut self, offset: u64, len: u64, now: u64) -> Result<u64> {
        self.check_range("read", offset, len)?;
        self.idle_work(now)?;
        self.counters.read_requests += 1;
        self.counters.read_bytes += len;
        let mut done = now;
        if let Some(buf) = self.buffer.as_ref() {
            if offset
                .checked_add(len)
                .is_none_or(|e| e > self.ftl.logical_bytes())
                || len == 0
            {
                self.ftl.read(offset, len)?;
            }
            let dram = buf.dram_access_ns;
            let first = offset / MAPPING_UNIT_BYTES;
            let last = (offset + len - 1) / MAPPING_UNIT_BYTES;
            let mut run: Option<u64> = None;
            for u in first..=last + 1 {
                let hit = u <= last
                    && self
                        .buffer
                        .as_ref()
                        .is_some_and(|b| b.lru.contains(u as u32));
                if u <= last && hit {
                    self.counters.buffer_read_hit_units += 1;
                    done = done.max(now + dram);
                    if self.ftl.invalidates_on_read(u as u32) {
                        // CL-SDI: the swapped-in unit is marked clean: dropped, never flushed.
                        self.buffer.as_mut().expect("buffered").lru.remove(u as u32);
                        self.counters.buffer_swap_dropped_units += 1;
                        self.ftl.drop_swapped_in(u as u32);
                    }
                }
                if u > last || hit {
                    if let Some(s) = run.take() {
                        self.ftl
                            .read(s * MAPPING_UNIT_BYTES, (u - s) * MAPPING_UNIT_BYTES)?;
                    }
                } else if run.is_none() {
                    run = Some(u);
                }
            }
        } else {
            self.ftl.read(offset, len)?;
        }
        let ready = self.cpu(now, len, 0);
        let done = self.place(ready, true, done, 0);
        self.note_done(done);
        Ok(done)
    }

    /// Host TRIM: drops covered units from the buffer, unmaps them in the FTL; costs the per-command
    /// overhead, a lookup per entry, and translation reads on mapping-cache misses.
    pub fn trim(&mut self, offset: u64, len: u64, now: u64) -> Result<u64> {
        self.check_range("trim", offset, len)?;
        self.idle_work(now)?;
        self.counters.trim_requests += 1;
        self.counters.trim_bytes += len;
        let first = offset.div_ceil(MAPPING_UNIT_BYTES);
        let end = offset.saturating_add(len) / MAPPING_UNIT_BYTES;
        if let Some(buf) = self.buffer.as_mut() {
            for u in first..end.min(self.ftl.logical_units() as u64) {
                buf.lru.remove(u as u32);
            }
        }
        self.ftl.trim(offset, len)?;
        let entries = end.saturating_sub(first);
        let overhead = (self.cfg.trim_command_overhead_us * 1000.0).round() as u64
            + entries * self.cfg.trim_entry_lookup_ns;
        let ready = self.cpu(now, 0, 0);
        let post = if self.timed() { overhead } else { 0 };
        let done = self.place(ready, true, ready, post);
        self.note_done(done);
        Ok(done)
    }

    /// DISS SDR: the host registers its swap partition (a vendor admin command: the controller's
    /// per-command overhead, no flash work). The FTL separates and invalidates swap data as configured.
    pub fn register_swap_range(&mut self, offset: u64, len: u64, now: u64) -> Result<u64> {
        self.check_range("register_swap_range", offset, len)?;
        self.ftl.register_swap_range(offset, len)?;
        self.counters.swap_range_registrations += 1;
        let ready = self.cpu(now, 0, 0);
        if self.engine.is_some() {
            return Ok(self.place(ready, true, ready.max(now), 0));
        }
        Ok(ready.max(now))
    }

    /// Write back the whole buffer and pad open pages (FLUSH command; end of run). Returns completion.
    pub fn flush(&mut self, now: u64) -> Result<u64> {
        if let Some(buf) = self.buffer.as_mut() {
            let keys = buf.lru.keys_lru_first();
            for k in keys {
                self.buffer.as_mut().expect("buffered").lru.remove(k);
                self.counters.buffer_flushed_units += 1;
                self.ftl
                    .write(k as u64 * MAPPING_UNIT_BYTES, MAPPING_UNIT_BYTES)?;
            }
        }
        self.ftl.flush();
        let done = self.place(now, true, 0, 0);
        self.note_done(done);
        Ok(done)
    }

    /// Background GC: if the device has been idle past the threshold before `now`, collect victims in
    /// the idle window (a victim already started delays the arriving request).
    fn idle_work(&mut self, now: u64) -> Result<()> {
        let bg = &self.cfg.background_gc;
        // The queued engine runs its own idle detector (`queued.rs`).
        if !bg.enabled || self.timelines.is_none() || self.engine.is_some() {
            return Ok(());
        }
        let mut t = self.busy_until + (bg.idle_threshold_us * 1000.0).round() as u64;
        while t < now {
            if !self.ftl.background_collect(self.bg_target)? {
                break;
            }
            t = self.schedule(t, true).max(t + 1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod queued_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;

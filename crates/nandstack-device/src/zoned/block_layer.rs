//! `ZonedBlockLayer`: a random-write block device on top of a zoned device, as Linux dm-zoned gives one —
//! host software, modelled as a [`Device`] wrapping the zoned [`Device`] so any block workload (synthetic,
//! trace, stand-in) can drive a zoned SSD.
//!
//! * 4 KiB mapping (logical unit → zone and offset), kept in host memory. Host writes append at the write
//!   pointer of one open host zone; a unit's older copy becomes invalid. Each written unit carries its
//!   logical unit + 1 as per-LBA metadata, which every read checks (the reverse map, on the device).
//! * Reclamation is the host's: when fewer than `gc_low_free_zones` zones are free, before a host write,
//!   victims chosen by one of the block FTL's victim policies (`ftl::gc`; a zone is a "block") have their
//!   valid units read, rewritten at the write pointer of a separate GC zone, and are reset — until
//!   `gc_high_free_zones` are free. The host write waits for it (foreground, like dm-zoned's reclaim under
//!   pressure). A zone whose data all became invalid is reset at once, without GC.
//! * TRIM unmaps in host memory only (no device command). Flush passes through.
//!
//! Invariant (checked by [`Device::check_invariants`]): every mapped logical unit's location maps back to
//! it, zone valid counts equal the units mapped into them, free zones hold nothing.

use std::collections::VecDeque;

use nandstack_core::{Error, Nanos, Result, Rng, MAPPING_UNIT_BYTES};
use serde::Serialize;

use super::config::{BlockLayerConfig, ZonedParams};
use crate::device::{
    unsupported, Command, Completion, Device, DeviceKind, DeviceStats, ZoneCommand,
};
use crate::ftl::blocks::{BlockState, BlockTable, NONE};
use crate::ftl::gc::{self, Scope, VictimPolicy};

const U: u64 = MAPPING_UNIT_BYTES;

/// What the layer did (4 KiB units unless named).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LayerCounters {
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    pub host_units_written: u64,
    pub gc_invocations: u64,
    pub gc_victim_zones: u64,
    pub gc_migrated_units: u64,
    /// Zones reset because all their data became invalid (no migration).
    pub empty_zone_resets: u64,
    pub trimmed_units: u64,
    pub unmapped_read_units: u64,
    /// Device commands the layer issued (reads, writes, resets, flushes).
    pub device_commands: u64,
}

/// The translation layer.
pub struct ZonedBlockLayer {
    inner: Box<dyn Device>,
    zone_size: u64,
    /// Writable units per zone.
    cap: u32,
    zones: u32,
    logical_units: u64,
    /// Logical unit → physical slot (`zone × cap + offset`), or NONE.
    l2p: Vec<u32>,
    /// Physical slot → logical unit that was written there (valid iff `l2p` points back).
    p2l: Vec<u32>,
    table: BlockTable,
    victim: gc::Victims,
    victim_name: &'static str,
    rng: Rng,
    free: VecDeque<u32>,
    /// Units written into each zone (its write pointer, in units).
    wp: Vec<u32>,
    /// Open zone of host writes and of GC rewrites.
    open: [u32; 2],
    low: u32,
    high: u32,
    seal_seq: u64,
    clock: u64,
    verify: bool,
    /// Inside `precondition`: device commands go through `Device::precondition` (untimed).
    untimed: bool,
    counters: LayerCounters,
}

impl ZonedBlockLayer {
    /// The logical capacity a config gives (bytes).
    pub fn logical_bytes(p: &ZonedParams, cfg: &BlockLayerConfig) -> Result<u64> {
        Ok(Self::check(p, cfg)? * U)
    }

    fn check(p: &ZonedParams, cfg: &BlockLayerConfig) -> Result<u64> {
        let key = |k: &str| format!("device.zoned.block_layer.{k}");
        let op = cfg.over_provisioning;
        if !(op.is_finite() && (0.0..=10.0).contains(&op)) {
            return Err(Error::config(
                key("over_provisioning"),
                format!("is {op}: must be in [0, 10]"),
            ));
        }
        if cfg.gc_low_free_zones < 1 || cfg.gc_high_free_zones < cfg.gc_low_free_zones {
            return Err(Error::config(
                key("gc_high_free_zones"),
                format!(
                    "low {} and high {}: need 1 ≤ gc_low_free_zones ≤ gc_high_free_zones",
                    cfg.gc_low_free_zones, cfg.gc_high_free_zones
                ),
            ));
        }
        if let crate::ftl::VictimConfig::DChoices { d } = cfg.victim {
            if d == 0 || d > p.zones {
                return Err(Error::config(
                    key("victim.d"),
                    format!(
                        "is {d}: must be in [1, {}] (the zones GC samples from)",
                        p.zones
                    ),
                ));
            }
        }
        let cap = p.zone_capacity_bytes / U;
        let physical = p.zones as u64 * cap;
        if physical >= NONE as u64 {
            return Err(Error::config(
                "device.zoned.zones",
                format!("{physical} units of 4 KiB: the block layer maps at most 2^32 − 1"),
            ));
        }
        let logical = (physical as f64 / (1.0 + op)).floor() as u64;
        // Data zones + the free reserve + the open host and GC zones must fit.
        let needed = logical.div_ceil(cap) + cfg.gc_high_free_zones as u64 + 2;
        if logical == 0 || needed > p.zones as u64 {
            return Err(Error::config(
                key("over_provisioning"),
                format!(
                    "is {op}: {logical} logical units need {needed} of the {} zones (data, {} free for GC, the \
                     open host and GC zones); raise it or lower gc_high_free_zones",
                    p.zones, cfg.gc_high_free_zones
                ),
            ));
        }
        Ok(logical)
    }

    /// Wrap a zoned device (`inner`, built from `p`).
    pub fn new(
        inner: Box<dyn Device>,
        p: &ZonedParams,
        cfg: &BlockLayerConfig,
        seed: u64,
    ) -> Result<ZonedBlockLayer> {
        let logical = Self::check(p, cfg)?;
        let cap = (p.zone_capacity_bytes / U) as u32;
        let table = BlockTable::new(p.zones, p.zones, cap);
        let victim = gc::build(&cfg.victim, 1, &table);
        Ok(ZonedBlockLayer {
            inner,
            zone_size: p.zone_size_bytes,
            cap,
            zones: p.zones,
            logical_units: logical,
            l2p: vec![NONE; logical as usize],
            p2l: vec![NONE; p.zones as usize * cap as usize],
            victim_name: victim.name(),
            victim,
            table,
            rng: Rng::derive(seed, 0x7a6e),
            free: (0..p.zones).collect(),
            wp: vec![0; p.zones as usize],
            open: [NONE; 2],
            low: cfg.gc_low_free_zones,
            high: cfg.gc_high_free_zones,
            seal_seq: 0,
            clock: 0,
            verify: false,
            untimed: false,
            counters: LayerCounters::default(),
        })
    }

    /// One device command (untimed during preconditioning).
    fn issue(&mut self, at: u64, cmd: Command<'_>) -> Result<Completion> {
        self.counters.device_commands += 1;
        if self.untimed {
            self.inner.precondition(cmd)?;
            Ok(Completion::at(Nanos(at)))
        } else {
            self.inner.submit(Nanos(at), cmd)
        }
    }

    fn units(&self, what: &str, offset: u64, len: u64) -> Result<(u64, u64)> {
        let cap = self.logical_units * U;
        match offset.checked_add(len) {
            Some(end) if end <= cap && len > 0 => {
                let first = offset / U;
                Ok((first, end.div_ceil(U) - first))
            }
            _ => Err(Error::OutOfRange(format!(
                "{what} of {len} bytes at byte {offset}: the block layer's logical capacity is {cap} bytes"
            ))),
        }
    }

    /// Drop the current copy of `lpn`; a sealed zone left empty is reset at once.
    fn invalidate(&mut self, lpn: u32, at: u64) -> Result<u64> {
        let slot = self.l2p[lpn as usize];
        if slot == NONE {
            return Ok(at);
        }
        self.l2p[lpn as usize] = NONE;
        let z = slot / self.cap;
        self.table.valid[z as usize] -= 1;
        if self.table.state[z as usize] == BlockState::Sealed {
            self.victim.on_invalidated(z, &self.table);
            if self.table.valid[z as usize] == 0 {
                self.victim.remove(z, &self.table);
                self.counters.empty_zone_resets += 1;
                return self.reset_zone(z, at);
            }
        }
        Ok(at)
    }

    fn reset_zone(&mut self, z: u32, at: u64) -> Result<u64> {
        let done = self
            .issue(at, Command::Zone(ZoneCommand::Reset { zone: z }))?
            .done
            .0;
        self.table.state[z as usize] = BlockState::Free;
        self.table.valid[z as usize] = 0;
        self.table.written[z as usize] = 0;
        self.table.erase_count[z as usize] += 1;
        self.wp[z as usize] = 0;
        self.free.push_back(z);
        Ok(done)
    }

    /// Append `lpns` (in order) through stream `s` (0 host, 1 GC), issued at `at`; returns the completion.
    fn append(&mut self, s: usize, lpns: &[u32], at: u64) -> Result<u64> {
        let mut done = at;
        let mut i = 0;
        while i < lpns.len() {
            if self.open[s] == NONE {
                let z = self.free.pop_front().ok_or_else(|| {
                    Error::DeviceFull(format!(
                        "zoned block layer: no free zone for {} writes ({} zones, {} free)",
                        if s == 0 { "host" } else { "GC" },
                        self.zones,
                        self.free.len()
                    ))
                })?;
                self.table.state[z as usize] = BlockState::Open;
                self.open[s] = z;
            }
            let z = self.open[s];
            let room = (self.cap - self.wp[z as usize]) as usize;
            let n = room.min(lpns.len() - i);
            let chunk = &lpns[i..i + n];
            let start = self.wp[z as usize];
            let meta: Vec<u64> = chunk.iter().map(|&l| l as u64 + 1).collect();
            let offset = z as u64 * self.zone_size + start as u64 * U;
            let c = self.issue(
                at,
                Command::Write {
                    offset,
                    len: n as u64 * U,
                    meta: &meta,
                },
            )?;
            done = done.max(c.done.0);
            for (k, &lpn) in chunk.iter().enumerate() {
                let slot = z * self.cap + start + k as u32;
                self.l2p[lpn as usize] = slot;
                self.p2l[slot as usize] = lpn;
            }
            self.table.valid[z as usize] += n as u32;
            self.wp[z as usize] += n as u32;
            self.table.written[z as usize] = self.wp[z as usize];
            if self.wp[z as usize] == self.cap {
                self.open[s] = NONE;
                self.table.state[z as usize] = BlockState::Sealed;
                self.seal_seq += 1;
                self.table.sealed_seq[z as usize] = self.seal_seq;
                self.victim.on_sealed(z, &self.table);
            }
            i += n;
        }
        Ok(done)
    }

    /// Foreground GC before a host write at `at`: returns when the host write may proceed.
    fn collect(&mut self, at: u64) -> Result<u64> {
        if self.free.len() >= self.low as usize {
            return Ok(at);
        }
        self.counters.gc_invocations += 1;
        let mut t = at;
        while self.free.len() < self.high as usize {
            let Some(v) = self
                .victim
                .select(Scope::Device, &self.table, self.clock, &mut self.rng)
            else {
                break;
            };
            self.table.state[v as usize] = BlockState::Victim;
            self.counters.gc_victim_zones += 1;
            // Valid units, in zone order; read in contiguous runs.
            let base = v * self.cap;
            let live: Vec<u32> = (0..self.cap)
                .filter(|&o| {
                    let l = self.p2l[(base + o) as usize];
                    l != NONE && self.l2p[l as usize] == base + o
                })
                .collect();
            let mut read_done = t;
            let mut k = 0;
            while k < live.len() {
                let mut e = k + 1;
                while e < live.len() && live[e] == live[e - 1] + 1 {
                    e += 1;
                }
                let offset = v as u64 * self.zone_size + live[k] as u64 * U;
                let c = self.issue(t, Command::read(offset, (e - k) as u64 * U))?;
                if self.verify && !self.untimed {
                    for (j, m) in c.meta.iter().enumerate() {
                        let want = self.p2l[(base + live[k + j]) as usize] as u64 + 1;
                        if *m != want {
                            return Err(Error::Invariant(format!(
                                "zoned block layer: zone {v} offset {} holds unit {} by its metadata, the map says {}",
                                live[k + j],
                                m.wrapping_sub(1),
                                want - 1
                            )));
                        }
                    }
                }
                read_done = read_done.max(c.done.0);
                k = e;
            }
            let lpns: Vec<u32> = live
                .iter()
                .map(|&o| self.p2l[(base + o) as usize])
                .collect();
            // The copies in the victim stop counting as it is emptied.
            self.table.valid[v as usize] = 0;
            let write_done = self.append(1, &lpns, read_done)?;
            self.counters.gc_migrated_units += lpns.len() as u64;
            t = self.reset_zone(v, write_done)?;
        }
        Ok(t)
    }

    fn host_write(&mut self, at: u64, offset: u64, len: u64) -> Result<u64> {
        let (first, count) = self.units("write", offset, len)?;
        self.counters.write_requests += 1;
        self.counters.write_bytes += len;
        let mut t = self.collect(at)?;
        let mut lpns = Vec::with_capacity(count as usize);
        for l in first..first + count {
            t = t.max(self.invalidate(l as u32, at)?);
            lpns.push(l as u32);
        }
        self.clock += count;
        self.counters.host_units_written += count;
        self.append(0, &lpns, t)
    }

    fn host_read(&mut self, at: u64, offset: u64, len: u64) -> Result<u64> {
        let (first, count) = self.units("read", offset, len)?;
        self.counters.read_requests += 1;
        self.counters.read_bytes += len;
        let mut done = at;
        let mut l = first;
        while l < first + count {
            let slot = self.l2p[l as usize];
            if slot == NONE {
                self.counters.unmapped_read_units += 1;
                l += 1;
                continue;
            }
            // A run of units stored contiguously in one zone: one device read.
            let mut n = 1u64;
            while l + n < first + count
                && self.l2p[(l + n) as usize] == slot + n as u32
                && (slot + n as u32) / self.cap == slot / self.cap
            {
                n += 1;
            }
            let z = slot / self.cap;
            let offset = z as u64 * self.zone_size + (slot % self.cap) as u64 * U;
            let c = self.issue(at, Command::read(offset, n * U))?;
            if self.verify && !self.untimed {
                for (j, m) in c.meta.iter().enumerate() {
                    if *m != l + j as u64 + 1 {
                        return Err(Error::Invariant(format!(
                            "zoned block layer: a read of logical unit {} returned the data of unit {}",
                            l + j as u64,
                            m.wrapping_sub(1)
                        )));
                    }
                }
            }
            done = done.max(c.done.0);
            l += n;
        }
        Ok(done)
    }

    fn host_trim(&mut self, at: u64, offset: u64, len: u64) -> Result<u64> {
        self.units("trim", offset, len)?;
        self.counters.trim_requests += 1;
        self.counters.trim_bytes += len;
        let (first, end) = (offset.div_ceil(U), (offset + len) / U);
        let mut done = at;
        for l in first..end {
            if self.l2p[l as usize] != NONE {
                self.counters.trimmed_units += 1;
            }
            done = done.max(self.invalidate(l as u32, at)?);
        }
        Ok(done)
    }

    pub fn counters(&self) -> &LayerCounters {
        &self.counters
    }
}

impl Device for ZonedBlockLayer {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Zoned
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn capacity_bytes(&self) -> u64 {
        self.logical_units * U
    }
    fn submit(&mut self, at: Nanos, cmd: Command<'_>) -> Result<Completion> {
        let done = match cmd {
            Command::Write { offset, len, .. } => self.host_write(at.0, offset, len)?,
            Command::Read { offset, len } => self.host_read(at.0, offset, len)?,
            Command::Trim { offset, len } => self.host_trim(at.0, offset, len)?,
            Command::Flush => self.issue(at.0, Command::Flush)?.done.0,
            other => return Err(unsupported(DeviceKind::Zoned, &other)),
        };
        Ok(Completion::at(Nanos(done.max(at.0))))
    }
    fn stats(&self) -> DeviceStats {
        let d = self.inner.stats();
        let c = &self.counters;
        DeviceStats {
            host_read_requests: c.read_requests,
            host_write_requests: c.write_requests,
            host_trim_requests: c.trim_requests,
            host_read_bytes: c.read_bytes,
            host_write_bytes: c.write_bytes,
            host_trim_bytes: c.trim_bytes,
            gc_migrated_units: c.gc_migrated_units,
            ..d
        }
    }
    fn details(&self) -> serde_json::Value {
        serde_json::json!({
            "block_layer": {
                "logical_bytes": self.logical_units * U,
                "zones": self.zones,
                "free_zones": self.free.len(),
                "victim_policy": self.victim_name,
                "counters": self.counters,
            },
            "zoned": self.inner.details(),
        })
    }
    fn reset_counters(&mut self) {
        self.counters = LayerCounters::default();
        self.inner.reset_counters();
    }
    fn enable_verification(&mut self) {
        self.verify = true;
        self.inner.enable_verification();
    }
    fn check_invariants(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(format!("zoned block layer: {m}")));
        let mut valid = vec![0u32; self.zones as usize];
        for (l, &slot) in self.l2p.iter().enumerate() {
            if slot == NONE {
                continue;
            }
            if self.p2l[slot as usize] != l as u32 {
                return bad(format!(
                    "unit {l} maps to slot {slot}, which belongs to {}",
                    self.p2l[slot as usize]
                ));
            }
            let z = slot / self.cap;
            if slot % self.cap >= self.wp[z as usize] {
                return bad(format!("unit {l} maps past zone {z}'s write pointer"));
            }
            valid[z as usize] += 1;
        }
        for (z, &mapped) in valid.iter().enumerate().take(self.zones as usize) {
            let counted = if self.table.state[z] == BlockState::Victim {
                0
            } else {
                mapped
            };
            if counted != self.table.valid[z] || mapped != self.table.valid[z] {
                return bad(format!(
                    "zone {z}: {mapped} valid units mapped, {} counted",
                    self.table.valid[z]
                ));
            }
        }
        for &z in &self.free {
            if self.wp[z as usize] != 0 || self.table.state[z as usize] != BlockState::Free {
                return bad(format!("free zone {z} is not empty"));
            }
        }
        self.inner.check_invariants()
    }
    fn verify_all(&self) -> Result<()> {
        self.check_invariants()?;
        self.inner.verify_all()
    }
    fn precondition(&mut self, cmd: Command<'_>) -> Result<()> {
        self.untimed = true;
        let r = self.submit(Nanos::ZERO, cmd);
        self.untimed = false;
        r.map(|_| ())
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![("free_zones", self.free.len() as f64)]
    }
}

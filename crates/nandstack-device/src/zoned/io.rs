//! Host data commands: write, zone append, read, flush. Checks run in the order alignment, range,
//! metadata length, zone state, write pointer, capacity, open/active resources; only a command that passed
//! all of them opens a zone and moves data (a failed command changes nothing).

use nandstack_core::{Error, Nanos, Result, MAPPING_UNIT_BYTES};

use super::{FlushMode, ZonedSsd};
use crate::device::{Completion, ZoneState};

const UNIT: u64 = MAPPING_UNIT_BYTES;

impl ZonedSsd {
    /// Units of a length: not zero, whole logical blocks.
    fn len_units(offset: u64, len: u64) -> Result<u64> {
        if len == 0 {
            return Err(Error::OutOfRange(format!(
                "zero-length request at byte {offset}"
            )));
        }
        if !offset.is_multiple_of(UNIT) || !len.is_multiple_of(UNIT) {
            return Err(Error::Protocol(format!(
                "offset {offset} / length {len} not aligned to the 4096-byte logical block"
            )));
        }
        Ok(len / UNIT)
    }

    /// First 4 KiB unit and unit count of a byte range, checked against alignment and the LBA space.
    fn units(&self, offset: u64, len: u64) -> Result<(u64, u64)> {
        Self::len_units(offset, len)?;
        let space = self.params.zones as u64 * self.params.zone_size_bytes;
        if offset.checked_add(len).is_none_or(|e| e > space) {
            return Err(Error::OutOfRange(format!(
                "bytes {offset}+{len} beyond the device's {space} bytes"
            )));
        }
        Ok((offset / UNIT, len / UNIT))
    }

    fn check_meta(meta: &[u64], units: u64) -> Result<()> {
        if !meta.is_empty() && meta.len() as u64 != units {
            return Err(Error::Protocol(format!(
                "metadata has {} words for {units} units",
                meta.len()
            )));
        }
        Ok(())
    }

    /// A write of `n` units at unit `u` of zone `z` stays within the capacity.
    fn check_capacity(&self, z: u32, u: u64, n: u64) -> Result<()> {
        let cap = self.layout.zone_units as u64;
        if u + n > cap {
            return Err(Error::Protocol(format!(
                "zone {z}: zone boundary crossed ({n} units at unit {u} of a zone with capacity {cap})"
            )));
        }
        Ok(())
    }

    pub(super) fn host_write(
        &mut self,
        at: u64,
        offset: u64,
        len: u64,
        meta: &[u64],
    ) -> Result<Completion> {
        let (first, n) = self.units(offset, len)?;
        Self::check_meta(meta, n)?;
        let z = (first / self.layout.size_units) as u32;
        let u = first % self.layout.size_units;
        self.table.check_writable(z)?;
        let wp = self.table.zones[z as usize].written as u64;
        if u != wp {
            return Err(Error::Protocol(format!(
                "zone {z}: write not at write pointer (unit {u} of the zone, write pointer at unit {wp})"
            )));
        }
        self.check_capacity(z, u, n)?;
        self.table.open_for_write(z)?;
        let done = self.put_units(z, n as u32, meta, at);
        self.counters.host_write_requests += 1;
        self.counters.host_write_bytes += len;
        Ok(Completion::at(Nanos(done)))
    }

    pub(super) fn append(&mut self, at: u64, z: u32, len: u64, meta: &[u64]) -> Result<Completion> {
        self.zone_index(z)?;
        let start = z as u64 * self.params.zone_size_bytes;
        let n = Self::len_units(start, len)?;
        Self::check_meta(meta, n)?;
        self.table.check_writable(z)?;
        let wp = self.table.zones[z as usize].written as u64;
        self.check_capacity(z, wp, n)?;
        self.table.open_for_write(z)?;
        let done = self.put_units(z, n as u32, meta, at);
        self.counters.host_write_requests += 1;
        self.counters.host_write_bytes += len;
        self.counters.appends += 1;
        Ok(Completion {
            done: Nanos(done),
            written_at: Some(start + wp * UNIT),
            ..Completion::default()
        })
    }

    /// Append `n` checked units at zone `z`'s write pointer: each crosses the channel into its die's
    /// register, each page that fills is programmed. Returns when the data is in and those pages are
    /// programmed.
    fn put_units(&mut self, z: u32, n: u32, meta: &[u64], at: u64) -> u64 {
        let upp = self.layout.units_per_page;
        let mut done = at;
        for k in 0..n {
            let zone = &mut self.table.zones[z as usize];
            let plane = self.layout.page(z, zone.written / upp).plane;
            if let Some(tl) = self.timelines.as_mut() {
                let arrival = tl.transfer_in(plane, at, UNIT);
                zone.tail_ready_ns = zone.tail_ready_ns.max(arrival);
                done = done.max(arrival);
            }
            zone.meta.push(meta.get(k as usize).copied().unwrap_or(0));
            if let Some(v) = self.versions.as_mut() {
                v.next += 1;
                zone.versions.push(v.next);
            }
            zone.written += 1;
            if zone.written.is_multiple_of(upp) {
                done = done.max(self.program_tail(z, at, 0));
                self.counters.host_program_pages += 1;
            }
        }
        if self.table.zones[z as usize].written == self.layout.zone_units {
            self.table.mark_full(z);
        }
        done
    }

    pub(super) fn host_read(&mut self, at: u64, offset: u64, len: u64) -> Result<Completion> {
        let (first, n) = self.units(offset, len)?;
        let size = self.layout.size_units;
        let (z0, z1) = (first / size, (first + n - 1) / size);
        if z0 != z1 && !self.params.cross_zone_reads {
            return Err(Error::Protocol(format!(
                "zone {z0}: zone boundary crossed (a read of {n} units from unit {} reaches zone {z1})",
                first % size
            )));
        }
        for z in z0..=z1 {
            if self.table.zones[z as usize].state == ZoneState::Offline {
                return Err(Error::Protocol(format!("zone {z}: zone is offline")));
            }
        }
        let mut c = Completion::at(Nanos(at));
        c.meta.reserve(n as usize);
        let mut done = at;
        for z in z0..=z1 {
            let lo = first.max(z * size) - z * size;
            let hi = (first + n).min((z + 1) * size) - z * size;
            done = done.max(self.read_zone(z as u32, lo, hi, at, &mut c.meta)?);
        }
        self.counters.host_read_requests += 1;
        self.counters.host_read_bytes += len;
        c.done = Nanos(done);
        Ok(c)
    }

    /// Read units `[lo, hi)` of zone `z` (relative to the zone start; may reach past the capacity).
    fn read_zone(&mut self, z: u32, lo: u64, hi: u64, at: u64, meta: &mut Vec<u64>) -> Result<u64> {
        let upp = self.layout.units_per_page as u64;
        let zone = &self.table.zones[z as usize];
        let written = zone.written as u64;
        let on_flash = written.min(zone.programmed as u64 * upp);
        let mut done = at;
        let mut u = lo;
        while u < hi.min(on_flash) {
            let page = u / upp;
            let end = ((page + 1) * upp).min(hi).min(on_flash);
            let plane = self.layout.page(z, page as u32).plane;
            if let Some(tl) = self.timelines.as_mut() {
                done = done.max(tl.read(plane, at, (end - u) * UNIT));
            }
            self.counters.flash_read_pages += 1;
            for v in u..end {
                self.check_version(z, v as u32)?;
            }
            u = end;
        }
        for v in lo..hi {
            meta.push(zone.meta.get(v as usize).copied().unwrap_or(0));
        }
        let buffered = written.clamp(lo, hi) - on_flash.clamp(lo, hi);
        self.counters.buffer_read_units += buffered;
        self.counters.unwritten_read_units += hi - written.clamp(lo, hi);
        Ok(done)
    }

    /// Flush: with `flush = pad`, program every zone's buffered tail not yet staged, padded to a page, into
    /// a staging page on the tail page's die. Returns when those programs are done.
    pub(super) fn flush_tails(&mut self, at: u64) -> u64 {
        if self.params.flush == FlushMode::Retain {
            return at;
        }
        let upp = self.layout.units_per_page;
        let mut done = at;
        for z in 0..self.params.zones {
            let zone = &self.table.zones[z as usize];
            let tail = zone.written.saturating_sub(zone.programmed * upp);
            if tail == 0 || tail == zone.staged_units {
                continue;
            }
            let pad = upp - tail;
            let plane = self.layout.page(z, zone.programmed).plane;
            let ready = zone.tail_ready_ns;
            if let Some(tl) = self.timelines.as_mut() {
                let filler = tl.transfer_in(plane, at, pad as u64 * UNIT);
                done = done.max(tl.program(plane, filler.max(ready)));
            }
            self.table.zones[z as usize].staged_units = tail;
            self.counters.flush_padded_pages += 1;
            self.counters.padding_units += pad as u64;
        }
        done
    }
}

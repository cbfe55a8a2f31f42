//! A hybrid device: the FTL plus its SLC-cache manager. Host write requests of at most θ bytes go to
//! SLC, larger ones to QLC; after every host write request the device shrinks the SLC region if the
//! data no longer leaves room for it, then asks the manager for a decision and applies it.

use nandstack_core::{Error, Histogram, Result, MAPPING_UNIT_BYTES};
use serde::Serialize;

use super::config::HybridParams;
use super::ftl::HybridFtl;
use super::managers::{Decision, Observation, SlcManager};
use super::Region;

/// Host-side and resize counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceStats {
    pub host_write_requests: u64,
    /// Bytes the host asked to write (request lengths).
    pub host_write_bytes: u64,
    /// 4 KiB units the host writes covered (a partial unit counts whole: no read-modify-write).
    pub host_write_units: u64,
    pub host_read_requests: u64,
    pub host_read_bytes: u64,
    pub trim_requests: u64,
    pub trim_bytes: u64,
    /// Host bytes of requests routed to SLC (size ≤ θ).
    pub slc_routed_bytes: u64,
    pub slc_routed_units: u64,
    /// Times the SLC region changed size.
    pub resizes: u64,
    pub grown_blocks: u64,
    pub shrunk_blocks: u64,
    /// Shrinks forced by the data growing past the room the SLC region leaves.
    pub forced_shrinks: u64,
    /// Manager requests the device granted only in part (clamped or not paid for by QLC GC).
    pub clamped_requests: u64,
    /// DISS SDR: swap-range registrations received.
    pub swap_range_registrations: u64,
}

/// The hybrid SSD.
#[derive(Clone)]
pub struct HybridSsd {
    pub(crate) ftl: HybridFtl,
    manager: Box<dyn SlcManager>,
    theta: u64,
    stats: DeviceStats,
    /// The manager's initial decision has been applied (deferred past preconditioning when the device
    /// is built behind the `Device` interface, so that it sees the preconditioned device).
    started: bool,
    /// Behind `Device`: the time the chip finishes its last operation (ns).
    pub(crate) chip_free: u64,
    /// Write cost charged to each host write request, ns.
    pub(crate) cost_hist: Histogram,
    /// Σ SLC region size (blocks) × request bytes, over host writes (the byte-weighted mean size).
    pub(crate) slc_byte_weighted: f64,
    /// Smallest and largest SLC region size seen after a host write since the counters were reset.
    pub(crate) slc_range: (u32, u32),
}

impl HybridSsd {
    /// Build the device with the manager's layout and apply its initial decision (`seed` drives
    /// randomized victim policies).
    pub fn new(
        params: HybridParams,
        manager: Box<dyn SlcManager>,
        verify: bool,
        seed: u64,
    ) -> Result<HybridSsd> {
        Self::with_fill(params, manager, verify, seed, None)
    }

    /// Like [`HybridSsd::new`], but first write the byte range `fill` (offset, length) straight to QLC
    /// (preconditioning: the device starts at that utilisation), then zero every counter. The manager's
    /// initial decision sees the filled device.
    pub fn with_fill(
        params: HybridParams,
        manager: Box<dyn SlcManager>,
        verify: bool,
        seed: u64,
        fill: Option<(u64, u64)>,
    ) -> Result<HybridSsd> {
        let mut d = Self::deferred(params, manager, verify, seed);
        if let Some((offset, len)) = fill {
            let (first, count) = d.units(offset, len)?;
            d.ftl.write(first, count, Region::Qlc)?;
            d.ftl.flush()?;
            d.ftl.reset_counters();
        }
        d.start()?;
        Ok(d)
    }

    /// The device with the manager's initial decision deferred to the first host command (after
    /// preconditioning through `Device::precondition`, which writes straight to QLC).
    pub fn deferred(
        params: HybridParams,
        manager: Box<dyn SlcManager>,
        verify: bool,
        seed: u64,
    ) -> HybridSsd {
        let ftl = HybridFtl::new(params, manager.layout(), verify, seed);
        HybridSsd {
            ftl,
            manager,
            theta: 0,
            stats: DeviceStats::default(),
            started: false,
            chip_free: 0,
            cost_hist: Histogram::new(),
            slc_byte_weighted: 0.0,
            slc_range: (u32::MAX, 0),
        }
    }

    /// Apply the manager's initial decision (once). Its flash work is not charged to any request, and
    /// the resize counters start from zero after it.
    pub(crate) fn start(&mut self) -> Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let obs = self.observation();
        let dec = self.manager.initial(&obs);
        self.apply(dec)?;
        self.ftl.take_request_ns();
        self.stats = DeviceStats::default();
        Ok(())
    }

    fn units(&self, offset: u64, len: u64) -> Result<(u64, u64)> {
        if len == 0 {
            return Err(Error::OutOfRange(format!(
                "zero-length request at byte {offset}"
            )));
        }
        let end = offset
            .checked_add(len)
            .ok_or_else(|| Error::OutOfRange(format!("offset {offset} + {len}")))?;
        let first = offset / MAPPING_UNIT_BYTES;
        Ok((first, end.div_ceil(MAPPING_UNIT_BYTES) - first))
    }

    /// A host write request. Returns its write cost in ns: the flash time of every operation it caused
    /// (buffer evictions, migrations, GC, the manager's resizes after it).
    pub fn write(&mut self, offset: u64, len: u64) -> Result<u64> {
        let (first, count) = self.units(offset, len)?;
        self.start()?;
        let slc_blocks = self.ftl.slc_target();
        let dest = if len <= self.theta {
            Region::Slc
        } else {
            Region::Qlc
        };
        self.ftl.write(first, count, dest)?;
        let s = &mut self.stats;
        s.host_write_requests += 1;
        s.host_write_bytes += len;
        s.host_write_units += count;
        if dest == Region::Slc {
            s.slc_routed_bytes += len;
            s.slc_routed_units += count;
        }
        let max = self.ftl.max_slc_blocks();
        if self.ftl.slc_target() > max {
            self.stats.forced_shrinks += 1;
            self.resize(max)?;
        }
        if self.manager.observes(self.stats.host_write_bytes) {
            let obs = self.observation();
            if let Some(d) = self.manager.after_write(&obs) {
                self.apply(d)?;
            }
        }
        let ns = self.ftl.take_request_ns();
        self.cost_hist.record(ns);
        self.slc_byte_weighted += slc_blocks as f64 * len as f64;
        let now = self.ftl.slc_target();
        self.slc_range = (self.slc_range.0.min(now), self.slc_range.1.max(now));
        Ok(ns)
    }

    /// A host read request; returns its flash read time in ns (not part of the write cost).
    pub fn read(&mut self, offset: u64, len: u64) -> Result<u64> {
        let (first, count) = self.units(offset, len)?;
        self.start()?;
        let before = self.ftl.counters().read_ns;
        self.ftl.read(first, count)?;
        self.stats.host_read_requests += 1;
        self.stats.host_read_bytes += len;
        Ok(self.ftl.counters().read_ns - before)
    }

    /// TRIM the whole 4 KiB units inside the range (partial units at the edges keep their data).
    pub fn trim(&mut self, offset: u64, len: u64) -> Result<()> {
        self.units(offset, len)?;
        self.start()?;
        let first = offset.div_ceil(MAPPING_UNIT_BYTES);
        let end = (offset + len) / MAPPING_UNIT_BYTES;
        if end > first {
            self.ftl.trim(first, end - first)?;
        }
        self.stats.trim_requests += 1;
        self.stats.trim_bytes += len;
        Ok(())
    }

    /// DISS SDR: the host's swap partition is the byte range `offset .. offset + len` (the whole 4 KiB
    /// units inside it). No flash work.
    pub fn register_swap_range(&mut self, offset: u64, len: u64) -> Result<()> {
        let (_, count) = self.units(offset, len)?;
        self.ftl.check_range(offset / MAPPING_UNIT_BYTES, count)?;
        let first = offset.div_ceil(MAPPING_UNIT_BYTES) as u32;
        let end = ((offset + len) / MAPPING_UNIT_BYTES) as u32;
        self.ftl.register_swap_range(first, end.max(first))?;
        self.stats.swap_range_registrations += 1;
        Ok(())
    }

    /// Write the buffer back and pad open pages (end of run). Returns the write cost it caused.
    pub fn flush(&mut self) -> Result<u64> {
        self.start()?;
        self.ftl.flush()?;
        Ok(self.ftl.take_request_ns())
    }

    fn resize(&mut self, want: u32) -> Result<u32> {
        let before = self.ftl.slc_target();
        let got = self.ftl.set_slc_target(want)?;
        if got != before {
            self.stats.resizes += 1;
            if got > before {
                self.stats.grown_blocks += (got - before) as u64;
            } else {
                self.stats.shrunk_blocks += (before - got) as u64;
            }
        }
        Ok(got)
    }

    /// Apply a manager decision (the size is clamped by the FTL; see `HybridFtl::set_slc_target`).
    pub fn apply(&mut self, d: Decision) -> Result<()> {
        self.theta = d.theta_bytes;
        if d.slc_blocks != self.ftl.slc_target() {
            let got = self.resize(d.slc_blocks)?;
            if got != d.slc_blocks {
                self.stats.clamped_requests += 1;
            }
        }
        Ok(())
    }

    /// What the manager sees.
    pub fn observation(&self) -> Observation {
        let p = self.ftl.params();
        Observation {
            host_write_bytes: self.stats.host_write_bytes,
            host_write_requests: self.stats.host_write_requests,
            slc_routed_bytes: self.stats.slc_routed_bytes,
            slc_routed_units: self.stats.slc_routed_units,
            slc_update_units: self.ftl.counters().slc_update_units,
            utilization: self.ftl.utilization(),
            slc_blocks: self.ftl.slc_target(),
            slc_used_blocks: self.ftl.slc_used(),
            max_slc_blocks: self.ftl.max_slc_blocks(),
            min_slc_blocks: p.min_slc_blocks(),
            slc_free_threshold: p.slc_free_threshold,
            total_blocks: p.total_blocks,
            slc_block_bytes: p.slc_block_bytes(),
            theta_bytes: self.theta,
            costs: *self.ftl.costs(),
        }
    }

    pub fn ftl(&self) -> &HybridFtl {
        &self.ftl
    }
    pub fn manager(&self) -> &dyn SlcManager {
        self.manager.as_ref()
    }
    /// Current hot/cold threshold θ in bytes.
    pub fn theta_bytes(&self) -> u64 {
        self.theta
    }
    pub fn stats(&self) -> &DeviceStats {
        &self.stats
    }
    /// Zero the host-side counters and the per-request figures (the FTL's are zeroed separately).
    pub(crate) fn reset_host_counters(&mut self) {
        self.stats = DeviceStats::default();
        self.cost_hist = Histogram::new();
        self.slc_byte_weighted = 0.0;
        self.slc_range = (u32::MAX, 0);
    }
    /// Full invariant check plus, in verify mode, the version sweep.
    pub fn check(&self) -> Result<()> {
        self.ftl.check_invariants()?;
        self.ftl.verify_versions()
    }
}

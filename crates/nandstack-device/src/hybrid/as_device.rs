//! `HybridSsd` as a [`Device`]. The paper's simulator charges each request the serial time of the flash
//! operations it causes on one chip, with no queueing; behind the `Device` interface that chip is a
//! single resource: a command that causes flash work completes at `max(submitted, chip free) + its cost`
//! and keeps the chip busy until then; a command that causes none (a write absorbed by the DRAM buffer,
//! a read of buffered or unmapped data, a TRIM) completes when submitted. The write cost throughput of
//! the paper (host bytes ÷ Σ write cost) is in the device section; IOPS and latencies come from these
//! completion times.

use nandstack_core::{Nanos, Result, MAPPING_UNIT_BYTES};

use super::device::HybridSsd;
use super::report::{details, theta};
use super::Region;
use crate::device::{
    unsupported, Command, Completion, Device, DeviceKind, DeviceStats, ExtCommand,
};

impl HybridSsd {
    /// The chip timeline: work of `cost` ns submitted at `at`.
    fn occupy(&mut self, at: u64, cost: u64) -> Nanos {
        if cost == 0 {
            return Nanos(at);
        }
        let done = at.max(self.chip_free) + cost;
        self.chip_free = done;
        Nanos(done)
    }
}

impl Device for HybridSsd {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Hybrid
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn capacity_bytes(&self) -> u64 {
        self.ftl().params().logical_bytes()
    }
    fn prefetch(&self, ahead: [Option<u64>; 3]) {
        self.ftl().prefetch(ahead);
    }
    fn snapshot(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(self.clone()))
    }
    fn submit(&mut self, at: Nanos, cmd: Command<'_>) -> Result<Completion> {
        let done = match cmd {
            Command::Write { offset, len, .. } => {
                let cost = HybridSsd::write(self, offset, len)?;
                self.occupy(at.0, cost)
            }
            Command::Read { offset, len } => {
                let cost = HybridSsd::read(self, offset, len)?;
                self.occupy(at.0, cost)
            }
            Command::Trim { offset, len } => {
                HybridSsd::trim(self, offset, len)?;
                at
            }
            Command::Flush => {
                let cost = HybridSsd::flush(self)?;
                self.occupy(at.0, cost)
            }
            // DISS SDR: no flash work, so it completes when submitted.
            Command::Ext(ExtCommand::RegisterSwapRange { offset, len }) => {
                HybridSsd::register_swap_range(self, offset, len)?;
                at
            }
            other => return Err(unsupported(DeviceKind::Hybrid, &other)),
        };
        Ok(Completion::at(done))
    }
    fn stats(&self) -> DeviceStats {
        let s = HybridSsd::stats(self);
        let f = self.ftl();
        let c = f.costs();
        let fc = f.counters();
        let reads: u64 = c
            .by_kind
            .iter()
            .map(|k| k.slc_page_reads + k.qlc_page_reads)
            .sum();
        let erases: u64 = c
            .by_kind
            .iter()
            .map(|k| k.slc_block_erases + k.qlc_block_erases)
            .sum();
        DeviceStats {
            host_read_requests: s.host_read_requests,
            host_write_requests: s.host_write_requests,
            host_trim_requests: s.trim_requests,
            host_read_bytes: s.host_read_bytes,
            host_write_bytes: s.host_write_bytes,
            host_trim_bytes: s.trim_bytes,
            flash_program_pages: c.page_programs(),
            flash_read_pages: reads + fc.read_slc_page_reads + fc.read_qlc_page_reads,
            gc_migrated_units: fc.migrated_units + fc.qlc_gc_units + fc.slc_gc_units,
            erase_count: erases,
            page_size_bytes: f.params().page_bytes as u64,
        }
    }
    fn host_bytes(&self) -> (u64, u64) {
        let s = HybridSsd::stats(self);
        (s.host_write_bytes, s.host_read_bytes)
    }
    fn details(&self) -> serde_json::Value {
        serde_json::to_value(details(self)).expect("hybrid details serialize")
    }
    fn reset_counters(&mut self) {
        self.ftl.reset_counters();
        self.reset_host_counters();
    }
    fn enable_verification(&mut self) {
        self.ftl.enable_verification();
    }
    fn check_invariants(&self) -> Result<()> {
        self.ftl().check_invariants()
    }
    fn verify_all(&self) -> Result<()> {
        self.check()
    }
    /// Writes go straight to QLC (an aged drive's data sits in QLC), with no manager involved.
    fn precondition(&mut self, cmd: Command<'_>) -> Result<()> {
        let unit = MAPPING_UNIT_BYTES;
        match cmd {
            Command::Write { offset, len, .. } => {
                let (first, count) = (offset / unit, (offset + len).div_ceil(unit) - offset / unit);
                self.ftl.write(first, count, Region::Qlc)
            }
            Command::Read { .. } => Ok(()),
            Command::Trim { offset, len } => {
                let (first, end) = (offset.div_ceil(unit), (offset + len) / unit);
                if end > first {
                    self.ftl.trim(first, end - first)?;
                }
                Ok(())
            }
            Command::Flush => self.ftl.flush(),
            other => Err(unsupported(DeviceKind::Hybrid, &other)),
        }
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let f = self.ftl();
        vec![
            ("slc_blocks", f.slc_target() as f64),
            ("slc_used_blocks", f.slc_used() as f64),
            // -1 = every write goes to SLC (UST).
            (
                "theta_bytes",
                theta(self.theta_bytes()).map_or(-1.0, |t| t as f64),
            ),
            ("utilization", f.utilization()),
            ("write_cost_ns", f.costs().total_ns() as f64),
        ]
    }
}

//! `BlockSsd` as a [`Device`]: the block interface's commands map onto the controller's operations.

use nandstack_core::{Nanos, Result, MAPPING_UNIT_BYTES};

use super::BlockSsd;
use crate::device::{
    unsupported, Command, Completion, Device, DeviceKind, DeviceStats, ExtCommand, Tag,
};

impl Device for BlockSsd {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Block
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn capacity_bytes(&self) -> u64 {
        self.logical_bytes()
    }
    fn submit(&mut self, at: Nanos, cmd: Command<'_>) -> Result<Completion> {
        let (read, before) = (
            matches!(cmd, Command::Read { .. }),
            self.ftl.counters().unmapped_read_units,
        );
        if self.is_queued() {
            // The queued engine runs until this command completes; the FTL counts its unmapped reads.
            let done = self.submit_sync(at.0, cmd)?;
            let unmapped = self.ftl.counters().unmapped_read_units - before;
            return Ok(Completion {
                done: Nanos(done.max(at.0)),
                unmapped_units: if read { unmapped } else { 0 },
                ..Completion::default()
            });
        }
        let done = match cmd {
            Command::Read { offset, len } => self.read(offset, len, at.0)?,
            Command::Write { offset, len, .. } => self.write(offset, len, at.0)?,
            Command::Trim { offset, len } => self.trim(offset, len, at.0)?,
            Command::Flush => self.flush(at.0)?,
            Command::Ext(ExtCommand::RegisterSwapRange { offset, len }) => {
                self.register_swap_range(offset, len, at.0)?
            }
            other => return Err(unsupported(DeviceKind::Block, &other)),
        };
        Ok(Completion {
            done: Nanos(done.max(at.0)),
            unmapped_units: if read {
                self.ftl.counters().unmapped_read_units - before
            } else {
                0
            },
            ..Completion::default()
        })
    }
    fn queued(&self) -> bool {
        self.is_queued()
    }
    fn enqueue(&mut self, at: Nanos, cmd: Command<'_>, tag: Tag) -> Result<()> {
        if !self.is_queued() {
            return Err(unsupported(DeviceKind::Block, &cmd));
        }
        self.enqueue_cmd(at.0, cmd, tag)
    }
    fn next_event(&self) -> Option<Nanos> {
        if !self.stash_is_empty() {
            return Some(Nanos(self.now_ns()));
        }
        self.next_internal().map(Nanos)
    }
    fn advance(&mut self, until: Nanos, done: &mut Vec<(Tag, Completion)>) -> Result<()> {
        if self.is_queued() {
            self.run_until(until.0)?;
            self.take_completions(done);
        }
        Ok(())
    }
    fn stats(&self) -> DeviceStats {
        let c = self.ftl.counters();
        let h = self.counters();
        DeviceStats {
            host_read_requests: h.read_requests,
            host_write_requests: h.write_requests,
            host_trim_requests: h.trim_requests,
            host_read_bytes: h.read_bytes,
            host_write_bytes: h.write_bytes,
            host_trim_bytes: h.trim_bytes,
            flash_program_pages: c.flash_program_pages,
            flash_read_pages: c.host_read_pages
                + c.gc_read_pages
                + c.wear_leveling_read_pages
                + c.rmw_read_pages
                + c.translation_read_pages,
            gc_migrated_units: c.gc_migrated_units,
            erase_count: c.gc_erases + c.wear_leveling_erases,
            page_size_bytes: self.ftl.geometry().page_size_bytes as u64,
        }
    }
    fn details(&self) -> serde_json::Value {
        let g = self.ftl.geometry();
        serde_json::json!({
            "planes": g.planes(),
            "blocks": g.total_blocks(),
            "free_blocks": self.ftl.free_blocks(),
            "streams": self.ftl.streams(),
            "victim_policy": self.ftl.victim_policy_name(),
            "placement": self.ftl.placement_name(),
            "effective_over_provisioning": self.ftl.effective_over_provisioning(),
            // DISS CL-SDI, under the names every device that takes the swap range uses.
            "swap_invalidated_pages": self.ftl.counters().swap_invalidated_units,
            "write_buffer_swap_dropped_pages": self.counters().buffer_swap_dropped_units,
            "ftl": self.ftl.counters(),
            "controller": self.counters(),
        })
    }
    fn reset_counters(&mut self) {
        BlockSsd::reset_counters(self);
    }
    fn snapshot(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(self.clone()))
    }
    fn enable_verification(&mut self) {
        self.ftl.enable_verification();
    }
    fn check_invariants(&self) -> Result<()> {
        self.ftl.check_invariants()
    }
    fn verify_all(&self) -> Result<()> {
        self.ftl.check_invariants()?;
        self.ftl.verify_all_versions()
    }
    /// Straight to the FTL: no controller, buffer or timing (the drive is idle and empty-buffered
    /// after preconditioning; the runner flushes the FTL's open pages before measuring).
    fn precondition(&mut self, cmd: Command<'_>) -> Result<()> {
        // No timing: stop recording flash operations until the counters are reset for measuring.
        self.ftl.record_ops(false);
        match cmd {
            Command::Read { offset, len } => self.ftl.read(offset, len),
            Command::Write { offset, len, .. } => self.ftl.write(offset, len),
            Command::Trim { offset, len } => self.ftl.trim(offset, len),
            Command::Flush => {
                self.ftl.flush();
                Ok(())
            }
            other => Err(unsupported(DeviceKind::Block, &other)),
        }
    }
    fn prefetch(&self, ahead: [Option<u64>; 3]) {
        self.prefetch_ahead(ahead);
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("free_blocks", self.ftl.free_blocks() as f64),
            (
                "buffered_bytes",
                (self.buffered_units() as u64 * MAPPING_UNIT_BYTES) as f64,
            ),
        ]
    }
}

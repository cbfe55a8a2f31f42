//! Placing the FTL's recorded operations of one command on the NAND timelines.
//!
//! Rules (in log order):
//! * GC / wear-levelling reads start at the command's arrival (on their die, FCFS); a copyback read needs
//!   no channel, an `any_plane` migration moves the page out and back in over the channels.
//! * GC programs wait for the GC reads so far (their data); erases queue on their die.
//! * Foreground GC blocks the command: its host transfers start after the last GC operation ends.
//! * A mapping-cache miss's translation read delays what follows it in the command; translation write-backs
//!   occupy the flash but nobody waits for them.
//! * Host reads leave over the channel (4 KiB per unit read); host data crosses the channel into the die's
//!   register unit by unit; a page program waits for its data and its die.
//!
//! The command completes when its reads are out and its data is in the dies' registers; with
//! `wait_for_programs` (no DRAM write buffer) also when the pages it filled are programmed.

use nandstack_core::MAPPING_UNIT_BYTES;

use super::BlockSsd;
use crate::ftl::ops::{OpCause, OpKind};

impl BlockSsd {
    pub(super) fn schedule(&mut self, now: u64, wait_for_programs: bool) -> u64 {
        let Some(tl) = self.timelines.as_mut() else {
            return now;
        };
        self.ftl.drain_ops(&mut self.ops);
        tl.advance(now);
        let page = self.page_bytes;
        let mut gc_data = now; // GC reads done (migrated data available)
        let mut gc_end = now; // all GC work done (foreground GC blocks the host part)
        let mut dep = now; // translation reads the rest of the command depends on
        let mut rmw_end = now;
        let mut done = now;
        for op in &self.ops {
            let p = op.plane;
            match (op.kind, op.cause) {
                (OpKind::Read, OpCause::Gc | OpCause::WearLeveling) => {
                    let e = tl.read_at(p, op.page, dep, if self.copyback { 0 } else { page });
                    gc_data = gc_data.max(e);
                    gc_end = gc_end.max(e);
                    tl.mark_gc(p, e);
                }
                (OpKind::Program, OpCause::Gc | OpCause::WearLeveling) => {
                    let ready = if self.copyback {
                        gc_data
                    } else {
                        tl.transfer_in(p, gc_data, page)
                    };
                    let e = tl.program_at(p, op.page, ready);
                    tl.mark_gc(p, e);
                    gc_end = gc_end.max(e);
                }
                (OpKind::Erase, _) => {
                    let e = tl.erase(p, gc_data);
                    tl.mark_gc(p, e);
                    gc_end = gc_end.max(e);
                }
                (OpKind::Read, OpCause::Translation) => {
                    dep = dep.max(tl.read_at(p, op.page, dep, MAPPING_UNIT_BYTES.min(page)))
                }
                (OpKind::Transfer, OpCause::Translation) => {
                    self.last_xfer[p as usize] = tl.transfer_in(p, dep, page);
                }
                (OpKind::Program, OpCause::Translation) => {
                    tl.program_at(p, op.page, self.last_xfer[p as usize]);
                }
                (OpKind::Read, _) => {
                    let e = tl.read_at(p, op.page, dep, op.units as u64 * MAPPING_UNIT_BYTES);
                    if op.cause == OpCause::ReadModifyWrite {
                        rmw_end = rmw_end.max(e);
                    }
                    done = done.max(e);
                }
                (OpKind::Transfer, _) => {
                    let e = tl.transfer_in(p, gc_end.max(dep).max(rmw_end), MAPPING_UNIT_BYTES);
                    self.last_xfer[p as usize] = e;
                    done = done.max(e);
                }
                (OpKind::Program, _) => {
                    let e = tl.program_at(p, op.page, self.last_xfer[p as usize].max(gc_end));
                    if wait_for_programs {
                        done = done.max(e);
                    }
                }
            }
        }
        done.max(gc_end).max(dep)
    }
}

//! Flash work of a zone on the NAND timelines: programming its tail page (filled by the host, or padded),
//! padding at finish, erasing at reset. Erase counts and the physical side of verification live here.

use nandstack_core::MAPPING_UNIT_BYTES;

use super::{FinishPadding, ZonedSsd, PAD_VERSION};

impl ZonedSsd {
    /// Program zone `z`'s next page in place: its buffered units plus `pad` filler units, which cross the
    /// channel first. The program starts when the page's data is in the register (not before `at`) and
    /// the die is free. Returns its completion.
    pub(super) fn program_tail(&mut self, z: u32, at: u64, pad: u32) -> u64 {
        let zone = &mut self.table.zones[z as usize];
        let p = zone.programmed;
        let plane = self.layout.page(z, p).plane;
        let mut ready = zone.tail_ready_ns.max(at);
        zone.programmed += 1;
        zone.tail_ready_ns = 0;
        zone.staged_units = 0;
        let done = match self.timelines.as_mut() {
            Some(tl) => {
                if pad > 0 {
                    ready = ready.max(tl.transfer_in(plane, at, pad as u64 * MAPPING_UNIT_BYTES));
                }
                tl.program(plane, ready)
            }
            None => at,
        };
        self.mark_programmed(z, p);
        done
    }

    /// Verification: the units of zone page `p` now hold their versions (padding: `PAD_VERSION`).
    fn mark_programmed(&mut self, z: u32, p: u32) {
        let Some(v) = self.versions.as_mut() else {
            return;
        };
        let zone = &self.table.zones[z as usize];
        let upp = self.layout.units_per_page;
        for u in p * upp..(p + 1) * upp {
            v.physical[self.layout.phys_unit(z, u)] = zone
                .versions
                .get(u as usize)
                .copied()
                .unwrap_or(PAD_VERSION);
        }
    }

    /// Zone Finish of zone `z` (already full in the state table): pad the buffered tail page and, with
    /// `finish_padding = zone`, program filler into every remaining page. Returns the last completion.
    pub(super) fn pad_for_finish(&mut self, z: u32, at: u64) -> u64 {
        let upp = self.layout.units_per_page;
        let zone = &self.table.zones[z as usize];
        let tail = zone.written.saturating_sub(zone.programmed * upp);
        let mut done = at;
        if tail > 0 {
            done = done.max(self.program_tail(z, at, upp - tail));
            self.counters.finish_padded_pages += 1;
            self.counters.padding_units += (upp - tail) as u64;
        }
        if self.params.finish_padding == FinishPadding::Zone {
            while self.table.zones[z as usize].programmed < self.layout.zone_pages {
                done = done.max(self.program_tail(z, at, upp));
                self.counters.finish_padded_pages += 1;
                self.counters.padding_units += upp as u64;
            }
        }
        done
    }

    /// Zone Reset of zone `z` (already empty in the state table): erase every block that holds a
    /// programmed page, drop the buffered tail, clear data and metadata. Returns the last erase's
    /// completion.
    pub(super) fn erase_zone(&mut self, z: u32, at: u64) -> u64 {
        let touched = self
            .layout
            .blocks_touched(self.table.zones[z as usize].programmed);
        let block_units = (self.layout.pages_per_block * self.layout.units_per_page) as usize;
        let mut done = at;
        for i in 0..touched {
            let (plane, block) = self.layout.block(z, i);
            if let Some(tl) = self.timelines.as_mut() {
                done = done.max(tl.erase(plane, at));
            }
            self.erase_counts[block as usize] += 1;
            self.counters.erases += 1;
            self.erases_total += 1;
            if let Some(v) = self.versions.as_mut() {
                let b = block as usize * block_units;
                v.physical[b..b + block_units].fill(0);
            }
        }
        let zone = &mut self.table.zones[z as usize];
        zone.written = 0;
        zone.programmed = 0;
        zone.tail_ready_ns = 0;
        zone.staged_units = 0;
        zone.meta.clear();
        zone.versions.clear();
        done
    }
}

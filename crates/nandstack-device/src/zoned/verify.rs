//! Read-after-write versions and the full invariant check (O(device); tests, property tests, `--verify`).

use nandstack_core::{Error, Result};

use super::{Versions, ZonedSsd, PAD_VERSION};
use crate::device::ZoneState;

macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(Error::Invariant(format!($($fmt)+)));
        }
    };
}

impl ZonedSsd {
    /// Turn verification on: data already written gets version 1, padding `PAD_VERSION`.
    pub(super) fn start_verification(&mut self) {
        let mut physical = vec![0u64; self.params.geometry.total_units() as usize];
        let upp = self.layout.units_per_page;
        for (z, zone) in self.table.zones.iter_mut().enumerate() {
            zone.versions = vec![1; zone.written as usize];
            for u in 0..zone.programmed * upp {
                physical[self.layout.phys_unit(z as u32, u)] =
                    if u < zone.written { 1 } else { PAD_VERSION };
            }
        }
        self.versions = Some(Versions { next: 1, physical });
    }

    /// Verification: programmed unit `u` of zone `z` holds the version last written to it.
    pub(super) fn check_version(&self, z: u32, u: u32) -> Result<()> {
        let Some(v) = self.versions.as_ref() else {
            return Ok(());
        };
        let want = self.table.zones[z as usize].versions[u as usize];
        let pua = self.layout.phys_unit(z, u);
        let got = v.physical[pua];
        check!(
            want == got,
            "read-after-write check failed for zone {z} unit {u}: expected version {want}, physical unit {pua} holds {got}"
        );
        Ok(())
    }

    /// Verification mode: every programmed host unit against the version last written.
    pub(super) fn verify_versions(&self) -> Result<()> {
        let upp = self.layout.units_per_page;
        for (z, zone) in self.table.zones.iter().enumerate() {
            for u in 0..zone.written.min(zone.programmed * upp) {
                self.check_version(z as u32, u)?;
            }
        }
        Ok(())
    }

    /// Every structural invariant; the error names the first violation.
    ///
    /// * open/active counts match the zone states and respect the limits;
    /// * per zone: write pointer ≤ capacity, one metadata word (and version) per written unit; programmed
    ///   pages ≤ the zone's pages; an empty zone holds nothing; an open or closed zone has exactly its full
    ///   pages programmed and less than a page buffered; a full zone has nothing buffered;
    /// * verification mode: below the write pointer, programmed units hold host versions; programmed units
    ///   at or past it hold padding; everything past the programmed pages is erased (so nothing beyond a
    ///   write pointer can be read as data), and so is every block outside the zones;
    /// * erase bookkeeping: the per-block counts add up to the erases done; blocks outside the zones
    ///   were never erased.
    pub(super) fn invariants(&self) -> Result<()> {
        self.table.check_counts()?;
        let l = &self.layout;
        let upp = l.units_per_page;
        for (zi, zone) in self.table.zones.iter().enumerate() {
            let z = zi as u32;
            let (w, p) = (zone.written, zone.programmed);
            check!(
                w <= l.zone_units,
                "zone {z}: write pointer {w} past the capacity {}",
                l.zone_units
            );
            check!(
                p <= l.zone_pages,
                "zone {z}: {p} pages programmed of {}",
                l.zone_pages
            );
            check!(
                zone.meta.len() == w as usize,
                "zone {z}: {} metadata words for {w} units",
                zone.meta.len()
            );
            check!(
                self.versions.is_none() || zone.versions.len() == w as usize,
                "zone {z}: {} versions for {w} units",
                zone.versions.len()
            );
            let tail = w.saturating_sub(p * upp);
            check!(
                zone.staged_units <= tail,
                "zone {z}: {} units staged of a {tail}-unit tail",
                zone.staged_units
            );
            match zone.state {
                ZoneState::Empty => check!(
                    w == 0 && p == 0,
                    "empty zone {z}: {w} units written, {p} pages programmed"
                ),
                ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen | ZoneState::Closed => {
                    check!(
                        p == w / upp,
                        "zone {z} ({:?}): {p} pages programmed for {w} units written",
                        zone.state
                    );
                    check!(
                        w > 0 || zone.state == ZoneState::ExplicitlyOpen,
                        "zone {z} is {:?} with nothing written",
                        zone.state
                    );
                }
                ZoneState::Full => check!(tail == 0, "full zone {z} still buffers {tail} units"),
                ZoneState::ReadOnly | ZoneState::Offline => {}
            }
            self.check_physical(z)?;
        }
        let zone_blocks = self.params.zones * l.blocks_per_zone;
        let in_zone = |b: u32| -> bool { l.slot_of_block(b) < zone_blocks as u64 };
        let total: u64 = self.erase_counts.iter().map(|&n| n as u64).sum();
        check!(
            total == self.erases_total,
            "per-block erase counts add up to {total}, {} erases were done",
            self.erases_total
        );
        for (b, &n) in self.erase_counts.iter().enumerate() {
            check!(
                n == 0 || in_zone(b as u32),
                "block {b} belongs to no zone but was erased {n} times"
            );
        }
        if let Some(v) = self.versions.as_ref() {
            let block_units = (l.pages_per_block * upp) as usize;
            for b in 0..self.erase_counts.len() {
                if !in_zone(b as u32) {
                    let s = &v.physical[b * block_units..(b + 1) * block_units];
                    check!(
                        s.iter().all(|&x| x == 0),
                        "block {b} belongs to no zone but holds data"
                    );
                }
            }
        }
        Ok(())
    }

    /// Verification mode: the physical units of zone `z` hold host versions below the write pointer,
    /// padding up to the programmed end and nothing after it.
    fn check_physical(&self, z: u32) -> Result<()> {
        let Some(v) = self.versions.as_ref() else {
            return Ok(());
        };
        let zone = &self.table.zones[z as usize];
        let end = zone.programmed * self.layout.units_per_page;
        for u in 0..self.layout.zone_units {
            let got = v.physical[self.layout.phys_unit(z, u)];
            let want = if u >= end {
                0
            } else if u < zone.written {
                zone.versions[u as usize]
            } else {
                PAD_VERSION
            };
            check!(
                got == want,
                "zone {z} unit {u}: physical version {got}, expected {want}"
            );
        }
        Ok(())
    }
}

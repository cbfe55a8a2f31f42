//! Where a zone lives on the flash array: pure arithmetic, no mapping table.
//!
//! * The planes are taken in the device's striping order (`device.zoned.striping_order`, the block FTL's
//!   default: channel, chip, die, plane, the first varying fastest): stripe position `k` is plane
//!   `stripe[k]`. Zone blocks are dealt to the stripe positions in turn: the `i`-th block of zone `z` is
//!   slot `s = z × B + i` of the sequence (position 0, 1, …, P−1, 0, …); slot `s` is block `s ÷ P` of plane
//!   `stripe[s mod P]` (global block id `plane × blocks_per_plane + s ÷ P`, the FTL's numbering). With
//!   `B` = P (the default) a zone is one block on every plane, the way a ZN540 zone spans many dies.
//! * A zone's pages are striped over its blocks: zone page `p` is page `p ÷ B` of the zone's block `p mod B`,
//!   so consecutive pages land on different planes — with the default order on different channels, then
//!   chips, then dies, and on a die's other plane only after every die has had a page, as the block SSD's
//!   write frontier goes. (Plane-first, `["plane", "die", "chip", "channel"]`, puts consecutive pages on
//!   the planes of one die, which program one after the other unless `timing.plane_parallelism`.)
//! * Zone unit `u` (4 KiB, the logical block) is unit `u mod upp` of zone page `u ÷ upp`.

use crate::ftl::config::ParallelUnit;
use crate::ftl::stripe_table;
use crate::nand::Geometry;

/// A flash page of a zone.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageAddr {
    /// Global plane index (the timelines' resource id).
    pub plane: u32,
    /// Global block id (`plane × blocks_per_plane + block in plane`).
    pub block: u32,
    /// Page within the block.
    pub page: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct Layout {
    planes: u32,
    /// Stripe position → global plane index.
    stripe: Vec<u32>,
    /// Global plane index → stripe position (the inverse of `stripe`).
    position: Vec<u32>,
    blocks_per_plane: u32,
    pub blocks_per_zone: u32,
    pub pages_per_block: u32,
    pub units_per_page: u32,
    /// Pages of a zone's capacity (`blocks_per_zone × pages_per_block`).
    pub zone_pages: u32,
    /// 4 KiB units of a zone's capacity.
    pub zone_units: u32,
    /// 4 KiB units between zone starts (zone size).
    pub size_units: u64,
}

impl Layout {
    pub fn new(
        geo: &Geometry,
        order: &[ParallelUnit],
        blocks_per_zone: u32,
        size_units: u64,
    ) -> Layout {
        let zone_pages = blocks_per_zone * geo.pages_per_block;
        let stripe = stripe_table(geo, order);
        let mut position = vec![0; stripe.len()];
        for (k, &plane) in stripe.iter().enumerate() {
            position[plane as usize] = k as u32;
        }
        Layout {
            planes: geo.planes(),
            stripe,
            position,
            blocks_per_plane: geo.blocks_per_plane,
            blocks_per_zone,
            pages_per_block: geo.pages_per_block,
            units_per_page: geo.units_per_page(),
            zone_pages,
            zone_units: zone_pages * geo.units_per_page(),
            size_units,
        }
    }

    /// The `i`-th block of zone `z`: (plane, global block id).
    pub fn block(&self, z: u32, i: u32) -> (u32, u32) {
        let slot = z as u64 * self.blocks_per_zone as u64 + i as u64;
        let plane = self.stripe[(slot % self.planes as u64) as usize];
        let in_plane = (slot / self.planes as u64) as u32;
        (plane, plane * self.blocks_per_plane + in_plane)
    }

    /// The slot of global block `b` in the sequence zones take their blocks from (the inverse of
    /// [`Layout::block`]): block `b` belongs to a zone iff its slot < zones × B.
    pub fn slot_of_block(&self, b: u32) -> u64 {
        let plane = b / self.blocks_per_plane;
        (b % self.blocks_per_plane) as u64 * self.planes as u64
            + self.position[plane as usize] as u64
    }

    /// Zone page `p` of zone `z`.
    pub fn page(&self, z: u32, p: u32) -> PageAddr {
        let (plane, block) = self.block(z, p % self.blocks_per_zone);
        PageAddr {
            plane,
            block,
            page: p / self.blocks_per_zone,
        }
    }

    /// Global physical unit index of zone unit `u` (`(block × pages_per_block + page) × upp + unit`).
    pub fn phys_unit(&self, z: u32, u: u32) -> usize {
        let a = self.page(z, u / self.units_per_page);
        (a.block as usize * self.pages_per_block as usize + a.page as usize)
            * self.units_per_page as usize
            + (u % self.units_per_page) as usize
    }

    /// Blocks of a zone that hold at least one programmed page.
    pub fn blocks_touched(&self, programmed: u32) -> u32 {
        programmed.min(self.blocks_per_zone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nand::CellMode;

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 6,
            pages_per_block: 4,
            page_size_bytes: 8192,
            cell_mode: CellMode::Tlc,
        }
    }

    use ParallelUnit::{Channel, Chip, Die, Plane};

    const CHANNEL_FIRST: [ParallelUnit; 4] = [Channel, Chip, Die, Plane];
    const PLANE_FIRST: [ParallelUnit; 4] = [Plane, Die, Chip, Channel];

    #[test]
    fn zones_take_disjoint_blocks_and_units_are_a_bijection() {
        for order in [CHANNEL_FIRST, PLANE_FIRST] {
            for b in [1u32, 2, 3, 4, 6, 8] {
                let g = geo();
                let zones = g.total_blocks() / b;
                let l = Layout::new(&g, &order, b, 64);
                let mut seen = vec![false; g.total_units() as usize];
                for z in 0..zones {
                    for u in 0..l.zone_units {
                        let p = l.phys_unit(z, u);
                        assert!(
                            !seen[p],
                            "B={b}: zone {z} unit {u} reuses physical unit {p}"
                        );
                        seen[p] = true;
                    }
                    for i in 0..b {
                        let (_, block) = l.block(z, i);
                        assert_eq!(l.slot_of_block(block), (z * b + i) as u64);
                    }
                }
                assert_eq!(
                    seen.iter().filter(|s| **s).count() as u32,
                    zones * l.zone_units
                );
            }
        }
    }

    #[test]
    fn pages_stripe_over_the_channels_first() {
        // Planes 0, 1 are channel 0's die, planes 2, 3 channel 1's: channel first gives 0, 2, 1, 3.
        let g = geo();
        let l = Layout::new(&g, &CHANNEL_FIRST, 4, 64);
        let planes: Vec<u32> = (0..5).map(|p| l.page(1, p).plane).collect();
        assert_eq!(planes, [0, 2, 1, 3, 0]);
        assert_eq!(l.page(1, 4).page, 1);
        // Zone 1's blocks are the second block of each plane.
        assert_eq!(l.block(1, 0), (0, 1));
        assert_eq!(l.block(1, 1), (2, 2 * 6 + 1));
        assert_eq!(l.block(1, 3), (3, 3 * 6 + 1));
        assert_eq!(l.blocks_touched(2), 2);
        assert_eq!(l.blocks_touched(9), 4);
        // Plane first: consecutive pages on the two planes of one die.
        let l = Layout::new(&g, &PLANE_FIRST, 4, 64);
        let planes: Vec<u32> = (0..5).map(|p| l.page(1, p).plane).collect();
        assert_eq!(planes, [0, 1, 2, 3, 0]);
        assert_eq!(l.block(1, 1), (1, 6 + 1));
    }
}

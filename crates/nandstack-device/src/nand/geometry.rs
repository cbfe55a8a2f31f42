//! NAND geometry: channels → chips → dies → planes → blocks → pages, and the 4 KiB mapping units in a page.

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CellMode;

/// Largest accepted geometry fields (typo bounds: far beyond any real SSD; see `Geometry::validate`).
pub const MAX_CHANNELS: u32 = 1024;
pub const MAX_CHIPS_PER_CHANNEL: u32 = 1024;
pub const MAX_DIES_PER_CHIP: u32 = 64;
pub const MAX_PLANES_PER_DIE: u32 = 64;
pub const MAX_BLOCKS_PER_PLANE: u32 = 1 << 24;
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;
/// Largest number of planes in all.
pub const MAX_PLANES: u64 = 1 << 16;

/// Physical organisation of the flash array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    /// Independent channels (buses). Default 4.
    #[serde(default = "d_channels")]
    pub channels: u32,
    /// Chips (packages / chip enables) per channel. Default 2.
    #[serde(default = "d_chips")]
    pub chips_per_channel: u32,
    /// Dies per chip. Default 1.
    #[serde(default = "d_one")]
    pub dies_per_chip: u32,
    /// Planes per die. Default 2.
    #[serde(default = "d_planes")]
    pub planes_per_die: u32,
    /// Erase blocks per plane. Default 512.
    #[serde(default = "d_blocks")]
    pub blocks_per_plane: u32,
    /// Flash pages per block. Default 128.
    #[serde(default = "d_pages")]
    pub pages_per_block: u32,
    /// Flash page size in bytes: 4096, 8192 or 16384. Default 16384 (four 4 KiB mapping units per page).
    #[serde(default = "d_page_size")]
    pub page_size_bytes: u32,
    /// Cell mode of every block: slc, mlc, tlc or qlc. Default tlc.
    #[serde(default = "d_mode")]
    pub cell_mode: CellMode,
}

fn d_channels() -> u32 {
    4
}
fn d_chips() -> u32 {
    2
}
fn d_one() -> u32 {
    1
}
fn d_planes() -> u32 {
    2
}
fn d_blocks() -> u32 {
    512
}
fn d_pages() -> u32 {
    128
}
fn d_page_size() -> u32 {
    16384
}
fn d_mode() -> CellMode {
    CellMode::Tlc
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            channels: d_channels(),
            chips_per_channel: d_chips(),
            dies_per_chip: d_one(),
            planes_per_die: d_planes(),
            blocks_per_plane: d_blocks(),
            pages_per_block: d_pages(),
            page_size_bytes: d_page_size(),
            cell_mode: d_mode(),
        }
    }
}

/// Coordinates of one plane.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlaneAddr {
    pub channel: u32,
    pub chip: u32,
    pub die: u32,
    pub plane: u32,
}

impl Geometry {
    /// The DISS evaluation device (Table 1 of `diss-swap-data-invalidation.md`): 8 channels × 2 chips ×
    /// 2 dies × 4 planes × 512 blocks × 128 pages of 4 KiB = 32 GiB. (tR 4 µs / tPROG 75 µs come with the
    /// timing model.) 3D TLC-class endurance is assumed.
    pub fn diss() -> Geometry {
        Geometry {
            channels: 8,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 4,
            blocks_per_plane: 512,
            pages_per_block: 128,
            page_size_bytes: 4096,
            cell_mode: CellMode::Tlc,
        }
    }

    /// A 1 TiB-class TLC device: 8 channels × 4 chips × 2 dies × 4 planes × 1024 blocks × 256 pages of
    /// 16 KiB = 1 TiB raw.
    pub fn tlc_1tb() -> Geometry {
        Geometry {
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 4,
            blocks_per_plane: 1024,
            pages_per_block: 256,
            page_size_bytes: 16384,
            cell_mode: CellMode::Tlc,
        }
    }

    /// Look up a named preset: `default`, `diss`, `tlc-1tb`.
    pub fn preset(name: &str) -> Result<Geometry> {
        match name {
            "default" => Ok(Geometry::default()),
            "diss" => Ok(Geometry::diss()),
            "tlc-1tb" => Ok(Geometry::tlc_1tb()),
            other => Err(Error::config(
                "device.preset",
                format!("unknown preset `{other}`; allowed: default, diss, tlc-1tb"),
            )),
        }
    }

    /// Check that the geometry can be built; the error names the offending field and why.
    pub fn validate(&self) -> Result<()> {
        let fields = [
            ("channels", self.channels),
            ("chips_per_channel", self.chips_per_channel),
            ("dies_per_chip", self.dies_per_chip),
            ("planes_per_die", self.planes_per_die),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
        ];
        for (name, v) in fields {
            if v == 0 {
                return Err(Error::geometry(name, "must be at least 1 (got 0)"));
            }
        }
        // Typo bounds (far beyond any real SSD), checked before any product is formed.
        for (name, v, max) in [
            ("channels", self.channels, MAX_CHANNELS),
            (
                "chips_per_channel",
                self.chips_per_channel,
                MAX_CHIPS_PER_CHANNEL,
            ),
            ("dies_per_chip", self.dies_per_chip, MAX_DIES_PER_CHIP),
            ("planes_per_die", self.planes_per_die, MAX_PLANES_PER_DIE),
            (
                "blocks_per_plane",
                self.blocks_per_plane,
                MAX_BLOCKS_PER_PLANE,
            ),
            ("pages_per_block", self.pages_per_block, MAX_PAGES_PER_BLOCK),
        ] {
            if v > max {
                return Err(Error::geometry(name, format!("is {v}: at most {max}")));
            }
        }
        let planes = [
            self.channels,
            self.chips_per_channel,
            self.dies_per_chip,
            self.planes_per_die,
        ]
        .iter()
        .map(|&v| u64::from(v))
        .product::<u64>();
        if planes > MAX_PLANES {
            return Err(Error::geometry(
                "planes_per_die",
                format!(
                    "gives {planes} planes (channels × chips_per_channel × dies_per_chip × planes_per_die): at most {MAX_PLANES}"
                ),
            ));
        }
        if self.blocks_per_plane < 4 {
            return Err(Error::geometry(
                "blocks_per_plane",
                format!(
                    "is {}: a plane needs at least 4 blocks (data, open and GC reserve)",
                    self.blocks_per_plane
                ),
            ));
        }
        let ps = self.page_size_bytes as u64;
        if !ps.is_multiple_of(MAPPING_UNIT_BYTES) || !(4096..=16384).contains(&ps) {
            return Err(Error::geometry(
                "page_size_bytes",
                format!("is {ps}: must be 4096, 8192, 12288 or 16384 (a whole number of 4 KiB mapping units, 4–16 KiB)"),
            ));
        }
        let units = planes as u128
            * self.blocks_per_plane as u128
            * self.pages_per_block as u128
            * (ps / MAPPING_UNIT_BYTES) as u128;
        if units >= u32::MAX as u128 {
            return Err(Error::geometry(
                "blocks_per_plane",
                format!(
                    "gives {units} mapping units in total; at most {} are supported (16 TiB of 4 KiB units)",
                    u32::MAX - 1
                ),
            ));
        }
        if self.units_per_block() > 1 << 20 {
            return Err(Error::geometry(
                "pages_per_block",
                "gives more than 2^20 mapping units per block",
            ));
        }
        Ok(())
    }

    pub fn planes(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip * self.planes_per_die
    }
    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    pub fn total_blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }
    /// 4 KiB mapping units per flash page.
    pub fn units_per_page(&self) -> u32 {
        self.page_size_bytes / MAPPING_UNIT_BYTES as u32
    }
    pub fn units_per_block(&self) -> u32 {
        self.units_per_page() * self.pages_per_block
    }
    pub fn total_units(&self) -> u64 {
        self.total_blocks() as u64 * self.units_per_block() as u64
    }
    pub fn total_pages(&self) -> u64 {
        self.total_blocks() as u64 * self.pages_per_block as u64
    }
    pub fn raw_bytes(&self) -> u64 {
        self.total_pages() * self.page_size_bytes as u64
    }

    /// Global plane index of a plane address: ((channel × chips + chip) × dies + die) × planes + plane.
    pub fn plane_index(&self, a: PlaneAddr) -> u32 {
        ((a.channel * self.chips_per_channel + a.chip) * self.dies_per_chip + a.die)
            * self.planes_per_die
            + a.plane
    }

    /// Inverse of [`Geometry::plane_index`].
    pub fn plane_addr(&self, index: u32) -> PlaneAddr {
        let plane = index % self.planes_per_die;
        let i = index / self.planes_per_die;
        let die = i % self.dies_per_chip;
        let i = i / self.dies_per_chip;
        let chip = i % self.chips_per_channel;
        let channel = i / self.chips_per_channel;
        PlaneAddr {
            channel,
            chip,
            die,
            plane,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_their_sizes() {
        let d = Geometry::diss();
        d.validate().unwrap();
        assert_eq!(d.raw_bytes(), 32 << 30);
        assert_eq!(d.planes(), 128);
        let t = Geometry::tlc_1tb();
        t.validate().unwrap();
        assert_eq!(t.raw_bytes(), 1 << 40);
        assert_eq!(Geometry::default().raw_bytes(), 16 << 30);
    }

    #[test]
    fn plane_index_round_trips() {
        let g = Geometry {
            channels: 3,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            ..Geometry::default()
        };
        let mut seen = vec![false; g.planes() as usize];
        for i in 0..g.planes() {
            let a = g.plane_addr(i);
            assert_eq!(g.plane_index(a), i);
            seen[i as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(
            g.plane_addr(g.planes() - 1),
            PlaneAddr {
                channel: 2,
                chip: 1,
                die: 1,
                plane: 1
            }
        );
    }

    #[test]
    fn impossible_geometry_is_named() {
        let g = Geometry {
            channels: 0,
            ..Geometry::default()
        };
        assert!(g.validate().unwrap_err().to_string().contains("channels"));
        let g = Geometry {
            page_size_bytes: 6000,
            ..Geometry::default()
        };
        assert!(g
            .validate()
            .unwrap_err()
            .to_string()
            .contains("page_size_bytes"));
        let g = Geometry {
            blocks_per_plane: 1 << 20,
            pages_per_block: 4096,
            ..Geometry::default()
        };
        assert!(g
            .validate()
            .unwrap_err()
            .to_string()
            .contains("mapping units"));
        assert!(Geometry::preset("nope")
            .unwrap_err()
            .to_string()
            .contains("allowed"));
    }
}

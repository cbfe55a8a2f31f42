//! The zoned device's config section (serde, every field documented with its default and unit) and the
//! validated parameters the device runs on.
//!
//! The `zn540-small` preset is a Western Digital Ultrastar DC ZN540 scaled down for tests. Figures of the
//! real drive (1 TB model, as Linux reports it): 4096-byte logical blocks, 904 zones of 2 GiB zone size
//! and 1077 MiB (1,129,316,352 B) zone capacity, at most 14 open and 14 active zones — `zbd report` of a
//! WZS4C8T1TDSP303 in johnramsden/gczns `ZNS.md`; 1077 MiB capacity and 64 B of metadata per LBA also in
//! ZNSwap §6 (`papers/znswap.md`); 96-layer 3D TLC NAND per Western Digital's announcement (press
//! coverage, Nov 2020; one article says QLC). Scaled: 16 planes (4 channels × 2 chips × 1 die ×
//! 2 planes), a zone is one TLC block on every plane (66 pages of 16 KiB: 16.5 MiB capacity, 32 MiB zone
//! size — capacity/size 0.52, the ZN540's is 0.53), 64 zones (2 GiB of LBA space, 1056 MiB of flash),
//! 14 open / 14 active zones, the TLC timings of the cell-mode table (WD publishes no tR/tPROG).

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{DeviceConfig, GeometryOverrides};
use crate::ftl::config::{check_striping_order, d_order, ParallelUnit};
use crate::nand::{CellMode, Geometry, TimingConfig};

/// What Zone Finish programs besides the buffered tail page.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishPadding {
    /// Every page of the zone's capacity not yet programmed is programmed with filler (the zone's blocks
    /// end fully programmed, as the full-zone finish of ConfZNS++ described by SilentZNS). Default.
    Zone,
    /// Only the partially filled tail page is padded; the rest of the zone's blocks stay erased.
    Page,
}

/// What Flush does with buffered sub-page tails.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlushMode {
    /// Each open zone's buffered tail is made durable by programming it, padded to a whole page, into a
    /// staging page (the block SSD pads its open pages on flush the same way). The tail stays buffered
    /// and is programmed in place when its page fills, since the write pointer does not move. Default.
    Pad,
    /// Tails stay in power-loss-protected controller memory: flush does no flash work.
    Retain,
}

/// A zoned (NVMe ZNS) SSD. Any field left out keeps the preset's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZonedConfig {
    /// `zn540-small` (default: a WD Ultrastar DC ZN540 scaled down, see docs/model-zoned.md) or a NAND
    /// geometry preset of the block device (`default`, `diss`, `tlc-1tb`) with the zone defaults below.
    #[serde(default = "d_preset")]
    pub preset: String,
    /// Overrides of the preset's geometry (the keys of `device.geometry`).
    #[serde(default)]
    pub geometry: GeometryOverrides,
    /// NAND timing (the keys of `device.timing`); unset times come from the cell mode (`diss`: its tR/tPROG).
    #[serde(default)]
    pub timing: TimingConfig,
    /// Erase blocks per zone. Zone blocks are dealt to the planes in turn, in `striping_order` (zone z
    /// takes the next `blocks_per_zone` blocks of that sequence of planes, repeated), and a zone's pages
    /// are striped over its blocks. Default: one block on every plane (the number of planes), or what
    /// `zone_capacity_bytes` implies.
    #[serde(default)]
    pub blocks_per_zone: Option<u32>,
    /// Order in which a zone's blocks, and so its consecutive pages, visit the parallel units,
    /// fastest-varying first (the block FTL's `device.ftl.striping_order`). Default `["channel", "chip",
    /// "die", "plane"]`: consecutive pages of a zone go to other channels, chips and dies before a die's
    /// other plane, as the block SSD's write frontier; `["plane", "die", "chip", "channel"]` puts them on
    /// the planes of one die first.
    #[serde(default = "d_order")]
    pub striping_order: Vec<ParallelUnit>,
    /// Writable bytes per zone (zone capacity); a whole number of erase blocks. Default: `blocks_per_zone`
    /// × block bytes.
    #[serde(default)]
    pub zone_capacity_bytes: Option<u64>,
    /// Bytes between zone starts (zone size), ≥ the capacity, a multiple of 4096; the LBAs between the
    /// capacity and the size are not writable and read as unwritten. Default: the capacity rounded up to a
    /// power of two.
    #[serde(default)]
    pub zone_size_bytes: Option<u64>,
    /// Number of zones. Default: as many as the flash holds (total blocks ÷ `blocks_per_zone`).
    #[serde(default)]
    pub zones: Option<u32>,
    /// Most zones open (implicitly or explicitly) at once; 0 = no limit. Default 14 (ZN540).
    #[serde(default = "d_limit")]
    pub max_open_zones: u32,
    /// Most zones active (open or closed) at once; 0 = no limit. Default 14 (ZN540).
    #[serde(default = "d_limit")]
    pub max_active_zones: u32,
    /// What Zone Finish pads: `zone` (default; every unprogrammed page of the capacity) or `page` (only the
    /// buffered tail page).
    #[serde(default = "d_finish")]
    pub finish_padding: FinishPadding,
    /// What Flush does with buffered sub-page tails: `pad` (default; program them padded to a page, in a
    /// staging page) or `retain` (power-loss-protected buffer, no flash work).
    #[serde(default = "d_flush")]
    pub flush: FlushMode,
    /// Reads may span zones (NVMe "Read Across Zone Boundaries"). Default false: a read that crosses a
    /// zone boundary is a protocol error ("zone boundary crossed").
    #[serde(default)]
    pub cross_zone_reads: bool,
    /// The host-side block interface used when block requests (a synthetic workload, a trace) drive the
    /// zoned device (docs/model-zoned.md). Host programs use a zone-aware swap backend instead.
    #[serde(default)]
    pub block_layer: BlockLayerConfig,
}

/// `[device.zoned.block_layer]`: a dm-zoned-like translation layer in the host that gives block
/// workloads a random-write block device on top of the zones: 4 KiB mapping, one open zone for host
/// writes and one for its own GC, greedy (or any block-FTL victim policy) zone reclamation with reads,
/// rewrites at the write pointer and a zone reset; a zone left with no valid data is reset at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockLayerConfig {
    /// Spare space as a fraction of the logical capacity: logical = floor(zones × capacity ÷ (1 + op)).
    /// Default 0.1.
    #[serde(default = "d_bl_op")]
    pub over_provisioning: f64,
    /// GC starts when fewer zones than this are free. Default 2.
    #[serde(default = "d_bl_low")]
    pub gc_low_free_zones: u32,
    /// GC runs until this many zones are free. Default 3.
    #[serde(default = "d_bl_high")]
    pub gc_high_free_zones: u32,
    /// Victim zone choice (the block FTL's victim policies). Default `{ policy = "greedy" }`.
    #[serde(default = "d_bl_victim")]
    pub victim: crate::ftl::config::VictimConfig,
}
fn d_bl_op() -> f64 {
    0.1
}
fn d_bl_low() -> u32 {
    2
}
fn d_bl_high() -> u32 {
    3
}
fn d_bl_victim() -> crate::ftl::config::VictimConfig {
    crate::ftl::config::VictimConfig::Greedy {
        tie_break: Default::default(),
    }
}
impl Default for BlockLayerConfig {
    fn default() -> Self {
        BlockLayerConfig {
            over_provisioning: d_bl_op(),
            gc_low_free_zones: d_bl_low(),
            gc_high_free_zones: d_bl_high(),
            victim: d_bl_victim(),
        }
    }
}

fn d_preset() -> String {
    "zn540-small".into()
}
fn d_limit() -> u32 {
    14
}
fn d_finish() -> FinishPadding {
    FinishPadding::Zone
}
fn d_flush() -> FlushMode {
    FlushMode::Pad
}

impl Default for ZonedConfig {
    fn default() -> Self {
        ZonedConfig {
            preset: d_preset(),
            geometry: GeometryOverrides::default(),
            timing: TimingConfig::default(),
            blocks_per_zone: None,
            striping_order: d_order(),
            zone_capacity_bytes: None,
            zone_size_bytes: None,
            zones: None,
            max_open_zones: d_limit(),
            max_active_zones: d_limit(),
            finish_padding: d_finish(),
            flush: d_flush(),
            cross_zone_reads: false,
            block_layer: BlockLayerConfig::default(),
        }
    }
}

/// The scaled-down ZN540 flash array (see the module documentation for the figures and their sources).
pub fn zn540_small_geometry() -> Geometry {
    Geometry {
        channels: 4,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 64,
        pages_per_block: 66,
        page_size_bytes: 16384,
        cell_mode: CellMode::Tlc,
    }
}

/// Validated parameters of a zoned device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZonedParams {
    pub geometry: Geometry,
    pub timing: TimingConfig,
    pub blocks_per_zone: u32,
    /// Stripe order of the zones' blocks over the planes (`striping_order`).
    pub striping_order: Vec<ParallelUnit>,
    pub zones: u32,
    pub zone_size_bytes: u64,
    pub zone_capacity_bytes: u64,
    /// `None` = no limit.
    pub max_open_zones: Option<u32>,
    pub max_active_zones: Option<u32>,
    pub finish_padding: FinishPadding,
    pub flush: FlushMode,
    pub cross_zone_reads: bool,
}

/// Largest zone size accepted (1 TiB: 2^28 units of 4 KiB).
const MAX_ZONE_SIZE_BYTES: u64 = 1 << 40;
/// Largest LBA space accepted (zones × zone size).
const MAX_LBA_SPACE_BYTES: u64 = 1 << 62;

impl ZonedConfig {
    /// The `zn540-small` preset with every default.
    pub fn zn540_small() -> ZonedConfig {
        ZonedConfig::default()
    }

    /// Resolve the preset and overrides and check every value; the error names the offending key.
    pub fn resolve(&self) -> Result<ZonedParams> {
        let (geometry, timing) = if self.preset == "zn540-small" {
            let g = self.geometry.apply(zn540_small_geometry())?;
            (g, self.timing.clone())
        } else {
            let dc = DeviceConfig {
                preset: self.preset.clone(),
                geometry: self.geometry.clone(),
                timing: self.timing.clone(),
            };
            let g = dc.geometry().map_err(|e| match e {
                Error::Config { msg, .. } => Error::config(
                    "device.zoned.preset",
                    msg.replace("allowed: ", "allowed: zn540-small, "),
                ),
                other => other,
            })?;
            (g, dc.timing())
        };
        timing.validate()?;
        if timing.page_levels.is_some() {
            return Err(Error::config(
                "device.zoned.timing.page_levels",
                "per-level page latencies are modelled for block devices (device.kind = \"block\") only",
            ));
        }
        check_striping_order(&self.striping_order, "device.zoned.striping_order")?;
        let block_bytes = geometry.pages_per_block as u64 * geometry.page_size_bytes as u64;
        let blocks_per_zone = self.blocks_per_zone_of(&geometry, block_bytes)?;
        let zone_capacity_bytes = blocks_per_zone as u64 * block_bytes;
        let zone_size_bytes = match self.zone_size_bytes {
            None => zone_capacity_bytes.next_power_of_two(),
            Some(s) => {
                if s < zone_capacity_bytes || !s.is_multiple_of(MAPPING_UNIT_BYTES) {
                    return Err(Error::config(
                        "device.zoned.zone_size_bytes",
                        format!("is {s}: must be a multiple of 4096 and at least the zone capacity ({zone_capacity_bytes})"),
                    ));
                }
                s
            }
        };
        if zone_size_bytes > MAX_ZONE_SIZE_BYTES {
            return Err(Error::config(
                "device.zoned.zone_size_bytes",
                format!("is {zone_size_bytes}: at most {MAX_ZONE_SIZE_BYTES} (1 TiB) is supported"),
            ));
        }
        let fit = geometry.total_blocks() / blocks_per_zone;
        let zones = self.zones.unwrap_or(fit);
        if zones == 0 || zones > fit {
            return Err(Error::config(
                "device.zoned.zones",
                format!("is {zones}: must be 1 to {fit} (total blocks ÷ blocks_per_zone)"),
            ));
        }
        if zones as u128 * zone_size_bytes as u128 > MAX_LBA_SPACE_BYTES as u128 {
            return Err(Error::config(
                "device.zoned.zone_size_bytes",
                format!("is {zone_size_bytes}: {zones} zones of it exceed the 2^62-byte LBA space supported"),
            ));
        }
        let limit = |v: u32| (v > 0).then_some(v);
        let (max_open_zones, max_active_zones) =
            (limit(self.max_open_zones), limit(self.max_active_zones));
        if let (Some(o), Some(a)) = (max_open_zones, max_active_zones) {
            if o > a {
                return Err(Error::config(
                    "device.zoned.max_open_zones",
                    format!("is {o}: an open zone is active, so it may not exceed max_active_zones ({a})"),
                ));
            }
        }
        Ok(ZonedParams {
            geometry,
            timing,
            blocks_per_zone,
            striping_order: self.striping_order.clone(),
            zones,
            zone_size_bytes,
            zone_capacity_bytes,
            max_open_zones,
            max_active_zones,
            finish_padding: self.finish_padding,
            flush: self.flush,
            cross_zone_reads: self.cross_zone_reads,
        })
    }

    fn blocks_per_zone_of(&self, geo: &Geometry, block_bytes: u64) -> Result<u32> {
        let total = geo.total_blocks();
        let from_capacity = match self.zone_capacity_bytes {
            None => None,
            Some(c) => {
                if c == 0 || !c.is_multiple_of(block_bytes) {
                    return Err(Error::config(
                        "device.zoned.zone_capacity_bytes",
                        format!("is {c}: must be a positive multiple of the erase-block size ({block_bytes} bytes)"),
                    ));
                }
                Some(c / block_bytes)
            }
        };
        let b = match (self.blocks_per_zone, from_capacity) {
            (Some(b), Some(c)) if b as u64 != c => {
                return Err(Error::config(
                    "device.zoned.zone_capacity_bytes",
                    format!(
                    "is {c} blocks' worth but blocks_per_zone is {b}: give one, or both agreeing"
                ),
                ))
            }
            (Some(b), _) => b as u64,
            (None, Some(c)) => c,
            (None, None) => geo.planes() as u64,
        };
        if b == 0 || b > total as u64 {
            let key = if self.blocks_per_zone.is_some() {
                "device.zoned.blocks_per_zone"
            } else {
                "device.zoned.zone_capacity_bytes"
            };
            return Err(Error::config(
                key,
                format!("gives {b} blocks per zone: must be 1 to {total} (the device's blocks)"),
            ));
        }
        Ok(b as u32)
    }
}

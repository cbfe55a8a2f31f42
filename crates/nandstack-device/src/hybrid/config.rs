//! The hybrid device's config section (serde, every field documented) and the validated parameters the
//! FTL runs on.

use nandstack_core::{Error, Nanos, Result, MAPPING_UNIT_BYTES};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ftl::config::{SwapDataConfig, VictimConfig};
use crate::nand::{CellMode, CellTiming};

/// Named starting points.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HybridPreset {
    /// The paper's device (Section 4 of `rl-slc-cache.md`): one 32 GB QLC chip of 2,138 blocks, 16 KiB
    /// pages, 256 pages per block in SLC mode and 1,024 in QLC mode, 3% over-provisioning, 144 KiB write
    /// buffer, migration / GC below 5 free blocks, Table 1 timings.
    Paper,
}

/// Which data may share a block (the block FTL's `device.ftl.placement` rules that apply to the hybrid,
/// whose streams are already split by cause and program mode).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "policy", deny_unknown_fields)]
pub enum HybridPlacement {
    /// One block per stream for all data (default).
    #[default]
    Single,
    /// DISS SDS: data in the swap range the host registered and other data never share a block — each
    /// stream (host→SLC, host→QLC, migration, QLC GC; UST's per-logical-block SLC blocks) keeps a swap
    /// and a file block. Before a range is registered everything is file data.
    SwapFile,
}

/// The hybrid SLC/QLC device. Any field left out keeps the preset's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridDeviceConfig {
    /// `paper` (default; see the preset's description).
    #[serde(default = "d_preset")]
    pub preset: HybridPreset,
    /// Erase blocks on the chip. Default: preset (paper 2,138).
    #[serde(default)]
    pub total_blocks: Option<u32>,
    /// Flash page size in bytes, a multiple of 4096 up to 65536. Default: preset (16384). 4096 gives a
    /// quarter-capacity device with the same block structure and the same cost per byte ratios (every
    /// per-byte cost ×4): the fast way to run scaled experiments.
    #[serde(default)]
    pub page_bytes: Option<u32>,
    /// Pages per block when the block is programmed in SLC mode. Default: preset (256).
    #[serde(default)]
    pub slc_pages_per_block: Option<u32>,
    /// Pages per block when the block is programmed in QLC mode. Default: preset (1,024).
    #[serde(default)]
    pub qlc_pages_per_block: Option<u32>,
    /// Over-provisioning: logical capacity = all blocks in QLC mode ÷ (1 + this), in [0, 1]. Default:
    /// preset (0.03).
    #[serde(default)]
    pub over_provisioning: Option<f64>,
    /// DRAM write buffer in bytes (4 KiB units, FIFO, absorbs overwrites); 0 = none. Default: preset
    /// (147,456 = 144 KiB).
    #[serde(default)]
    pub write_buffer_bytes: Option<u64>,
    /// SLC→QLC migration (or UST's SLC GC) runs when a host write needs an SLC block and the SLC region
    /// has fewer free blocks than this. Default: preset (5).
    #[serde(default)]
    pub slc_free_threshold_blocks: Option<u32>,
    /// QLC GC runs when the QLC region has fewer free blocks than this; at least 2, so GC always starts
    /// with an erased block for its own destination. Default: preset (5).
    #[serde(default)]
    pub qlc_free_threshold_blocks: Option<u32>,
    /// Victim of SLC→QLC migration, among the SLC region's sealed blocks: any victim policy of the block
    /// FTL (`device.ftl.gc.victim`), e.g. `{ policy = "fifo" }` for the SLC region as a circular log.
    /// Default `{ policy = "greedy" }` (fewest valid units; ties: the block that reached its count
    /// first). QLC GC is always greedy.
    #[serde(default)]
    pub slc_victim: Option<VictimConfig>,
    /// Placement: `{ policy = "single" }` (default) or `{ policy = "swap_file" }` (DISS SDS, as
    /// `device.ftl.placement` on a block device: swap-range data and other data never share a block).
    #[serde(default)]
    pub placement: Option<HybridPlacement>,
    /// What the device does with data in the registered swap range (DISS CL-SDI), as
    /// `[device.ftl.swap]` on a block device.
    #[serde(default)]
    pub swap: SwapDataConfig,
    /// NAND times; unset ones are Table 1 of the paper (SLC 30 / 160 / 3,000 µs, QLC 140 / 3,102 /
    /// 3,500 µs).
    #[serde(default)]
    pub timing: HybridTimingOverrides,
}
fn d_preset() -> HybridPreset {
    HybridPreset::Paper
}
impl Default for HybridDeviceConfig {
    fn default() -> Self {
        HybridDeviceConfig {
            preset: d_preset(),
            total_blocks: None,
            page_bytes: None,
            slc_pages_per_block: None,
            qlc_pages_per_block: None,
            over_provisioning: None,
            write_buffer_bytes: None,
            slc_free_threshold_blocks: None,
            qlc_free_threshold_blocks: None,
            slc_victim: None,
            placement: None,
            swap: SwapDataConfig::default(),
            timing: HybridTimingOverrides::default(),
        }
    }
}

/// NAND operation times in microseconds; each unset one takes Table 1's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridTimingOverrides {
    /// SLC-mode page read (µs). Default 30.
    pub slc_read_us: Option<f64>,
    /// SLC-mode page program (µs). Default 160.
    pub slc_program_us: Option<f64>,
    /// SLC-mode block erase (µs). Default 3,000.
    pub slc_erase_us: Option<f64>,
    /// QLC page read (µs). Default 140.
    pub qlc_read_us: Option<f64>,
    /// QLC page program (µs). Default 3,102.
    pub qlc_program_us: Option<f64>,
    /// QLC block erase (µs). Default 3,500.
    pub qlc_erase_us: Option<f64>,
}

/// Validated device parameters (all derived numbers in one place).
#[derive(Clone, Debug, PartialEq)]
pub struct HybridParams {
    pub total_blocks: u32,
    pub page_bytes: u32,
    /// 4 KiB units per flash page.
    pub units_per_page: u32,
    pub slc_units_per_block: u32,
    pub qlc_units_per_block: u32,
    pub over_provisioning: f64,
    /// Host-visible capacity in 4 KiB units.
    pub logical_units: u32,
    pub write_buffer_units: u32,
    pub slc_free_threshold: u32,
    pub qlc_free_threshold: u32,
    pub slc_victim: VictimConfig,
    pub placement: HybridPlacement,
    /// DISS CL-SDI: reads of the registered swap range invalidate what they read.
    pub invalidate_on_read: bool,
    pub slc: CellTiming,
    pub qlc: CellTiming,
}

/// Open QLC streams (host, migration, GC) per data kind: their blocks never hold settled data.
pub const QLC_OPEN_STREAMS: u32 = 3;

impl HybridParams {
    /// Data kinds kept in separate blocks: 2 (file, swap) with `swap_file` placement, else 1.
    pub fn kinds(&self) -> u32 {
        match self.placement {
            HybridPlacement::SwapFile => 2,
            HybridPlacement::Single => 1,
        }
    }
    /// Blocks the QLC region keeps beyond its data: its GC threshold, its open blocks (per data kind)
    /// and one spare.
    pub fn qlc_reserve_blocks(&self) -> u32 {
        self.qlc_free_threshold + QLC_OPEN_STREAMS * self.kinds() + 1
    }
    /// Smallest non-zero SLC region: the free-block threshold plus an open block per data kind and a
    /// sealed block.
    pub fn min_slc_blocks(&self) -> u32 {
        self.slc_free_threshold + self.kinds() + 1
    }
    /// Largest SLC region that leaves the QLC region room for all `valid_units` of data (as if every SLC
    /// copy were migrated) with the device's over-provisioning ratio, plus its reserve. The SLC cache is
    /// carved out of free space: it can always shrink to zero, QLC GC always makes progress, and a full
    /// device has no SLC cache.
    pub fn max_slc_blocks(&self, valid_units: u64) -> u32 {
        let data = (valid_units as f64 * (1.0 + self.over_provisioning)).ceil() as u64;
        let need =
            data.div_ceil(self.qlc_units_per_block as u64) + self.qlc_reserve_blocks() as u64;
        (self.total_blocks as u64).saturating_sub(need) as u32
    }
    pub fn slc_block_bytes(&self) -> u64 {
        self.slc_units_per_block as u64 * MAPPING_UNIT_BYTES
    }
    pub fn qlc_block_bytes(&self) -> u64 {
        self.qlc_units_per_block as u64 * MAPPING_UNIT_BYTES
    }
    pub fn logical_bytes(&self) -> u64 {
        self.logical_units as u64 * MAPPING_UNIT_BYTES
    }
    /// The paper preset's parameters.
    pub fn paper() -> HybridParams {
        HybridDeviceConfig::default()
            .params()
            .expect("the paper preset is valid")
    }
}

fn us(v: Option<f64>, default: Nanos, key: &str) -> Result<Nanos> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x > 0.0 && x <= 1e7 => Ok(Nanos((x * 1000.0).round() as u64)),
        Some(x) => Err(Error::config(
            format!("device.hybrid.timing.{key}"),
            format!("is {x}: must be in (0, 1e7] µs"),
        )),
    }
}

impl HybridDeviceConfig {
    /// Apply the preset and the overrides, and validate.
    pub fn params(&self) -> Result<HybridParams> {
        let HybridPreset::Paper = self.preset;
        let total_blocks = self.total_blocks.unwrap_or(2138);
        let page_bytes = self.page_bytes.unwrap_or(16384);
        let slc_ppb = self.slc_pages_per_block.unwrap_or(256);
        let qlc_ppb = self.qlc_pages_per_block.unwrap_or(1024);
        let op = self.over_provisioning.unwrap_or(0.03);
        let buf = self.write_buffer_bytes.unwrap_or(144 * 1024);
        let slc_thr = self.slc_free_threshold_blocks.unwrap_or(5);
        let qlc_thr = self.qlc_free_threshold_blocks.unwrap_or(5);
        if page_bytes == 0 || !page_bytes.is_multiple_of(4096) || page_bytes > 65536 {
            return Err(Error::config(
                "device.hybrid.page_bytes",
                format!("is {page_bytes}: must be a multiple of 4096 in [4096, 65536]"),
            ));
        }
        if slc_ppb == 0 || slc_ppb > qlc_ppb {
            return Err(Error::config(
                "device.hybrid.slc_pages_per_block",
                format!("is {slc_ppb}: must be in [1, qlc_pages_per_block = {qlc_ppb}]"),
            ));
        }
        if qlc_ppb > 65536 {
            return Err(Error::config(
                "device.hybrid.qlc_pages_per_block",
                format!("is {qlc_ppb}: must be at most 65536"),
            ));
        }
        if !(op.is_finite() && (0.0..=1.0).contains(&op)) {
            return Err(Error::config(
                "device.hybrid.over_provisioning",
                format!("is {op}: must be in [0, 1]"),
            ));
        }
        if !buf.is_multiple_of(MAPPING_UNIT_BYTES) || buf > 256 * 1024 * 1024 {
            return Err(Error::config(
                "device.hybrid.write_buffer_bytes",
                format!("is {buf}: must be a multiple of 4096, at most 256 MiB"),
            ));
        }
        if slc_thr == 0 || slc_thr > 1000 {
            return Err(Error::config(
                "device.hybrid.slc_free_threshold_blocks",
                format!("is {slc_thr}: must be in [1, 1000]"),
            ));
        }
        if !(2..=1000).contains(&qlc_thr) {
            return Err(Error::config(
                "device.hybrid.qlc_free_threshold_blocks",
                format!(
                    "is {qlc_thr}: must be in [2, 1000] (QLC GC starts when fewer blocks are free, and \
                     needs one erased block for the data it moves)"
                ),
            ));
        }
        let units_per_page = page_bytes / 4096;
        let qlc_upb = qlc_ppb * units_per_page;
        let physical = total_blocks as u64 * qlc_upb as u64;
        if total_blocks < 16 || physical >= (1u64 << 31) {
            return Err(Error::config(
                "device.hybrid.total_blocks",
                format!(
                    "is {total_blocks}: need at least 16 blocks and fewer than 2^31 4 KiB units in all \
                     (this geometry has {physical})"
                ),
            ));
        }
        let placement = self.placement.unwrap_or_default();
        if placement == HybridPlacement::SwapFile && qlc_thr < 3 {
            return Err(Error::config(
                "device.hybrid.qlc_free_threshold_blocks",
                format!(
                    "is {qlc_thr}: with placement swap_file it must be at least 3 (QLC GC may need an \
                     erased block for each data kind it moves)"
                ),
            ));
        }
        if let Some(VictimConfig::DChoices { d }) = self.slc_victim {
            if d == 0 || d > total_blocks {
                return Err(Error::config(
                    "device.hybrid.slc_victim.d",
                    format!("is {d}: must be in [1, {total_blocks}] (the blocks on the chip)"),
                ));
            }
        }
        let logical_units = (physical as f64 / (1.0 + op)).floor() as u32;
        let d = CellMode::Slc.default_timing();
        let q = CellMode::Qlc.default_timing();
        let t = &self.timing;
        let p = HybridParams {
            total_blocks,
            page_bytes,
            units_per_page,
            slc_units_per_block: slc_ppb * units_per_page,
            qlc_units_per_block: qlc_upb,
            over_provisioning: op,
            logical_units,
            write_buffer_units: (buf / MAPPING_UNIT_BYTES) as u32,
            slc_free_threshold: slc_thr,
            qlc_free_threshold: qlc_thr,
            slc_victim: self.slc_victim.clone().unwrap_or_else(VictimConfig::greedy),
            placement,
            invalidate_on_read: self.swap.invalidate_on_read,
            slc: CellTiming {
                read: us(t.slc_read_us, d.read, "slc_read_us")?,
                program: us(t.slc_program_us, d.program, "slc_program_us")?,
                erase: us(t.slc_erase_us, d.erase, "slc_erase_us")?,
            },
            qlc: CellTiming {
                read: us(t.qlc_read_us, q.read, "qlc_read_us")?,
                program: us(t.qlc_program_us, q.program, "qlc_program_us")?,
                erase: us(t.qlc_erase_us, q.erase, "qlc_erase_us")?,
            },
        };
        // A full logical space must fit in QLC blocks beside the QLC reserve, with at least one block of
        // slack so GC always makes progress.
        let need =
            (logical_units as u64).div_ceil(qlc_upb as u64) + p.qlc_reserve_blocks() as u64 + 1;
        if need > total_blocks as u64 {
            return Err(Error::config(
                "device.hybrid.over_provisioning",
                format!(
                    "is {op}: a full logical space needs {need} of the {total_blocks} blocks (data in QLC \
                     mode + QLC GC threshold {qlc_thr} + {} open blocks + 2 spare); raise it or add \
                     blocks",
                    QLC_OPEN_STREAMS * p.kinds()
                ),
            ));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_preset_numbers() {
        let p = HybridParams::paper();
        assert_eq!(p.total_blocks, 2138);
        assert_eq!(
            (
                p.units_per_page,
                p.slc_units_per_block,
                p.qlc_units_per_block
            ),
            (4, 1024, 4096)
        );
        assert_eq!(p.slc_block_bytes(), 4 << 20);
        assert_eq!(p.qlc_block_bytes(), 16 << 20);
        assert_eq!(p.write_buffer_units, 36);
        assert_eq!(p.logical_units, (2138.0 * 4096.0 / 1.03f64).floor() as u32);
        assert_eq!(p.slc.program, Nanos::from_micros(160));
        assert_eq!(p.qlc.program, Nanos::from_micros(3102));
        assert_eq!(p.qlc.erase, Nanos::from_micros(3500));
        // Empty device: everything but the QLC reserve may be SLC; full device: about the OP space.
        assert_eq!(p.max_slc_blocks(0), 2138 - 9);
        assert_eq!(p.max_slc_blocks(p.logical_units as u64), 0);
        // Half full: room for the data plus 3% beside the reserve.
        let half = p.logical_units as u64 / 2;
        let need = ((half as f64 * 1.03).ceil() as u64).div_ceil(4096) as u32;
        assert_eq!(p.max_slc_blocks(half), 2138 - 9 - need);
    }

    #[test]
    fn bad_values_name_the_key() {
        let c = HybridDeviceConfig {
            over_provisioning: Some(0.0),
            total_blocks: Some(64),
            ..Default::default()
        };
        assert!(c
            .params()
            .unwrap_err()
            .to_string()
            .contains("device.hybrid.over_provisioning"));
        let c = HybridDeviceConfig {
            page_bytes: Some(5000),
            ..Default::default()
        };
        assert!(c
            .params()
            .unwrap_err()
            .to_string()
            .contains("device.hybrid.page_bytes"));
        let c = HybridDeviceConfig {
            timing: HybridTimingOverrides {
                qlc_program_us: Some(-1.0),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(c
            .params()
            .unwrap_err()
            .to_string()
            .contains("device.hybrid.timing.qlc_program_us"));
    }
}

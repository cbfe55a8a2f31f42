//! The device section: a named geometry preset with overrides, NAND timing, FTL and controller — the same
//! shape as the block simulator's `device` section, so one device description serves both.

use nandstack_core::Result;
use nandstack_device::nand::{CellMode, Geometry, TimingConfig};
use nandstack_device::ssd::{BlockSsd, ControllerConfig};
use nandstack_device::{Ftl, FtlConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The SSD below the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceSection {
    /// `default` (16 GiB TLC), `diss` (32 GiB, DISS Table 1) or `tlc-1tb`. Default `default`.
    #[serde(default = "d_preset")]
    pub preset: String,
    /// Overrides of the preset's geometry; fields left out keep the preset's value.
    #[serde(default)]
    pub geometry: GeometryOverrides,
    /// NAND timing. Unset read/program/erase times come from the preset (DISS: tR 4 µs, tPROG 75 µs),
    /// else from the cell mode. `enabled = false` makes every request complete when it is issued.
    #[serde(default)]
    pub timing: TimingConfig,
    /// The FTL (over-provisioning, GC, placement, mapping cache).
    #[serde(default)]
    pub ftl: FtlConfig,
    /// The controller (write buffer, TRIM cost, background GC, firmware cost).
    #[serde(default)]
    pub controller: ControllerConfig,
}
fn d_preset() -> String {
    "default".into()
}
impl Default for DeviceSection {
    fn default() -> Self {
        DeviceSection {
            preset: d_preset(),
            geometry: GeometryOverrides::default(),
            timing: TimingConfig::default(),
            ftl: FtlConfig::default(),
            controller: ControllerConfig::default(),
        }
    }
}

/// Geometry fields to override (see the device crate's `Geometry` for their meaning).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeometryOverrides {
    /// Channels (buses).
    pub channels: Option<u32>,
    /// Chips per channel.
    pub chips_per_channel: Option<u32>,
    /// Dies per chip.
    pub dies_per_chip: Option<u32>,
    /// Planes per die.
    pub planes_per_die: Option<u32>,
    /// Erase blocks per plane.
    pub blocks_per_plane: Option<u32>,
    /// Pages per block.
    pub pages_per_block: Option<u32>,
    /// Flash page size in bytes.
    pub page_size_bytes: Option<u32>,
    /// slc, mlc, tlc or qlc.
    pub cell_mode: Option<CellMode>,
}

impl DeviceSection {
    /// The preset with the overrides applied, validated.
    pub fn geometry(&self) -> Result<Geometry> {
        let mut g = Geometry::preset(&self.preset)?;
        let o = &self.geometry;
        macro_rules! apply {
            ($($f:ident),*) => { $( if let Some(v) = o.$f { g.$f = v; } )* };
        }
        apply!(
            channels,
            chips_per_channel,
            dies_per_chip,
            planes_per_die,
            blocks_per_plane,
            pages_per_block,
            page_size_bytes,
            cell_mode
        );
        g.validate()?;
        Ok(g)
    }

    /// Timing with the preset's read/program/erase times filled in where unset.
    pub fn timing(&self) -> TimingConfig {
        let preset = match self.preset.as_str() {
            "diss" => TimingConfig::diss(),
            _ => TimingConfig::default(),
        };
        TimingConfig {
            read_us: self.timing.read_us.or(preset.read_us),
            program_us: self.timing.program_us.or(preset.program_us),
            erase_us: self.timing.erase_us.or(preset.erase_us),
            ..self.timing.clone()
        }
    }

    /// Build the SSD.
    pub fn build(&self, seed: u64) -> Result<BlockSsd> {
        let geo = self.geometry()?;
        let ftl = Ftl::new(geo, self.ftl.clone(), seed)?;
        BlockSsd::new(ftl, &self.timing(), self.controller.clone())
    }
}

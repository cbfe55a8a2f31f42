//! The device section of a config: a named preset with geometry and timing overrides. Shared by every
//! simulation entry point (block workloads, the host memory model).

use nandstack_core::Result;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::nand::{CellMode, Geometry, TimingConfig};

/// The device: a named preset, with any geometry field overridden.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// `default` (16 GiB TLC, 16 KiB pages, 16 planes), `diss` (DISS Table 1, 32 GiB, 4 KiB pages,
    /// 128 planes) or `tlc-1tb` (1 TiB TLC, 16 KiB pages, 256 planes). Default `default`.
    #[serde(default = "d_preset")]
    pub preset: String,
    /// Overrides of the preset's geometry; any field left out keeps the preset's value.
    #[serde(default)]
    pub geometry: GeometryOverrides,
    /// NAND timing. Unset read/program/erase times come from the preset (DISS: tR 4 µs, tPROG 75 µs),
    /// else from the cell mode.
    #[serde(default)]
    pub timing: TimingConfig,
}
fn d_preset() -> String {
    "default".into()
}
impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            preset: d_preset(),
            geometry: GeometryOverrides::default(),
            timing: TimingConfig::default(),
        }
    }
}

/// Geometry fields to override (see the `Geometry` type for meanings).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeometryOverrides {
    /// Channels (buses), in [1, 1024].
    pub channels: Option<u32>,
    /// Chips per channel, in [1, 1024].
    pub chips_per_channel: Option<u32>,
    /// Dies per chip, in [1, 64].
    pub dies_per_chip: Option<u32>,
    /// Planes per die, in [1, 64]; at most 65536 planes in all.
    pub planes_per_die: Option<u32>,
    /// Erase blocks per plane, in [4, 16777216]; at most 2^32 − 2 mapping units (16 TiB) in all.
    pub blocks_per_plane: Option<u32>,
    /// Pages per block, in [1, 65536].
    pub pages_per_block: Option<u32>,
    /// Page size in bytes (4096, 8192, 12288 or 16384).
    pub page_size_bytes: Option<u32>,
    /// slc, mlc, tlc or qlc.
    pub cell_mode: Option<CellMode>,
}

impl DeviceConfig {
    /// The preset with overrides applied, validated.
    pub fn geometry(&self) -> Result<Geometry> {
        self.geometry.apply(Geometry::preset(&self.preset)?)
    }
}

impl GeometryOverrides {
    /// `base` with every field set here replaced, validated.
    pub fn apply(&self, mut g: Geometry) -> Result<Geometry> {
        let o = self;
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
}

impl DeviceConfig {
    /// Timing with preset values filled in where the user left read/program/erase unset.
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
}

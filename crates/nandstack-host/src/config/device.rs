//! The device section: a named geometry preset with overrides, NAND timing, FTL and controller — the same
//! shape as the block simulator's `device` section, so one device description serves both.

use nandstack_core::Result;
use nandstack_device::config::DeviceConfig;
pub use nandstack_device::config::GeometryOverrides;
use nandstack_device::nand::{Geometry, TimingConfig};
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

impl DeviceSection {
    /// The preset, geometry and timing part: the device crate's shared `DeviceConfig`.
    fn nand(&self) -> DeviceConfig {
        DeviceConfig {
            preset: self.preset.clone(),
            geometry: self.geometry.clone(),
            timing: self.timing.clone(),
        }
    }

    /// The preset with the overrides applied, validated.
    pub fn geometry(&self) -> Result<Geometry> {
        self.nand().geometry()
    }

    /// Timing with the preset's read/program/erase times filled in where unset.
    pub fn timing(&self) -> TimingConfig {
        self.nand().timing()
    }

    /// Build the SSD.
    pub fn build(&self, seed: u64) -> Result<BlockSsd> {
        let geo = self.geometry()?;
        let ftl = Ftl::new(geo, self.ftl.clone(), seed)?;
        BlockSsd::new(ftl, &self.timing(), self.controller.clone())
    }
}

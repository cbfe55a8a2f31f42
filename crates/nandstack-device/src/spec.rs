//! `[device]`: which SSD model answers the commands (`kind`) and its sections, and [`build`], the one
//! factory of [`Device`]s. Sections that belong to another kind are errors naming the key, so a config
//! always describes exactly one device.

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{DeviceConfig, GeometryOverrides};
use crate::device::Device;
use crate::hybrid::{HybridDeviceConfig, HybridSsd, ManagerConfig, QTable};
use crate::nand::{Geometry, TimingConfig};
use crate::ssd::{BlockSsd, ControllerConfig};
use crate::zoned::{ZonedConfig, ZonedSsd};
use crate::{Ftl, FtlConfig};

/// The device models.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKindName {
    /// A page-mapped block SSD: geometry, timing, `ftl`, `controller` (default).
    #[default]
    Block,
    /// The hybrid SLC/QLC SSD of the RL SLC-cache paper: `hybrid` and `manager` (docs/hybrid.md).
    Hybrid,
    /// A zoned (NVMe ZNS) SSD: `zoned` (docs/model-zoned.md). The host must write zones sequentially.
    Zoned,
}

impl DeviceKindName {
    pub fn name(self) -> &'static str {
        match self {
            DeviceKindName::Block => "block",
            DeviceKindName::Hybrid => "hybrid",
            DeviceKindName::Zoned => "zoned",
        }
    }
}

/// The SSD.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// `block` (default), `hybrid` or `zoned`.
    #[serde(default)]
    pub kind: DeviceKindName,
    /// Block: geometry preset `default` (16 GiB TLC, 16 KiB pages, 16 planes), `diss` (DISS Table 1,
    /// 32 GiB, 4 KiB pages, 128 planes) or `tlc-1tb` (1 TiB TLC). Default `default`.
    #[serde(default = "d_preset")]
    pub preset: String,
    /// Block: overrides of the preset's geometry; fields left out keep the preset's value.
    #[serde(default)]
    pub geometry: GeometryOverrides,
    /// Block: NAND timing. Unset read/program/erase times come from the preset, else from the cell mode.
    #[serde(default)]
    pub timing: TimingConfig,
    /// Block: the FTL (over-provisioning, GC schedule and victims, placement, mapping cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ftl: Option<FtlConfig>,
    /// Block: the controller (write buffer, TRIM cost, background GC, firmware cost, mapping unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerConfig>,
    /// Hybrid: the SLC/QLC chip (`paper` preset and overrides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridDeviceConfig>,
    /// Hybrid: the SLC-cache manager (`qlc_only`, `static`, `dwa`, `ust`, `rl`) and its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<ManagerConfig>,
    /// Zoned: the zoned device (`zn540-small` preset, its own geometry and timing, zones and limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<ZonedConfig>,
}
fn d_preset() -> String {
    "default".into()
}

impl Default for DeviceSpec {
    fn default() -> Self {
        DeviceSpec {
            kind: DeviceKindName::Block,
            preset: d_preset(),
            geometry: GeometryOverrides::default(),
            timing: TimingConfig::default(),
            ftl: None,
            controller: None,
            hybrid: None,
            manager: None,
            zoned: None,
        }
    }
}

impl DeviceSpec {
    /// Sections of other kinds are errors; the kind's own sections get their defaults (the effective
    /// config names every key of the device it describes, and only those).
    pub fn normalize(&mut self) -> Result<()> {
        let wrong = |key: &str, kind: DeviceKindName| {
            Error::config(
                format!("device.{key}"),
                format!(
                    "does not apply to device.kind = \"{}\"; {}",
                    kind.name(),
                    match key {
                        "ftl" | "controller" => "it belongs to kind = \"block\"",
                        "geometry" | "timing" | "preset" =>
                            "it belongs to kind = \"block\" (a zoned device has its own in device.zoned)",
                        "zoned" => "it belongs to kind = \"zoned\"",
                        _ => "it belongs to kind = \"hybrid\"",
                    }
                ),
            )
        };
        let nand_set = self.geometry != GeometryOverrides::default()
            || self.timing != TimingConfig::default()
            || self.preset != d_preset();
        match self.kind {
            DeviceKindName::Block => {
                if self.zoned.is_some() {
                    return Err(wrong("zoned", self.kind));
                }
                if self.hybrid.is_some() {
                    return Err(wrong("hybrid", self.kind));
                }
                if self.manager.is_some() {
                    return Err(wrong("manager", self.kind));
                }
                self.ftl.get_or_insert_with(FtlConfig::default);
                self.controller
                    .get_or_insert_with(ControllerConfig::default);
            }
            DeviceKindName::Hybrid | DeviceKindName::Zoned => {
                if self.ftl.is_some() {
                    return Err(wrong("ftl", self.kind));
                }
                if self.controller.is_some() {
                    return Err(wrong("controller", self.kind));
                }
                if nand_set {
                    let key = if self.geometry != GeometryOverrides::default() {
                        "geometry"
                    } else if self.timing != TimingConfig::default() {
                        "timing"
                    } else {
                        "preset"
                    };
                    return Err(wrong(key, self.kind));
                }
                if self.kind == DeviceKindName::Hybrid {
                    if self.zoned.is_some() {
                        return Err(wrong("zoned", self.kind));
                    }
                    self.hybrid.get_or_insert_with(HybridDeviceConfig::default);
                    self.manager.get_or_insert_with(ManagerConfig::default);
                } else {
                    if self.hybrid.is_some() {
                        return Err(wrong("hybrid", self.kind));
                    }
                    if self.manager.is_some() {
                        return Err(wrong("manager", self.kind));
                    }
                    self.zoned.get_or_insert_with(ZonedConfig::default);
                }
            }
        }
        Ok(())
    }

    /// The NAND part shared with the geometry presets.
    pub fn nand(&self) -> DeviceConfig {
        DeviceConfig {
            preset: self.preset.clone(),
            geometry: self.geometry.clone(),
            timing: self.timing.clone(),
        }
    }

    /// Block: the preset with the overrides applied, validated.
    pub fn geometry(&self) -> Result<Geometry> {
        self.nand().geometry()
    }

    /// Block: timing with the preset's times filled in where unset.
    pub fn timing(&self) -> TimingConfig {
        self.nand().timing()
    }

    /// The block FTL section (its default when unset).
    pub fn ftl(&self) -> FtlConfig {
        self.ftl.clone().unwrap_or_default()
    }

    /// The block controller section (its default when unset).
    pub fn controller(&self) -> ControllerConfig {
        self.controller.clone().unwrap_or_default()
    }

    /// The hybrid chip section (its default when unset).
    pub fn hybrid(&self) -> HybridDeviceConfig {
        self.hybrid.clone().unwrap_or_default()
    }

    /// The zoned device section (its default when unset).
    pub fn zoned(&self) -> ZonedConfig {
        self.zoned.clone().unwrap_or_default()
    }

    /// The hybrid manager section (its default when unset).
    pub fn manager(&self) -> ManagerConfig {
        self.manager.clone().unwrap_or_default()
    }
}

/// A fresh device. `q_table` seeds the hybrid RL manager (the pre-training chain); `verify` turns on
/// read-after-write version checks from the start.
pub fn build(
    spec: &DeviceSpec,
    seed: u64,
    verify: bool,
    q_table: Option<QTable>,
) -> Result<Box<dyn Device>> {
    let mut dev: Box<dyn Device> = match spec.kind {
        DeviceKindName::Block => {
            let ftl = Ftl::new(spec.geometry()?, spec.ftl(), seed)?;
            Box::new(BlockSsd::new(ftl, &spec.timing(), spec.controller())?)
        }
        DeviceKindName::Hybrid => {
            let params = spec.hybrid().params()?;
            let manager = spec.manager().build(&params, seed, q_table)?;
            Box::new(HybridSsd::deferred(params, manager, verify, seed))
        }
        DeviceKindName::Zoned => Box::new(ZonedSsd::new(&spec.zoned())?),
    };
    if verify {
        dev.enable_verification();
    }
    // The tables of earlier devices that this one did not reuse are freed, not held beside it.
    nandstack_core::alloc::release_kept();
    Ok(dev)
}

/// A device for block requests (a synthetic workload, a trace, a stand-in): `build`, except that a zoned
/// device is wrapped in the host-side block layer (`[device.zoned.block_layer]`), which gives it a
/// random-write block interface.
pub fn build_for_block_requests(
    spec: &DeviceSpec,
    seed: u64,
    verify: bool,
    q_table: Option<QTable>,
) -> Result<Box<dyn Device>> {
    let dev = build(spec, seed, verify, q_table)?;
    if spec.kind != DeviceKindName::Zoned {
        return Ok(dev);
    }
    let z = spec.zoned();
    let mut layer = crate::zoned::ZonedBlockLayer::new(dev, &z.resolve()?, &z.block_layer, seed)?;
    if verify {
        layer.enable_verification();
    }
    Ok(Box::new(layer))
}

/// The logical capacity block requests see (the block layer's for a zoned device).
pub fn block_logical_bytes(spec: &DeviceSpec) -> Result<u64> {
    if spec.kind == DeviceKindName::Zoned {
        let z = spec.zoned();
        return crate::zoned::ZonedBlockLayer::logical_bytes(&z.resolve()?, &z.block_layer);
    }
    logical_bytes(spec)
}

/// The logical capacity a device config gives, without building the device.
pub fn logical_bytes(spec: &DeviceSpec) -> Result<u64> {
    Ok(match spec.kind {
        DeviceKindName::Block => {
            let geo = spec.geometry()?;
            spec.ftl().logical_units(&geo) * MAPPING_UNIT_BYTES
        }
        DeviceKindName::Hybrid => spec.hybrid().params()?.logical_bytes(),
        DeviceKindName::Zoned => {
            let p = spec.zoned().resolve()?;
            p.zones as u64 * p.zone_size_bytes
        }
    })
}

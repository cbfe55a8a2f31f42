//! zram's settings (`[host.swap.backend] kind = "zram"`) and their checks.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compressor::CompressorKind;

/// What zram writes back to its backing device (`echo MODE > /sys/block/zram0/writeback`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ZramWritebackMode {
    /// No backing device (the default zram).
    Off,
    /// Pages stored uncompressed (`huge`).
    Huge,
    /// Pages not written since the previous pass (`idle`, after `echo all > idle`).
    Idle,
    /// Pages both huge and idle (`huge_idle`).
    HugeIdle,
}

/// zram writeback to a backing device (`CONFIG_ZRAM_WRITEBACK`): every `interval_ms` the model does what a
/// user-space agent does — write the selected pages back, then mark every stored page idle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZramWritebackConfig {
    /// `off`, `huge`, `idle` or `huge_idle`. Default `off`.
    #[serde(default = "d_wb_mode")]
    pub mode: ZramWritebackMode,
    /// Period of the writeback passes, simulated ms. Default 1000.
    #[serde(default = "d_wb_interval")]
    pub interval_ms: f64,
}
fn d_wb_mode() -> ZramWritebackMode {
    ZramWritebackMode::Off
}
fn d_wb_interval() -> f64 {
    1000.0
}
impl Default for ZramWritebackConfig {
    fn default() -> Self {
        ZramWritebackConfig {
            mode: d_wb_mode(),
            interval_ms: d_wb_interval(),
        }
    }
}

/// zram (`drivers/block/zram/`): the swap area is a compressed RAM disk of `host.swap.size_mib`
/// (`disksize`), a synchronous device; its backing device, when writeback is on, is the swap partition's
/// range of the SSD (`host.swap.offset_mib`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZramConfig {
    /// `comp_algorithm`: `lzo`, `lzo-rle`, `lz4`, `deflate` or `zstd`. Default `lzo-rle`.
    #[serde(default = "d_lzo_rle")]
    pub comp_algorithm: CompressorKind,
    /// `mem_limit`: most memory the pool may hold, MiB; a write beyond it fails (the page stays dirty
    /// in memory). 0 = no limit. Default 0.
    #[serde(default)]
    pub mem_limit_mib: u64,
    /// Writeback of stored pages to the backing device. Default off.
    #[serde(default)]
    pub writeback: ZramWritebackConfig,
}
fn d_lzo_rle() -> CompressorKind {
    CompressorKind::LzoRle
}
impl Default for ZramConfig {
    fn default() -> Self {
        ZramConfig {
            comp_algorithm: d_lzo_rle(),
            mem_limit_mib: 0,
            writeback: ZramWritebackConfig::default(),
        }
    }
}

impl ZramConfig {
    pub fn validate(&self) -> Result<()> {
        let i = self.writeback.interval_ms;
        if !(i.is_finite() && i >= 1.0) {
            return Err(Error::config(
                "host.swap.backend.writeback.interval_ms",
                format!("is {i}: must be ≥ 1"),
            ));
        }
        if self.mem_limit_mib > 1 << 30 {
            return Err(Error::config(
                "host.swap.backend.mem_limit_mib",
                format!("is {}: too large", self.mem_limit_mib),
            ));
        }
        Ok(())
    }
}

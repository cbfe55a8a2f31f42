//! Controller configuration: write buffer, TRIM cost, background GC.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::engine::{GcPageMoves, GcPreemptionConfig, SchedulingConfig, SuspensionConfig};
use crate::cache::WriteBufferConfig;

/// Background GC in idle periods (off by default: all GC is foreground).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundGcConfig {
    /// Default false.
    #[serde(default)]
    pub enabled: bool,
    /// The device counts as idle once no host request has been outstanding for this long, in µs.
    /// Default 1000.
    #[serde(default = "d_idle")]
    pub idle_threshold_us: f64,
    /// Collect in idle time while free blocks (per plane or device, as `ftl.gc.scope`) are below this.
    /// Default: `ftl.gc.stop_free_blocks` + 2.
    #[serde(default)]
    pub target_free_blocks: Option<u32>,
}
fn d_idle() -> f64 {
    1000.0
}
impl Default for BackgroundGcConfig {
    fn default() -> Self {
        BackgroundGcConfig {
            enabled: false,
            idle_threshold_us: d_idle(),
            target_free_blocks: None,
        }
    }
}

/// The SSD controller around the FTL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    #[serde(default)]
    pub write_buffer: WriteBufferConfig,
    /// Fixed cost of each TRIM command, in µs. Default 0.
    #[serde(default)]
    pub trim_command_overhead_us: f64,
    /// Cost of looking up one mapping entry a TRIM touches (in DRAM; a mapping-cache miss additionally
    /// reads a translation page), in ns. Default 0.
    #[serde(default)]
    pub trim_entry_lookup_ns: u64,
    #[serde(default)]
    pub background_gc: BackgroundGcConfig,
    /// Controller firmware (CPU) cost model.
    #[serde(default)]
    pub firmware: FirmwareConfig,
    /// The firmware's mapping unit in bytes: 4096 (default, the engine's unit) or a larger multiple of
    /// 4096 (e.g. 16384 for the Cosmos+ OpenSSD firmware, which maps 16 KiB slices): smaller writes are
    /// widened to whole units by read-modify-write.
    #[serde(default = "d_mu")]
    pub mapping_unit_bytes: u64,
    /// How GC moves a valid page: `auto` (default: copyback within the plane, through the controller
    /// otherwise), `copyback` or `controller` (the page crosses the channel out and back in).
    #[serde(default, skip_serializing_if = "is_default")]
    pub gc_page_moves: GcPageMoves,
    /// The transaction scheduler and the engine that places flash operations (docs/model-timing.md).
    #[serde(default, skip_serializing_if = "is_default")]
    pub scheduling: SchedulingConfig,
    /// Program/erase suspension for reads (off by default).
    #[serde(default, skip_serializing_if = "is_default")]
    pub suspension: SuspensionConfig,
    /// Semi-preemptible GC (off by default: GC is non-preemptive).
    #[serde(default, skip_serializing_if = "is_default")]
    pub gc_preemption: GcPreemptionConfig,
}
/// Keys at their default are left out of the serialized config (summaries of runs that do not use a
/// mechanism stay as they were).
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
fn d_mu() -> u64 {
    4096
}

/// Controller CPU time on the request path. The controller CPU is one resource: each command occupies it
/// for `ns_per_request` + `ns_per_page` × 4 KiB pages + the placement policy's and buffer policy's own
/// costs (hashes, list scans) before its flash operations can start. All zero by default (no CPU limit).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FirmwareConfig {
    /// Fixed CPU time per host command, ns. Default 0.
    #[serde(default)]
    pub ns_per_request: u64,
    /// CPU time per 4 KiB page a command covers, ns. Default 0.
    #[serde(default)]
    pub ns_per_page: u64,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            write_buffer: Default::default(),
            trim_command_overhead_us: 0.0,
            trim_entry_lookup_ns: 0,
            background_gc: Default::default(),
            firmware: Default::default(),
            mapping_unit_bytes: d_mu(),
            gc_page_moves: GcPageMoves::default(),
            scheduling: SchedulingConfig::default(),
            suspension: SuspensionConfig::default(),
            gc_preemption: GcPreemptionConfig::default(),
        }
    }
}

impl ControllerConfig {
    pub fn validate(&self) -> nandstack_core::Result<()> {
        let mu = self.mapping_unit_bytes;
        if mu == 0 || !mu.is_multiple_of(4096) || mu > 1 << 20 {
            return Err(nandstack_core::Error::config(
                "device.controller.mapping_unit_bytes",
                format!("is {mu}: must be a multiple of 4096 up to 1 MiB"),
            ));
        }
        let t = self.trim_command_overhead_us;
        if !(t.is_finite() && (0.0..1e7).contains(&t)) {
            return Err(nandstack_core::Error::config(
                "device.controller.trim_command_overhead_us",
                format!("is {t}: must be in [0, 1e7)"),
            ));
        }
        let i = self.background_gc.idle_threshold_us;
        if !(i.is_finite() && i >= 0.0) {
            return Err(nandstack_core::Error::config(
                "device.controller.background_gc.idle_threshold_us",
                format!("is {i}: must be ≥ 0"),
            ));
        }
        self.scheduling.validate()?;
        self.suspension.validate()?;
        Ok(())
    }

    /// Whether the queued (event-driven) engine places the flash operations: asked for, or needed by a
    /// mechanism that is on. Errors name a mechanism that needs it when `engine = "direct"`.
    pub fn queued_engine(&self) -> nandstack_core::Result<bool> {
        let s = &self.scheduling;
        let needs = [
            (
                s.policy != super::engine::SchedulerKind::Fifo,
                "scheduling.policy",
            ),
            (s.multi_plane, "scheduling.multi_plane"),
            (self.suspension.program, "suspension.program"),
            (self.suspension.erase, "suspension.erase"),
            (self.gc_preemption.enabled, "gc_preemption.enabled"),
        ];
        let needed = needs.iter().find(|(on, _)| *on).map(|(_, k)| *k);
        match (s.engine, needed) {
            (super::engine::EngineChoice::Direct, Some(k)) => Err(nandstack_core::Error::config(
                format!("device.controller.{k}"),
                "needs the queued engine, but device.controller.scheduling.engine = \"direct\"",
            )),
            (super::engine::EngineChoice::Queued, _) => Ok(true),
            (_, needed) => Ok(needed.is_some()),
        }
    }
}

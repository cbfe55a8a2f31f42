//! Configuration of the controller's scheduling mechanisms: the transaction scheduler, multi-plane
//! commands, program/erase suspension, semi-preemptible GC and the GC page-move path. Every mechanism
//! is off by default; with all of them off the controller is today's direct model (docs/model-timing.md).

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which timing engine places the flash operations.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// `direct` unless a mechanism below needs queueing (default).
    #[default]
    Auto,
    /// Operations placed in request order on busy-until timelines, their times computed at submission
    /// (today's model; first come, first served per die and channel).
    Direct,
    /// The event-driven controller: per-die transaction queues served by the scheduler as dies free up
    /// (completion times may depend on later commands).
    Queued,
}

/// The transaction scheduler of the queued engine (one file per policy in `ssd/engine/sched/`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Each die serves its transactions in arrival order; one waiting for its data holds the die
    /// (default; today's behaviour).
    #[default]
    Fifo,
    /// Each die serves the oldest transaction that can start (Sprinkler-like: a transaction waiting for
    /// its data or for another die does not hold its die).
    OutOfOrder,
    /// Reads first (host, read-modify-write, mapping), then host writes, then GC; oldest first within a
    /// class (RPS of Wu & He).
    ReadPriority,
    /// FLIN-like fairness between flows: low-intensity flows first, then the transaction whose flow's
    /// slowdown is largest (docs/model-timing.md).
    Fair,
}

impl SchedulerKind {
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fifo => "fifo",
            SchedulerKind::OutOfOrder => "out_of_order",
            SchedulerKind::ReadPriority => "read_priority",
            SchedulerKind::Fair => "fair",
        }
    }
}

/// `[device.controller.scheduling]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchedulingConfig {
    /// `auto` (default), `direct` or `queued`.
    #[serde(default)]
    pub engine: EngineChoice,
    /// `fifo` (default), `out_of_order`, `read_priority` or `fair`. Anything but `fifo` needs the queued
    /// engine.
    #[serde(default)]
    pub policy: SchedulerKind,
    /// Combine reads, programs or erases of one die's planes into one multi-plane command when they are
    /// queued together and (reads, programs) address the same page index (MQSim's rule). Needs the
    /// queued engine; incompatible with `device.timing.plane_parallelism` (which makes every plane
    /// independent). Default false.
    #[serde(default)]
    pub multi_plane: bool,
    /// `fair`: a flow whose transactions arrived at a die at most this many times per
    /// `fair_epoch_us` is low-intensity (served first). Default 8.
    #[serde(default = "d_low")]
    pub fair_low_intensity_per_epoch: u32,
    /// `fair`: length of the intensity epoch in µs. Default 1000.
    #[serde(default = "d_epoch")]
    pub fair_epoch_us: f64,
}
fn d_low() -> u32 {
    8
}
fn d_epoch() -> f64 {
    1000.0
}
impl Default for SchedulingConfig {
    fn default() -> Self {
        SchedulingConfig {
            engine: EngineChoice::Auto,
            policy: SchedulerKind::Fifo,
            multi_plane: false,
            fair_low_intensity_per_epoch: d_low(),
            fair_epoch_us: d_epoch(),
        }
    }
}

/// `[device.controller.suspension]`: program/erase suspension for reads (Wu & He, FAST'12). A host or
/// mapping read that finds its die programming or erasing suspends the operation (after the suspend
/// latency), the die serves every read waiting for it, then resumes the operation (resume latency, then
/// the time it had left). Off by default; defaults of the times are MQSim's (`ssdconfig.xml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuspensionConfig {
    /// Suspend programs for reads. Default false.
    #[serde(default)]
    pub program: bool,
    /// Suspend erases for reads. Default false.
    #[serde(default)]
    pub erase: bool,
    /// Time from the suspend command until the die can serve a read, for a program, in µs. Default 100
    /// (MQSim `Suspend_Program_Time`).
    #[serde(default = "d_sus_prog")]
    pub program_suspend_us: f64,
    /// The same for an erase, in µs. Default 700 (MQSim `Suspend_Erase_Time`).
    #[serde(default = "d_sus_erase")]
    pub erase_suspend_us: f64,
    /// Extra time to resume a suspended operation, in µs. Default 0 (MQSim ignores it).
    #[serde(default)]
    pub resume_us: f64,
    /// Do not suspend a program with less than this left, in µs. Default 100 (MQSim
    /// `Preferred_suspend_write_time_for_read`).
    #[serde(default = "d_sus_prog")]
    pub program_min_remaining_us: f64,
    /// Do not suspend an erase with less than this left, in µs. Default 700 (MQSim
    /// `Preferred_suspend_erase_time_for_read`).
    #[serde(default = "d_sus_erase")]
    pub erase_min_remaining_us: f64,
    /// Most suspensions of one operation (then it runs to its end: no starvation), in [1, 255].
    /// Default 4.
    #[serde(default = "d_max_sus")]
    pub max_per_operation: u32,
}
fn d_sus_prog() -> f64 {
    100.0
}
fn d_sus_erase() -> f64 {
    700.0
}
fn d_max_sus() -> u32 {
    4
}
impl Default for SuspensionConfig {
    fn default() -> Self {
        SuspensionConfig {
            program: false,
            erase: false,
            program_suspend_us: d_sus_prog(),
            erase_suspend_us: d_sus_erase(),
            resume_us: 0.0,
            program_min_remaining_us: d_sus_prog(),
            erase_min_remaining_us: d_sus_erase(),
            max_per_operation: d_max_sus(),
        }
    }
}

/// `[device.controller.gc_preemption]`: semi-preemptible GC (Lee et al., ISPASS 2011). Host
/// transactions go before GC transactions on a die (they interleave between GC page moves), and the
/// host write that triggered the GC does not wait for it — unless the GC is urgent: its plane has at
/// most `urgent_free_blocks` free blocks once the erases still queued are counted, and then it runs
/// first and blocks the write as non-preemptible GC does. Off by default (GC is non-preemptive).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GcPreemptionConfig {
    /// Default false.
    #[serde(default)]
    pub enabled: bool,
    /// The hard threshold, in free blocks of the plane net of queued erases. Default 1.
    #[serde(default = "d_urgent")]
    pub urgent_free_blocks: u32,
}
fn d_urgent() -> u32 {
    1
}
impl Default for GcPreemptionConfig {
    fn default() -> Self {
        GcPreemptionConfig {
            enabled: false,
            urgent_free_blocks: d_urgent(),
        }
    }
}

/// How GC moves a valid page.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GcPageMoves {
    /// `copyback` when GC migrates within the plane (`ftl.gc.migration = "same_plane"`), `controller`
    /// otherwise (default: today's model).
    #[default]
    Auto,
    /// Copyback read and program inside the plane: no channel time (needs `same_plane`).
    Copyback,
    /// Through the controller: the page crosses the channel out (and is checked there) and back in.
    Controller,
}

impl SuspensionConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        for (k, v) in [
            ("program_suspend_us", self.program_suspend_us),
            ("erase_suspend_us", self.erase_suspend_us),
            ("resume_us", self.resume_us),
            ("program_min_remaining_us", self.program_min_remaining_us),
            ("erase_min_remaining_us", self.erase_min_remaining_us),
        ] {
            if !(v.is_finite() && (0.0..1e7).contains(&v)) {
                return Err(Error::config(
                    format!("device.controller.suspension.{k}"),
                    format!("is {v}: must be in [0, 1e7) µs"),
                ));
            }
        }
        if !(1..=255).contains(&self.max_per_operation) {
            return Err(Error::config(
                "device.controller.suspension.max_per_operation",
                format!("is {}: must be in [1, 255]", self.max_per_operation),
            ));
        }
        Ok(())
    }
}

impl SchedulingConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        let e = self.fair_epoch_us;
        if !(e.is_finite() && e > 0.0 && e < 1e9) {
            return Err(Error::config(
                "device.controller.scheduling.fair_epoch_us",
                format!("is {e}: must be in (0, 1e9)"),
            ));
        }
        Ok(())
    }
}

/// µs → ns (validated inputs).
pub(crate) fn ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

//! Configuration of a host simulation: the host (RAM, reclaim, swap, page cache, cgroups, CPU costs), the
//! processes and their workloads, the device, and run options.
//!
//! Every struct denies unknown keys; every field documents its default and unit. The config reference is
//! generated from these types (`schemars::JsonSchema`). Values are checked by [`HostSimConfig::validate`]
//! with errors naming the key.

mod compress;
mod diss;
mod ezswap;
mod host;
pub mod launch;
mod workload;
mod znswap;

pub use compress::{
    AlgorithmCost, CompressionCosts, CompressorKind, FullPoolPolicy, ZpoolKind, ZramConfig,
    ZramWritebackConfig, ZramWritebackMode, ZswapConfig,
};
pub use diss::IdleTrimConfig;
pub use ezswap::{AdmissionKind, EntropySample, EzswapConfig, ReplacementKind};
pub use host::{
    CgroupConfig, CostConfig, DiscardConfig, DiscardMode, HostConfig, LoopPacking, PageCacheConfig,
    ReadaheadConfig, ReadaheadPolicyKind, ReclaimConfig, ReclaimPolicyKind, SwapAllocatorKind,
    SwapBackendConfig, SwapConfig,
};
pub use launch::{LaunchApp, LaunchConfig};
pub use nandstack_device::config::GeometryOverrides;
pub use nandstack_device::spec::DeviceSpec;
pub use workload::{
    AppProfile, EtcConfig, InlineConfig, KeyDistribution, MemtouchConfig, MemtouchPattern,
    MobileConfig, MobileScenario, PmbenchConfig, RefFormat, TraceRefsConfig, VmScalConfig,
    VmScalPattern, WorkloadConfig, YcsbConfig,
};
pub use znswap::{validate_backend, ZnswapConfig, ZonePolicyConfig};

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole host simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSimConfig {
    /// Seed of every random stream (workloads, device). Default 42.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// The host: RAM, reclaim, swap, page cache, cgroups, CPU costs.
    #[serde(default)]
    pub host: HostConfig,
    /// The processes, each running one workload (one or more threads). At least one.
    pub processes: Vec<ProcessConfig>,
    /// The SSD holding the swap partition and the file partition (any device kind).
    #[serde(default)]
    pub device: DeviceSpec,
    /// Run options: limits, time series, block-trace output, verification.
    #[serde(default)]
    pub run: RunSection,
}
fn d_seed() -> u64 {
    42
}

/// One process: an address space (the workload's mappings) in a cgroup, with one or more threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessConfig {
    /// Name used in the report (also the `comm` of its block-trace lines). Default `proc<i>`.
    #[serde(default)]
    pub name: Option<String>,
    /// Name of the cgroup (from `host.cgroups`) the process is charged to. Default: the root cgroup
    /// (no limit other than RAM).
    #[serde(default)]
    pub cgroup: Option<String>,
    /// Simulated time at which the process starts, ms. Default 0.
    #[serde(default)]
    pub start_ms: f64,
    /// The memory-reference workload.
    pub workload: WorkloadConfig,
}

/// Output format of the host's block trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockTraceFormat {
    /// MSR Cambridge CSV (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`; FILETIME ticks
    /// of 100 ns from simulation start). Discards cannot be expressed and are left out.
    Msr,
    /// `blkparse` default text, issue (`D`) events only; discards appear with RWBS `D`.
    Blkparse,
}

/// Where to write the block requests the host issued.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockTraceOut {
    /// File to write (created or truncated).
    pub path: String,
    /// `msr` or `blkparse`. Default `blkparse`.
    #[serde(default = "d_trace_format")]
    pub format: BlockTraceFormat,
}
fn d_trace_format() -> BlockTraceFormat {
    BlockTraceFormat::Blkparse
}

/// Run options (not part of the model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Stop after this many memory references in total (all threads). Default: run every workload to
    /// its end.
    #[serde(default)]
    pub max_references: Option<u64>,
    /// Stop at this simulated time, seconds. Default: no limit.
    #[serde(default)]
    pub max_seconds: Option<f64>,
    /// Interval of the time series (swap space used, swap I/O, faults, per-cgroup bandwidth), simulated
    /// ms. Default 100. At most 100 000 points are kept.
    #[serde(default = "d_series_ms")]
    pub series_interval_ms: f64,
    /// Write the host's block requests to a file. Default: none.
    #[serde(default)]
    pub block_trace: Option<BlockTraceOut>,
    /// Write the memory references of the first process to a reference file (nsref format, see
    /// docs/model-host.md), so the run can be replayed. Default: none.
    #[serde(default)]
    pub refs_out: Option<String>,
    /// Under `verify`, check every invariant after this many references (and at the end). Default 1 000 000.
    #[serde(default = "d_verify_every")]
    pub verify_every_refs: u64,
}
fn d_series_ms() -> f64 {
    100.0
}
fn d_verify_every() -> u64 {
    1_000_000
}
impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            max_references: None,
            max_seconds: None,
            series_interval_ms: d_series_ms(),
            block_trace: None,
            refs_out: None,
            verify_every_refs: d_verify_every(),
        }
    }
}

impl HostSimConfig {
    /// Parse a JSON config; the error names the offending key.
    pub fn from_json(text: &str) -> Result<HostSimConfig> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let cfg: HostSimConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            Error::config(
                if path == "." { "config".into() } else { path },
                e.into_inner().to_string(),
            )
        })?;
        Ok(cfg)
    }

    /// Check every value and their consistency (ranges, references between sections). The device and
    /// the workloads' own checks run when the simulation is built.
    pub fn validate(&self) -> Result<()> {
        self.host.validate()?;
        validate_backend(&self.host, &self.device)?;
        validate_processes(&self.host, &self.processes, "processes")?;
        let r = &self.run;
        if !(r.series_interval_ms.is_finite() && r.series_interval_ms > 0.0) {
            return Err(Error::config(
                "run.series_interval_ms",
                format!("is {}: must be > 0", r.series_interval_ms),
            ));
        }
        if let Some(s) = r.max_seconds {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::config(
                    "run.max_seconds",
                    format!("is {s}: must be > 0"),
                ));
            }
        }
        if r.verify_every_refs == 0 {
            return Err(Error::config("run.verify_every_refs", "must be ≥ 1"));
        }
        Ok(())
    }
}

/// Check the processes against the host (at least one; cgroups exist; start times; workloads); errors
/// name `prefix[i].…`.
pub fn validate_processes(
    host: &HostConfig,
    processes: &[ProcessConfig],
    prefix: &str,
) -> Result<()> {
    if processes.is_empty() {
        return Err(Error::config(prefix, "at least one process is needed"));
    }
    for (i, p) in processes.iter().enumerate() {
        if let Some(cg) = &p.cgroup {
            if !host.cgroups.iter().any(|c| &c.name == cg) {
                return Err(Error::config(
                    format!("{prefix}[{i}].cgroup"),
                    format!("no cgroup named `{cg}` in host.cgroups"),
                ));
            }
        }
        if !(p.start_ms.is_finite() && p.start_ms >= 0.0) {
            return Err(Error::config(
                format!("{prefix}[{i}].start_ms"),
                format!("is {}: must be ≥ 0", p.start_ms),
            ));
        }
        p.workload.validate(&format!("{prefix}[{i}].workload"))?;
    }
    Ok(())
}

/// `MiB` → bytes, checked.
pub(crate) fn mib(key: &str, v: u64) -> Result<u64> {
    v.checked_mul(1 << 20)
        .ok_or_else(|| Error::config(key, format!("{v} MiB is too large")))
}

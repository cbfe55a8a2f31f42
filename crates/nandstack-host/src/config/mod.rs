//! Configuration of the host model: the host (RAM, reclaim, swap, page cache, cgroups, CPU costs) and the
//! processes with their workloads. The run's config (`nandstack-sim`'s `SimConfig`) holds them as `host`
//! and `workload.processes`, beside the device and the run options.
//!
//! Every struct denies unknown keys; every field documents its default and unit. The config reference is
//! generated from these types (`schemars::JsonSchema`). Values are checked by [`HostConfig::validate`],
//! [`validate_backend`] and [`validate_processes`] (called once, by the run's config) with errors naming
//! the key.

mod backend;
mod host;

pub use crate::workloads::config::{
    AppProfile, EtcConfig, InlineConfig, KeyDistribution, MemtouchConfig, MemtouchPattern,
    MobileConfig, MobileScenario, PmbenchConfig, RefFormat, TraceRefsConfig, VmScalConfig,
    VmScalPattern, WorkloadConfig, YcsbConfig,
};
pub use crate::workloads::launch_config as launch;
pub use crate::workloads::launch_config::{LaunchApp, LaunchConfig};
// Each floor's configuration lives beside its model; the host's configuration gathers them here.
pub use crate::backend::{
    LoopConfig, LoopPacking, ZnswapConfig, ZonePolicyConfig, ZramConfig, ZramWritebackConfig,
    ZramWritebackMode,
};
pub use crate::block::{BlockTraceFormat, BlockTraceOut};
pub use crate::compressor::{page_ns, AlgorithmCost, CompressionCosts, CompressorKind};
pub use crate::swap::discard::IdleTrimConfig;
pub use crate::vm::fault::{FaultConfig, SwapinWrite};
pub use crate::zpool::ZpoolKind;
pub use crate::zswap::policy::config::{
    AdmissionKind, EntropySample, EzswapConfig, ReplacementKind,
};
pub use crate::zswap::{FullPoolPolicy, ZswapConfig};
pub use backend::validate_backend;
pub use host::{
    CgroupConfig, CostConfig, DiscardConfig, DiscardMode, HostConfig, PageCacheConfig,
    ReadaheadConfig, ReadaheadPolicyKind, ReclaimConfig, ReclaimPolicyKind, SwapAllocatorKind,
    SwapBackendConfig, SwapConfig,
};
pub use nandstack_device::config::GeometryOverrides;
pub use nandstack_device::spec::DeviceSpec;

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

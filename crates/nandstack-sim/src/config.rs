//! The simulation config: one TOML document (or its JSON form) with `seed`, `[device]`, `[ftl]`,
//! `[precondition]`, `[workload]`. Unknown keys are errors that name the key and list the allowed ones.

use nandstack_core::{Error, Result};
pub use nandstack_device::config::{DeviceConfig, GeometryOverrides};
use nandstack_device::ssd::ControllerConfig;
use nandstack_device::FtlConfig;
use nandstack_workload::SyntheticConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of every random choice (workload, fill order, randomized policies). Default 42.
    #[serde(default = "d_seed")]
    pub seed: u64,
    #[serde(default)]
    pub device: DeviceConfig,
    #[serde(default)]
    pub ftl: FtlConfig,
    #[serde(default)]
    pub controller: ControllerConfig,
    #[serde(default)]
    pub host: HostConfig,
    #[serde(default)]
    pub precondition: PreconditionConfig,
    /// The synthetic workload: measured unless `[trace]` is set; always used for the warm-up.
    #[serde(default)]
    pub workload: SyntheticConfig,
    /// Replay a block trace in the measured phase instead of the synthetic workload.
    #[serde(default)]
    pub trace: Option<TraceConfig>,
    #[serde(default)]
    pub run: RunConfig,
}

/// How the host issues requests.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostMode {
    /// Keep `queue_depth` requests outstanding (fio iodepth × numjobs); a request is issued when one
    /// completes. Latency = completion − issue.
    ClosedLoop,
    /// Issue each request at its arrival time (trace timestamps × `time_scale`, or Poisson arrivals at
    /// `workload.arrival_iops`). Latency = completion − arrival.
    OpenLoop,
}

/// The host interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// `closed_loop` (default) or `open_loop`.
    #[serde(default = "d_mode")]
    pub mode: HostMode,
    /// Outstanding requests in closed-loop mode. Default 32.
    #[serde(default = "d_qd")]
    pub queue_depth: u32,
    /// Open loop: multiply arrival times by this (0.5 replays twice as fast). Default 1.
    #[serde(default = "d_one")]
    pub time_scale: f64,
}
fn d_mode() -> HostMode {
    HostMode::ClosedLoop
}
fn d_qd() -> u32 {
    32
}
fn d_one() -> f64 {
    1.0
}
impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            mode: d_mode(),
            queue_depth: d_qd(),
            time_scale: d_one(),
        }
    }
}

/// What to do with a trace request that lies beyond the device's logical capacity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LbaPolicy {
    /// Stop with an error naming the request (default).
    Error,
    /// Offset modulo the capacity (a request crossing the end restarts at 0).
    Wrap,
    /// Scale the trace's address space (its largest end offset, found by a first pass) onto the device,
    /// 4 KiB-aligned.
    Scale,
}

/// A block trace to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Path of the trace (gz, bz2, xz and zst are decompressed transparently).
    pub path: String,
    /// Format: msr, blkparse, disksim, mqsim, ssdsim, fio, tencent, cloudphysics, systor17, heimdall,
    /// wiscsee, arc, hp_srt (see docs/trace-formats.md).
    pub format: String,
    /// `error` (default), `wrap` or `scale`.
    #[serde(default = "d_lba")]
    pub lba: LbaPolicy,
    /// Replay at most this many requests (0 = all). Default 0.
    #[serde(default)]
    pub max_requests: u64,
}
fn d_lba() -> LbaPolicy {
    LbaPolicy::Error
}
fn d_seed() -> u64 {
    42
}

/// Order of the preconditioning fill.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FillOrder {
    Sequential,
    /// Each unit of the filled fraction written once, in a seeded random order.
    Random,
}

/// Bring the device to a realistic state before measuring. Counters are reset afterwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    /// Fraction of the logical space written before the run (the "aged ratio"), in [0, 1]. Default 1.
    #[serde(default = "d_fill")]
    pub fill_fraction: f64,
    /// `sequential` (default) or `random`.
    #[serde(default = "d_fill_order")]
    pub fill_order: FillOrder,
    /// Steady-state warm-up: run the workload itself until it has written this many times the logical
    /// capacity, then reset counters and measure `workload.requests` more. Default 1.0; 0 disables.
    #[serde(default = "d_warmup")]
    pub warmup_capacity_multiples: f64,
}
fn d_fill() -> f64 {
    1.0
}
fn d_fill_order() -> FillOrder {
    FillOrder::Sequential
}
fn d_warmup() -> f64 {
    1.0
}
impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            fill_fraction: d_fill(),
            fill_order: d_fill_order(),
            warmup_capacity_multiples: d_warmup(),
        }
    }
}

/// Run-time checking and the interval time series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// In verify mode, run the full FTL invariant check every this many requests (0 = 16 times per phase).
    /// Default 0.
    #[serde(default)]
    pub invariant_check_every: u64,
    /// Emit a time-series row every this many host bytes (read + written). 0 = not by bytes. Default 0.
    #[serde(default)]
    pub interval_host_bytes: u64,
    /// Emit a time-series row every this many simulated seconds. 0 = not by time. Default 0. With neither
    /// set, a row every 1/20 of the measured requests.
    #[serde(default)]
    pub interval_sim_seconds: f64,
}

impl SimConfig {
    /// Parse the JSON form; errors carry the dotted path of the bad key.
    pub fn from_json(text: &str) -> Result<SimConfig> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| Error::config(path_or_root(e.path().to_string()), e.inner().to_string()))
    }

    /// Parse the TOML form; errors carry the dotted path of the bad key.
    pub fn from_toml(text: &str) -> Result<SimConfig> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            Error::config(
                path_or_root(e.path().to_string()),
                e.inner().message().to_string(),
            )
        })
    }

    pub fn validate(&self) -> Result<()> {
        let p = &self.precondition;
        if !(p.fill_fraction.is_finite() && (0.0..=1.0).contains(&p.fill_fraction)) {
            return Err(Error::config(
                "precondition.fill_fraction",
                format!("is {}: must be in [0, 1]", p.fill_fraction),
            ));
        }
        if !(p.warmup_capacity_multiples.is_finite()
            && (0.0..=1000.0).contains(&p.warmup_capacity_multiples))
        {
            return Err(Error::config(
                "precondition.warmup_capacity_multiples",
                format!("is {}: must be in [0, 1000]", p.warmup_capacity_multiples),
            ));
        }
        if p.warmup_capacity_multiples > 0.0
            && self.workload.read_fraction + self.workload.trim_fraction >= 1.0
        {
            return Err(Error::config(
                "precondition.warmup_capacity_multiples",
                "the workload never writes, so a write-volume warm-up cannot end; set it to 0",
            ));
        }
        if self.host.queue_depth == 0 || self.host.queue_depth > 1_000_000 {
            return Err(Error::config(
                "host.queue_depth",
                format!("is {}: must be in [1, 1000000]", self.host.queue_depth),
            ));
        }
        let ts = self.host.time_scale;
        if !(ts.is_finite() && ts >= 0.0) {
            return Err(Error::config(
                "host.time_scale",
                format!("is {ts}: must be ≥ 0"),
            ));
        }
        if self.host.mode == HostMode::OpenLoop
            && self.trace.is_none()
            && self.workload.arrival_iops.is_none()
        {
            return Err(Error::config(
                "workload.arrival_iops",
                "open-loop mode with a synthetic workload needs an arrival rate (requests per simulated second)",
            ));
        }
        let i = self.run.interval_sim_seconds;
        if !(i.is_finite() && i >= 0.0) {
            return Err(Error::config(
                "run.interval_sim_seconds",
                format!("is {i}: must be ≥ 0"),
            ));
        }
        if self.workload.requests == 0 {
            return Err(Error::config("workload.requests", "must be at least 1"));
        }
        Ok(())
    }
}

fn path_or_root(p: String) -> String {
    if p == "." || p.is_empty() {
        "(top level)".into()
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_name_the_key_and_the_allowed_ones() {
        let e = SimConfig::from_toml("[ftl.gc]\nvictims = \"greedy\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ftl.gc") && e.contains("victims") && e.contains("start_free_blocks"),
            "{e}"
        );
        let e = SimConfig::from_json(r#"{"workload": {"patern": "zipf"}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("patern") && e.contains("pattern"), "{e}");
        let e = SimConfig::from_toml("bogus = 1\n").unwrap_err().to_string();
        assert!(e.contains("bogus") && e.contains("workload"), "{e}");
        let e = SimConfig::from_toml("[workload]\npattern = \"zipfian\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("workload.pattern") && e.contains("zipf"), "{e}");
    }

    #[test]
    fn preset_overrides_apply() {
        let c =
            SimConfig::from_toml("[device]\npreset = \"diss\"\n[device.geometry]\nchannels = 2\n")
                .unwrap();
        let g = c.device.geometry().unwrap();
        assert_eq!(
            (g.channels, g.planes_per_die, g.page_size_bytes),
            (2, 4, 4096)
        );
        let c = SimConfig::from_toml("[device.geometry]\npages_per_block = 0\n").unwrap();
        assert!(c
            .device
            .geometry()
            .unwrap_err()
            .to_string()
            .contains("pages_per_block"));
    }

    #[test]
    fn json_and_toml_forms_agree_and_round_trip() {
        let c =
            SimConfig::from_toml("seed = 5\n[workload]\npattern = \"zipf\"\nzipf_theta = 1.1\n")
                .unwrap();
        let j = serde_json::to_string(&c).unwrap();
        assert_eq!(SimConfig::from_json(&j).unwrap(), c);
    }
}

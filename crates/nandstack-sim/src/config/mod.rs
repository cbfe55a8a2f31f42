//! The one simulation config: a TOML document (or its JSON form) describing a whole stack —
//! `[workload]` (synthetic block, trace, stand-in or host programs), an optional `[host]` (the OS memory
//! and swap model, for host programs), `[device]` (`kind = "block" | "hybrid"`), `[precondition]`,
//! `[run]`, and the RL pre-training chain `[[pretrain]]` (hybrid RL only). Unknown keys are errors that
//! name the dotted key and list the allowed ones; keys that moved name their new place.

mod flows;
mod shape;
mod workload;

pub use flows::{Arbitration, FlowPriority, FlowSpec, NvmeConfig};
use nandstack_core::{Error, Result};
pub use nandstack_device::spec::{DeviceKindName, DeviceSpec};
use nandstack_host::config::{BlockTraceOut, HostConfig, WorkloadConfig};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
pub use workload::{
    IoConfig, IoMode, LbaPolicy, SwapRangeConfig, TraceConfig, WorkloadKind, WorkloadSpec,
};

/// A whole simulation.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SimConfig {
    /// Seed of every random choice (workload, fill order, randomized policies). Default 42.
    pub seed: u64,
    /// What drives the stack.
    pub workload: WorkloadSpec,
    /// The host OS model (memory, reclaim, swap, page cache, cgroups, CPU costs); host programs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostConfig>,
    /// The SSD.
    pub device: DeviceSpec,
    /// The device's state before the measured phase (block workloads).
    pub precondition: PreconditionConfig,
    /// Run options: checks, time series, limits, outputs.
    pub run: RunConfig,
    /// RL pre-training (hybrid device, `manager.kind = "rl"`): workloads (each a `[[pretrain]]` table
    /// shaped like `[workload]`, kind `standin` or `trace`) the agent runs first, in order, each on a
    /// fresh device with the same `[device]` and `[precondition]`, learning, with its Q-table carried
    /// from one to the next and into the measured run. Pre-training run i (0-based) uses seed
    /// `seed + 1,000,003 × (i + 1)`. Default: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub pretrain: Vec<WorkloadSpec>,
}

/// Order of the preconditioning fill.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FillOrder {
    Sequential,
    /// Each unit of the filled fraction written once, in a seeded random order.
    Random,
}

/// `[precondition]`: bring the device to a realistic state before measuring. Counters are reset
/// afterwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    /// Fraction of the logical space written before the run (the "aged ratio"), in [0, 1] (hybrid:
    /// [0, 0.95], written sequentially to QLC). Default 1 for a block device, 0 for a hybrid or zoned one
    /// and for host programs (which start on a fresh device unless this or the warm-up is set).
    #[serde(default)]
    pub fill_fraction: Option<f64>,
    /// `sequential` (default) or `random`.
    #[serde(default = "d_fill_order")]
    pub fill_order: FillOrder,
    /// Steady-state warm-up: run the synthetic workload until it has written this many times the
    /// logical capacity, then reset counters and measure. Default 1.0 for a block device, 0 for a hybrid
    /// or zoned one and for host programs; 0 disables.
    #[serde(default)]
    pub warmup_capacity_multiples: Option<f64>,
    /// What the aged data is after the fill and warm-up: `valid` (the default) or `invalid` —
    /// SSDSim's stock `make_aged` (`ssd.c`), which marks the aged pages invalid, so GC never copies
    /// them (docs/diss.md): every filled unit is then TRIMmed, except the host's file partition, which
    /// stays valid as SSDSim's `pre_process_page` writes what the trace reads. Host programs only.
    #[serde(default, skip_serializing_if = "AgedData::is_valid")]
    pub aged_data: AgedData,
}

/// See [`PreconditionConfig::aged_data`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgedData {
    #[default]
    Valid,
    /// SSDSim's stock aging: the aged pages are programmed and invalid.
    Invalid,
}
impl AgedData {
    fn is_valid(&self) -> bool {
        *self == AgedData::Valid
    }
}
fn d_fill_order() -> FillOrder {
    FillOrder::Sequential
}
impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            fill_fraction: None,
            fill_order: d_fill_order(),
            warmup_capacity_multiples: None,
            aged_data: AgedData::Valid,
        }
    }
}

impl PreconditionConfig {
    /// The fill fraction in effect for a device kind.
    pub fn fill(&self, kind: DeviceKindName) -> f64 {
        self.fill_fraction.unwrap_or(match kind {
            DeviceKindName::Block => 1.0,
            DeviceKindName::Hybrid | DeviceKindName::Zoned => 0.0,
        })
    }
    /// The warm-up in effect for a device kind.
    pub fn warmup(&self, kind: DeviceKindName) -> f64 {
        self.warmup_capacity_multiples.unwrap_or(match kind {
            DeviceKindName::Block => 1.0,
            DeviceKindName::Hybrid | DeviceKindName::Zoned => 0.0,
        })
    }
}

/// `[run]`: run-time checks, the interval time series, limits and outputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// In verify mode, run the full invariant check every this many operations (block requests or host
    /// memory references); 0 = automatic (16 times per phase for block workloads, every 1,000,000
    /// references for host programs). Default 0.
    #[serde(default)]
    pub verify_every: u64,
    /// A time-series row every this many host bytes (read + written). 0 = not by bytes. Default 0.
    #[serde(default)]
    pub interval_host_bytes: u64,
    /// A time-series row every this many host bytes written. 0 = not by written bytes. Default 0.
    #[serde(default)]
    pub interval_written_bytes: u64,
    /// A time-series row every this many simulated seconds: 0 (not by time) or in [1e-6, 1e9] (host
    /// programs: [0.001, 1e9]). Default 0.
    /// With no interval set: a row every 1/20 of the measured requests (block workloads) or every 0.1 s
    /// (host programs).
    #[serde(default)]
    pub interval_sim_seconds: f64,
    /// Host programs: stop after this many memory references in total. Default: run to the end.
    #[serde(default)]
    pub max_references: Option<u64>,
    /// Host programs: stop at this simulated time, seconds. Default: no limit.
    #[serde(default)]
    pub max_seconds: Option<f64>,
    /// Host programs: write the block requests the host issued to a file. Default: none.
    #[serde(default)]
    pub block_trace: Option<BlockTraceOut>,
    /// Host programs: write the memory references of the first process to a reference file (nsref
    /// format, see docs/model-host.md). Default: none.
    #[serde(default)]
    pub refs_out: Option<String>,
    /// Hybrid RL: put the final Q-table in the summary. Default false.
    #[serde(default)]
    pub include_q_table: bool,
    /// Memory the run may use, bytes: a config whose estimated tables (mapping tables, block metadata,
    /// buffers, caches, host frames, …; docs/reliability.md) exceed it is refused before anything is
    /// allocated, with an error naming the keys. Default: the memory available when the run starts
    /// (`MemAvailable`, or less under `ulimit -v`).
    #[serde(default)]
    pub memory_limit_bytes: Option<u64>,
    /// Folder of the data sets (`compress/`, `block/`, `memory/`, `kernel-*/`; docs/data.md). Host
    /// programs take the Silesia files from its `compress/` where a workload sets no `corpus_dir`.
    /// Default: `$NANDSTACK_DATA` (`--data DIR`), else `../shared/traces` (docs/data.md).
    #[serde(default)]
    pub data_dir: Option<String>,
}
impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            verify_every: 0,
            interval_host_bytes: 0,
            interval_written_bytes: 0,
            interval_sim_seconds: 0.0,
            max_references: None,
            max_seconds: None,
            block_trace: None,
            refs_out: None,
            include_q_table: false,
            memory_limit_bytes: None,
            data_dir: None,
        }
    }
}

impl SimConfig {
    /// The host processes with `run.data_dir`'s `compress/` as the corpus folder of every memtouch and
    /// launch workload that names none (what the host model runs and the memory estimate counts).
    pub fn host_processes(&self) -> Vec<nandstack_host::config::ProcessConfig> {
        let mut out = self.workload.processes.clone();
        let Some(root) = &self.run.data_dir else {
            return out;
        };
        let compress = std::path::Path::new(root)
            .join("compress")
            .display()
            .to_string();
        for p in &mut out {
            let dir = match &mut p.workload {
                WorkloadConfig::Memtouch(c) => &mut c.corpus_dir,
                WorkloadConfig::Launch(c) => &mut c.corpus_dir,
                _ => continue,
            };
            dir.get_or_insert_with(|| compress.clone());
        }
        out
    }
}

/// Shortest time-series interval: a row every simulated microsecond at most (a typo bound).
pub const MIN_INTERVAL_SECONDS: f64 = 1e-6;
/// Shortest time-series interval of host programs, whose series the host model keeps in memory.
pub const MIN_HOST_INTERVAL_SECONDS: f64 = 1e-3;

/// The top-level keys, in the order of the reference.
const TOP_KEYS: [&str; 7] = [
    "seed",
    "workload",
    "host",
    "device",
    "precondition",
    "run",
    "pretrain",
];

/// Keys that moved when the block, hybrid and host configs became one (old → new).
const MOVED: [(&str, &str); 7] = [
    ("ftl", "device.ftl"),
    ("controller", "device.controller"),
    ("trace", "workload.trace (with workload.kind = \"trace\")"),
    (
        "processes",
        "workload.processes (with workload.kind = \"host\")",
    ),
    ("model", "device.kind"),
    ("manager", "device.manager"),
    ("report", "run"),
];

/// Deserialize a part of the config, naming `prefix.path` in errors.
pub(crate) fn part<T: DeserializeOwned>(v: Value, prefix: &str) -> Result<T> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let p = e.path().to_string();
        let key = if p == "." || p.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}.{p}")
        };
        Error::config(key, e.inner().to_string())
    })
}

fn object(v: Value, key: &str) -> Result<Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(Error::config(
            key,
            format!("must be a table, not `{other}`"),
        )),
    }
}

impl SimConfig {
    /// Parse the JSON form; errors carry the dotted path of the bad key.
    pub fn from_json(text: &str) -> Result<SimConfig> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| Error::config("(config)", format!("not valid JSON: {e}")))?;
        Self::from_value(v)
    }

    /// Parse the TOML form; errors carry the dotted path of the bad key (and the line for syntax errors).
    pub fn from_toml(text: &str) -> Result<SimConfig> {
        let t: toml::Table = toml::from_str(text)
            .map_err(|e| Error::config("(config)", format!("not valid TOML: {e}")))?;
        let v = serde_json::to_value(t)
            .map_err(|e| Error::config("(config)", format!("cannot be read: {e}")))?;
        Self::from_value(v)
    }

    /// Build from a parsed document: checks the keys, splits `[workload]` and fills the device kind's
    /// defaults. Values are checked by [`SimConfig::validate`].
    pub fn from_value(v: Value) -> Result<SimConfig> {
        let input = v.clone();
        let cfg = Self::build(v)?;
        let effective = serde_json::to_value(&cfg).expect("config serializes");
        shape::check_tables(&input, &effective)?;
        Ok(cfg)
    }

    fn build(v: Value) -> Result<SimConfig> {
        let mut top = object(v, "(top level)")?;
        if let Some(k) = top.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
            let hint = MOVED
                .iter()
                .find(|(old, _)| old == k)
                .map(|(_, new)| format!("; `{k}` is now `{new}`"))
                .unwrap_or_default();
            return Err(Error::config(
                k.clone(),
                format!(
                    "unknown field `{k}`, expected one of `{}`{hint}",
                    TOP_KEYS.join("`, `")
                ),
            ));
        }
        let seed = match top.remove("seed") {
            Some(v) => part(v, "seed")?,
            None => 42,
        };
        let workload = match top.remove("workload") {
            Some(v) => WorkloadSpec::from_map(object(v, "workload")?, "workload")?,
            None => WorkloadSpec::default(),
        };
        let host: Option<HostConfig> = match top.remove("host") {
            Some(v) => Some(part(v, "host").map_err(host_hint)?),
            None => None,
        };
        let mut device: DeviceSpec = match top.remove("device") {
            Some(v) => part(v, "device")?,
            None => DeviceSpec::default(),
        };
        device.normalize()?;
        let mut precondition: PreconditionConfig = match top.remove("precondition") {
            Some(v) => part(v, "precondition")?,
            None => PreconditionConfig::default(),
        };
        // The effective config states the kind's defaults (host programs: a fresh device).
        if workload.kind == WorkloadKind::Host {
            precondition.fill_fraction = Some(precondition.fill_fraction.unwrap_or(0.0));
            precondition.warmup_capacity_multiples =
                Some(precondition.warmup_capacity_multiples.unwrap_or(0.0));
        } else {
            precondition.fill_fraction = Some(precondition.fill(device.kind));
            precondition.warmup_capacity_multiples = Some(precondition.warmup(device.kind));
        }
        let run = match top.remove("run") {
            Some(v) => part(v, "run")?,
            None => RunConfig::default(),
        };
        let pretrain = match top.remove("pretrain") {
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, w)| {
                    let key = format!("pretrain[{i}]");
                    WorkloadSpec::from_map(object(w, &key)?, &key)
                })
                .collect::<Result<Vec<_>>>()?,
            Some(_) => {
                return Err(Error::config(
                    "pretrain",
                    "must be an array of tables ([[pretrain]])",
                ))
            }
            None => Vec::new(),
        };
        let mut cfg = SimConfig {
            seed,
            workload,
            host,
            device,
            precondition,
            run,
            pretrain,
        };
        if cfg.workload.kind == WorkloadKind::Host && cfg.host.is_none() {
            cfg.host = Some(HostConfig::default());
        }
        Ok(cfg)
    }

    /// The effective config (every default filled in) as compact JSON: equal configs written
    /// differently give the same text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("config serializes")
    }

    /// The whole check before anything is allocated: [`SimConfig::validate`], then the workload against
    /// the device's capacity (no allocation). The one place a config is checked; every runner calls it.
    pub fn check(&self) -> Result<()> {
        self.validate()?;
        let capacity = if self.workload.kind == WorkloadKind::Host {
            nandstack_device::spec::logical_bytes(&self.device)?
        } else {
            nandstack_device::spec::block_logical_bytes(&self.device)?
        };
        self.workload.validate("workload", capacity)?;
        for (i, w) in self.pretrain.iter().enumerate() {
            w.validate(&format!("pretrain[{i}]"), capacity)?;
        }
        Ok(())
    }

    /// Check every value and their consistency; errors name the key.
    pub fn validate(&self) -> Result<()> {
        let kind = self.device.kind;
        let p = &self.precondition;
        let fill = p.fill(kind);
        let max_fill = if kind == DeviceKindName::Hybrid {
            0.95
        } else {
            1.0
        };
        if !(fill.is_finite() && (0.0..=max_fill).contains(&fill)) {
            return Err(Error::config(
                "precondition.fill_fraction",
                format!("is {fill}: must be in [0, {max_fill}]"),
            ));
        }
        let warm = p.warmup(kind);
        if !(warm.is_finite() && (0.0..=1000.0).contains(&warm)) {
            return Err(Error::config(
                "precondition.warmup_capacity_multiples",
                format!("is {warm}: must be in [0, 1000]"),
            ));
        }
        let w = &self.workload;
        if p.aged_data == AgedData::Invalid && w.kind != WorkloadKind::Host {
            return Err(Error::config(
                "precondition.aged_data",
                "`invalid` ages the device for host programs only (a block workload's reads need data)",
            ));
        }
        if p.aged_data == AgedData::Invalid && (p.fill_order != FillOrder::Sequential || warm > 0.0)
        {
            return Err(Error::config(
                "precondition.aged_data",
                "`invalid` needs a sequential fill and no warm-up (SSDSim ages without rewriting)",
            ));
        }
        if warm > 0.0
            && w.kind.is_block()
            && w.synthetic.read_fraction + w.synthetic.trim_fraction >= 1.0
        {
            return Err(Error::config(
                "precondition.warmup_capacity_multiples",
                "the workload never writes, so a write-volume warm-up cannot end; set it to 0",
            ));
        }
        match (w.kind, &self.host) {
            (WorkloadKind::Host, Some(h)) => {
                h.validate()?;
                nandstack_host::config::validate_backend(h, &self.device)?;
                nandstack_host::config::validate_processes(h, &w.processes, "workload.processes")?;
                // Host programs age the device only when asked (no kind default applies).
                let asked = p.fill_fraction.unwrap_or(0.0) > 0.0
                    || p.warmup_capacity_multiples.unwrap_or(0.0) > 0.0;
                if asked && matches!(h.swap.backend, nandstack_host::config::SwapBackendConfig::Znswap(_)) {
                    return Err(Error::config(
                        "precondition",
                        "ZNSwap owns every zone of the device (swapon starts from empty zones): set \
                         precondition.fill_fraction and warmup_capacity_multiples to 0",
                    ));
                }
            }
            (WorkloadKind::Host, None) => unreachable!("from_value supplies the default host"),
            (k, Some(_)) => {
                return Err(Error::config(
                    "host",
                    format!(
                        "the host model runs host programs (workload.kind = \"host\"); a {} workload issues \
                         block requests to the device directly",
                        k.name()
                    ),
                ))
            }
            (_, None) => {}
        }
        let i = self.run.interval_sim_seconds;
        // The host model keeps its series in memory until the end: a row per millisecond at most.
        let min = if w.kind == WorkloadKind::Host {
            MIN_HOST_INTERVAL_SECONDS
        } else {
            MIN_INTERVAL_SECONDS
        };
        if !(i.is_finite() && (i == 0.0 || (min..=1e9).contains(&i))) {
            return Err(Error::config(
                "run.interval_sim_seconds",
                format!("is {i}: must be 0 or in [{min}, 1e9] (for this workload kind)"),
            ));
        }
        if let Some(s) = self.run.max_seconds {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::config(
                    "run.max_seconds",
                    format!("is {s}: must be > 0"),
                ));
            }
        }
        if kind == DeviceKindName::Block {
            let buffer = self.device.controller().write_buffer.bytes;
            let capacity = nandstack_device::spec::logical_bytes(&self.device)?;
            if buffer > capacity {
                return Err(Error::config(
                    "device.controller.write_buffer.bytes",
                    format!("is {buffer}: at most the drive's logical capacity ({capacity} bytes)"),
                ));
            }
        }
        if kind == DeviceKindName::Hybrid {
            self.device.hybrid().params()?;
            self.device.manager().validate()?;
        }
        if !self.pretrain.is_empty() {
            let rl = kind == DeviceKindName::Hybrid
                && self.device.manager().kind == nandstack_device::hybrid::ManagerKind::Rl;
            if !rl {
                return Err(Error::config(
                    "pretrain",
                    "pre-training is only for the hybrid device's rl manager (device.kind = \"hybrid\", \
                     device.manager.kind = \"rl\")",
                ));
            }
            for (i, t) in self.pretrain.iter().enumerate() {
                if !matches!(t.kind, WorkloadKind::Standin | WorkloadKind::Trace) {
                    return Err(Error::config(
                        format!("pretrain[{i}].kind"),
                        "must be \"standin\" or \"trace\"",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Old host-interface keys under `[host]` moved to `[workload.io]`.
fn host_hint(e: Error) -> Error {
    match e {
        Error::Config { key, msg }
            if ["host.queue_depth", "host.mode", "host.time_scale"].contains(&key.as_str()) =>
        {
            let new = key.replace("host.", "workload.io.");
            let msg = format!(
                "{msg}; the block-request issuer's `{}` is now `{new}` ([host] is the OS memory/swap model)",
                &key[5..]
            );
            Error::config(key, msg)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests;

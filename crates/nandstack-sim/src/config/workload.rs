//! `[workload]`: what drives the stack — a synthetic block generator (default), a block-trace replay, a
//! stand-in for the RL SLC-cache paper's traces, or host programs (memory-reference workloads running on
//! the host model, which issues the block I/O). `[workload.io]` says how block requests are issued.
//!
//! The synthetic generator's keys sit directly in `[workload]` (`workload.pattern`, …); they also drive
//! the warm-up of trace and stand-in runs. The kind-specific sections (`trace`, `standin`, `processes`)
//! are errors under another kind.

use nandstack_core::{Error, Result};
use nandstack_host::config::ProcessConfig;
use nandstack_workload::standin::StandinConfig;
use nandstack_workload::trace::{Malformed, TraceFormat, TraceOptions};
use nandstack_workload::SyntheticConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::part;

/// Where the requests come from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// The seeded synthetic block generator (the `[workload]` keys). Default.
    #[default]
    Synthetic,
    /// Replay a block trace (`[workload.trace]`).
    Trace,
    /// A synthetic stand-in for one of the RL SLC-cache paper's Table 4 traces (`[workload.standin]`).
    Standin,
    /// Host programs (`[[workload.processes]]`) on the host memory/swap model (`[host]`).
    Host,
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Synthetic => "synthetic",
            WorkloadKind::Trace => "trace",
            WorkloadKind::Standin => "standin",
            WorkloadKind::Host => "host",
        }
    }
    /// Whether the workload issues block requests itself (not through the host model).
    pub fn is_block(self) -> bool {
        self != WorkloadKind::Host
    }
}

/// How block requests are issued.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IoMode {
    /// Keep `queue_depth` requests outstanding (fio iodepth × numjobs); a request is issued when one
    /// completes. Latency = completion − issue.
    ClosedLoop,
    /// Issue each request at its arrival time (trace timestamps × `time_scale`, or Poisson arrivals at
    /// `workload.arrival_iops`). Latency = completion − arrival.
    OpenLoop,
}

/// `[workload.io]`: the issuer of block requests (a fio-like harness or a trace replayer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IoConfig {
    /// `closed_loop` (default) or `open_loop`.
    #[serde(default = "d_mode")]
    pub mode: IoMode,
    /// Outstanding requests in closed-loop mode, in [1, 1000000]. Default 32.
    #[serde(default = "d_qd")]
    pub queue_depth: u32,
    /// Open loop: multiply arrival times by this (0.5 replays twice as fast). Default 1.
    #[serde(default = "d_one")]
    pub time_scale: f64,
}
fn d_mode() -> IoMode {
    IoMode::ClosedLoop
}
fn d_qd() -> u32 {
    32
}
fn d_one() -> f64 {
    1.0
}
impl Default for IoConfig {
    fn default() -> Self {
        IoConfig {
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

/// `[workload.trace]`: a block trace to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Path of the trace (gz, bz2, xz and zst are decompressed transparently).
    pub path: String,
    /// Format: msr, blkparse, disksim, mqsim, ssdsim, fio, tencent, cloudphysics, systor17, heimdall,
    /// wiscsee, arc, hp_srt, u32_blocks, kswap (see docs/trace-formats.md).
    pub format: TraceFormat,
    /// `error` (default), `wrap` or `scale`. One function fits every device (`source::map_lba`).
    #[serde(default = "d_lba")]
    pub lba: LbaPolicy,
    /// Replay at most this many requests per pass (0 = all). Default 0.
    #[serde(default)]
    pub max_requests: u64,
    /// Replay the trace this many times in a row, in [1, 10000]. Default 1.
    #[serde(default = "d_repeat")]
    pub repeat: u32,
    /// Rows are replayed in time order through a reorder window (docs/trace-formats.md): a row is
    /// released once it is this many seconds of trace time (before `workload.io.time_scale`) older than
    /// the newest row read, while the window holds more than 1,024 rows; in [0, 1000000]. Default 10.
    #[serde(default = "d_window_s")]
    pub reorder_window_seconds: f64,
    /// … and once the window holds more than this many rows, in [0, 100000000]; 0 = replay in file
    /// order. Default 1000000.
    #[serde(default = "d_window_rows")]
    pub reorder_window_rows: u64,
    /// Rows that may come too late for the window (earlier than a row already replayed; they are
    /// replayed at once and counted in the summary's `trace.late_rows`) before the replay stops with an
    /// error naming the line. Default 1000.
    #[serde(default = "d_max_late")]
    pub max_late_rows: u64,
    /// `strict` (default): a malformed line stops the run with its file and line; `lenient`: it is
    /// skipped and counted (`trace.malformed_rows`). Binary formats are always strict.
    #[serde(default)]
    pub malformed: Malformed,
    /// DISS: before the replay, register this range of the device as the swap partition (the
    /// cross-layer `register_swap_range` command the host sends at swapon), e.g. for a capture of a
    /// swap device (`format = "kswap"`). Default: none.
    #[serde(default)]
    pub swap_range: Option<SwapRangeConfig>,
}

/// `[workload.trace.swap_range]`: a byte range of the device, in MiB.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapRangeConfig {
    /// Start, MiB. Default 0.
    #[serde(default)]
    pub offset_mib: u64,
    /// Length, MiB (at least 1).
    pub size_mib: u64,
}
fn d_lba() -> LbaPolicy {
    LbaPolicy::Error
}
fn d_repeat() -> u32 {
    1
}
fn d_window_s() -> f64 {
    nandstack_workload::trace::DEFAULT_REORDER_WINDOW_NS as f64 / 1e9
}
fn d_window_rows() -> u64 {
    nandstack_workload::trace::DEFAULT_REORDER_WINDOW_ROWS
}
fn d_max_late() -> u64 {
    nandstack_workload::trace::DEFAULT_MAX_LATE_ROWS
}

/// Largest reorder window in rows (a typo bound: 10^8 rows hold about 6 GiB).
pub const MAX_REORDER_WINDOW_ROWS: u64 = 100_000_000;
/// Largest reorder window in trace time, seconds (11.6 days).
pub const MAX_REORDER_WINDOW_SECONDS: f64 = 1e6;

impl TraceConfig {
    /// The reader options this replay uses.
    pub fn options(&self) -> TraceOptions {
        TraceOptions {
            reorder_window_ns: (self.reorder_window_seconds * 1e9).round() as u64,
            reorder_window_rows: self.reorder_window_rows,
            max_late_rows: self.max_late_rows,
            malformed: self.malformed,
            ..TraceOptions::default()
        }
    }

    fn validate(&self, prefix: &str) -> Result<()> {
        if !(1..=10_000).contains(&self.repeat) {
            return Err(Error::config(
                format!("{prefix}.trace.repeat"),
                format!("is {}: must be in [1, 10000]", self.repeat),
            ));
        }
        let w = self.reorder_window_seconds;
        if !(w.is_finite() && (0.0..=MAX_REORDER_WINDOW_SECONDS).contains(&w)) {
            return Err(Error::config(
                format!("{prefix}.trace.reorder_window_seconds"),
                format!("is {w}: must be in [0, {MAX_REORDER_WINDOW_SECONDS}]"),
            ));
        }
        if self.reorder_window_rows > MAX_REORDER_WINDOW_ROWS {
            return Err(Error::config(
                format!("{prefix}.trace.reorder_window_rows"),
                format!(
                    "is {}: must be in [0, {MAX_REORDER_WINDOW_ROWS}]",
                    self.reorder_window_rows
                ),
            ));
        }
        Ok(())
    }
}

/// `[workload]`.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WorkloadSpec {
    /// `synthetic` (default), `trace`, `standin` or `host`.
    pub kind: WorkloadKind,
    /// The synthetic generator (measured for `synthetic`; the warm-up of `trace` and `standin`).
    #[serde(flatten)]
    pub synthetic: SyntheticConfig,
    /// How block requests are issued (block workloads).
    pub io: IoConfig,
    /// `kind = "trace"`: the trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
    /// `kind = "standin"`: the Table 4 stand-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standin: Option<StandinConfig>,
    /// `kind = "host"`: the processes, each running one memory-reference workload. At least one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessConfig>,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            kind: WorkloadKind::Synthetic,
            synthetic: SyntheticConfig::default(),
            io: IoConfig::default(),
            trace: None,
            standin: None,
            processes: Vec::new(),
        }
    }
}

/// Keys of `[workload]` that are not the synthetic generator's.
const OWN_KEYS: [&str; 5] = ["kind", "io", "trace", "standin", "processes"];

impl WorkloadSpec {
    /// Build from the `[workload]` table, naming `prefix.key` in errors.
    pub fn from_map(mut map: Map<String, Value>, prefix: &str) -> Result<WorkloadSpec> {
        let take = |m: &mut Map<String, Value>, k: &str| m.remove(k);
        let kind: WorkloadKind = match take(&mut map, "kind") {
            Some(v) => part(v, &format!("{prefix}.kind"))?,
            None => WorkloadKind::default(),
        };
        let io: IoConfig = match take(&mut map, "io") {
            Some(v) => part(v, &format!("{prefix}.io"))?,
            None => IoConfig::default(),
        };
        let trace: Option<TraceConfig> = take(&mut map, "trace")
            .map(|v| part(v, &format!("{prefix}.trace")))
            .transpose()?;
        let standin: Option<StandinConfig> = take(&mut map, "standin")
            .map(|v| part(v, &format!("{prefix}.standin")))
            .transpose()?;
        let processes: Vec<ProcessConfig> = match take(&mut map, "processes") {
            Some(v) => part(v, &format!("{prefix}.processes"))?,
            None => Vec::new(),
        };
        let synthetic: SyntheticConfig = part(Value::Object(map), prefix).map_err(|e| match e {
            Error::Config { key, msg } if msg.contains("unknown field") => {
                Error::config(key, format!("{msg} (or one of {})", OWN_KEYS.join(", ")))
            }
            other => other,
        })?;
        let spec = WorkloadSpec {
            kind,
            synthetic,
            io,
            trace,
            standin,
            processes,
        };
        spec.check_sections(prefix)?;
        Ok(spec)
    }

    /// Kind-specific sections belong to their kind.
    fn check_sections(&self, prefix: &str) -> Result<()> {
        let kind = self.kind;
        let only = |key: &str, set: bool, want: WorkloadKind| -> Result<()> {
            if set && kind != want {
                return Err(Error::config(
                    format!("{prefix}.{key}"),
                    format!(
                        "applies to {prefix}.kind = \"{}\", not \"{}\"",
                        want.name(),
                        kind.name()
                    ),
                ));
            }
            if !set && kind == want {
                return Err(Error::config(
                    format!("{prefix}.{key}"),
                    format!("is required with {prefix}.kind = \"{}\"", want.name()),
                ));
            }
            Ok(())
        };
        only("trace", self.trace.is_some(), WorkloadKind::Trace)?;
        only("standin", self.standin.is_some(), WorkloadKind::Standin)?;
        only("processes", !self.processes.is_empty(), WorkloadKind::Host)?;
        Ok(())
    }

    /// Check values; `logical_bytes` is the device's capacity (synthetic footprints, stand-in sizes).
    pub fn validate(&self, prefix: &str, logical_bytes: u64) -> Result<()> {
        if self.kind.is_block() {
            self.synthetic.validate(logical_bytes)?;
        }
        let io = &self.io;
        if io.queue_depth == 0 || io.queue_depth > 1_000_000 {
            return Err(Error::config(
                format!("{prefix}.io.queue_depth"),
                format!("is {}: must be in [1, 1000000]", io.queue_depth),
            ));
        }
        if !(io.time_scale.is_finite() && io.time_scale >= 0.0) {
            return Err(Error::config(
                format!("{prefix}.io.time_scale"),
                format!("is {}: must be ≥ 0", io.time_scale),
            ));
        }
        let open = io.mode == IoMode::OpenLoop;
        match (self.kind, open, self.synthetic.arrival_iops.is_some()) {
            (WorkloadKind::Synthetic, true, false) => {
                return Err(Error::config(
                    format!("{prefix}.arrival_iops"),
                    "open-loop mode with a generated workload needs an arrival rate (requests per simulated second)",
                ))
            }
            (WorkloadKind::Standin, true, _) => {
                return Err(Error::config(
                    format!("{prefix}.io.mode"),
                    "a stand-in has no arrival times: use closed_loop",
                ))
            }
            (WorkloadKind::Synthetic, true, true) | (_, _, false) => {}
            (kind, _, true) => {
                let why = if kind == WorkloadKind::Synthetic {
                    format!("{prefix}.io.mode = \"closed_loop\" issues by queue depth")
                } else {
                    format!("a {} workload has its own arrivals", kind.name())
                };
                return Err(Error::config(
                    format!("{prefix}.arrival_iops"),
                    format!(
                        "applies only to {prefix}.io.mode = \"open_loop\" with {prefix}.kind = \"synthetic\" \
                         ({why}); remove it"
                    ),
                ));
            }
        }
        if let Some(t) = &self.trace {
            t.validate(prefix)?;
            if let Some(r) = &t.swap_range {
                let end = r
                    .offset_mib
                    .checked_add(r.size_mib)
                    .and_then(|e| e.checked_mul(1 << 20));
                if r.size_mib == 0 || end.is_none_or(|e| e > logical_bytes) {
                    return Err(Error::config(
                        format!("{prefix}.trace.swap_range"),
                        format!(
                            "[{} MiB, +{} MiB) must be a non-empty range inside the device ({} MiB)",
                            r.offset_mib,
                            r.size_mib,
                            logical_bytes >> 20
                        ),
                    ));
                }
            }
        }
        if let Some(s) = &self.standin {
            s.validate(&format!("{prefix}.standin"), logical_bytes)?;
        }
        if self.synthetic.requests == 0 && self.kind == WorkloadKind::Synthetic {
            return Err(Error::config(
                format!("{prefix}.requests"),
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

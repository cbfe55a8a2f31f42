//! Runner of the hybrid SLC/QLC device (`nandstack_device::hybrid`): one JSON config in, one JSON report
//! out ([`run_hybrid_json`]). The workload is a synthetic stand-in for one of the paper's Table 4 traces
//! or a block trace. Model notes and the config/report reference: `docs/hybrid.md`.

mod report;

use std::path::Path;
use std::time::Instant;

use nandstack_core::{Error, Histogram, Result, MAPPING_UNIT_BYTES};
use nandstack_device::hybrid::managers::QTable;
use nandstack_device::hybrid::{HybridDeviceConfig, HybridSsd, ManagerConfig, ManagerKind};
use nandstack_workload::trace::{self, TraceFormat};
use nandstack_workload::Op;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::LbaPolicy;
use nandstack_workload::standin::{StandinConfig, StandinGenerator};
pub use report::{HybridReport, PretrainLine, Sample};

/// A hybrid-device run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridRunConfig {
    /// Seed of the workload and of the RL agent's exploration. Default 42.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// The device (`paper` preset and overrides).
    #[serde(default)]
    pub device: HybridDeviceConfig,
    /// The SLC-cache manager and its parameters.
    #[serde(default)]
    pub manager: ManagerConfig,
    /// Initial state of the device (default: empty).
    #[serde(default)]
    pub precondition: HybridPrecondition,
    /// What the host writes: exactly one of `standin` and `trace`. Default: the PC stand-in.
    #[serde(default)]
    pub workload: HybridWorkload,
    /// What the report holds (sampling interval, Q-table, invariant checks).
    #[serde(default)]
    pub report: HybridReportConfig,
    /// RL pre-training (Fig. 8): workloads (each like `workload`: a `standin` or a `trace`) the agent runs
    /// first, in order, each on a fresh device with the same `device` and `precondition`, learning, with
    /// its Q-table carried from one to the next and into the measured run (after `manager.rl.load_q_table`,
    /// if set). Pre-training run i (0-based) uses seed `seed + 1,000,003 × (i + 1)`. Only the measured run
    /// is reported, plus one `pretraining` line per workload. RL only. Default: none.
    #[serde(default)]
    pub pretrain: Vec<HybridWorkload>,
}
fn d_seed() -> u64 {
    42
}

/// Initial state of the device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridPrecondition {
    /// Fraction of the logical space written (in QLC, sequentially, at its end) before the run, in
    /// [0, 0.95]; counters are zeroed afterwards. Default 0 (empty device, as the paper's traces start).
    #[serde(default)]
    pub fill_fraction: f64,
}

/// The workload: a stand-in or a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridWorkload {
    /// Synthetic stand-in for a Table 4 workload.
    #[serde(default)]
    pub standin: Option<StandinConfig>,
    /// Replay a block trace instead.
    #[serde(default)]
    pub trace: Option<HybridTraceConfig>,
}
impl Default for HybridWorkload {
    fn default() -> Self {
        HybridWorkload {
            standin: Some(StandinConfig::default()),
            trace: None,
        }
    }
}

impl HybridWorkload {
    /// Check the workload; errors name `key.…`.
    fn validate(&self, key: &str, logical_bytes: u64) -> Result<()> {
        match (&self.standin, &self.trace) {
            (Some(s), None) => {
                if !(s.scale.is_finite() && s.scale > 0.0 && s.scale <= 4.0) {
                    return Err(Error::config(
                        format!("{key}.standin.scale"),
                        format!("is {}: must be in (0, 4]", s.scale),
                    ));
                }
                let g = StandinGenerator::new(&s.name.spec(), s.scale, 0).ok_or_else(|| {
                    Error::config(
                        format!("{key}.standin.name"),
                        "Table 4 numbers cannot be met",
                    )
                })?;
                if g.address_space_bytes() > logical_bytes {
                    return Err(Error::config(
                        format!("{key}.standin.scale"),
                        format!(
                            "gives an address space of {} bytes, more than the device's logical capacity of {}",
                            g.address_space_bytes(),
                            logical_bytes
                        ),
                    ));
                }
            }
            (None, Some(t)) => {
                if !(1..=10_000).contains(&t.repeat) {
                    return Err(Error::config(
                        format!("{key}.trace.repeat"),
                        format!("is {}: must be in [1, 10000]", t.repeat),
                    ));
                }
            }
            _ => {
                return Err(Error::config(
                    key,
                    "set exactly one of `standin` and `trace`",
                ))
            }
        }
        Ok(())
    }
}

/// A block trace to replay (reads, writes and TRIMs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridTraceConfig {
    /// Path of the trace (compressed or not).
    pub path: String,
    /// Format name (docs/trace-formats.md), e.g. `msr`, `mqsim`, `systor17`.
    pub format: TraceFormat,
    /// Requests beyond the logical capacity: `error`, `wrap` (offset modulo the capacity; default) or
    /// `scale` (the trace's extent mapped onto the capacity).
    #[serde(default = "d_lba")]
    pub lba: LbaPolicy,
    /// Replay at most this many requests per pass (0 = all). Default 0.
    #[serde(default)]
    pub max_requests: u64,
    /// Replay the trace this many times in a row, in [1, 10000]. Default 1.
    #[serde(default = "d_repeat")]
    pub repeat: u32,
}
fn d_lba() -> LbaPolicy {
    LbaPolicy::Wrap
}
fn d_repeat() -> u32 {
    1
}

/// What the report holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridReportConfig {
    /// A `series` sample (SLC blocks, θ, utilisation, WAF, interval throughput) every this many host bytes
    /// written, ≥ 1 MiB. Default 134,217,728 (128 MiB, the paper's Figs. 5–6).
    #[serde(default = "d_sample")]
    pub sample_every_bytes: u64,
    /// Put the final Q-table in the report (RL only). Default false.
    #[serde(default)]
    pub include_q_table: bool,
    /// Verify mode: full invariant check every this many host bytes written (0 = 16 times per run for a
    /// stand-in, every 64 MiB for a trace). Default 0.
    #[serde(default)]
    pub invariant_check_every_bytes: u64,
}
fn d_sample() -> u64 {
    128 << 20
}
impl Default for HybridReportConfig {
    fn default() -> Self {
        HybridReportConfig {
            sample_every_bytes: d_sample(),
            include_q_table: false,
            invariant_check_every_bytes: 0,
        }
    }
}

impl HybridRunConfig {
    /// Parse the JSON form; errors carry the dotted path of the bad key.
    pub fn from_json(text: &str) -> Result<HybridRunConfig> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let cfg: HybridRunConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let p = e.path().to_string();
            Error::config(
                if p == "." { "(top level)".into() } else { p },
                e.inner().to_string(),
            )
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Check every value (errors name the key).
    pub fn validate(&self) -> Result<()> {
        let p = self.device.params()?;
        self.manager.validate()?;
        let f = self.precondition.fill_fraction;
        if !(f.is_finite() && (0.0..=0.95).contains(&f)) {
            return Err(Error::config(
                "precondition.fill_fraction",
                format!("is {f}: must be in [0, 0.95]"),
            ));
        }
        if self.report.sample_every_bytes < (1 << 20) {
            return Err(Error::config(
                "report.sample_every_bytes",
                format!(
                    "is {}: must be at least 1 MiB",
                    self.report.sample_every_bytes
                ),
            ));
        }
        self.workload.validate("workload", p.logical_bytes())?;
        if !self.pretrain.is_empty() && self.manager.kind != ManagerKind::Rl {
            return Err(Error::config(
                "pretrain",
                "pre-training is only for the rl manager (manager.kind = \"rl\")",
            ));
        }
        for (i, w) in self.pretrain.iter().enumerate() {
            w.validate(&format!("pretrain[{i}]"), p.logical_bytes())?;
        }
        Ok(())
    }
}

/// Run one hybrid-device simulation described by a JSON config ([`HybridRunConfig`]). `seed` overrides the
/// config's; `verify` checks read-after-write versions on every read and the full invariants periodically
/// and at the end. `progress(phase, done, total)` is called about every 0.5% of the run (phase `run`, in
/// host bytes written for a stand-in, in requests for a trace, total 0 when unknown) and once per other
/// phase (`precondition`, `flush`); returning false interrupts the run (`Error::Interrupted`). Returns
/// the report as JSON (same config + seed ⇒ same JSON apart from `wall_*` keys).
pub fn run_hybrid_json(
    config_json: &str,
    seed: Option<u64>,
    verify: bool,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<String> {
    let mut cfg = HybridRunConfig::from_json(config_json)?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let report = run_hybrid(&cfg, verify, progress)?;
    serde_json::to_string_pretty(&report)
        .map_err(|e| Error::Invariant(format!("report serialization: {e}")))
}

/// The default config (every key, with its default value) as pretty JSON.
pub fn hybrid_default_config_json() -> String {
    let cfg: HybridRunConfig = serde_json::from_str("{}").expect("all keys have defaults");
    serde_json::to_string_pretty(&cfg).expect("config serializes")
}

/// Parse and validate a JSON config without running it; the effective config (every default filled in)
/// as compact JSON, so equal configs written differently normalize to the same text.
pub fn hybrid_validate_config_json(config_json: &str) -> Result<String> {
    let cfg = HybridRunConfig::from_json(config_json)?;
    serde_json::to_string(&cfg).map_err(|e| Error::Invariant(format!("config serialization: {e}")))
}

/// Markdown reference of every hybrid config key (docs/hybrid-config-reference.md).
pub fn hybrid_config_reference_markdown() -> String {
    let schema =
        serde_json::to_value(schemars::schema_for!(HybridRunConfig)).expect("schema serializes");
    crate::reference::schema_reference_markdown(
        &schema,
        "# Hybrid SLC/QLC configuration reference\n\n_Generated from the config types by \
         `nandstack config --reference --model hybrid`; do not edit._\n\n\
         The config of `nandstack.models.run_hybrid` and `nandstack run --model hybrid` (JSON or TOML; the model \
         is described in docs/hybrid.md). Unknown keys are errors naming the dotted key.\n",
    )
}

/// The JSON schema of [`HybridRunConfig`] (doc comments become descriptions).
pub fn hybrid_config_schema_json() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(HybridRunConfig))
        .expect("schema serializes")
}

fn load_q_table(cfg: &HybridRunConfig) -> Result<Option<QTable>> {
    // Only the RL manager reads a Q-table; other managers ignore the `rl` section.
    let path = match (&cfg.manager.kind, &cfg.manager.rl.load_q_table) {
        (ManagerKind::Rl, Some(path)) => path,
        _ => return Ok(None),
    };
    let key = "manager.rl.load_q_table";
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::config(key, format!("cannot read `{path}`: {e}")))?;
    let t: QTable =
        serde_json::from_str(&text).map_err(|e| Error::config(key, format!("`{path}`: {e}")))?;
    Ok(Some(t))
}

/// Everything the driver loop tracks besides the device.
struct Driver<'a> {
    dev: HybridSsd,
    verify: bool,
    check_every: u64,
    next_check: u64,
    checks: u64,
    sample_every: u64,
    next_sample: u64,
    samples: Vec<Sample>,
    last_sample: (u64, u64),
    cost_hist: Histogram,
    slc_byte_weighted: f64,
    /// Progress phase of the run loop (`run`, or `pretrain i/n`).
    phase: &'a str,
    progress: &'a mut dyn FnMut(&str, u64, u64) -> bool,
}

impl Driver<'_> {
    fn write(&mut self, offset: u64, len: u64) -> Result<()> {
        let blocks = self.dev.ftl().slc_target();
        let ns = self.dev.write(offset, len)?;
        self.cost_hist.record(ns);
        self.slc_byte_weighted += blocks as f64 * len as f64;
        let written = self.dev.stats().host_write_bytes;
        while written >= self.next_sample {
            self.samples
                .push(report::sample(&self.dev, self.last_sample));
            self.last_sample = (written, self.dev.ftl().costs().total_ns());
            self.next_sample += self.sample_every;
        }
        if self.verify && written >= self.next_check {
            self.dev.check()?;
            self.checks += 1;
            while self.next_check <= written {
                self.next_check += self.check_every;
            }
        }
        Ok(())
    }

    fn tick(&mut self, done: u64, total: u64) -> Result<()> {
        if (self.progress)(self.phase, done, total) {
            Ok(())
        } else {
            Err(Error::Interrupted)
        }
    }
}

/// Run a parsed config; the report struct (Rust callers and tests). With `pretrain`, the RL agent first
/// runs each listed workload on a fresh device (learning), carrying its Q-table from one to the next and
/// into the measured run; only the measured run is reported (plus a `pretraining` line per workload).
pub fn run_hybrid(
    cfg: &HybridRunConfig,
    verify: bool,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<HybridReport> {
    cfg.validate()?;
    let t0 = Instant::now();
    let mut q_table = load_q_table(cfg)?;
    let mut pretraining = Vec::with_capacity(cfg.pretrain.len());
    if !cfg.pretrain.is_empty() {
        // Pre-training always learns, whatever `manager.rl.learn` says of the measured run.
        let mut manager = cfg.manager.clone();
        manager.rl.learn = true;
        for (i, w) in cfg.pretrain.iter().enumerate() {
            let seed = pretrain_seed(cfg.seed, i);
            let phase = format!("pretrain {}/{}", i + 1, cfg.pretrain.len());
            let run = drive(
                cfg,
                &manager,
                w,
                seed,
                q_table.take(),
                verify,
                &phase,
                progress,
            )?;
            q_table = run.dev.manager().q_table().cloned();
            pretraining.push(report::pretrain_line(&run.dev, run.workload, seed));
        }
    }
    let run = drive(
        cfg,
        &cfg.manager,
        &cfg.workload,
        cfg.seed,
        q_table,
        verify,
        "run",
        progress,
    )?;
    if let Some(path) = cfg
        .manager
        .rl
        .save_q_table
        .as_ref()
        .filter(|_| cfg.manager.kind == ManagerKind::Rl)
    {
        let t = run.dev.manager().q_table().expect("rl has a table");
        let text =
            serde_json::to_string(t).map_err(|e| Error::Invariant(format!("Q-table: {e}")))?;
        std::fs::write(path, text).map_err(|e| Error::Io {
            path: path.clone(),
            source: e,
        })?;
    }
    let host_bytes = run.dev.stats().host_write_bytes;
    let mut r = report::build(
        cfg,
        &run.dev,
        run.workload,
        run.samples,
        &run.cost_hist,
        run.flush_ns,
    );
    r.slc.mean_blocks = run.slc_byte_weighted / host_bytes.max(1) as f64;
    r.pretraining = pretraining;
    r.verify.enabled = verify;
    r.verify.invariant_checks = run.checks;
    r.verify.reads_checked = run.dev.ftl().reads_checked();
    r.wall_seconds = t0.elapsed().as_secs_f64();
    Ok(r)
}

/// The seed of the `i`-th pre-training run (0-based): distinct from the measured run's and from each other.
pub fn pretrain_seed(seed: u64, i: usize) -> u64 {
    seed.wrapping_add(1_000_003 * (i as u64 + 1))
}

/// What one workload's run on a fresh device leaves behind.
struct Drive {
    dev: HybridSsd,
    workload: report::WorkloadReport,
    samples: Vec<Sample>,
    cost_hist: Histogram,
    slc_byte_weighted: f64,
    flush_ns: u64,
    checks: u64,
}

/// Build a fresh (preconditioned) device with `manager` and run `w` on it, flush included.
#[allow(clippy::too_many_arguments)]
fn drive(
    cfg: &HybridRunConfig,
    manager: &ManagerConfig,
    w: &HybridWorkload,
    seed: u64,
    q_table: Option<QTable>,
    verify: bool,
    phase: &str,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<Drive> {
    let params = cfg.device.params()?;
    let manager = manager.build(&params, seed, q_table)?;
    let fill_units = (cfg.precondition.fill_fraction * params.logical_units as f64) as u64;
    let fill = (fill_units > 0).then(|| {
        let start = params.logical_units as u64 - fill_units;
        (start * MAPPING_UNIT_BYTES, fill_units * MAPPING_UNIT_BYTES)
    });
    if !progress("precondition", 0, 1) {
        return Err(Error::Interrupted);
    }
    let dev = HybridSsd::with_fill(params.clone(), manager, verify, fill)?;
    let capacity = params.logical_bytes();
    let standin = w.standin.as_ref();
    let mut gen =
        standin.map(|s| StandinGenerator::new(&s.name.spec(), s.scale, seed).expect("validated"));
    let check_every = match (cfg.report.invariant_check_every_bytes, &gen) {
        (0, Some(g)) => (g.target_bytes() / 16).max(1),
        (0, None) => 64 << 20,
        (n, _) => n,
    };
    let mut d = Driver {
        dev,
        verify,
        check_every,
        next_check: check_every,
        checks: 0,
        sample_every: cfg.report.sample_every_bytes,
        next_sample: cfg.report.sample_every_bytes,
        samples: Vec::new(),
        last_sample: (0, 0),
        cost_hist: Histogram::new(),
        slc_byte_weighted: 0.0,
        phase,
        progress,
    };
    let mut workload = report::WorkloadReport::default();
    if let Some(g) = gen.as_mut() {
        let s = standin.expect("standin");
        let (total, step) = (g.target_bytes(), (g.target_bytes() / 200).max(1));
        let mut next_tick = 0;
        for (offset, len) in g.by_ref() {
            d.write(offset, len)?;
            workload.add_write(len);
            let done = d.dev.stats().host_write_bytes;
            if done >= next_tick {
                d.tick(done, total)?;
                next_tick = done + step;
            }
        }
        workload.kind = "standin".into();
        workload.name = s.name.spec().name.into();
        workload.scale = s.scale;
        workload.address_space_bytes = g.address_space_bytes();
        workload.target_write_bytes = total;
    } else {
        let t = w.trace.as_ref().expect("validated");
        replay(&mut d, t, capacity, &mut workload)?;
    }
    if !(d.progress)("flush", 0, 1) {
        return Err(Error::Interrupted);
    }
    let flush_ns = d.dev.flush()?;
    if verify {
        d.dev.check()?;
        d.checks += 1;
    }
    Ok(Drive {
        dev: d.dev,
        workload,
        samples: d.samples,
        cost_hist: d.cost_hist,
        slc_byte_weighted: d.slc_byte_weighted,
        flush_ns,
        checks: d.checks,
    })
}

fn replay(
    d: &mut Driver,
    t: &HybridTraceConfig,
    capacity: u64,
    w: &mut report::WorkloadReport,
) -> Result<()> {
    let path = Path::new(&t.path);
    let extent = match t.lba {
        LbaPolicy::Scale => trace::scan(path, t.format)?.max_end_bytes.max(1),
        _ => 0,
    };
    let u = MAPPING_UNIT_BYTES;
    let mut n = 0u64;
    let total = if t.max_requests > 0 {
        t.max_requests * t.repeat as u64
    } else {
        0
    };
    for _ in 0..t.repeat {
        let mut k = 0u64;
        for rec in trace::open(path, t.format)? {
            let rec = rec?;
            if t.max_requests > 0 && k >= t.max_requests {
                break;
            }
            k += 1;
            n += 1;
            let len = rec.len.min(capacity);
            let offset = match t.lba {
                LbaPolicy::Error => {
                    if rec.end_bytes() > capacity {
                        return Err(Error::OutOfRange(format!(
                            "{}: request {k} ({} bytes at {}) beyond the logical capacity of {capacity} bytes; \
                             set workload.trace.lba to `wrap` or `scale`",
                            t.path, rec.len, rec.offset
                        )));
                    }
                    rec.offset
                }
                LbaPolicy::Wrap => {
                    let o = rec.offset % capacity;
                    if o + len > capacity {
                        0
                    } else {
                        o
                    }
                }
                LbaPolicy::Scale => {
                    let o =
                        ((rec.offset as u128 * capacity as u128 / extent as u128) as u64) / u * u;
                    o.min(capacity - len.div_ceil(u) * u)
                }
            };
            match rec.op {
                Op::Write => {
                    d.write(offset, len)?;
                    w.add_write(len);
                }
                Op::Read => {
                    d.dev.read(offset, len)?;
                    w.read_requests += 1;
                    w.read_bytes += len;
                }
                Op::Trim => {
                    d.dev.trim(offset, len)?;
                    w.trim_requests += 1;
                }
            }
            if n.is_multiple_of(2048) {
                d.tick(n, total)?;
            }
        }
    }
    w.kind = "trace".into();
    w.name = t.path.clone();
    w.scale = 1.0;
    Ok(())
}

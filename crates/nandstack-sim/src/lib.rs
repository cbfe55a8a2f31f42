//! nandstack-sim: the one runner. A config (`SimConfig`: workload → optional host → device) is run to
//! one summary (`Report`): block workloads through the request issuer, host programs through the host
//! model, every device behind the `Device` interface.
//!
//! The public entry points used by the Python binding (which only translates) are:
//! [`run_json`], [`default_config_toml`], [`config_reference_markdown`], [`bench_json`].

pub mod aged;
pub mod bench;
pub mod build;
pub mod config;
pub mod drive;
pub mod frontend;
pub mod hostrun;
pub mod limits;
pub mod nvme;
pub mod precondition;
pub mod presets;
pub mod pretrain;
pub mod progress;
pub mod reference;
pub mod report;
pub mod run;
pub mod series;
pub mod source;
pub mod usage;

use nandstack_core::Result;

pub use config::SimConfig;
pub use reference::{config_reference_markdown, default_config_toml};
pub use report::Report;

/// Options that are not part of the experiment's identity.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides `seed` in the config when set.
    pub seed: Option<u64>,
    /// Check read-after-write versions and FTL invariants during the run.
    pub verify: bool,
    /// Stream the time series to this CSV file as it is produced (bounded memory) instead of keeping it
    /// in the report.
    pub series_csv: Option<String>,
}

/// Progress of a run, reported periodically to the caller.
#[derive(Clone, Debug)]
pub struct Progress {
    /// "precondition", "warmup" or "measure".
    pub phase: &'static str,
    pub done: u64,
    pub total: u64,
}

/// Run one simulation described by a JSON config (the TOML config converted to JSON).
/// `progress` is called every ~0.5% of each phase; returning `false` interrupts the run (Error::Interrupted).
/// Returns the report as a JSON string (stable keys, see docs/metrics.md).
pub fn run_json(
    config_json: &str,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<String> {
    let cfg = SimConfig::from_json(config_json)?;
    Ok(run::run(cfg, opts, progress)?.to_json())
}

/// Run a config given as TOML (Rust callers, tests).
pub fn run_toml(config_toml: &str, opts: &RunOptions) -> Result<Report> {
    let cfg = SimConfig::from_toml(config_toml)?;
    run::run(cfg, opts, &mut |_| true)
}

pub use bench::bench_json;

/// Parse and check a JSON config without running it (keys, values, the device it describes and the
/// workload against the device's capacity). Returns the effective config as compact JSON — every default
/// filled in, the form the report's `config` key has — so equal configs written differently give the
/// same text. Cheap: no device is allocated.
/// An explicit `run.memory_limit_bytes` is checked against the memory estimate too (the machine's own
/// limit is checked when the run starts: it changes from moment to moment).
pub fn validate_config_json(config_json: &str) -> Result<String> {
    let cfg = SimConfig::from_json(config_json)?;
    cfg.check()?;
    if let Some(bytes) = cfg.run.memory_limit_bytes {
        let e = limits::estimate(&cfg, false, false)?;
        limits::check(
            &e,
            &limits::Limit {
                bytes,
                source: "run.memory_limit_bytes".into(),
            },
        )?;
    }
    Ok(cfg.to_json())
}

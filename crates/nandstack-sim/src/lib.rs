//! nandstack-sim: wires workload → device, runs preconditioning and the measured phase, builds reports.
//!
//! The public entry points used by the Python binding (which only translates) are:
//! [`run_json`], [`default_config_toml`], [`config_reference_markdown`], [`bench_json`].

use nandstack_core::Result;

/// Options that are not part of the experiment's identity.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides `seed` in the config when set.
    pub seed: Option<u64>,
    /// Check read-after-write versions and FTL invariants during the run.
    pub verify: bool,
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
/// `progress` is called every ~0.5% of work; returning `false` interrupts the run (Error::Interrupted).
/// Returns the report as a JSON string (stable keys, see docs/metrics.md).
pub fn run_json(config_json: &str, opts: &RunOptions, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<String> {
    let _ = (config_json, opts, progress);
    Err(nandstack_core::Error::config("run", "not implemented yet"))
}

/// The default config as commented TOML (what `nandstack run` uses with no file).
pub fn default_config_toml() -> String {
    String::new()
}

/// Markdown reference of every config key, generated from the config types.
pub fn config_reference_markdown() -> String {
    String::new()
}

/// Run a built-in benchmark by name ("ftl"); returns JSON with ops/s figures.
pub fn bench_json(name: &str, quick: bool) -> Result<String> {
    let _ = (name, quick);
    Err(nandstack_core::Error::config("bench", "not implemented yet"))
}

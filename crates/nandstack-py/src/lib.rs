//! nandstack-py: PyO3 bindings of nandstack. Translation only: every simulation decision lives in the
//! core crates; this crate converts arguments, releases the GIL (`gil.rs`) and maps errors (`errors.rs`).
//! The Python-facing API is `python/nandstack/`; the stubs are `python/nandstack/_core.pyi`.

use pyo3::prelude::*;

mod errors;
mod gil;
mod run;

/// The default config as commented TOML.
#[pyfunction]
fn default_config_toml() -> String {
    nandstack_sim::default_config_toml()
}

/// Markdown reference of every config key.
#[pyfunction]
fn config_reference_markdown() -> String {
    nandstack_sim::config_reference_markdown()
}

/// Check a JSON config without running it: parse (unknown keys, types), validate ranges, build the
/// geometry. Raises `ConfigError`/`GeometryError` naming the bad key; cheap (no device is allocated).
/// Returns the effective config as JSON with every default filled in (the form the report's `config`
/// key has), so equal configs written differently normalize to the same text.
#[pyfunction]
fn validate_config(config_json: &str) -> PyResult<String> {
    nandstack_sim::validate_config_json(config_json).map_err(errors::to_py_err)
}

/// The presets: name, description and spec sheet of each, as JSON.
#[pyfunction]
fn presets_json() -> String {
    nandstack_sim::presets::presets_json()
}

/// A preset's config (TOML). Raises `ConfigError` for an unknown name.
#[pyfunction]
fn preset_toml(name: &str) -> PyResult<String> {
    nandstack_sim::presets::preset(name)
        .map(|p| p.toml.to_string())
        .map_err(errors::to_py_err)
}

/// Run a built-in benchmark (GIL released); returns its report as JSON.
#[pyfunction]
#[pyo3(name = "bench", signature = (name, quick=false))]
fn bench_py(py: Python<'_>, name: String, quick: bool) -> PyResult<String> {
    gil::detached(py, || nandstack_sim::bench_json(&name, quick)).map_err(errors::to_py_err)
}

/// One pass over a block trace: counts, bytes, extent and time span, as JSON.
#[pyfunction]
fn trace_stats(py: Python<'_>, path: String, format: String) -> PyResult<String> {
    gil::detached(py, || {
        nandstack_sim::source::trace_stats_json(&path, &format)
    })
    .map_err(errors::to_py_err)
}

/// The kernel-swap captures' setup shared with Rust's `kswap::config`: `{"seed": …, "backend": …}` (the
/// seed and `host.swap.backend`), as JSON.
#[pyfunction]
fn kswap_setup_json() -> String {
    serde_json::json!({
        "seed": nandstack_kernel::kswap::SEED,
        "backend": nandstack_kernel::kswap::loop_backend_json(),
    })
    .to_string()
}

/// A kernel-swap capture's requests counted in Rust (`nandstack_kernel::requests`), as JSON; an error
/// for anything the Python reader (the reference) might read otherwise.
#[pyfunction]
fn kswap_request_counts(py: Python<'_>, path: String) -> PyResult<String> {
    gil::detached(py, || {
        nandstack_kernel::requests::request_counts(std::path::Path::new(&path))
            .map(|c| c.to_json().to_string())
    })
    .map_err(errors::to_py_err)
}

/// The kernel-zswap and kernel-zram figure lists (Rust's `kcswap`): `{"zswap": [...], "zram": [...],
/// "bytes": [...]}` as JSON.
#[pyfunction]
fn kcswap_figures_json() -> String {
    nandstack_kernel::kcswap::figures_json().to_string()
}

/// The host memory/swap model's benchmark (GIL released); returns its report as JSON.
#[pyfunction]
#[pyo3(signature = (quick=false))]
fn bench_host(py: Python<'_>, quick: bool) -> PyResult<String> {
    gil::detached(py, || nandstack_sim::hostrun::bench_host(quick)).map_err(errors::to_py_err)
}

/// ezswap: entropy-vs-compression-ratio correlation on the Silesia pages in `corpus_dir`, every
/// compressor and both entropy samples, as JSON.
#[pyfunction]
fn ezswap_correlation(py: Python<'_>, corpus_dir: String) -> PyResult<String> {
    gil::detached(py, || {
        nandstack_host::zswap::policy::ratio_fit::silesia_correlation(std::path::Path::new(
            &corpus_dir,
        ))
        .map(|v| v.to_string())
    })
    .map_err(errors::to_py_err)
}

/// The ezswap paper's Fig. 5 and Fig. 6 correlations on the launch cycle's pages: `workload_json` is a
/// `type = "launch"` workload table as JSON, `seed` the run seed; JSON back.
#[pyfunction]
fn launch_correlation(
    py: Python<'_>,
    workload_json: String,
    seed: u64,
    max_pages: usize,
) -> PyResult<String> {
    gil::detached(py, || {
        let c: nandstack_host::workloads::launch_config::LaunchConfig =
            serde_json::from_str(&workload_json).map_err(|e| {
                nandstack_core::Error::config("workload", format!("not a launch workload: {e}"))
            })?;
        nandstack_host::workloads::launch::entropy_correlation(&c, seed, max_pages)
            .map(|v| v.to_string())
    })
    .map_err(errors::to_py_err)
}

/// Keep the aged block or hybrid device of the runs that follow in this process for a later run with
/// the same aging (`True`), or not (`False`, the default; a run then takes a kept device with its
/// aging for itself). The sweep runner's groups of tasks that age the same device (`nandstack_sim::aged`).
#[pyfunction]
fn keep_aged(on: bool) {
    nandstack_sim::aged::set_keeping(on)
}

/// Drop the aged devices this process keeps (`keep_aged`; a few, the least recently used leaving
/// first): the sweep runner's unit none of whose agings came before.
#[pyfunction]
fn forget_aged() {
    nandstack_sim::aged::clear()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // `pgo` when built by `tools/pgo-build` (profile-guided; same results), else `release`.
    m.add(
        "__build__",
        option_env!("NANDSTACK_BUILD").unwrap_or("release"),
    )?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::run_many, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(bench_host, m)?)?;
    m.add_function(wrap_pyfunction!(keep_aged, m)?)?;
    m.add_function(wrap_pyfunction!(forget_aged, m)?)?;
    m.add_function(wrap_pyfunction!(kswap_setup_json, m)?)?;
    m.add_function(wrap_pyfunction!(kcswap_figures_json, m)?)?;
    m.add_function(wrap_pyfunction!(kswap_request_counts, m)?)?;
    m.add_function(wrap_pyfunction!(default_config_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config_reference_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(bench_py, m)?)?;
    m.add_function(wrap_pyfunction!(validate_config, m)?)?;
    m.add_function(wrap_pyfunction!(presets_json, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(ezswap_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(launch_correlation, m)?)?;
    errors::register(m)
}

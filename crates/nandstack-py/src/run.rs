//! `run`: one simulation, GIL released; Ctrl-C and callback errors stop the engine through `progress`.

use nandstack_sim::{Progress, RunOptions};
use pyo3::prelude::*;

use crate::errors::to_py_err;

/// Run one simulation from a JSON config; returns the report as a JSON string.
///
/// The GIL is released while the engine runs. At every progress tick the GIL is re-acquired to call
/// `progress(phase, done, total)` (if given) and to check for signals; an exception from either (e.g.
/// `KeyboardInterrupt` on Ctrl-C) stops the engine and is re-raised here.
#[pyfunction]
#[pyo3(signature = (config_json, seed=None, verify=false, progress=None, series_csv=None))]
pub fn run(
    py: Python<'_>,
    config_json: String,
    seed: Option<u64>,
    verify: bool,
    progress: Option<PyObject>,
    series_csv: Option<String>,
) -> PyResult<String> {
    let opts = RunOptions {
        seed,
        verify,
        series_csv,
    };
    with_progress(py, progress, |tick| {
        nandstack_sim::run_json(&config_json, &opts, &mut |p: &Progress| {
            tick(p.phase, p.done, p.total)
        })
    })
}

/// Run `engine` with the GIL released, giving it a progress function that calls the Python callback and
/// checks signals; a Python exception raised there stops the engine and is re-raised here. The GIL is
/// released and re-taken through `gil`, so a thread still running when the interpreter exits is parked,
/// never aborts the process.
fn with_progress(
    py: Python<'_>,
    progress: Option<PyObject>,
    engine: impl FnOnce(&mut dyn FnMut(&str, u64, u64) -> bool) -> nandstack_core::Result<String> + Send,
) -> PyResult<String> {
    let mut pending: Option<PyErr> = None;
    let result = crate::gil::detached(py, || {
        let mut tick = |phase: &str, done: u64, total: u64| -> bool {
            crate::gil::with_gil(|py| {
                let outcome = match &progress {
                    Some(callback) => callback.call1(py, (phase, done, total)).map(drop),
                    None => Ok(()),
                };
                match outcome.and_then(|()| py.check_signals()) {
                    Ok(()) => true,
                    Err(err) => {
                        pending = Some(err);
                        false
                    }
                }
            })
        };
        engine(&mut tick)
    });
    // A Python exception raised during the run wins over the engine's `Interrupted` that it caused. If the
    // engine still produced a (partial) report — an interrupt in the measured phase — it rides along on the
    // exception as `partial_report`, so that the caller can save what ran.
    if let Some(err) = pending {
        if let Ok(report) = &result {
            Python::with_gil(|py| {
                let _ = err
                    .value_bound(py)
                    .setattr("partial_report", report.as_str());
            });
        }
        return Err(err);
    }
    result.map_err(to_py_err)
}

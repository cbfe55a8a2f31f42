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

/// Run several simulations from JSON configs, as `run` runs each (the same reports), host programs
/// that read the same reference streams side by side (`nandstack_sim::run::run_many`); one item per
/// config, in order: the report's JSON, or the engine's error as an exception object (not raised).
/// `keep_last`: the last run keeps its aged device too (`keep_aged`). Ctrl-C or an exception from
/// `progress` stops every run and is raised (no partial reports).
#[pyfunction]
#[pyo3(signature = (config_jsons, verify=false, keep_last=false, progress=None))]
pub fn run_many(
    py: Python<'_>,
    config_jsons: Vec<String>,
    verify: bool,
    keep_last: bool,
    progress: Option<PyObject>,
) -> PyResult<Vec<PyObject>> {
    let opts = RunOptions {
        seed: None,
        verify,
        series_csv: None,
    };
    let results = with_progress(py, progress, |tick| {
        let mut cfgs = Vec::new();
        let mut parsed = Vec::new();
        for json in &config_jsons {
            match nandstack_sim::SimConfig::from_json(json) {
                Ok(c) => {
                    parsed.push(None);
                    cfgs.push(c);
                }
                Err(e) => parsed.push(Some(Err(e))),
            }
        }
        let mut ran = nandstack_sim::run::run_many(cfgs, &opts, keep_last, &mut |p: &Progress| {
            tick(p.phase, p.done, p.total)
        })
        .into_iter();
        let all: Vec<nandstack_core::Result<String>> = parsed
            .into_iter()
            .map(|p| {
                p.unwrap_or_else(|| {
                    ran.next()
                        .expect("one result per config")
                        .map(|r| r.to_json())
                })
            })
            .collect();
        if all
            .iter()
            .any(|r| matches!(r, Err(nandstack_core::Error::Interrupted)))
        {
            return Err(nandstack_core::Error::Interrupted);
        }
        Ok(Many(all))
    })?;
    Ok(results
        .0
        .into_iter()
        .map(|r| match r {
            Ok(json) => json.into_py(py),
            Err(e) => to_py_err(e).into_value(py).into_py(py),
        })
        .collect())
}

/// What an interrupted engine may still hand back (a single run's partial report).
trait Partial {
    fn partial(&self) -> Option<&str>;
}
impl Partial for String {
    fn partial(&self) -> Option<&str> {
        Some(self)
    }
}
/// `run_many`'s results (never partial: an interrupt raises).
struct Many(Vec<nandstack_core::Result<String>>);
impl Partial for Many {
    fn partial(&self) -> Option<&str> {
        None
    }
}

/// Run `engine` with the GIL released, giving it a progress function that calls the Python callback and
/// checks signals; a Python exception raised there stops the engine and is re-raised here. The GIL is
/// released and re-taken through `gil`, so a thread still running when the interpreter exits is parked,
/// never aborts the process.
fn with_progress<T: Partial + Send>(
    py: Python<'_>,
    progress: Option<PyObject>,
    engine: impl FnOnce(&mut dyn FnMut(&str, u64, u64) -> bool) -> nandstack_core::Result<T> + Send,
) -> PyResult<T> {
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
        if let Some(report) = result.as_ref().ok().and_then(|r| r.partial()) {
            Python::with_gil(|py| {
                let _ = err.value_bound(py).setattr("partial_report", report);
            });
        }
        return Err(err);
    }
    result.map_err(to_py_err)
}

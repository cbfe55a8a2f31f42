//! The one place where engine errors become Python exceptions.
//!
//! Hierarchy (all importable from `nandstack`):
//! `NandstackError(Exception)` ← `ConfigError`, `GeometryError`, `TraceError`, `OutOfRangeError`,
//! `DeviceFullError`, `InvariantError`, `DeviceCommandError`, and `OutOfMemoryError`, which is also a
//! built-in `MemoryError` (`except MemoryError` catches it). `Error::Interrupted` becomes
//! `KeyboardInterrupt`; `Error::Io` becomes the base `NandstackError` (its message names the path).

use nandstack_core::Error;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyMemoryError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    nandstack,
    NandstackError,
    PyException,
    "Base class of every nandstack error."
);
pyo3::create_exception!(
    nandstack,
    ConfigError,
    NandstackError,
    "A config value is missing, unknown or invalid."
);
pyo3::create_exception!(
    nandstack,
    GeometryError,
    NandstackError,
    "The NAND geometry cannot be built."
);
pyo3::create_exception!(
    nandstack,
    TraceError,
    NandstackError,
    "A trace line could not be parsed."
);
pyo3::create_exception!(
    nandstack,
    OutOfRangeError,
    NandstackError,
    "A request addresses space outside the device."
);
pyo3::create_exception!(
    nandstack,
    DeviceFullError,
    NandstackError,
    "The device ran out of free blocks."
);
pyo3::create_exception!(
    nandstack,
    InvariantError,
    NandstackError,
    "An internal invariant was violated (a bug)."
);

pyo3::create_exception!(
    nandstack,
    DeviceCommandError,
    NandstackError,
    "A device rejected a command (unsupported, or against its protocol)."
);

/// `OutOfMemoryError(NandstackError, MemoryError)`: memory for a run could not be allocated. Built once
/// with `type(...)`, since `create_exception!` takes one base.
fn out_of_memory_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static TYPE: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    TYPE.get_or_try_init(py, || {
        let bases = PyTuple::new_bound(
            py,
            [
                py.get_type_bound::<NandstackError>().into_any(),
                py.get_type_bound::<PyMemoryError>().into_any(),
            ],
        );
        let ns = PyDict::new_bound(py);
        ns.set_item("__module__", "nandstack")?;
        ns.set_item(
            "__doc__",
            "Memory for a run could not be allocated (a NandstackError and a MemoryError).",
        )?;
        let t =
            py.import_bound("builtins")?
                .getattr("type")?
                .call1(("OutOfMemoryError", bases, ns))?;
        Ok(t.downcast_into::<PyType>()?.unbind())
    })
    .map(|t| t.bind(py))
}

/// Translate an engine error into the matching Python exception. The message is the error's `Display`;
/// structured context is attached as attributes (`key`, `field`, `file`/`line`) where the variant has it.
pub fn to_py_err(err: Error) -> PyErr {
    let msg = err.to_string();
    Python::with_gil(|py| {
        let (py_err, attrs): (PyErr, Vec<(&str, PyObject)>) = match err {
            Error::Config { key, .. } => {
                (ConfigError::new_err(msg), vec![("key", key.into_py(py))])
            }
            Error::Geometry { field, .. } => (
                GeometryError::new_err(msg),
                vec![("field", field.into_py(py))],
            ),
            Error::Trace { file, line, .. } => (
                TraceError::new_err(msg),
                vec![("file", file.into_py(py)), ("line", line.into_py(py))],
            ),
            Error::OutOfRange(_) => (OutOfRangeError::new_err(msg), vec![]),
            Error::DeviceFull(_) => (DeviceFullError::new_err(msg), vec![]),
            Error::Invariant(_) => (InvariantError::new_err(msg), vec![]),
            Error::Unsupported(_) | Error::Protocol(_) => {
                (DeviceCommandError::new_err(msg), vec![])
            }
            Error::Memory { what, bytes } => {
                let err = match out_of_memory_type(py) {
                    Ok(t) => PyErr::from_type_bound(t.clone(), msg),
                    Err(e) => e,
                };
                (
                    err,
                    vec![("what", what.into_py(py)), ("bytes", bytes.into_py(py))],
                )
            }
            Error::Interrupted => (PyKeyboardInterrupt::new_err(msg), vec![]),
            Error::Io { path, .. } => (
                NandstackError::new_err(msg),
                vec![("path", path.into_py(py))],
            ),
        };
        let value = py_err.value_bound(py);
        for (name, attr) in attrs {
            // Setting an attribute on a fresh exception instance cannot fail in practice; if it does,
            // the exception is still raised with its full message.
            let _ = value.setattr(name, attr);
        }
        py_err
    })
}

/// Add the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("NandstackError", py.get_type_bound::<NandstackError>())?;
    m.add("ConfigError", py.get_type_bound::<ConfigError>())?;
    m.add("GeometryError", py.get_type_bound::<GeometryError>())?;
    m.add("TraceError", py.get_type_bound::<TraceError>())?;
    m.add("OutOfRangeError", py.get_type_bound::<OutOfRangeError>())?;
    m.add("DeviceFullError", py.get_type_bound::<DeviceFullError>())?;
    m.add("InvariantError", py.get_type_bound::<InvariantError>())?;
    m.add(
        "DeviceCommandError",
        py.get_type_bound::<DeviceCommandError>(),
    )?;
    m.add("OutOfMemoryError", out_of_memory_type(py)?)?;
    Ok(())
}

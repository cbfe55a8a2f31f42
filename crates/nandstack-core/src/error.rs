//! The engine's error type. Every failure a user can cause is one of these, with enough context to fix it;
//! no panic should ever reach a user.

use thiserror::Error;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum Error {
    /// A configuration value is missing, unknown or out of range.
    #[error("config error at `{key}`: {msg}")]
    Config { key: String, msg: String },
    /// The NAND geometry cannot be built (zero sizes, too large, inconsistent).
    #[error("impossible geometry: `{field}` {msg}")]
    Geometry { field: String, msg: String },
    /// A trace line could not be parsed.
    #[error("{file}:{line}: {msg}: `{text}`")]
    Trace {
        file: String,
        line: u64,
        text: String,
        msg: String,
    },
    /// A request addresses space outside the device.
    #[error("request out of range: {0}")]
    OutOfRange(String),
    /// The device ran out of free blocks (logical space too large for the physical space and GC reserve).
    #[error("device full: {0}")]
    DeviceFull(String),
    /// An internal invariant was violated (a bug in nandstack: please report it with the config and seed).
    #[error("invariant violated: {0}")]
    Invariant(String),
    /// The device does not implement a command (e.g. a zone command sent to a block device).
    #[error("unsupported command: {0}")]
    Unsupported(String),
    /// A command breaks the device's protocol (a zoned write not at the write pointer, too many open
    /// zones, an append past the zone capacity).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// Memory for `what` could not be allocated (the run would exceed the machine's memory or an
    /// address-space limit such as `ulimit -v`).
    #[error(
        "out of memory: cannot allocate {bytes} bytes for the {what}; shrink the device or the workload, or \
         free memory (see docs/reliability.md)"
    )]
    Memory { what: String, bytes: u64 },
    /// The run was interrupted by the caller (e.g. Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    #[error("I/O error on {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl Error {
    pub fn config(key: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Config {
            key: key.into(),
            msg: msg.into(),
        }
    }
    pub fn geometry(field: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Geometry {
            field: field.into(),
            msg: msg.into(),
        }
    }
}

/// Return early with a config error unless `cond` holds.
#[macro_export]
macro_rules! ensure_config {
    ($cond:expr, $key:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::Error::config($key, format!($($fmt)+)));
        }
    };
}

//! Fallible allocation of the big tables (mapping arrays, block metadata, buffers), so that running out
//! of memory is an [`Error::Memory`] naming what could not be allocated, never an abort.
//!
//! Rust's infallible allocation (`vec![x; n]`, `Vec::with_capacity`) aborts the process when the
//! allocator fails — with a Python interpreter around it, the interpreter dies. The run driver estimates
//! a config's memory before building anything (nandstack-sim `limits`), which keeps nearly every run away
//! from that edge; the big allocations themselves go through [`try_filled`] so that a failure the
//! estimate did not foresee (a tight `ulimit -v`, a cgroup limit) is still an error.
//!
//! Constructors that cannot return a `Result` (their signature is shared with code we do not own) use
//! [`filled_or_unwind`], which turns an allocation failure into a panic carrying [`AllocFailure`]; the
//! run boundary (`nandstack_sim::run`) catches it with [`catch`] and returns the same `Error::Memory`.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use crate::{Error, Result};

/// The payload of the panic raised by [`filled_or_unwind`] when an allocation fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocFailure {
    /// What was being allocated ("mapping table", …).
    pub what: String,
    pub bytes: u64,
}

impl AllocFailure {
    pub fn into_error(self) -> Error {
        Error::Memory {
            what: self.what,
            bytes: self.bytes,
        }
    }
}

/// `vec![value; n]`, or `Error::Memory` naming `what` when the memory cannot be had.
pub fn try_filled<T: Clone>(value: T, n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// `Vec::with_capacity(n)`, or `Error::Memory` naming `what`.
pub fn try_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Memory {
        what: what.to_string(),
        bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    })?;
    Ok(v)
}

/// Check that `bytes` of address space can be had right now (reserve them, then give them back). Under
/// an address-space limit (`ulimit -v`) this fails before anything is built; the memory is never
/// touched, so it costs no RAM.
pub fn probe(bytes: u64, what: &str) -> Result<()> {
    let n = usize::try_from(bytes).map_err(|_| Error::Memory {
        what: what.to_string(),
        bytes,
    })?;
    try_with_capacity::<u8>(n, what).map(drop)
}

/// `vec![value; n]` for constructors that cannot return a `Result`: an allocation failure unwinds with
/// an [`AllocFailure`] payload, which [`catch`] turns into `Error::Memory` (no panic message is printed
/// for it).
pub fn filled_or_unwind<T: Clone>(value: T, n: usize, what: &str) -> Vec<T> {
    match try_filled(value, n, what) {
        Ok(v) => v,
        Err(Error::Memory { what, bytes }) => {
            quiet_alloc_failures();
            panic::panic_any(AllocFailure { what, bytes })
        }
        Err(e) => unreachable!("try_filled only fails with Error::Memory: {e}"),
    }
}

/// Run `f`, turning a panic into an error: an [`AllocFailure`] becomes `Error::Memory`, any other panic
/// `Error::Invariant` (a bug in nandstack) with its message, so a caller — the Python interpreter above
/// all — never dies or sees a panic.
pub fn catch<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_alloc_failures();
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(match payload.downcast::<AllocFailure>() {
            Ok(a) => a.into_error(),
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                Error::Invariant(format!(
                    "internal error: {msg} (a bug in nandstack: please report it with the config and seed)"
                ))
            }
        }),
    }
}

/// Install (once) a panic hook that stays silent for [`AllocFailure`] payloads and defers to the
/// previous hook for everything else.
fn quiet_alloc_failures() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<AllocFailure>() {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_and_failures() {
        assert_eq!(try_filled(7u32, 3, "t").unwrap(), vec![7, 7, 7]);
        // More than any address space: an error naming what, never an abort.
        match try_filled(0u64, usize::MAX / 4, "huge table") {
            Err(Error::Memory { what, bytes }) => {
                assert_eq!(what, "huge table");
                assert!(bytes > 1 << 60);
            }
            other => panic!("{other:?}"),
        }
        assert!(probe(u64::MAX, "everything").is_err());
        assert!(probe(1 << 20, "a little").is_ok());
    }

    #[test]
    fn catch_turns_panics_into_errors() {
        let r: Result<Vec<u64>> = catch(|| Ok(filled_or_unwind(0u64, usize::MAX / 4, "big map")));
        assert!(
            matches!(r, Err(Error::Memory { ref what, .. }) if what == "big map"),
            "{r:?}"
        );
        let r: Result<()> = catch(|| panic!("boom {}", 1));
        match r {
            Err(Error::Invariant(m)) => assert!(m.contains("boom 1"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(catch(|| Ok(5)).unwrap(), 5);
    }
}

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
//!
//! Also here: the big `u32` tables a dropped device hands back ([`keep`]), kept in the process for the
//! next device built ([`take_kept`]). A fresh table of tens of MiB is pages the kernel must zero (on
//! transparent huge pages) before the engine fills it again: ~30 ms of a hybrid run on the paper's
//! device, a few % of an experiment of many short runs. A kept table of the same length is filled again
//! by the caller instead. Memory: at most [`KEPT_MAX`] tables are kept; a [`take_kept`] that finds no
//! table of its length frees every kept one before the caller allocates, and a device build ends with
//! [`release_kept`] (what it did not reuse is freed), so kept tables never add to a run's peak: they
//! are the last device's, held between its drop and the next build.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

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

/// Tables smaller than this are not kept (cheap to allocate).
pub const KEEP_MIN_BYTES: usize = 1 << 20;
/// Tables kept at most (a hybrid device hands back three: forward and reverse maps, the buffer's index).
pub const KEPT_MAX: usize = 4;

/// Tables handed back by dropped devices, in the order they came.
static KEPT: Mutex<Vec<Vec<u32>>> = Mutex::new(Vec::new());
/// Tables [`take_kept`] has handed out again, since the process started.
static REUSES: AtomicU64 = AtomicU64::new(0);

fn kept() -> MutexGuard<'static, Vec<Vec<u32>>> {
    // Every operation under the lock leaves whole entries: the data is still good after a panic.
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// A kept table with room for exactly `n` entries, empty (the caller fills it), or `None` — and then
/// every kept table has been freed, so the caller's fresh allocation does not add to them.
pub fn take_kept(n: usize) -> Option<Vec<u32>> {
    if n.saturating_mul(4) < KEEP_MIN_BYTES {
        return None;
    }
    let mut kept = kept();
    match kept.iter().position(|v| v.capacity() == n) {
        Some(i) => {
            let mut v = kept.remove(i);
            v.clear();
            REUSES.fetch_add(1, Ordering::Relaxed);
            Some(v)
        }
        None => {
            let gone = std::mem::take(&mut *kept);
            drop(kept);
            drop(gone);
            None
        }
    }
}

/// Hand back a table that is no longer used (a device's, as it is dropped): kept for [`take_kept`] when
/// it is big and there is room, freed otherwise.
pub fn keep(v: Vec<u32>) {
    if v.capacity().saturating_mul(4) < KEEP_MIN_BYTES {
        return;
    }
    let mut kept = kept();
    if kept.len() < KEPT_MAX {
        kept.push(v);
    }
}

/// Free every kept table (the end of a device build: what it did not reuse; before work that allocates
/// other big tables first, such as a host program).
pub fn release_kept() {
    let gone = std::mem::take(&mut *kept());
    drop(gone);
}

/// `vec![value; n]` of `u32` as [`filled_or_unwind`], reusing a kept table of the same length
/// ([`take_kept`]); hand it back with [`keep`] when done.
pub fn kept_or_filled(value: u32, n: usize, what: &str) -> Vec<u32> {
    match take_kept(n) {
        Some(mut v) => {
            v.resize(n, value);
            v
        }
        None => filled_or_unwind(value, n, what),
    }
}

/// Tables [`take_kept`] has handed out again since the process started (tests).
pub fn kept_reuses() -> u64 {
    REUSES.load(Ordering::Relaxed)
}

/// Bytes of the tables kept right now.
pub fn kept_bytes() -> usize {
    kept().iter().map(|v| v.capacity() * 4).sum()
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

    /// The only test of this binary that uses the kept tables (tests run in parallel threads).
    #[test]
    fn kept_tables_are_reused_by_exact_length_and_a_miss_frees_them_all() {
        const N: usize = KEEP_MIN_BYTES / 4;
        release_kept();
        let table = |n: usize, x: u32| {
            let mut v = try_with_capacity::<u32>(n, "t").unwrap();
            v.resize(n, x);
            v
        };
        keep(table(N, 7));
        keep(table(2 * N, 8));
        keep(table(N - 1, 9)); // too small: freed
        assert_eq!(kept_bytes(), 12 * N);
        let a = take_kept(2 * N).unwrap();
        assert_eq!((a.len(), a.capacity()), (0, 2 * N));
        assert_eq!(kept_bytes(), 4 * N);
        // A length nobody kept: every kept table is freed.
        assert!(take_kept(3 * N).is_none());
        assert_eq!(kept_bytes(), 0);
        assert!(take_kept(N).is_none());
        for _ in 0..KEPT_MAX + 2 {
            keep(table(N, 1));
        }
        assert_eq!(kept_bytes(), KEPT_MAX * N * 4);
        release_kept();
        assert_eq!(kept_bytes(), 0);
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

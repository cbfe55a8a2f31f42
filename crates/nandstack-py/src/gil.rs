//! Releasing the GIL around an engine call and taking it back (at every progress tick and at the end)
//! in a way that survives the interpreter's exit.
//!
//! Python before 3.14 ends a thread that asks for the GIL while the interpreter finalizes (a daemon
//! thread still inside `run` when the program ends; a worker whose `join` a Ctrl-C interrupted, which
//! Python 3.11 then stops waiting for) with `pthread_exit`: a forced unwind through the caller's
//! frames. PyO3 0.22 declares those C functions `extern "C"` (they may not unwind), and the unwind
//! reached a `catch_unwind` — PyO3's panic trap, the engine's allocation guard — which glibc answers
//! with "FATAL: exception not rethrown" and an abort (exit 134).
//!
//! Here the three calls that can take the GIL are declared `"C-unwind"`, and each is made under a guard
//! that runs only if the call unwinds: it parks the thread for good. Nothing else unwinds, the
//! interpreter finishes its exit, and the process ends with the interpreter's own status (what Python
//! 3.14 does itself: it hangs such a thread instead of ending it).
//!
//! While the GIL is released PyO3 still counts it as held on this thread, so Python may be touched only
//! inside [`with_gil`], which really holds it.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};

use pyo3::Python;

extern "C-unwind" {
    fn PyEval_SaveThread() -> *mut c_void;
    fn PyEval_RestoreThread(tstate: *mut c_void);
    fn PyGILState_Ensure() -> c_int;
    fn PyGILState_Release(state: c_int);
}

/// Dropped only when the call it guards unwinds (it is forgotten otherwise): the interpreter is ending
/// this thread, so the thread waits, without the GIL, for the process to exit.
struct ParkIfEnded;

impl Drop for ParkIfEnded {
    fn drop(&mut self) {
        loop {
            std::thread::park();
        }
    }
}

/// The GIL released, to be restored when dropped (also when the engine call panics).
struct Released(*mut c_void);

impl Drop for Released {
    fn drop(&mut self) {
        let guard = ParkIfEnded;
        // SAFETY: `self.0` is the thread state `PyEval_SaveThread` returned on this thread, restored once.
        unsafe { PyEval_RestoreThread(self.0) };
        std::mem::forget(guard);
    }
}

/// `Python::allow_threads` for the engine: run `f` with the GIL released. `f` may touch Python only
/// through [`with_gil`]; being `Send`, it cannot hold a `Python` token (PyO3's `Ungil` on stable).
pub fn detached<T: Send>(_py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    // SAFETY: the GIL is held (`_py`); it is given back by `Released`'s drop on this thread.
    let _released = Released(unsafe { PyEval_SaveThread() });
    f()
}

/// The GIL taken with `PyGILState_Ensure`, released when dropped.
struct Ensured(c_int);

impl Drop for Ensured {
    fn drop(&mut self) {
        // SAFETY: matches the `PyGILState_Ensure` that made `self`, on the same thread.
        unsafe { PyGILState_Release(self.0) };
    }
}

/// Take the GIL (inside [`detached`]) and run `f` with it.
pub fn with_gil<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    let guard = ParkIfEnded;
    // SAFETY: the interpreter is initialized (this module was imported); a thread ended by it unwinds
    // into `guard`.
    let _held = Ensured(unsafe { PyGILState_Ensure() });
    std::mem::forget(guard);
    // SAFETY: the GIL is held until `_held` drops, after `f`.
    f(unsafe { Python::assume_gil_acquired() })
}

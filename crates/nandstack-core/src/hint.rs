//! Cache hints for the simulators' software prefetch pipelines (the FTL's tables, the controller's
//! mapping cache): pure hints, no effect on any result.

/// Hint the CPU to bring `slice[i]` into cache (no effect if `i` is out of range or off x86-64).
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < slice.len() {
        // SAFETY: PREFETCHT0 is a hint: it cannot fault or change memory; the address is in bounds anyway.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                slice.as_ptr().add(i) as *const i8,
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

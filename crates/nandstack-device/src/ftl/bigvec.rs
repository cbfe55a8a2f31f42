//! Large metadata tables (the mapping arrays, hundreds of MiB on big devices) are accessed at random;
//! with 4 KiB pages nearly every access misses the TLB. On Linux we ask for transparent huge pages for
//! these allocations (`madvise(MADV_HUGEPAGE)`), which the default `madvise` THP mode honours. Elsewhere, or
//! if the kernel refuses, this is a plain `vec![value; n]`.
//!
//! Also here: a cache prefetch hint for the FTL's software pipeline.
//!
//! These are the only `unsafe` blocks in nandstack: one `madvise` call on memory the Vec owns, before first
//! touch, and the x86 prefetch instruction, which never faults and has no architectural effect.

/// `vec![value; n]`, backed by huge pages where the OS allows. An allocation failure unwinds to the run
/// boundary as `Error::Memory` naming `what` (`nandstack_core::alloc`), never an abort.
pub fn filled<T: Copy>(value: T, n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        // Fails again and unwinds with the `AllocFailure` payload the run boundary turns into an error.
        return nandstack_core::alloc::filled_or_unwind(value, n, "mapping table");
    }
    advise_huge(&v, n);
    v.resize(n, value);
    v
}

/// A copy of `src` backed by huge pages like [`filled`]'s tables (a derived `Clone` would copy into
/// plain pages: a copied device would miss the TLB where the original does not).
pub fn copied<T: Copy>(src: &[T]) -> Vec<T> {
    let n = src.len();
    let mut v: Vec<T> = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        let mut v = nandstack_core::alloc::filled_or_unwind(src[0], n, "mapping table");
        v.copy_from_slice(src);
        return v;
    }
    advise_huge(&v, n);
    v.extend_from_slice(src);
    v
}

/// [`filled`] for a `u32` table, reusing a table a dropped device handed back when one of the same
/// length is kept (`nandstack_core::alloc::take_kept`: no fresh pages for the kernel to zero); hand it
/// back with `nandstack_core::alloc::keep` when done.
pub fn table(value: u32, n: usize) -> Vec<u32> {
    match nandstack_core::alloc::take_kept(n) {
        Some(mut v) => {
            v.resize(n, value);
            v
        }
        None => filled(value, n),
    }
}

/// [`copied`] for a `u32` table, reusing a kept table of the same length as [`table`] does.
pub fn copied_table(src: &[u32]) -> Vec<u32> {
    match nandstack_core::alloc::take_kept(src.len()) {
        Some(mut v) => {
            v.extend_from_slice(src);
            v
        }
        None => copied(src),
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge<T>(v: &[T], n: usize) {
    const HUGE: usize = 2 << 20;
    let bytes = n * std::mem::size_of::<T>();
    if bytes < 4 * HUGE {
        return;
    }
    let start = v.as_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE);
    let end = (start + bytes) / HUGE * HUGE;
    if end > aligned {
        // SAFETY: [aligned, end) lies inside the allocation the Vec owns (capacity ≥ n elements); madvise only
        // changes how the kernel backs those pages and never invalidates the memory. Failure is harmless.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge<T>(_v: &[T], _n: usize) {}

pub use nandstack_core::hint::prefetch;

#[cfg(test)]
mod tests {
    #[test]
    fn filled_is_a_filled_vec() {
        let v = super::filled(7u32, 5_000_000);
        assert_eq!(v.len(), 5_000_000);
        assert!(v.iter().all(|&x| x == 7));
        assert_eq!(super::filled(1u8, 3), vec![1, 1, 1]);
    }

    #[test]
    fn copied_is_an_equal_vec() {
        let v: Vec<u32> = (0..5_000_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        assert_eq!(super::copied(&v), v);
        assert_eq!(super::copied::<u64>(&[]), Vec::<u64>::new());
    }
}

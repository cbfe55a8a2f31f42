//! Large metadata tables (the mapping arrays, hundreds of MiB on big devices) are accessed at random;
//! with 4 KiB pages nearly every access misses the TLB. On Linux we ask for transparent huge pages for
//! these allocations (`madvise(MADV_HUGEPAGE)`), which the default `madvise` THP mode honours. Elsewhere, or
//! if the kernel refuses, this is a plain `vec![value; n]`.
//!
//! This is the only `unsafe` in nandstack: one `madvise` call on memory the Vec owns, before first touch.

/// `vec![value; n]`, backed by huge pages where the OS allows.
pub fn filled<T: Copy>(value: T, n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(&v, n);
    v.resize(n, value);
    v
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge<T>(v: &Vec<T>, n: usize) {
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
            libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge<T>(_v: &Vec<T>, _n: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_is_a_filled_vec() {
        let v = super::filled(7u32, 5_000_000);
        assert_eq!(v.len(), 5_000_000);
        assert!(v.iter().all(|&x| x == 7));
        assert_eq!(super::filled(1u8, 3), vec![1, 1, 1]);
    }
}

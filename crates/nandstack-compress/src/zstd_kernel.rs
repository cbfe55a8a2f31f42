//! zstd as the kernel's `crypto/zstd.c` calls it for one page: level 3 (`ZSTD_DEF_LEVEL`), with the
//! parameters `zstd_get_params(3, 256 KiB)` returns (the source-size hint is `ZSTD_MAX_SIZE`, not the
//! page), one-shot (`zstd_compress_cctx`, i.e. `ZSTD_compress_advanced`), content size in the frame header,
//! no checksum. The level-3 row of libzstd's table for sources up to 256 KiB is window 2^18, chain 2^16,
//! hash 2^16, search 1, minimum match 4, target 0, strategy dfast.
//!
//! The advanced one-shot call is the only libzstd entry point that uses these tables as given (the
//! parameter API shrinks them to the page size first, which changes the matches found), and it is reached
//! only through `zstd-sys`, hence the one `unsafe` block of the crate.
#![allow(unsafe_code)]

use nandstack_core::{Error, Result};
use zstd::zstd_safe::zstd_sys as sys;

pub(crate) struct ZstdKernel {
    cctx: std::ptr::NonNull<sys::ZSTD_CCtx>,
}

// The context is used by one thread at a time (`&mut self`); libzstd keeps no thread-local state.
unsafe impl Send for ZstdKernel {}

impl ZstdKernel {
    pub(crate) fn new() -> Result<ZstdKernel> {
        // SAFETY: plain allocation of a context; null is checked.
        let p = unsafe { sys::ZSTD_createCCtx() };
        std::ptr::NonNull::new(p)
            .map(|cctx| ZstdKernel { cctx })
            .ok_or_else(|| Error::Invariant("libzstd could not allocate a context".into()))
    }

    pub(crate) fn params() -> sys::ZSTD_parameters {
        sys::ZSTD_parameters {
            cParams: sys::ZSTD_compressionParameters {
                windowLog: 18,
                chainLog: 16,
                hashLog: 16,
                searchLog: 1,
                minMatch: 4,
                targetLength: 0,
                strategy: sys::ZSTD_strategy::ZSTD_dfast,
            },
            fParams: sys::ZSTD_frameParameters {
                contentSizeFlag: 1,
                checksumFlag: 0,
                noDictIDFlag: 0,
            },
        }
    }

    /// Compress `src` into `out` (resized to the frame).
    pub(crate) fn compress(&mut self, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let cap = zstd::zstd_safe::compress_bound(src.len());
        out.resize(cap, 0);
        // SAFETY: `out` holds `cap` writable bytes and `src` `src.len()` readable ones for the call; the
        // context is ours; no dictionary (null, 0).
        let n = unsafe {
            sys::ZSTD_compress_advanced(
                self.cctx.as_ptr(),
                out.as_mut_ptr().cast(),
                cap,
                src.as_ptr().cast(),
                src.len(),
                std::ptr::null(),
                0,
                Self::params(),
            )
        };
        // SAFETY: a pure function of the code.
        if unsafe { sys::ZSTD_isError(n) } != 0 {
            return Err(Error::Invariant(format!("libzstd failed with code {n}")));
        }
        out.truncate(n);
        Ok(())
    }
}

impl Drop for ZstdKernel {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCCtx, freed once.
        unsafe {
            sys::ZSTD_freeCCtx(self.cctx.as_ptr());
        }
    }
}

//! nandstack-compress: the compressors Linux runs for compressed swap, producing the compressed lengths
//! the kernel produces for a 4 KiB page, and page-entropy estimators.
//!
//! * [`Compressor`] over an [`Algorithm`]: `lzo` and `lzo-rle` ([`lzo`], written here), `lz4` (liblz4's
//!   `LZ4_compress_default`), `deflate` (zlib, level 6, raw, 2 KiB window, memLevel 8, as `crypto/deflate.c`),
//!   `zstd` (level 3 with the kernel's parameters, see `zstd_kernel.rs`);
//! * [`entropy`]: Shannon entropy of a page sample (ezswap's admission test).
//!
//! The models that decide what to do with a length (zswap stores a page whose compressed length reaches
//! PAGE_SIZE uncompressed; zram stores anything at or above zsmalloc's huge-class size whole) live with
//! those models: this crate only compresses.

pub mod entropy;
pub mod lzo;
mod zstd_kernel;

use flate2::{Compress, Compression, FlushCompress, Status};
use nandstack_core::{Error, Result};

/// A compressor as the kernel names it (`/sys/module/zswap/parameters/compressor`,
/// `/sys/block/zram0/comp_algorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Algorithm {
    Lzo,
    LzoRle,
    Lz4,
    Deflate,
    Zstd,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Lzo,
        Algorithm::LzoRle,
        Algorithm::Lz4,
        Algorithm::Deflate,
        Algorithm::Zstd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Lzo => "lzo",
            Algorithm::LzoRle => "lzo-rle",
            Algorithm::Lz4 => "lz4",
            Algorithm::Deflate => "deflate",
            Algorithm::Zstd => "zstd",
        }
    }

    pub fn parse(name: &str) -> Result<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                Error::config(
                    "compressor",
                    format!("`{name}`: expected lzo | lzo-rle | lz4 | deflate | zstd"),
                )
            })
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

enum Engine {
    Lzo(lzo::Lzo1x1),
    Lz4,
    Deflate(Box<Compress>),
    Zstd(zstd_kernel::ZstdKernel),
}

/// One compressor with its working memory, reusable page after page (like a kernel per-CPU stream).
pub struct Compressor {
    algorithm: Algorithm,
    engine: Engine,
    out: Vec<u8>,
}

/// Largest input accepted (the kernel compresses one page at a time; large folios are split).
pub const MAX_INPUT_BYTES: usize = 1 << 20;

impl Compressor {
    pub fn new(algorithm: Algorithm) -> Result<Compressor> {
        let engine = match algorithm {
            Algorithm::Lzo => Engine::Lzo(lzo::Lzo1x1::lzo()),
            Algorithm::LzoRle => Engine::Lzo(lzo::Lzo1x1::lzo_rle()),
            Algorithm::Lz4 => Engine::Lz4,
            // crypto/deflate.c: zlib_deflateInit2(level Z_DEFAULT_COMPRESSION = 6, Z_DEFLATED,
            // -DEFLATE_DEF_WINBITS = -11 (raw), DEFLATE_DEF_MEMLEVEL = MAX_MEM_LEVEL, which the kernel's
            // zconf.h sets to 8 — flate2 passes memLevel 8 too).
            Algorithm::Deflate => Engine::Deflate(Box::new(Compress::new_with_window_bits(
                Compression::new(6),
                false,
                11,
            ))),
            Algorithm::Zstd => Engine::Zstd(zstd_kernel::ZstdKernel::new()?),
        };
        Ok(Compressor {
            algorithm,
            engine,
            out: Vec::with_capacity(2 * 4096 + 64),
        })
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Compress `src`; the returned bytes are valid until the next call.
    pub fn compress(&mut self, src: &[u8]) -> Result<&[u8]> {
        if src.len() > MAX_INPUT_BYTES {
            return Err(Error::config(
                "compress input",
                format!("{} bytes, more than {MAX_INPUT_BYTES}", src.len()),
            ));
        }
        let out = &mut self.out;
        match &mut self.engine {
            Engine::Lzo(l) => l.compress(src, out),
            Engine::Lz4 => {
                let cap = lz4::block::compress_bound(src.len())
                    .map_err(|e| Error::Invariant(format!("lz4 bound: {e}")))?;
                out.resize(cap, 0);
                let n = lz4::block::compress_to_buffer(
                    src,
                    Some(lz4::block::CompressionMode::DEFAULT),
                    false,
                    out,
                )
                .map_err(|e| Error::Invariant(format!("lz4: {e}")))?;
                out.truncate(n);
            }
            Engine::Deflate(z) => {
                z.reset();
                out.clear();
                out.reserve(src.len() + src.len() / 8 + 64);
                let status = z
                    .compress_vec(src, out, FlushCompress::Finish)
                    .map_err(|e| Error::Invariant(format!("zlib: {e}")))?;
                if status != Status::StreamEnd {
                    return Err(Error::Invariant(format!(
                        "zlib did not finish in one call ({status:?})"
                    )));
                }
            }
            Engine::Zstd(z) => z.compress(src, out)?,
        }
        Ok(&self.out)
    }

    /// Compressed length of `src` in bytes.
    pub fn compressed_len(&mut self, src: &[u8]) -> Result<usize> {
        Ok(self.compress(src)?.len())
    }
}

#[cfg(test)]
mod tests;

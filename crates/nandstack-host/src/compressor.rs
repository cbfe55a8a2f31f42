//! The compressors and their CPU cost (`[host.compression]`: the time of compressing and decompressing a
//! page), shared by zram (a backend) and zswap (the compressed cache); below both.

use nandstack_compress::Algorithm;
use nandstack_core::{Error, Nanos, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A compressor, named as the kernel names it (`/sys/module/zswap/parameters/compressor`,
/// `/sys/block/zram0/comp_algorithm`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CompressorKind {
    /// LZO1X-1 (`lib/lzo`).
    #[serde(rename = "lzo")]
    Lzo,
    /// The kernel's LZO1X-1 variant with zero-run encoding (zram's default).
    #[serde(rename = "lzo-rle")]
    LzoRle,
    /// LZ4 at the default acceleration.
    #[serde(rename = "lz4")]
    Lz4,
    /// Raw deflate, level 6, 2 KiB window (`crypto/deflate.c`).
    #[serde(rename = "deflate")]
    Deflate,
    /// zstd level 3 with the kernel's parameters.
    #[serde(rename = "zstd")]
    Zstd,
}

impl CompressorKind {
    pub fn algorithm(self) -> Algorithm {
        match self {
            CompressorKind::Lzo => Algorithm::Lzo,
            CompressorKind::LzoRle => Algorithm::LzoRle,
            CompressorKind::Lz4 => Algorithm::Lz4,
            CompressorKind::Deflate => Algorithm::Deflate,
            CompressorKind::Zstd => Algorithm::Zstd,
        }
    }
}

/// CPU cost of one algorithm, cycles per byte of the page (4096 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmCost {
    /// Compressing a page, cycles per input byte.
    pub compress_cycles_per_byte: f64,
    /// Decompressing a page, cycles per output byte.
    pub decompress_cycles_per_byte: f64,
}

/// `[host.compression]`: the CPU time of compression, charged to the thread that compresses (the
/// reclaiming task, the zswap writeback worker) or decompresses (the faulting task). Defaults measured
/// by `cargo run --release -p nandstack-compress --example compress_bench` on Silesia pages at 2.6 GHz
/// (docs/kernel-compressed-swap.md): compression on a quiet machine; decompression on a loaded one,
/// scaled by the compression rate of the same run (LZO through this project's checking decoder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompressionCosts {
    /// Clock of the modelled CPU, MHz. Default 2600.
    #[serde(default = "d_mhz")]
    pub cpu_mhz: f64,
    /// Copying a page stored uncompressed (zswap's incompressible pages, zram's huge pages), cycles per
    /// byte. Default 0.25.
    #[serde(default = "d_copy")]
    pub copy_cycles_per_byte: f64,
    /// Default 6.51 / 3.6.
    #[serde(default = "d_lzo_cost")]
    pub lzo: AlgorithmCost,
    /// Default 6.53 / 3.6.
    #[serde(default = "d_lzo_rle_cost")]
    pub lzo_rle: AlgorithmCost,
    /// Default 4.06 / 0.8.
    #[serde(default = "d_lz4_cost")]
    pub lz4: AlgorithmCost,
    /// Default 54.08 / 7.0.
    #[serde(default = "d_deflate_cost")]
    pub deflate: AlgorithmCost,
    /// Default 11.25 / 2.0.
    #[serde(default = "d_zstd_cost")]
    pub zstd: AlgorithmCost,
}
fn d_mhz() -> f64 {
    2600.0
}
fn d_copy() -> f64 {
    0.25
}
fn cost(c: f64, d: f64) -> AlgorithmCost {
    AlgorithmCost {
        compress_cycles_per_byte: c,
        decompress_cycles_per_byte: d,
    }
}
fn d_lzo_cost() -> AlgorithmCost {
    cost(6.51, 3.6)
}
fn d_lzo_rle_cost() -> AlgorithmCost {
    cost(6.53, 3.6)
}
fn d_lz4_cost() -> AlgorithmCost {
    cost(4.06, 0.8)
}
fn d_deflate_cost() -> AlgorithmCost {
    cost(54.08, 7.0)
}
fn d_zstd_cost() -> AlgorithmCost {
    cost(11.25, 2.0)
}
impl Default for CompressionCosts {
    fn default() -> Self {
        CompressionCosts {
            cpu_mhz: d_mhz(),
            copy_cycles_per_byte: d_copy(),
            lzo: d_lzo_cost(),
            lzo_rle: d_lzo_rle_cost(),
            lz4: d_lz4_cost(),
            deflate: d_deflate_cost(),
            zstd: d_zstd_cost(),
        }
    }
}

impl CompressionCosts {
    pub fn of(&self, c: CompressorKind) -> AlgorithmCost {
        match c {
            CompressorKind::Lzo => self.lzo,
            CompressorKind::LzoRle => self.lzo_rle,
            CompressorKind::Lz4 => self.lz4,
            CompressorKind::Deflate => self.deflate,
            CompressorKind::Zstd => self.zstd,
        }
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |k: &str, v: f64| {
            Error::config(
                format!("host.compression.{k}"),
                format!("is {v}: must be finite and ≥ 0"),
            )
        };
        if !(self.cpu_mhz.is_finite() && self.cpu_mhz >= 1.0) {
            return Err(Error::config(
                "host.compression.cpu_mhz",
                format!("is {}: must be ≥ 1", self.cpu_mhz),
            ));
        }
        let ok = |v: f64| (0.0..1e6).contains(&v);
        if !ok(self.copy_cycles_per_byte) {
            return Err(bad("copy_cycles_per_byte", self.copy_cycles_per_byte));
        }
        for (name, c) in [
            ("lzo", self.lzo),
            ("lzo_rle", self.lzo_rle),
            ("lz4", self.lz4),
            ("deflate", self.deflate),
            ("zstd", self.zstd),
        ] {
            if !ok(c.compress_cycles_per_byte) {
                return Err(bad(
                    &format!("{name}.compress_cycles_per_byte"),
                    c.compress_cycles_per_byte,
                ));
            }
            if !ok(c.decompress_cycles_per_byte) {
                return Err(bad(
                    &format!("{name}.decompress_cycles_per_byte"),
                    c.decompress_cycles_per_byte,
                ));
            }
        }
        Ok(())
    }
}

/// CPU time of `cycles_per_byte` over a 4 KiB page at `mhz`, ns (zswap's and zram's compression costs).
pub fn page_ns(cycles_per_byte: f64, mhz: f64) -> Nanos {
    Nanos((cycles_per_byte * 4096.0 * 1000.0 / mhz).round() as u64)
}

//! Pages compressed (and decompressed, rows `NAME-d`) per second per compressor on Silesia pages, and the
//! cycles per byte the host model charges for them (`[host.compression]`).
//!
//! `cargo run --release -p nandstack-compress --example compress_bench [-- PAGES_PER_FILE ROUNDS]`
//! (defaults 1000 and 3). Cycles are wall time × the clock `/proc/cpuinfo` reports (nominal; turbo and
//! sharing with other jobs make it approximate). Pages come from the seven Silesia files in
//! `../shared/traces/compress`, evenly spaced chunks of each.

use std::path::Path;
use std::time::Instant;

use nandstack_compress::entropy::{shannon_bits_per_byte, Sample};
use nandstack_compress::{Algorithm, Compressor};
use nandstack_workload::content::Corpus;

fn cpu_mhz() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("cpu MHz"))?
        .split(':')
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

type Measure<'a> = &'a mut dyn FnMut(&[u8]) -> usize;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let per_file = args.first().copied().unwrap_or(1000);
    let rounds = args.get(1).copied().unwrap_or(3).max(1);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/compress");
    let mut pages: Vec<Vec<u8>> = Vec::new();
    for name in ["dickens", "mr", "nci", "ooffice", "osdb", "reymont", "xml"] {
        let c = Corpus::load(&dir, name)?;
        let step = (c.chunks() / per_file as u64).max(1);
        pages.extend(
            (0..c.chunks())
                .step_by(step as usize)
                .take(per_file)
                .map(|i| c.chunk(i).to_vec()),
        );
    }
    let bytes = (pages.len() * 4096) as f64;
    let mhz = cpu_mhz();
    println!(
        "{} Silesia pages x {rounds} rounds (best round); clock {} MHz",
        pages.len(),
        mhz.map_or("unknown".into(), |m| format!("{m:.0}"))
    );
    println!(
        "{:<10} {:>12} {:>10} {:>12} {:>11}",
        "", "pages/s", "ns/page", "cycles/byte", "mean ratio"
    );
    let row = |name: &str, f: Measure| {
        let mut best = f64::MAX;
        let mut out_bytes = 0;
        for _ in 0..rounds {
            let t = Instant::now();
            out_bytes = pages.iter().map(|p| f(p).min(4096)).sum::<usize>();
            best = best.min(t.elapsed().as_secs_f64());
        }
        let ns_per_page = best * 1e9 / pages.len() as f64;
        let cpb = mhz.map_or(f64::NAN, |m| best * m * 1e6 / bytes);
        println!(
            "{name:<10} {:>12.0} {ns_per_page:>10.0} {cpb:>12.2} {:>11.3}",
            pages.len() as f64 / best,
            out_bytes as f64 / bytes
        );
    };
    for alg in Algorithm::ALL {
        let mut c = Compressor::new(alg)?;
        row(alg.name(), &mut |p| {
            c.compressed_len(p).expect("a page compresses")
        });
    }
    // Decompression of each compressor's own output ("ratio" is the compressed size again): the host
    // model's decompress_cycles_per_byte. LZO is decoded by this crate's safe Rust decoder (written to
    // check round trips), lz4, deflate and zstd by their C libraries.
    for alg in Algorithm::ALL {
        let mut c = Compressor::new(alg)?;
        let packed: Vec<Vec<u8>> = pages
            .iter()
            .map(|p| c.compress(p).map(|b| b.to_vec()))
            .collect::<Result<_, _>>()?;
        let mut i = 0usize;
        let mut inflate = flate2::Decompress::new_with_window_bits(false, 11);
        let mut out = vec![0u8; 4096];
        let mut unzstd = zstd::bulk::Decompressor::new()?;
        row(&format!("{}-d", alg.name()), &mut |_| {
            let src = &packed[i % packed.len()];
            i += 1;
            let n = match alg {
                Algorithm::Lzo | Algorithm::LzoRle => {
                    nandstack_compress::lzo::decompress(src, 4096)
                        .expect("lzo")
                        .len()
                }
                Algorithm::Lz4 => lz4::block::decompress(src, Some(4096)).expect("lz4").len(),
                Algorithm::Deflate => {
                    inflate.reset(false);
                    inflate
                        .decompress(src, &mut out, flate2::FlushDecompress::Finish)
                        .expect("inflate");
                    inflate.total_out() as usize
                }
                Algorithm::Zstd => unzstd.decompress_to_buffer(src, &mut out).expect("zstd"),
            };
            assert_eq!(n, 4096);
            src.len()
        });
    }
    // Entropy rows: "ratio" is the entropy / 8.
    row("entropy512", &mut |p| {
        (shannon_bits_per_byte(p, Sample::PAPER) * 512.0) as usize
    });
    row("entropy/4", &mut |p| {
        (shannon_bits_per_byte(p, Sample::CODE) * 512.0) as usize
    });
    Ok(())
}

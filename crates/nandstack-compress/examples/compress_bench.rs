//! Pages compressed per second per compressor on Silesia pages, and the cycles per byte the host model
//! can charge for compression.
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
    // Entropy rows: "ratio" is the entropy / 8.
    row("entropy512", &mut |p| {
        (shannon_bits_per_byte(p, Sample::PAPER) * 512.0) as usize
    });
    row("entropy/4", &mut |p| {
        (shannon_bits_per_byte(p, Sample::CODE) * 512.0) as usize
    });
    Ok(())
}

//! Compressors and entropy on Silesia pages (the corpus memtouch reads): the entropy-vs-ratio correlation
//! ezswap's admission rests on (the paper reports Pearson 0.88 for lzo over 200,000 Android pages).
//! Measured and printed here, not tuned; the assertion only asks for a positive correlation.

use std::path::Path;

use nandstack_compress::entropy::{pearson, shannon_bits_per_byte, Sample};
use nandstack_compress::{Algorithm, Compressor};
use nandstack_workload::content::Corpus;

const FILES: [&str; 7] = ["dickens", "mr", "nci", "ooffice", "osdb", "reymont", "xml"];

#[test]
fn entropy_predicts_the_compression_ratio() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/compress");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} not found", dir.display());
        return;
    }
    let mut lzo = Compressor::new(Algorithm::Lzo).unwrap();
    let (mut paper, mut code, mut whole, mut ratio) = (vec![], vec![], vec![], vec![]);
    for name in FILES {
        let c = Corpus::load(&dir, name).unwrap();
        // Every 3rd chunk, at most 800 per file.
        for chunk in (0..c.chunks()).step_by(3).take(800) {
            let page = c.chunk(chunk);
            paper.push(shannon_bits_per_byte(page, Sample::PAPER));
            code.push(shannon_bits_per_byte(page, Sample::CODE));
            whole.push(shannon_bits_per_byte(page, Sample::Whole));
            ratio.push(lzo.compressed_len(page).unwrap().min(4096) as f64 / 4096.0);
        }
    }
    let r_paper = pearson(&paper, &ratio).unwrap();
    let r_code = pearson(&code, &ratio).unwrap();
    let r_whole = pearson(&whole, &ratio).unwrap();
    let r_sample = pearson(&paper, &whole).unwrap();
    println!(
        "{} Silesia pages, lzo: Pearson(entropy, compressed/original) leading 512 B {r_paper:.3}, \
         every 4th byte {r_code:.3}, whole page {r_whole:.3}; leading-512 vs whole entropy {r_sample:.3}",
        ratio.len()
    );
    assert!(r_paper > 0.0 && r_code > 0.0 && r_whole > 0.0);
}

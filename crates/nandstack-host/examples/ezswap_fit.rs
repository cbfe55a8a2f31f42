//! Fit ezswap's entropy → compression-ratio maps on the Silesia corpus (plus high-entropy and
//! same-filled pages) for every compressor and both entropy samples, print the Pearson correlation of
//! entropy and ratio, and write `src/zswap/policy/ratio_fit_tables.rs`.
//!
//! `cargo run --release -p nandstack-host --example ezswap_fit [CORPUS_DIR]`

use std::path::PathBuf;

use nandstack_compress::entropy::{pearson, Sample};
use nandstack_compress::Algorithm;
use nandstack_host::zswap::policy::ratio_fit::{fit_pages, points, RatioMap};

fn main() -> nandstack_core::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../../../shared/traces/compress"));
    let pages = fit_pages(&dir)?;
    let mut out = String::from(
        "// Written by `cargo run --release -p nandstack-host --example ezswap_fit` (do not edit): the\n\
         // entropy → ratio maps fitted on the fit set of ratio_fit::fit_pages, [compressor][sample].\n\
         const TABLES: [[[u16; BINS]; 2]; 5] = [\n",
    );
    for a in Algorithm::ALL {
        out.push_str(&format!("    // {}\n    [\n", a.name()));
        for s in [Sample::PAPER, Sample::CODE] {
            let pts = points(&pages, a, s)?;
            let (h, r): (Vec<f64>, Vec<f64>) = pts.iter().map(|&(h, r)| (h, r as f64)).unzip();
            let m = RatioMap::fit(&pts);
            let est: Vec<f64> = h.iter().map(|&x| m.estimate(x) as f64).collect();
            let mae = est.iter().zip(&r).map(|(e, r)| (e - r).abs()).sum::<f64>() / r.len() as f64;
            println!(
                "{:8} {:?}: {} pages, Pearson(entropy, ratio) {:.3}, mean |estimate − ratio| {:.3}",
                a.name(),
                s,
                pts.len(),
                pearson(&h, &r).unwrap_or(f64::NAN),
                mae / 10_000.0
            );
            let row: Vec<String> = m.table.iter().map(|v| v.to_string()).collect();
            out.push_str(&format!("        [{}],\n", row.join(", ")));
        }
        out.push_str("    ],\n");
    }
    out.push_str("];\n");
    let path = root.join("src/zswap/policy/ratio_fit_tables.rs");
    std::fs::write(&path, out).map_err(|source| nandstack_core::Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    println!("wrote {}", path.display());
    Ok(())
}

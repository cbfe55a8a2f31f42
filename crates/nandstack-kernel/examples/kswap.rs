//! Run the model on every real-kernel swap capture (repetitions grouped) and print model vs the kernel's
//! range for each figure of the comparison.
//! `cargo run --release -p nandstack-kernel --example kswap [DIR]`

use std::path::PathBuf;

use nandstack_kernel::kswap::{self, outside};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(kswap::captures_dir);
    for p in kswap::programs(&dir).expect("captures") {
        let t = std::time::Instant::now();
        let cfg = kswap::config(&p.captures[0]);
        let sim = nandstack_sim::hostrun::simulate(&cfg, false).expect("run");
        let m = kswap::model_summary(&sim);
        println!(
            "{} ({} capture(s), {:.2} s)",
            p.name,
            p.captures.len(),
            t.elapsed().as_secs_f64()
        );
        for (name, v) in m.figures() {
            let (lo, hi) = p.range(name);
            println!(
                "    {name:<24} model {v:>12.3}  kernel {lo:>12.3} .. {hi:<12.3} {:+7.1}%",
                100.0 * outside(v, (lo, hi))
            );
        }
    }
}

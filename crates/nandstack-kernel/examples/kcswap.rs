//! Run the model on the real-kernel zswap and zram captures and print model vs the kernel's range.
//! `cargo run --release -p nandstack-kernel --example kcswap [FILTER] [--traces DIR] [--patch JSON]`
//! (the patch is merged into each capture's config, objects key by key; a run that fails, e.g. out of
//! memory, prints its error).

use std::path::PathBuf;

use nandstack_kernel::kcswap::{self, Kind};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut traces = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if let Some(i) = args.iter().position(|a| a == "--traces") {
        traces = PathBuf::from(args.remove(i + 1));
        args.remove(i);
    }
    let mut patch = serde_json::json!({});
    if let Some(i) = args.iter().position(|a| a == "--patch") {
        patch = serde_json::from_str(&args.remove(i + 1)).expect("patch is JSON");
        args.remove(i);
    }
    let filter = args.first().cloned().unwrap_or_default();
    let corpus = traces.join("compress");
    for kind in [Kind::Zswap, Kind::Zram] {
        let programs = kcswap::programs(&traces.join(kind.folder())).expect("captures");
        for (name, reps) in programs {
            if !name.contains(&filter) {
                continue;
            }
            let cfg = kcswap::config_patched(&reps[0], &corpus, &patch).expect("config");
            let t = std::time::Instant::now();
            let sim = match nandstack_sim::hostrun::simulate(&cfg, false) {
                Ok(sim) => sim,
                Err(e) => {
                    println!("{name}: error: {e}");
                    continue;
                }
            };
            let model = kcswap::model_figures(&sim, kind);
            let range = kcswap::kernel_range(&reps);
            println!(
                "{name} ({:.1} s, sim {:.2} s)",
                t.elapsed().as_secs_f64(),
                sim.now.0 as f64 / 1e9
            );
            for f in kind.figures() {
                let Some(&r) = range.get(*f) else { continue };
                let m = model[*f];
                let d = kcswap::distance(f, m, r);
                let tol = kcswap::tolerance(kind, f);
                println!(
                    "  {:<30} model {:>14.1}  kernel {:>14.1} .. {:<14.1} {:>6.1}% {}",
                    f,
                    m,
                    r.0,
                    r.1,
                    100.0 * d,
                    if d > tol { "OUT" } else { "" }
                );
            }
            // End-of-run LRU sizes (pages) of the program's cgroup, model vs each repetition's
            // memory.stat.
            if let Some(m) = sim.host.vm.memcgs.get(1) {
                let kernel: Vec<String> = reps
                    .iter()
                    .filter_map(|c| c.lru_end_pages.map(|(i, a)| format!("{i}/{a}")))
                    .collect();
                println!(
                    "  lru end inactive/active anon: model {}/{}  kernel {}",
                    m.lru_len(0),
                    m.lru_len(1),
                    if kernel.is_empty() {
                        "-".to_string()
                    } else {
                        kernel.join(" ")
                    }
                );
            }
            if let Some(z) = sim.host.store.zswap.as_ref() {
                let r = z.report();
                println!(
                    "  worker queued {} runs {} rotations {} reclaim_fail {} clock {:?}",
                    r["worker_queued"],
                    r["worker_runs"],
                    r["worker_rotations"],
                    r["reject_reclaim_fail"],
                    z.worker
                );
            }
        }
    }
}

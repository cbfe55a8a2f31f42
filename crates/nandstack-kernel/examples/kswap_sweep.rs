//! Every real-kernel swap capture (repetitions grouped) on the captures' setup with an optional JSON
//! patch merged into the config: one line per program with the four checked figures (swap-in,
//! swap-out, pages per read, pages per write), each with how far it lies outside the kernel's range
//! (`!` beyond the acceptance test's tolerance) — as the acceptance test takes them: the median over
//! the first-flush phases that finish (`kswap::summaries_patched`), or the one run of a patch that
//! sets the phase. The captures' folder is `$NANDSTACK_KERNEL_SWAP` or the shared one.
//! `cargo run --release -p nandstack-kernel --example kswap_sweep [JSON-PATCH [NAME-PART]]`, e.g.
//! `'{"host":{"swap":{"backend":{"kind":"loop","wake_us":0}}}}'`, or the 6.18 statistics flush with its
//! first flush at 0.5 s: `'{"host":{"reclaim":{"stats_flush_ms":2000,"stats_flush_first_ms":500}}}'`.

use nandstack_kernel::kswap::{self, outside};

fn main() {
    let mut args = std::env::args().skip(1);
    let patch: serde_json::Value = args.next().map_or(serde_json::json!({}), |p| {
        serde_json::from_str(&p).expect("patch is JSON")
    });
    let only = args.next().unwrap_or_default();
    let dir = kswap::captures_dir();
    let mut bad = 0;
    for p in kswap::programs(&dir).expect("captures") {
        if !p.name.contains(only.as_str()) {
            continue;
        }
        if let Err(e) = kswap::config_patched(&p.captures[0], &patch) {
            eprintln!("the patch does not give a valid config: {e}");
            std::process::exit(2);
        }
        let (runs, oom) = match kswap::summaries_patched(&p.captures[0], &patch, false) {
            Ok(r) => r,
            Err(e) => {
                // E.g. out of memory at every phase: every checked figure of the program counts as
                // missed.
                println!("{:<28} error: {e}", p.name);
                bad += 4;
                continue;
            }
        };
        let runs: Vec<_> = runs.into_iter().map(|(_, m)| m).collect();
        let f = kswap::median_figures(&runs);
        let oom = if oom.is_empty() {
            String::new()
        } else {
            format!("  (out of memory at phases {oom:?} ms)")
        };
        let mut line = format!("{:<28}", p.name);
        let checks = [
            ("pswpin", 0.1),
            ("pswpout", 0.1),
            ("read_pages_mean", 0.25),
            ("write_pages_mean", 0.25),
        ];
        for (name, tol) in checks {
            let v = f.iter().find(|x| x.0 == name).expect("figure").1;
            let d = outside(v, p.range(name));
            let mark = if d.abs() > tol { "!" } else { " " };
            bad += (d.abs() > tol) as u32;
            line.push_str(&format!(" {mark}{v:>9.1} {:+6.1}%", 100.0 * d));
        }
        println!("{line}{oom}");
    }
    println!("checks beyond tolerance: {bad}");
}

//! Every real-kernel swap capture (repetitions grouped) on the captures' setup with an optional JSON
//! patch merged into the config: one line per program with the model's simulated run time and the four
//! checked figures (swap-in, swap-out, pages per read, pages per write), each with how far it lies
//! outside the kernel's range (`!` beyond the acceptance test's tolerance).
//! `cargo run --release -p nandstack-host --example kswap_sweep [JSON-PATCH [NAME-PART]]`, e.g.
//! `'{"host":{"swap":{"backend":{"kind":"loop","wake_us":0}}}}'`, or the 6.18 statistics flush with its
//! first flush at 0.5 s: `'{"host":{"reclaim":{"stats_flush_ms":2000,"stats_flush_first_ms":500}}}'`.

use nandstack_host::kswap::{self, outside};

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
        let cfg = match kswap::config_patched(&p.captures[0], &patch) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("the patch does not give a valid config: {e}");
                std::process::exit(2);
            }
        };
        let sim = match nandstack_host::run_config(&cfg, false, &mut |_, _, _| true) {
            Ok(sim) => sim,
            Err(e) => {
                // E.g. out of memory: every checked figure of the program counts as missed.
                println!("{:<28} error: {e}", p.name);
                bad += 4;
                continue;
            }
        };
        let f = kswap::model_summary(&sim).figures();
        let end_s = sim.procs.iter().map(|p| p.end_ns).max().unwrap_or(0) as f64 / 1e9;
        let mut line = format!("{:<28} {end_s:5.2} s", p.name);
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
        println!("{line}");
    }
    println!("checks beyond tolerance: {bad}");
}

//! The captures' setup run on memtouch programs of other shapes than the published captures (every
//! pattern × write share × footprint/limit × discard), with read-after-write verification: one line
//! per program with the model's run time and figures, or its error. There is no kernel to compare
//! with here; it shows the model runs every shape to the end and how its figures move.
//! Each program runs at the first statistics-flush phase at which it finishes (`kswap::FLUSH_PHASES_MS`;
//! the phases that ran out of memory are printed), unless the patch sets the phase.
//! `cargo run --release -p nandstack-kernel --example kswap_variants [JSON-PATCH [NAME-PART]]`

use nandstack_kernel::kswap::{self, Capture, SwapSummary};

fn main() {
    let mut args = std::env::args().skip(1);
    let patch: serde_json::Value = args.next().map_or(serde_json::json!({}), |p| {
        serde_json::from_str(&p).expect("patch is JSON")
    });
    let only = args.next().unwrap_or_default();
    let mut failures = 0;
    let mut out_of_memory = 0;
    for (pages, limit_mib) in [(16384u64, 48u64), (32768, 64), (49152, 64), (81920, 128)] {
        for pattern in ["uniform", "normal", "seq", "hot"] {
            for write_pct in [0u32, 30, 70, 100] {
                for discard in [false, true] {
                    let c = Capture {
                        name: String::new(),
                        pages,
                        ops: 300_000,
                        pattern: pattern.into(),
                        write_pct,
                        seed: 7 + pages + write_pct as u64,
                        limit_mib,
                        swap_mib: 512,
                        discard,
                        kernel: SwapSummary::default(),
                    };
                    let name = format!(
                        "{pattern}_w{write_pct}_p{pages}_l{limit_mib}{}",
                        if discard { "_discard" } else { "" }
                    );
                    if !name.contains(only.as_str()) {
                        continue;
                    }
                    // As the capture comparisons: the first statistics-flush phase at which the run
                    // finishes (unless the patch sets the phase), with read-after-write verification.
                    let run = kswap::run_patched(&c, &patch, true);
                    match run {
                        Ok((sim, _, oom)) => {
                            if !oom.is_empty() {
                                out_of_memory += 1;
                                println!(
                                    "{name:<34} out of memory at first-flush phases {oom:?} ms"
                                );
                            }
                            let m = kswap::model_summary(&sim);
                            let st = &sim.host.stats;
                            println!(
                                "{name:<34} {:>6.2} s  in {:>7}  out {:>7}  pages/read {:>5.2}  pages/write {:>6.1}  discarded {:>6}  read ahead {:>6} (hits {:>6})",
                                sim.now.0 as f64 / 1e9,
                                m.pswpin,
                                m.pswpout,
                                m.reads.mean(),
                                m.writes.mean(),
                                m.discard_pages,
                                st.readahead_pages,
                                st.readahead_hits
                            );
                        }
                        Err(e) => {
                            failures += 1;
                            println!("{name:<34} error: {e}");
                        }
                    }
                }
            }
        }
    }
    println!("programs that ran out of memory at some phase: {out_of_memory}");
    println!("runs that failed: {failures}");
}

//! `cargo run --release -p nandstack-host --example gen_stream -- 'WORKLOAD JSON' [SEED]`: drain a process
//! workload's reference streams as the simulation would (chunks of 4096) and print the references, an
//! FNV-1a checksum of them and the generator's ns per reference — to measure a generator alone and to
//! check that a change to it leaves its stream bit for bit the same.
use std::time::Instant;

use nandstack_host::workloads::{build, config::WorkloadConfig, drain, MemRef};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(json) = args.first() else {
        eprintln!("usage: gen_stream 'WORKLOAD JSON' [SEED]");
        std::process::exit(2)
    };
    let cfg: WorkloadConfig = serde_json::from_str(json).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let seed = args.get(1).map_or(1, |s| s.parse().expect("seed"));
    let mut w = build(&cfg, seed, 0).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let t0 = Instant::now();
    let (mut n, mut sum) = (0u64, 0xcbf2_9ce4_8422_2325u64);
    for s in &mut w.threads {
        drain(s.as_mut(), 4096, |refs: &[MemRef]| {
            for r in refs {
                sum = (sum ^ (u64::from(r.page) << 8 | u64::from(r.op)))
                    .wrapping_mul(0x100_0000_01b3);
            }
            n += refs.len() as u64;
        })
        .expect("fill");
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "refs {n} checksum {sum:016x} {:.2} ns/ref",
        s * 1e9 / n.max(1) as f64
    );
}

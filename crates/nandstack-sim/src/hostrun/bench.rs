//! Benchmark of the host path: memory references per wall-clock second with swap active and most
//! references hitting RAM (a pmbench-like normal distribution over a working set 2.5× a cgroup
//! limit, so the tails swap while the centre stays resident). A measurement, not a test.

use nandstack_core::Result;
use serde_json::json;

use crate::config::SimConfig;
use crate::usage::{cpu_seconds, peak_rss_bytes};

/// Run the benchmark (`quick`: a smaller run) and return its JSON summary.
pub fn bench_host(quick: bool) -> Result<String> {
    Ok(serde_json::to_string_pretty(&bench_host_value(quick)?).expect("bench serialises"))
}

/// The benchmark's result (`nandstack bench host` and [`bench_host`]): references per wall and per CPU
/// second of the whole run (building the host and the device included), peak RSS — and, apart, the CPU
/// seconds of generating the same reference stream alone (no model), so that the model's own rate
/// (`model_references_per_cpu_second`: the references over the run's CPU seconds less the
/// generator's) is printed too: pmbench's normal draws (a logarithm and a cosine each) are a large
/// share of the whole.
pub fn bench_host_value(quick: bool) -> Result<serde_json::Value> {
    let refs: u64 = if quick { 5_000_000 } else { 50_000_000 };
    let cfg = json!({
        "seed": 1,
        "host": {
            "ram_mib": 1024,
            "swap": {"size_mib": 512},
            "cgroups": [{"name": "bench", "limit_mib": 128}],
        },
        "workload": {"kind": "host", "processes": [{"name": "pmbench", "cgroup": "bench",
            "workload": {"type": "pmbench", "working_set_mib": 320, "read_ratio": 0.5,
                         "references": refs}}]},
        "device": {"geometry": {"blocks_per_plane": 128}},
        "run": {"interval_sim_seconds": 1.0},
    });
    let cfg = SimConfig::from_value(cfg)?;
    let cpu0 = cpu_seconds();
    let sim = super::simulate(&cfg, false)?;
    let cpu = cpu0.zip(cpu_seconds()).map(|(a, b)| b - a);
    let s = &sim.host.stats;
    let wall = sim.wall_seconds.max(1e-9);
    let generator = generator_cpu(&cfg)?;
    let model = cpu.zip(generator).map(|(c, g)| c - g);
    Ok(json!({
        "name": "host",
        "description": "pmbench-like normal accesses over 320 MiB in a 128 MiB cgroup, 512 MiB swap on a 4 GiB TLC SSD",
        "references": s.references,
        "hit_ratio": s.hits as f64 / s.references.max(1) as f64,
        "pswpin": s.pswpin,
        "pswpout": s.pswpout,
        "sim_seconds": sim.now.0 as f64 / 1e9,
        "wall_seconds": wall,
        "wall_references_per_second": s.references as f64 / wall,
        "cpu_seconds": cpu,
        "references_per_cpu_second": cpu.map(|c| s.references as f64 / c.max(1e-9)),
        "generator_cpu_seconds": generator,
        "model_references_per_cpu_second": model.map(|m| s.references as f64 / m.max(1e-9)),
        "peak_rss_bytes": peak_rss_bytes(),
    }))
}

/// CPU seconds to draw the reference streams of `cfg`'s processes alone: the same workloads and seeds,
/// in the simulation's chunks, discarded (None where CPU time cannot be read).
fn generator_cpu(cfg: &SimConfig) -> Result<Option<f64>> {
    let cpu0 = cpu_seconds();
    for (i, p) in cfg.host_processes().iter().enumerate() {
        let w = nandstack_host::workloads::build(&p.workload, cfg.seed, i as u64)?;
        for mut stream in w.threads {
            nandstack_host::workloads::drain(stream.as_mut(), super::sim::CHUNK, |refs| {
                std::hint::black_box(refs);
            })?;
        }
    }
    Ok(cpu0.zip(cpu_seconds()).map(|(a, b)| b - a))
}

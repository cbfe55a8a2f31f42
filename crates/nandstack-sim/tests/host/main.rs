//! Integration tests of the host model (one test binary): hand-computed scenarios, invariants under
//! verification, swap-layer rules (the 50% cutoff, discard, readahead, slot cache, throttling),
//! determinism, outputs (block trace, reference files) and bad input.

mod conformance;
mod cswap;
mod diss;
mod errors;
mod ezswap;
mod outputs;
mod scenarios;
mod swap_rules;
mod workloads;
mod znswap;

use nandstack_sim::hostrun::{simulate, Sim};
use nandstack_sim::SimConfig;
use serde_json::{json, Value};

/// A small host: 256 MiB RAM, one CPU, 64 MiB swap, no readahead, a 512 MiB SSD without timing.
pub fn base() -> Value {
    json!({
        "seed": 7,
        "host": {"ram_mib": 256, "cpus": 1, "swap": {"size_mib": 64}, "readahead": {"policy": "off"}},
        "workload": {"kind": "host", "processes": []},
        "device": {"geometry": {"channels": 1, "chips_per_channel": 1, "blocks_per_plane": 128},
                   "timing": {"enabled": false}},
        "run": {"verify_every": 20000},
    })
}

/// `base()` with 24 MiB of RAM and the mobile app-switching scenario at a small scale (four apps; swap-ins
/// and file reads of written data, global pressure).
pub fn phone() -> Value {
    let mut c = base();
    c["host"]["ram_mib"] = json!(24);
    c["workload"]["processes"] = json!([{"name": "phone", "workload": {"type": "mobile", "scenario": "video",
        "minute_ms": 4.0, "foreground_refs_per_ms": 300, "background_refs_per_ms": 20,
        "apps": [{"anon_mib": 4, "file_mib": 3}, {"anon_mib": 8, "file_mib": 4},
                 {"anon_mib": 5, "file_mib": 3}, {"anon_mib": 6, "file_mib": 2}]}}]);
    c
}

/// `base()` with one cgroup `t` of `limit_pages` and one process running `workload` in it.
pub fn one(limit_pages: u64, workload: Value) -> Value {
    let mut c = base();
    c["host"]["cgroups"] = json!([{"name": "t", "limit_pages": limit_pages}]);
    c["workload"]["processes"] = json!([{"name": "p", "cgroup": "t", "workload": workload}]);
    c
}

pub fn run(cfg: &Value, verify: bool) -> Sim {
    let cfg = SimConfig::from_value(cfg.clone()).expect("config parses");
    simulate(&cfg, verify).expect("run succeeds")
}

/// The `host` section of the run's summary, with the device's counters under `device` and the host's
/// time series under `series` (in the summary these are sections of their own).
pub fn report(sim: &Sim) -> Value {
    let mut r = nandstack_sim::hostrun::report::report(sim);
    let dev = sim.host.device();
    r["device"] =
        json!({"stats": serde_json::to_value(dev.stats()).unwrap(), "details": dev.details()});
    let s = &sim.series;
    let cgroups: serde_json::Map<String, Value> = sim
        .host
        .vm
        .memcgs
        .iter()
        .zip(&s.cgroups)
        .map(|(m, c)| {
            let mut o = json!({"usage_pages": c.usage_pages, "swap_write_mib_per_s": c.swap_write_mib_per_s});
            for (n, v) in nandstack_host::vm::page::LRU_NAMES.iter().zip(&c.lru_pages) {
                o[format!("{n}_pages")] = json!(v);
            }
            (m.name.clone(), o)
        })
        .collect();
    r["series"] = json!({"t_ms": s.t_ms, "cgroups": cgroups});
    r
}

pub fn run_report(cfg: &Value, verify: bool) -> Value {
    report(&run(cfg, verify))
}

pub fn err(cfg: &Value) -> String {
    match SimConfig::from_value(cfg.clone()).and_then(|c| simulate(&c, false)) {
        Ok(_) => panic!("expected an error for {cfg}"),
        Err(e) => e.to_string(),
    }
}

/// Set a nested key: `set(&mut c, &["host", "swap", "size_mib"], json!(8))`.
pub fn set(c: &mut Value, path: &[&str], v: Value) {
    let mut cur = c;
    for k in &path[..path.len() - 1] {
        cur = &mut cur[*k];
    }
    cur[path[path.len() - 1]] = v;
}

pub fn memtouch(pages: u64, ops: u64, pattern: &str, write_pct: u32, seed: u64) -> Value {
    json!({"type": "memtouch", "pages": pages, "ops": ops, "pattern": pattern,
           "write_pct": write_pct, "seed": seed})
}

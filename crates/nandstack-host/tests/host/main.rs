//! Integration tests of the host model (one test binary): hand-computed scenarios, invariants under
//! verification, swap-layer rules (the 50% cutoff, discard, readahead, slot cache, throttling),
//! determinism, outputs (block trace, reference files) and bad input.

mod cswap;
mod diss;
mod errors;
mod ezswap;
mod outputs;
mod scenarios;
mod shapes;
mod swap_rules;
mod workloads;
mod znswap;

use nandstack_host::{report, HostSimConfig, Sim};
use serde_json::{json, Value};

/// A small host: 256 MiB RAM, one CPU, 64 MiB swap, no readahead, a 512 MiB SSD without timing.
pub fn base() -> Value {
    json!({
        "seed": 7,
        "host": {"ram_mib": 256, "cpus": 1, "swap": {"size_mib": 64}, "readahead": {"policy": "off"}},
        "processes": [],
        "device": {"geometry": {"channels": 1, "chips_per_channel": 1, "blocks_per_plane": 128},
                   "timing": {"enabled": false}},
        "run": {"verify_every_refs": 20000},
    })
}

/// `base()` with 24 MiB of RAM and the mobile app-switching scenario at a small scale (four apps; swap-ins
/// and file reads of written data, global pressure).
pub fn phone() -> Value {
    let mut c = base();
    c["host"]["ram_mib"] = json!(24);
    c["processes"] = json!([{"name": "phone", "workload": {"type": "mobile", "scenario": "video",
        "minute_ms": 4.0, "foreground_refs_per_ms": 300, "background_refs_per_ms": 20,
        "apps": [{"anon_mib": 4, "file_mib": 3}, {"anon_mib": 8, "file_mib": 4},
                 {"anon_mib": 5, "file_mib": 3}, {"anon_mib": 6, "file_mib": 2}]}}]);
    c
}

/// `base()` with one cgroup `t` of `limit_pages` and one process running `workload` in it.
pub fn one(limit_pages: u64, workload: Value) -> Value {
    let mut c = base();
    c["host"]["cgroups"] = json!([{"name": "t", "limit_pages": limit_pages}]);
    c["processes"] = json!([{"name": "p", "cgroup": "t", "workload": workload}]);
    c
}

pub fn run(cfg: &Value, verify: bool) -> Sim {
    let cfg = HostSimConfig::from_json(&cfg.to_string()).expect("config parses");
    nandstack_host::run_config(&cfg, verify, &mut |_, _, _| true).expect("run succeeds")
}

pub fn run_report(cfg: &Value, verify: bool) -> Value {
    report::report(&run(cfg, verify))
}

pub fn err(cfg: &Value) -> String {
    match HostSimConfig::from_json(&cfg.to_string())
        .and_then(|c| nandstack_host::run_config(&c, false, &mut |_, _, _| true))
    {
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

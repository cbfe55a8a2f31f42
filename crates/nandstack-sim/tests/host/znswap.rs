//! ZNSwap through the public API: the GC's I/O charged to the owning cgroup (its throttle and its
//! counters, which with the swap I/O add up to what the device served), and bad combinations named.

use serde_json::{json, Value};

use crate::{err, run, run_report, set};

/// A tiny zoned device (48 zones of 32 slots, 4 open) with ZNSwap under `policy`; two cgroups: a reader
/// and a writer, 2 MiB each with 128 resident pages, 4 MiB of swap.
fn two_tenants(policy: Value, writer_mib_per_s: Option<f64>) -> Value {
    json!({
        "seed": 11,
        "host": {"ram_mib": 64, "cpus": 2, "readahead": {"policy": "off"},
                 "swap": {"size_mib": 4, "backend": {"kind": "znswap", "policy": policy}},
                 "cgroups": [{"name": "reader", "limit_pages": 128},
                             {"name": "writer", "limit_pages": 128, "swap_write_mib_per_s": writer_mib_per_s}]},
        "workload": {"kind": "host", "processes": [
            {"name": "r", "cgroup": "reader", "workload": {"type": "vm_scalability", "size_mib": 2,
             "pattern": "rand", "write_ratio": 0.0, "passes": 12}},
            {"name": "w", "cgroup": "writer", "workload": {"type": "vm_scalability", "size_mib": 2,
             "pattern": "rand", "write_ratio": 1.0, "passes": 12}}]},
        "device": {"kind": "zoned", "zoned": {
            "geometry": {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 2,
                         "blocks_per_plane": 48, "pages_per_block": 16, "page_size_bytes": 4096,
                         "cell_mode": "slc"},
            "blocks_per_zone": 2, "max_open_zones": 4, "max_active_zones": 4}},
        "run": {"verify_every": 5000},
    })
}

fn cgroup<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["cgroups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
}

/// Swap pages in and out plus GC pages read and written, per cgroup, against the device's bytes.
fn check_sums(r: &Value) -> (u64, u64) {
    let gc = &r["swap"]["backend"]["gc"];
    let mut host_pages = 0;
    let mut gc_pages = 0;
    for c in r["cgroups"].as_array().unwrap() {
        let n = c["name"].as_str().unwrap();
        host_pages += c["pswpin"].as_u64().unwrap() + c["pswpout"].as_u64().unwrap();
        gc_pages += gc["read_pages_by_cgroup"][n].as_u64().unwrap()
            + gc["write_pages_by_cgroup"][n].as_u64().unwrap();
    }
    let dev = &r["device"]["stats"];
    let device_bytes =
        dev["host_read_bytes"].as_u64().unwrap() + dev["host_write_bytes"].as_u64().unwrap();
    assert_eq!(
        (host_pages + gc_pages) * 4096,
        device_bytes,
        "{}",
        r["swap"]["backend"]
    );
    (host_pages, gc_pages)
}

#[test]
fn cgroup_accounting_adds_up_to_the_device_bandwidth() {
    // The cgroup policy charges each GC page to its owner: with an allocation only the writer's zones
    // are collected, so the reader is charged nothing.
    let r = run_report(
        &two_tenants(
            json!({"kind": "cgroup", "swap_slots": {"reader": 600, "writer": 300}}),
            None,
        ),
        true,
    );
    let (_, gc) = check_sums(&r);
    assert!(gc > 500, "{}", r["swap"]["backend"]);
    let g = &r["swap"]["backend"]["gc"];
    assert_eq!(r["swap"]["backend"]["cgroup_accounting"], true);
    assert_eq!(g["write_pages_by_cgroup"]["reader"], 0, "{g}");
    assert_eq!(g["write_pages_by_cgroup"]["root"], 0, "{g}");
    assert!(
        g["write_pages_by_cgroup"]["writer"].as_u64().unwrap() > 200,
        "{g}"
    );
    // Without accounting (per-core) the GC thread's I/O is the root cgroup's; the sum still holds.
    let r = run_report(&two_tenants(json!({"kind": "per_core"}), None), true);
    let (_, gc) = check_sums(&r);
    let g = &r["swap"]["backend"]["gc"];
    assert!(gc > 0);
    assert_eq!(g["write_pages_by_cgroup"]["writer"], 0);
    assert_eq!(
        g["read_pages_by_cgroup"]["root"].as_u64().unwrap()
            + g["write_pages_by_cgroup"]["root"].as_u64().unwrap(),
        gc
    );
}

#[test]
fn the_gc_writes_of_a_cgroup_pass_its_write_throttle() {
    let limit = 8.0; // MiB/s
    let r = run_report(
        &two_tenants(
            json!({"kind": "cgroup", "swap_slots": {"reader": 600, "writer": 300}}),
            Some(limit),
        ),
        false,
    );
    let w = cgroup(&r, "writer");
    let gc = r["swap"]["backend"]["gc"]["write_pages_by_cgroup"]["writer"]
        .as_u64()
        .unwrap();
    let pages = w["pswpout"].as_u64().unwrap() + gc;
    // Everything the writer's cgroup wrote, swap-outs and GC copies, within its bandwidth.
    let mib_per_s = pages as f64 * 4096.0 / 1048576.0 / r["sim_seconds"].as_f64().unwrap();
    assert!(
        gc > 100 && mib_per_s <= limit * 1.02,
        "{mib_per_s} MiB/s with {gc} GC pages"
    );
    assert!(w["throttle_delay_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_combinations_are_named() {
    let base = two_tenants(json!({"kind": "per_core"}), None);
    let mut c = base.clone();
    c["device"] = json!({"kind": "block"});
    assert!(err(&c).contains("host.swap.backend.kind"), "{}", err(&c));
    assert!(err(&c).contains("zoned"));
    let mut c = base.clone();
    set(
        &mut c,
        &["host", "swap", "backend"],
        json!({"kind": "block"}),
    );
    assert!(err(&c).contains("refuses"), "{}", err(&c));
    let mut c = base.clone();
    set(
        &mut c,
        &["host", "swap", "discard"],
        json!({"mode": "fine"}),
    );
    assert!(err(&c).contains("host.swap.discard.mode"), "{}", err(&c));
    let mut c = base.clone();
    set(&mut c, &["host", "swap", "size_mib"], json!(6));
    let e = err(&c);
    assert!(
        e.contains("host.swap.size_mib") && e.contains("at most 5 MiB"),
        "{e}"
    );
    let mut c = base.clone();
    set(
        &mut c,
        &["host", "swap", "backend", "policy"],
        json!({"kind": "cgroup", "swap_slots": {"nobody": 1}}),
    );
    assert!(err(&c).contains("swap_slots.nobody"), "{}", err(&c));
    let mut c = base.clone();
    set(&mut c, &["host", "swap", "backend", "zones"], json!(100));
    assert!(err(&c).contains("the device has 48 zones"), "{}", err(&c));
    let mut c = base.clone();
    set(
        &mut c,
        &["host", "swap", "backend", "policy"],
        json!({"kind": "lru"}),
    );
    assert!(err(&c).contains("host.swap.backend"), "{}", err(&c));
    let mut c = base;
    c["workload"]["processes"] = json!([{"name": "phone", "workload": {"type": "mobile", "scenario": "video", "minute_ms": 4.0}}]);
    assert!(err(&c).contains("file"), "{}", err(&c));
}

/// A tiny zoned device: 2 planes × 48 blocks × 16 pages of 4 KiB, SLC; a zone is 2 blocks (32 slots),
/// 48 zones, 4 open → 3 swap-zones. One CPU, a 256-page cgroup, 3 MiB (768 slots) of swap.
fn tiny_zoned(workload: Value, policy: Value) -> Value {
    json!({
        "seed": 3,
        "host": {"ram_mib": 64, "cpus": 1, "readahead": {"policy": "off"},
                 "swap": {"size_mib": 3, "backend": {"kind": "znswap", "policy": policy}},
                 "cgroups": [{"name": "t", "limit_pages": 256}]},
        "workload": {"kind": "host", "processes": [{"name": "p", "cgroup": "t", "workload": workload}]},
        "device": {"kind": "zoned", "zoned": {
            "geometry": {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 2,
                         "blocks_per_plane": 48, "pages_per_block": 16, "page_size_bytes": 4096,
                         "cell_mode": "slc"},
            "blocks_per_zone": 2, "max_open_zones": 4, "max_active_zones": 4}},
        "run": {"verify_every": 2000},
    })
}

#[test]
fn zones_holding_only_garbage_are_reset_without_a_copy() {
    // Three sequential write passes over 700 pages in a 256-page cgroup: every rewrite frees the page's
    // slot in write order, so zones empty whole and the GC never has to copy.
    let refs: Vec<String> = (0..3)
        .flat_map(|_| (0..700).map(|p| format!("W{p}")))
        .collect();
    let sim = run(
        &tiny_zoned(
            json!({"type": "inline", "pages": 700, "refs": refs.join(" ")}),
            json!({"kind": "single"}),
        ),
        true,
    );
    let r = sim.host.store.backend.report();
    assert!(r["free_resets"].as_u64().unwrap() >= 20, "{r}");
    assert_eq!(r["gc"]["pages_written"], 0, "{r}");
    assert_eq!(r["waf"], 1.0);
    // Every swap-out is an append; every swapped page was written once per pass after the first.
    assert_eq!(r["append_pages"].as_u64().unwrap(), sim.host.stats.pswpout);
}

#[test]
fn random_workloads_keep_every_invariant_with_every_policy() {
    let workloads = [
        json!({"type": "vm_scalability", "size_mib": 3, "threads": 2, "pattern": "rand", "write_ratio": 0.6, "passes": 6}),
        json!({"type": "pmbench", "working_set_mib": 3, "read_ratio": 0.3, "references": 40000}),
    ];
    let policies = [
        json!({"kind": "single"}),
        json!({"kind": "per_core"}),
        json!({"kind": "hot_cold"}),
        json!({"kind": "cgroup", "swap_slots": {"t": 300}}),
    ];
    for (i, w) in workloads.iter().enumerate() {
        for p in &policies {
            let mut cfg = tiny_zoned(w.clone(), p.clone());
            cfg["seed"] = json!(10 + i);
            let sim = run(&cfg, true);
            let r = sim.host.store.backend.report();
            assert!(r["gc"]["victims"].as_u64().unwrap() > 0, "{p}: {r}");
            assert!(r["gc"]["pages_moved"].as_u64().unwrap() > 0, "{p}: {r}");
            assert_eq!(
                r["append_pages"].as_u64().unwrap(),
                sim.host.stats.pswpout,
                "{p}: every swap-out is one appended page"
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let w = json!({"type": "vm_scalability", "size_mib": 3, "threads": 2, "pattern": "rand", "write_ratio": 0.7, "passes": 4});
    let cfg = tiny_zoned(w, json!({"kind": "hot_cold"}));
    let a = run(&cfg, true).host.store.backend.report();
    let b = run(&cfg, true).host.store.backend.report();
    assert_eq!(a, b);
}

//! Every workload runs under verification (all invariants checked every 20 000 references and at the
//! end) and produces a consistent report; runs are deterministic.

use serde_json::{json, Value};

use crate::{base, memtouch, one, phone, run_report, set};

fn strip_wall(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        o.retain(|k, _| !k.starts_with("wall_"));
        for x in o.values_mut() {
            strip_wall(x);
        }
    }
}

#[test]
fn memtouch_patterns_keep_invariants() {
    for (pattern, wpct) in [
        ("uniform", 50),
        ("normal", 50),
        ("hot", 100),
        ("seq", 100),
        ("uniform", 0),
    ] {
        let mut c = one(2048, memtouch(4096, 30_000, pattern, wpct, 3));
        set(&mut c, &["host", "readahead", "policy"], json!("vma"));
        let r = run_report(&c, true);
        assert!(
            r["swap"]["pswpout"].as_u64().unwrap() >= 2000,
            "{pattern}: {}",
            r["swap"]
        );
        let refs = r["references"].as_u64().unwrap();
        assert_eq!(refs, 4096 * 64 + 30_000);
    }
}

#[test]
fn vm_scalability_threads_and_pmbench() {
    for pattern in ["seq", "rand"] {
        let c = one(
            1024,
            json!({"type": "vm_scalability", "size_mib": 6, "threads": 3, "pattern": pattern,
                   "write_ratio": 0.5, "passes": 3}),
        );
        let r = run_report(&c, true);
        assert_eq!(r["threads"], 3);
        assert!(r["swap"]["pswpin"].as_u64().unwrap() > 0);
    }
    let r = run_report(
        &one(
            1024,
            json!({"type": "pmbench", "working_set_mib": 8, "references": 100_000}),
        ),
        true,
    );
    assert!(r["hit_ratio"].as_f64().unwrap() > 0.5);
}

#[test]
fn kv_workloads_report_throughput_and_p99() {
    for w in [
        json!({"type": "ycsb", "records": 20000, "record_bytes": 512, "distribution": "zipf",
               "requests": 20000}),
        json!({"type": "ycsb", "records": 20000, "record_bytes": 512, "distribution": "hotspot",
               "read_ratio": 0.5, "requests": 20000}),
        json!({"type": "memcached_etc", "keys": 20000, "requests": 20000}),
    ] {
        let r = run_report(&one(1024, w.clone()), true);
        let p = &r["processes"][0];
        assert_eq!(p["requests"], 20000, "{w}");
        assert!(p["throughput_requests_per_s"].as_f64().unwrap() > 0.0);
        let lat = &p["request_latency_us"];
        assert!(lat["p99"].as_f64().unwrap() >= lat["p50"].as_f64().unwrap());
        assert!(
            r["swap"]["pswpout"].as_u64().unwrap() > 0,
            "{w}: no swapping"
        );
    }
}

#[test]
fn mobile_switching_under_global_pressure_uses_file_pages_and_kswapd() {
    let c = phone();
    let r = run_report(&c, true);
    assert!(r["file"]["read_pages"].as_u64().unwrap() > 0);
    assert!(r["reclaim"]["kswapd_runs"].as_u64().unwrap() > 0);
    assert!(r["swap"]["pswpout"].as_u64().unwrap() > 0);
    assert!(r["faults"]["file_major"].as_u64().unwrap() > 0);
    // The apps' shared data files are written back to the file partition.
    assert!(
        r["file"]["write_pages"].as_u64().unwrap() > 0,
        "{}",
        r["file"]
    );
    // 65 Table-2 minutes of 4 ms.
    assert!(r["sim_seconds"].as_f64().unwrap() >= 0.26);
}

#[test]
fn two_tenants_in_two_cgroups() {
    let mut c = base();
    set(
        &mut c,
        &["host", "cgroups"],
        json!([{"name": "reader", "limit_mib": 4}, {"name": "writer", "limit_mib": 4}]),
    );
    set(
        &mut c,
        &["workload", "processes"],
        json!([
            {"name": "r", "cgroup": "reader", "workload": {"type": "vm_scalability", "size_mib": 6,
                "pattern": "rand", "write_ratio": 0.0, "passes": 4}},
            {"name": "w", "cgroup": "writer", "workload": {"type": "vm_scalability", "size_mib": 6,
                "pattern": "rand", "write_ratio": 1.0, "passes": 4}},
        ]),
    );
    let r = run_report(&c, true);
    let (rd, wr) = (&r["cgroups"][1], &r["cgroups"][2]);
    assert!(rd["max_usage_pages"].as_u64().unwrap() <= 1024);
    assert!(wr["max_usage_pages"].as_u64().unwrap() <= 1024);
    // The reader's faults keep their swap slots: each of its 1536 pages is written to swap at most
    // once (when first evicted after populating), while the writer rewrites on every eviction.
    assert!(rd["pswpout"].as_u64().unwrap() <= 1536, "{}", rd);
    assert!(wr["pswpout"].as_u64().unwrap() > 1536 + 500, "{}", wr);
    let points = r["series"]["t_ms"].as_array().unwrap().len();
    let w = &r["series"]["cgroups"]["writer"];
    assert_eq!(w["swap_write_mib_per_s"].as_array().unwrap().len(), points);
    // The LRU lists hold the cgroup's pages: never more than it is charged, and (anonymous memory
    // only, 1024-page limit reached) most of them once it is full.
    let col = |k: &str| -> Vec<u64> {
        let v = w[k].as_array().unwrap();
        assert_eq!(v.len(), points, "{k}");
        v.iter().map(|x| x.as_u64().unwrap()).collect()
    };
    let (usage, ia, aa) = (
        col("usage_pages"),
        col("inactive_anon_pages"),
        col("active_anon_pages"),
    );
    let (ifl, afl) = (col("inactive_file_pages"), col("active_file_pages"));
    for i in 0..points {
        assert!(ia[i] + aa[i] + ifl[i] + afl[i] <= usage[i], "point {i}");
        assert_eq!(ifl[i] + afl[i], 0, "no file pages, point {i}");
    }
    assert!(
        ia[points - 1] + aa[points - 1] >= 900,
        "{} + {}",
        ia[points - 1],
        aa[points - 1]
    );
}

#[test]
fn same_config_and_seed_give_identical_reports() {
    let mut c = base();
    set(
        &mut c,
        &["host", "cgroups"],
        json!([{"name": "a", "limit_mib": 4}, {"name": "b", "limit_mib": 3}]),
    );
    set(
        &mut c,
        &["workload", "processes"],
        json!([
            {"cgroup": "a", "workload": {"type": "pmbench", "working_set_mib": 6, "references": 50000}},
            {"cgroup": "b", "workload": {"type": "vm_scalability", "size_mib": 5, "threads": 2,
                "pattern": "rand", "write_ratio": 0.3}},
        ]),
    );
    set(&mut c, &["host", "readahead", "policy"], json!("vma"));
    let mut a = run_report(&c, false);
    let mut b = run_report(&c, false);
    strip_wall(&mut a);
    strip_wall(&mut b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let cfg = nandstack_sim::SimConfig::from_value(c.clone()).unwrap();
    assert_eq!(cfg.seed, 7);
    let mut c8 = c.clone();
    set(&mut c8, &["seed"], json!(8));
    let mut c9 = c.clone();
    set(&mut c9, &["seed"], json!(9));
    let (mut s1, mut s2) = (run_report(&c8, false), run_report(&c9, false));
    strip_wall(&mut s1);
    strip_wall(&mut s2);
    assert_ne!(s1, s2, "a different seed changes the seeded workloads");
}

#[test]
fn memory_traces_replay_under_verification() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/memory");
    if !dir.exists() {
        eprintln!("SKIPPED: ../shared/traces/memory not found");
        return;
    }
    for name in [
        "vm_gcc_1M_rw",
        "ucsd_addr_mcf",
        "lirs_sprite",
        "lirs_multi3",
    ] {
        let path = dir.join(format!("{name}.trace.gz"));
        let c = one(
            600,
            json!({"type": "trace", "path": path.display().to_string(), "max_refs": 150000,
                   "lirs_write_ratio": 0.3}),
        );
        let r = run_report(&c, true);
        assert_eq!(
            r["references"],
            150000u64.min(r["references"].as_u64().unwrap()),
            "{name}"
        );
        assert!(
            r["faults"]["major"].as_u64().unwrap() > 0 || r["hit_ratio"].as_f64().unwrap() > 0.99,
            "{name}"
        );
    }
}

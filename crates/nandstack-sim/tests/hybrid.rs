//! Hybrid SLC/QLC device runs through the JSON API (`run_hybrid_json`): cost identities, determinism,
//! config errors, Q-table save/load, trace replay with verification, and the direction of the paper's
//! headline on a stand-in. The `#[ignore]`d tests at the end are manual tools (tables for docs/hybrid.md).

use std::path::Path;

use nandstack_core::Error;
use nandstack_sim::hybrid_run::run_hybrid_json;
use serde_json::Value;

fn run(cfg: &str) -> Value {
    let out = run_hybrid_json(cfg, None, false, &mut |_, _, _| true).unwrap();
    serde_json::from_str(&out).unwrap()
}

fn run_verify(cfg: &str) -> Value {
    let out = run_hybrid_json(cfg, None, true, &mut |_, _, _| true).unwrap();
    serde_json::from_str(&out).unwrap()
}

/// A quarter-capacity paper device (4 KiB pages, same block structure) and a small stand-in.
fn cfg(manager: &str, name: &str, scale: f64, extra: &str) -> String {
    format!(
        r#"{{"device": {{"page_bytes": 4096}}, "manager": {{"kind": "{manager}" {extra}}},
            "workload": {{"standin": {{"name": "{name}", "scale": {scale}}}}},
            "report": {{"sample_every_bytes": 33554432}}}}"#
    )
}

fn f(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing"))
}

const KINDS: [&str; 5] = [
    "host_to_slc",
    "host_to_qlc",
    "slc_to_qlc",
    "qlc_to_qlc",
    "slc_to_slc",
];

#[test]
fn every_manager_verifies_and_the_cost_breakdown_adds_up() {
    for m in ["qlc_only", "static", "dwa", "ust", "rl"] {
        let v = run_verify(&cfg(m, "tpcc", 0.02, ""));
        assert_eq!(v["manager"], m);
        let total = f(&v, "write_cost_ns");
        let sum: f64 = KINDS.iter().map(|k| f(&v["cost_breakdown"][k], "ns")).sum();
        assert_eq!(sum, total, "{m}: breakdown sum");
        let frac: f64 = KINDS.iter().map(|k| f(&v["cost_fraction"], k)).sum();
        assert!((frac - 1.0).abs() < 1e-9, "{m}: fractions {frac}");
        // Each category's time is its operations × Table 1 times.
        for k in KINDS {
            let c = &v["cost_breakdown"][k];
            let t = f(c, "slc_page_reads") * 30e3
                + f(c, "slc_page_programs") * 160e3
                + f(c, "slc_block_erases") * 3e6
                + f(c, "qlc_page_reads") * 140e3
                + f(c, "qlc_page_programs") * 3102e3
                + f(c, "qlc_block_erases") * 3.5e6;
            assert_eq!(t, f(c, "ns"), "{m} {k}");
        }
        let host = f(&v, "host.host_write_bytes");
        assert_eq!(host, f(&v, "workload.write_bytes"));
        let programs = f(&v, "flash.slc_page_programs") + f(&v, "flash.qlc_page_programs");
        assert!((f(&v, "waf") - programs * 4096.0 / host).abs() < 1e-12);
        let tput = host / (1 << 20) as f64 / (total * 1e-9);
        assert!((f(&v, "write_throughput_mib_per_s") - tput).abs() < 1e-9 * tput);
        assert!(f(&v, "verify.invariant_checks") >= 16.0, "{m}");
        // Samples every 32 MiB of host writes.
        assert_eq!(
            v["series"].as_array().unwrap().len() as f64,
            (host / 33554432.0).floor(),
            "{m}"
        );
        match m {
            "qlc_only" => {
                assert_eq!(f(&v, "flash.slc_page_programs"), 0.0);
                assert_eq!(f(&v, "slc.max_blocks"), 0.0);
            }
            "static" => assert_eq!(f(&v, "host.resizes"), 0.0),
            "ust" => {
                assert!(v["slc"]["final_theta_bytes"].is_null());
                assert_eq!(f(&v, "ftl.host_units_to_qlc"), 0.0);
            }
            "rl" => assert!(f(&v, "manager_report.rl.steps") > 0.0),
            _ => {}
        }
    }
}

#[test]
fn same_seed_same_report_except_wall_keys() {
    let strip = |s: String| -> String {
        s.lines()
            .filter(|l| !l.contains("\"wall_"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let c = cfg("rl", "linkbench", 0.02, "");
    let a = strip(run_hybrid_json(&c, Some(7), false, &mut |_, _, _| true).unwrap());
    let b = strip(run_hybrid_json(&c, Some(7), false, &mut |_, _, _| true).unwrap());
    assert_eq!(a, b);
    let d = strip(run_hybrid_json(&c, Some(8), false, &mut |_, _, _| true).unwrap());
    assert_ne!(a, d, "another seed changes the run");
}

#[test]
fn bad_config_errors_name_the_key() {
    let cases = [
        (
            r#"{"manager": {"kind": "rl", "rl": {"alpah": 0.1}}}"#,
            "manager.rl",
            "alpah",
        ),
        (
            r#"{"manager": {"kind": "rl", "rl": {"epsilon": 2}}}"#,
            "manager.rl.epsilon",
            "[0, 1]",
        ),
        (
            r#"{"manager": {"kind": "dwa", "dwa": {"setting": 3}}}"#,
            "manager.dwa.setting",
            "1 or 2",
        ),
        (
            r#"{"manager": {"kind": "lru"}}"#,
            "manager.kind",
            "qlc_only",
        ),
        (
            r#"{"device": {"page_bytes": 5000}}"#,
            "device.page_bytes",
            "4096",
        ),
        (
            r#"{"device": {"over_provisioning": 0.001}}"#,
            "device.over_provisioning",
            "blocks",
        ),
        (
            r#"{"workload": {"standin": {"name": "pcx"}}}"#,
            "workload.standin.name",
            "ycsb_a",
        ),
        (
            r#"{"workload": {"standin": {"scale": 9}}}"#,
            "workload.standin.scale",
            "(0, 4]",
        ),
        (r#"{"workload": {}}"#, "workload", "exactly one"),
        (
            r#"{"precondition": {"fill_fraction": 0.99}}"#,
            "precondition.fill_fraction",
            "0.95",
        ),
        (
            r#"{"device": {"qlc_free_threshold_blocks": 1}}"#,
            "device.qlc_free_threshold_blocks",
            "[2, 1000]",
        ),
        (
            r#"{"report": {"sample_every_bytes": 10}}"#,
            "report.sample_every_bytes",
            "1 MiB",
        ),
        (r#"{"bogus": 1}"#, "bogus", "workload"),
        (
            r#"{"manager": {"kind": "rl", "rl": {"load_q_table": "/nonexistent/q.json"}}}"#,
            "manager.rl.load_q_table",
            "cannot read",
        ),
    ];
    for (json, key, hint) in cases {
        let e = run_hybrid_json(json, None, false, &mut |_, _, _| true).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Config { .. }), "{json}: {msg}");
        assert!(msg.contains(key) && msg.contains(hint), "{json}: {msg}");
    }
}

#[test]
fn progress_is_reported_and_can_interrupt() {
    let c = cfg("dwa", "oltp", 0.01, "");
    let mut calls = Vec::new();
    run_hybrid_json(&c, None, false, &mut |phase, done, total| {
        calls.push((phase.to_string(), done, total));
        true
    })
    .unwrap();
    assert_eq!(calls.first().unwrap().0, "precondition");
    assert_eq!(calls.last().unwrap().0, "flush");
    let runs: Vec<_> = calls.iter().filter(|c| c.0 == "run").collect();
    assert!(runs.len() > 100 && runs.windows(2).all(|w| w[0].1 <= w[1].1));
    let e = run_hybrid_json(&c, None, false, &mut |phase, _, _| phase != "run").unwrap_err();
    assert!(matches!(e, Error::Interrupted));
}

#[test]
fn q_table_saves_and_loads_for_pretraining() {
    let dir = std::env::temp_dir().join(format!("nandstack-hybrid-q-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let q = dir.join("q.json");
    let qs = q.display().to_string();
    // Pre-train on PC, save the table.
    let trained = run(&cfg(
        "rl",
        "pc",
        0.02,
        &format!(r#", "rl": {{"save_q_table": "{qs}"}}"#),
    ));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&q).unwrap()).unwrap();
    assert_eq!(saved["format"], "nandstack-qtable-v1");
    assert_eq!(saved["q"].as_array().unwrap().len(), 1296 * 9);
    assert_eq!(
        f(&trained, "manager_report.rl.states_visited"),
        saved["visits"]
            .as_array()
            .unwrap()
            .chunks(9)
            .filter(|r| r.iter().any(|x| x.as_u64().unwrap() > 0))
            .count() as f64
    );
    // Load it, frozen, on another workload: the final table is the loaded one.
    let extra = format!(r#", "rl": {{"load_q_table": "{qs}", "learn": false}}"#);
    let c = cfg("rl", "tpcc", 0.02, &extra)
        .replace(r#""report": {"#, r#""report": {"include_q_table": true, "#);
    let v = run(&c);
    assert_eq!(v["manager_report"]["rl"]["q_table_loaded"], true);
    assert_eq!(f(&v, "manager_report.rl.updates"), 0.0);
    assert_eq!(v["q_table"]["q"], saved["q"]);
    // A table of the wrong shape is a config error naming the key.
    std::fs::write(&q, r#"{"format": "nandstack-qtable-v1", "state_bins": [2], "actions": 9, "q": [], "visits": []}"#).unwrap();
    let e = run_hybrid_json(
        &cfg("rl", "pc", 0.01, &extra),
        None,
        false,
        &mut |_, _, _| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("manager.rl.load_q_table"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `pretrain` is exactly the manual chain: each pre-training workload learned on a fresh device with
/// its documented seed, the table saved and loaded into the next, the measured run with the config's seed.
#[test]
fn pretrain_chain_equals_the_manual_save_load_chain() {
    use nandstack_sim::hybrid_run::pretrain_seed;
    let dir = std::env::temp_dir().join(format!("nandstack-hybrid-pre-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (q1, q2) = (dir.join("q1.json"), dir.join("q2.json"));
    let (q1s, q2s) = (q1.display().to_string(), q2.display().to_string());
    let seed = 7u64;
    let with_seed = |c: String, s: u64| c.replacen('{', &format!(r#"{{"seed": {s}, "#), 1);
    // Manual chain: pc then phone (each learning, saving), then tpcc with the table loaded.
    run(&with_seed(
        cfg(
            "rl",
            "pc",
            0.02,
            &format!(r#", "rl": {{"save_q_table": "{q1s}"}}"#),
        ),
        pretrain_seed(seed, 0),
    ));
    run(&with_seed(
        cfg(
            "rl",
            "phone",
            0.02,
            &format!(r#", "rl": {{"load_q_table": "{q1s}", "save_q_table": "{q2s}"}}"#),
        ),
        pretrain_seed(seed, 1),
    ));
    let manual = run(&with_seed(
        cfg(
            "rl",
            "tpcc",
            0.02,
            &format!(r#", "rl": {{"load_q_table": "{q2s}"}}"#),
        ),
        seed,
    ));
    // The same in one config.
    let pre = r#""pretrain": [{"standin": {"name": "pc", "scale": 0.02}},
                               {"standin": {"name": "phone", "scale": 0.02}}], "#;
    let chained = run(&with_seed(
        cfg("rl", "tpcc", 0.02, "").replacen('{', &format!("{{{pre}"), 1),
        seed,
    ));
    assert_eq!(chained["manager_report"]["rl"]["q_table_loaded"], true);
    let lines = chained["pretraining"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["workload"], "pc");
    assert_eq!(lines[1]["workload"], "phone");
    assert_eq!(lines[1]["seed"].as_u64(), Some(pretrain_seed(seed, 1)));
    assert!(f(&lines[0], "rl_steps") > 0.0 && f(&lines[1], "rl_states_visited") > 0.0);
    for key in [
        "write_throughput_mib_per_s",
        "waf",
        "write_cost_ns",
        "cost_breakdown",
        "series",
        "manager_report",
        "slc",
    ] {
        assert_eq!(
            chained[key], manual[key],
            "{key} differs from the manual chain"
        );
    }
    // Without pre-training the agent behaves differently (the chain did something).
    let fresh = run(&with_seed(cfg("rl", "tpcc", 0.02, ""), seed));
    assert_ne!(fresh["manager_report"], chained["manager_report"]);
    assert_eq!(fresh["pretraining"].as_array().unwrap().len(), 0);
    // Pre-training is for the RL manager only, and each workload is checked with its index in the key.
    let e = run_hybrid_json(
        &cfg("dwa", "tpcc", 0.02, "").replacen('{', &format!("{{{pre}"), 1),
        None,
        false,
        &mut |_, _, _| true,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("pretrain") && e.to_string().contains("rl"),
        "{e}"
    );
    let bad = r#""pretrain": [{"standin": {"name": "pc", "scale": 9}}], "#;
    let e = run_hybrid_json(
        &cfg("rl", "tpcc", 0.02, "").replacen('{', &format!("{{{bad}"), 1),
        None,
        false,
        &mut |_, _, _| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("pretrain[0].standin.scale"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A small, nearly full device at the lowest QLC GC threshold: GC starts with one erased block for its
/// own destination and every manager runs to the end with verification on (found by fuzzing the config:
/// at threshold 1, now rejected, GC had no block to move data into and the device reported itself full).
#[test]
fn nearly_full_small_device_at_the_lowest_gc_threshold() {
    for kind in ["qlc_only", "static", "dwa", "ust", "rl"] {
        let c = format!(
            r#"{{"device": {{"total_blocks": 200, "page_bytes": 8192, "qlc_pages_per_block": 16,
                 "slc_pages_per_block": 5, "over_provisioning": 0.25, "qlc_free_threshold_blocks": 2,
                 "slc_free_threshold_blocks": 1}},
                "manager": {{"kind": "{kind}"}}, "precondition": {{"fill_fraction": 0.9}},
                "workload": {{"standin": {{"name": "linkbench", "scale": 0.0005}}}},
                "report": {{"sample_every_bytes": 1048576}}}}"#
        );
        let v = run_verify(&c);
        assert!(f(&v, "verify.invariant_checks") > 0.0, "{kind}");
        assert!(f(&v, "ftl.qlc_gc_victims") > 0.0, "{kind}: QLC GC ran");
    }
}

#[test]
fn trace_replay_verifies_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/block/mqsim_tpcc_small.trace");
    if !path.exists() {
        println!("skipping: {} not found", path.display());
        return;
    }
    for m in ["rl", "ust"] {
        let c = format!(
            r#"{{"device": {{"page_bytes": 4096}}, "manager": {{"kind": "{m}", "rl": {{"step_slc_blocks": 1}}}},
                "workload": {{"trace": {{"path": "{}", "format": "mqsim", "repeat": 2}}}}}}"#,
            path.display()
        );
        let v = run_verify(&c);
        assert_eq!(v["workload"]["kind"], "trace");
        assert!(
            f(&v, "workload.read_requests") > 0.0 && f(&v, "verify.reads_checked") > 0.0,
            "{m}"
        );
        assert!(f(&v, "waf") > 0.0 && f(&v, "read_cost_ns") > 0.0);
    }
}

/// The direction of the paper's headline that this model shows robustly (docs/hybrid.md): on the PC
/// stand-in (small, hot writes), RL and DWA beat QLC-only on write throughput, and RL's WAF is below
/// UST's (UST sends every write to SLC first). What the model does NOT show robustly — RL above UST on
/// throughput, RL above DWA on every seed — is not asserted.
#[test]
fn rl_direction_on_the_pc_standin() {
    let tput = |v: &Value| f(v, "write_throughput_mib_per_s");
    let base = run(&cfg("qlc_only", "pc", 0.1, ""));
    let dwa = run(&cfg("dwa", "pc", 0.1, ""));
    let ust = run(&cfg("ust", "pc", 0.1, ""));
    let rl = run(&cfg("rl", "pc", 0.1, ""));
    assert!(
        tput(&dwa) > 1.05 * tput(&base),
        "DWA {} vs QLC-only {}",
        tput(&dwa),
        tput(&base)
    );
    assert!(
        tput(&rl) > 1.05 * tput(&base),
        "RL {} vs QLC-only {}",
        tput(&rl),
        tput(&base)
    );
    assert!(
        f(&rl, "waf") < f(&ust, "waf"),
        "RL WAF {} vs UST {}",
        f(&rl, "waf"),
        f(&ust, "waf")
    );
    assert!(tput(&ust) > tput(&base));
}

/// Manual comparison table (not a test): `cargo test --release -p nandstack-sim --test hybrid -- --ignored --nocapture table`
#[test]
#[ignore]
fn table() {
    let scale: f64 = std::env::var("HYBRID_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.25);
    let page: u32 = std::env::var("HYBRID_PAGE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4096);
    let names: Vec<String> = std::env::var("HYBRID_NAMES")
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|_| {
            ["pc", "phone", "tpcc", "oltp", "linkbench", "ycsb_a"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        });
    let extra = std::env::var("HYBRID_RL").unwrap_or_default();
    let fill: f64 = std::env::var("HYBRID_FILL")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0);
    let seed: u64 = std::env::var("HYBRID_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(42);
    for name in &names {
        let mut base = 0.0;
        for m in ["qlc_only", "static", "dwa", "ust", "rl"] {
            let rl = if m == "rl" {
                extra.clone()
            } else {
                String::new()
            };
            let cfg = format!(
                r#"{{"seed": {seed}, "precondition": {{"fill_fraction": {fill}}}, "device": {{"page_bytes": {page}}}, "manager": {{"kind": "{m}" {rl}}},
                   "workload": {{"standin": {{"name": "{name}", "scale": {scale}}}}}}}"#
            );
            let t = std::time::Instant::now();
            let v = run(&cfg);
            let tp = v["write_throughput_mib_per_s"].as_f64().unwrap();
            if m == "qlc_only" {
                base = tp;
            }
            let f = &v["cost_fraction"];
            println!(
                "{name:10} {m:9} tput {tp:8.2} norm {:5.2} waf {:5.2} slc_mean {:7.1} theta {:>8} | host_slc {:.2} host_qlc {:.2} s2q {:.2} q2q {:.2} s2s {:.2} | {:.1}s",
                tp / base, v["waf"].as_f64().unwrap(), v["slc"]["mean_blocks"].as_f64().unwrap(),
                v["slc"]["final_theta_bytes"].to_string(),
                f["host_to_slc"].as_f64().unwrap(), f["host_to_qlc"].as_f64().unwrap(), f["slc_to_qlc"].as_f64().unwrap(),
                f["qlc_to_qlc"].as_f64().unwrap(), f["slc_to_slc"].as_f64().unwrap(), t.elapsed().as_secs_f64()
            );
        }
    }
}

/// Manual: print one report. HYBRID_CFG='{"...": ...}'
#[test]
#[ignore]
fn one() {
    let cfg = std::env::var("HYBRID_CFG").unwrap();
    let mut v = run(&cfg);
    v["series"] = Value::Null;
    println!("{}", serde_json::to_string_pretty(&v).unwrap());
}

/// Manual: print the series of one run. HYBRID_CFG='{...}'
#[test]
#[ignore]
fn series() {
    let v = run(&std::env::var("HYBRID_CFG").unwrap());
    for s in v["series"].as_array().unwrap() {
        println!(
            "{:>8} MiB slc {:>5} used {:>5} theta {:>8} u {:.3} waf {:.2} tput {:.2}",
            s["host_write_bytes"].as_u64().unwrap() >> 20,
            s["slc_blocks"],
            s["slc_used_blocks"],
            s["theta_bytes"].to_string(),
            s["utilization"].as_f64().unwrap(),
            s["waf_cumulative"].as_f64().unwrap(),
            s["throughput_interval_mib_per_s"].as_f64().unwrap()
        );
    }
    println!("{}", serde_json::to_string(&v["manager_report"]).unwrap());
}

/// Manual: RL parameter sweep. HYBRID_SWEEP='[["alpha",0.1],...]' is not parsed; edit the lists below.
#[test]
#[ignore]
fn sweep() {
    let names = ["pc", "phone", "tpcc", "oltp", "linkbench", "ycsb_a"];
    let base: Vec<f64> = names.iter().map(|n| {
        let cfg = format!(r#"{{"device": {{"page_bytes": 4096}}, "manager": {{"kind": "qlc_only"}}, "workload": {{"standin": {{"name": "{n}", "scale": 0.25}}}}}}"#);
        run(&cfg)["write_throughput_mib_per_s"].as_f64().unwrap()
    }).collect();
    let variants: Vec<String> = std::env::var("HYBRID_VARIANTS")
        .unwrap()
        .split(';')
        .map(String::from)
        .collect();
    for v in &variants {
        let mut norm = Vec::new();
        let mut wafs = Vec::new();
        for (i, n) in names.iter().enumerate() {
            for seed in [1u64, 2, 3] {
                let cfg = format!(
                    r#"{{"seed": {seed}, "device": {{"page_bytes": 4096}}, "manager": {{"kind": "rl", "rl": {{ {v} }}}}, "workload": {{"standin": {{"name": "{n}", "scale": 0.25}}}}}}"#
                );
                let r = run(&cfg);
                norm.push(r["write_throughput_mib_per_s"].as_f64().unwrap() / base[i]);
                wafs.push(r["waf"].as_f64().unwrap());
            }
        }
        let per: Vec<String> = norm
            .chunks(3)
            .map(|c| format!("{:.2}", c.iter().sum::<f64>() / 3.0))
            .collect();
        println!(
            "{v:50} mean norm {:.3} mean waf {:.3} | {}",
            norm.iter().sum::<f64>() / norm.len() as f64,
            wafs.iter().sum::<f64>() / wafs.len() as f64,
            per.join(" ")
        );
    }
}

/// Manual: the docs/hybrid.md tables (normalised throughput, WAF, cost split; mean over seeds 1-3).
/// `cargo test --release -p nandstack-sim --test hybrid -- --ignored --nocapture docs_tables`
/// (HYBRID_SCALE / HYBRID_PAGE / HYBRID_FILL / HYBRID_SEEDS as for `table`).
#[test]
#[ignore]
fn docs_tables() {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let (scale, page, fill) = (
        env("HYBRID_SCALE", "0.25"),
        env("HYBRID_PAGE", "4096"),
        env("HYBRID_FILL", "0"),
    );
    let seeds: Vec<u64> = env("HYBRID_SEEDS", "1,2,3")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let names = ["pc", "phone", "tpcc", "oltp", "linkbench", "ycsb_a"];
    let managers = ["qlc_only", "static", "dwa", "ust", "rl"];
    let mut norm = vec![vec![0.0; managers.len()]; names.len()];
    let mut waf = norm.clone();
    let mut split = vec![vec![[0.0; 5]; managers.len()]; names.len()];
    for (i, n) in names.iter().enumerate() {
        for &seed in &seeds {
            let mut base = 0.0;
            for (j, m) in managers.iter().enumerate() {
                let c = format!(
                    r#"{{"seed": {seed}, "precondition": {{"fill_fraction": {fill}}}, "device": {{"page_bytes": {page}}},
                        "manager": {{"kind": "{m}"}}, "workload": {{"standin": {{"name": "{n}", "scale": {scale}}}}}}}"#
                );
                let v = run(&c);
                let t = f(&v, "write_throughput_mib_per_s");
                if j == 0 {
                    base = t;
                }
                norm[i][j] += t / base / seeds.len() as f64;
                waf[i][j] += f(&v, "waf") / seeds.len() as f64;
                for (k, kind) in KINDS.iter().enumerate() {
                    split[i][j][k] += f(&v["cost_breakdown"][kind], "ns")
                        / f(&v, "write_cost_ns")
                        / seeds.len() as f64;
                }
            }
        }
    }
    println!("| workload | {} |", managers.join(" | "));
    for (i, n) in names.iter().enumerate() {
        let cells: Vec<String> = (0..managers.len())
            .map(|j| format!("{:.2} / {:.2}", norm[i][j], waf[i][j]))
            .collect();
        println!("| {n} | {} |", cells.join(" | "));
    }
    let mean =
        |m: &Vec<Vec<f64>>, j: usize| m.iter().map(|r| r[j]).sum::<f64>() / names.len() as f64;
    let cells: Vec<String> = (0..managers.len())
        .map(|j| format!("{:.2} / {:.2}", mean(&norm, j), mean(&waf, j)))
        .collect();
    println!("| mean | {} |", cells.join(" | "));
    println!("\ncost split (share of each manager's own write cost):");
    for (i, n) in names.iter().enumerate() {
        for (j, m) in managers.iter().enumerate() {
            let s = split[i][j];
            let t: f64 = s.iter().sum();
            let p: Vec<String> = s.iter().map(|x| format!("{:.2}", x / t)).collect();
            println!("| {n} | {m} | {} |", p.join(" | "));
        }
    }
}

/// Manual: Fig. 8 — pre-train on PC, Phone, YCSB-A, LinkBench (chained Q-table), then run TPC-C and OLTP
/// with the pre-trained and with an untrained agent.
#[test]
#[ignore]
fn docs_pretraining() {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let (scale, page) = (env("HYBRID_SCALE", "0.25"), env("HYBRID_PAGE", "4096"));
    let dir = std::env::temp_dir().join(format!("nandstack-pretrain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let q = dir.join("q.json").display().to_string();
    for seed in [1u64, 2, 3] {
        let mut load = String::new();
        for n in ["pc", "phone", "ycsb_a", "linkbench"] {
            let c = format!(
                r#"{{"seed": {seed}, "device": {{"page_bytes": {page}}}, "manager": {{"kind": "rl", "rl": {{ {load} "save_q_table": "{q}"}}}},
                    "workload": {{"standin": {{"name": "{n}", "scale": {scale}}}}}}}"#
            );
            run(&c);
            load = format!(r#""load_q_table": "{q}","#);
        }
        for n in ["tpcc", "oltp"] {
            let mut t = [0.0; 2];
            for (k, l) in [String::new(), load.clone()].iter().enumerate() {
                let c = format!(
                    r#"{{"seed": {seed}, "device": {{"page_bytes": {page}}}, "manager": {{"kind": "rl", "rl": {{ {} "learn": true}}}},
                        "workload": {{"standin": {{"name": "{n}", "scale": {scale}}}}}}}"#,
                    l
                );
                t[k] = f(&run(&c), "write_throughput_mib_per_s");
            }
            println!(
                "seed {seed} {n:5}: untrained {:.3} MiB/s, pre-trained {:.3} MiB/s ({:+.1}%)",
                t[0],
                t[1],
                (t[1] / t[0] - 1.0) * 100.0
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn default_config_and_schema_are_complete() {
    use nandstack_sim::hybrid_run::{
        hybrid_config_schema_json, hybrid_default_config_json, HybridRunConfig,
    };
    let d = hybrid_default_config_json();
    let back = HybridRunConfig::from_json(&d).unwrap();
    assert_eq!(
        serde_json::to_string_pretty(&back).unwrap(),
        d,
        "the default round-trips"
    );
    let v: Value = serde_json::from_str(&d).unwrap();
    assert_eq!(v["manager"]["kind"], "rl");
    assert_eq!(v["workload"]["standin"]["name"], "pc");
    let schema = hybrid_config_schema_json();
    for key in [
        "sample_every_bytes",
        "fill_fraction",
        "theta_levels_bytes",
        "max_slc_per_logical_block",
        "qlc_program_us",
    ] {
        assert!(schema.contains(key), "{key} missing from the schema");
    }
}

#[test]
fn example_configs_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/hybrid");
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let text = std::fs::read_to_string(p).unwrap();
        nandstack_sim::hybrid_run::HybridRunConfig::from_json(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        n += 1;
    }
    assert!(n >= 5, "{n} example configs");
}

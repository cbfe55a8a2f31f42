//! Bad input gives clear errors naming the key and the reason.

use serde_json::json;

use crate::{base, err, memtouch, one, set};

#[test]
fn unknown_keys_are_rejected_with_their_path() {
    let mut w = memtouch(16, 1, "uniform", 0, 1);
    w["bogus"] = json!(1);
    let e = err(&one(100, w));
    assert!(
        e.contains("bogus") && e.contains("workload.processes") && e.contains("[0].workload"),
        "{e}"
    );
    let mut c = one(100, memtouch(16, 1, "uniform", 0, 1));
    set(&mut c, &["host", "swap", "sizemib"], json!(1));
    assert!(err(&c).contains("sizemib"));
    let e = err(&one(100, json!({"type": "no_such_workload"})));
    assert!(e.contains("no_such_workload"), "{e}");
}

#[test]
fn a_working_set_larger_than_ram_plus_swap_is_refused() {
    let mut c = one(1024, memtouch(100_000, 10, "uniform", 100, 1));
    set(&mut c, &["host", "swap", "size_mib"], json!(64));
    let e = err(&c);
    assert!(e.contains("larger than") && e.contains("swap"), "{e}");
    // Globally too: no cgroup, 32 MiB of RAM and 16 MiB of swap for 100 MiB.
    let mut c = base();
    set(&mut c, &["host", "ram_mib"], json!(32));
    set(&mut c, &["host", "swap", "size_mib"], json!(16));
    set(
        &mut c,
        &["workload", "processes"],
        json!([{"workload": memtouch(25_600, 10, "uniform", 100, 1)}]),
    );
    let e = err(&c);
    assert!(e.contains("larger than") && e.contains("root"), "{e}");
}

#[test]
fn running_out_of_memory_at_run_time_is_an_error_not_a_panic() {
    // A trace's working set is unknown before the run: 40 MiB of writes, 4 MiB limit, 8 MiB swap.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.nsref");
    let mut text = String::from("# nsref 1 pages=10240\n");
    for p in 0..10240 {
        text.push_str(&format!("W {p}\n"));
    }
    std::fs::write(&path, text).unwrap();
    let mut c = one(
        1024,
        json!({"type": "trace", "path": path.display().to_string()}),
    );
    set(&mut c, &["host", "swap", "size_mib"], json!(8));
    let e = err(&c);
    assert!(e.contains("out of memory"), "{e}");
}

#[test]
fn partitions_must_fit_the_device() {
    let mut c = one(1024, memtouch(16, 1, "uniform", 0, 1));
    set(&mut c, &["host", "swap", "size_mib"], json!(100_000));
    let e = err(&c);
    assert!(
        e.contains("host.swap") && e.contains("outside the device"),
        "{e}"
    );
    set(&mut c, &["host", "swap", "size_mib"], json!(64));
    set(&mut c, &["host", "swap", "offset_mib"], json!(480));
    assert!(err(&c).contains("outside the device"));
}

#[test]
fn references_between_sections_and_ranges_are_checked() {
    let mut c = one(1024, memtouch(16, 1, "uniform", 0, 1));
    c["workload"]["processes"][0]["cgroup"] = json!("nope");
    assert!(err(&c).contains("no cgroup named `nope`"));
    let mut c = one(1024, memtouch(16, 1, "uniform", 101, 1));
    assert!(err(&c).contains("write_pct"));
    c["workload"]["processes"][0]["workload"]["write_pct"] = json!(10);
    set(&mut c, &["host", "swap", "cluster_slots"], json!(300));
    assert!(err(&c).contains("cluster_slots"));
    let mut c = base();
    let e = err(&c);
    assert!(
        e.contains("workload.processes") && e.contains("is required"),
        "{e}"
    );
    // The host's own ranges (checked once the workload section is whole).
    c = one(1024, memtouch(16, 1, "uniform", 0, 1));
    set(&mut c, &["host", "swappiness"], json!(201));
    assert!(err(&c).contains("swappiness"));
}

#[test]
fn without_swap_anonymous_memory_must_fit() {
    // Fits: no swap I/O at all.
    let mut c = one(
        2048,
        json!({"type": "pmbench", "working_set_mib": 6, "references": 20000}),
    );
    set(&mut c, &["host", "swap", "size_mib"], json!(0));
    let r = crate::run_report(&c, true);
    assert_eq!(r["swap"]["pswpout"], 0);
    assert_eq!(r["swap"]["slots"], 0);
    // Does not fit: refused before the run.
    let mut c = one(1024, memtouch(2048, 10, "uniform", 100, 1));
    set(&mut c, &["host", "swap", "size_mib"], json!(0));
    let e = err(&c);
    assert!(e.contains("larger than"), "{e}");
}

#[test]
fn a_loop_workers_packing_must_be_probabilities_and_times() {
    let mut c = one(100, memtouch(16, 1, "uniform", 0, 1));
    let lo = |packing: serde_json::Value| json!({"kind": "loop", "packing": packing});
    set(
        &mut c,
        &["host", "swap", "backend"],
        lo(json!({"stay": 1.5})),
    );
    let e = err(&c);
    assert!(
        e.contains("host.swap.backend.packing") && e.contains("stay"),
        "{e}"
    );
    set(
        &mut c,
        &["host", "swap", "backend"],
        lo(json!({"tick_us": 0})),
    );
    assert!(err(&c).contains("tick_us"));
    set(
        &mut c,
        &["host", "swap", "backend"],
        lo(json!({"stays": 0.5})),
    );
    let e = err(&c);
    assert!(e.contains("stays") && e.contains("enter_near_idle"), "{e}");
}

#[test]
fn a_queue_depth_of_zero_is_refused_by_name() {
    let mut c = one(1024, memtouch(16, 1, "uniform", 0, 1));
    set(&mut c, &["host", "block", "queue_depth"], json!(0));
    let e = err(&c);
    assert!(
        e.contains("host.block.queue_depth") && e.contains('0'),
        "{e}"
    );
    set(&mut c, &["host", "block", "queue_depth"], json!(70_000));
    assert!(err(&c).contains("host.block.queue_depth"));
}

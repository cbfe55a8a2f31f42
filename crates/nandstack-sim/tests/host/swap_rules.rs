//! Swap-layer rules pinned one by one: the `vm_swap_full` 50% cutoff, whole-cluster and fine-grained
//! discard, readahead windows, the slot cache's batched frees, clean swap-cache eviction, blk-throttle.

use serde_json::{json, Value};

use crate::{base, memtouch, one, run_report, set};

/// A 3000-page read-only working set (after the fill) in a 1024-page cgroup with 12 MiB (3071 slots)
/// of swap: after the fill about 1980 slots (65%) are used; every page fits in swap even if each keeps
/// its slot.
fn half_rule(full_ratio: f64) -> serde_json::Value {
    let mut c = one(1024, memtouch(3000, 20_000, "uniform", 0, 5));
    set(&mut c, &["host", "swap", "size_mib"], json!(12));
    set(&mut c, &["host", "swap", "full_ratio"], json!(full_ratio));
    run_report(&c, true)
}

#[test]
fn swap_cache_is_dropped_only_when_swap_is_more_than_half_full() {
    let full = half_rule(0.5);
    assert!(
        full["swap"]["swapcache_dropped_when_full"]
            .as_u64()
            .unwrap()
            > 1000,
        "{}",
        full["swap"]
    );
    // Dropped copies make pages dirty: they are written again when evicted.
    assert!(full["swap"]["pswpout"].as_u64().unwrap() > 3000 + 1000);
    let roomy = half_rule(1.0);
    assert_eq!(roomy["swap"]["swapcache_dropped_when_full"], 0);
    // Below the cutoff a read fault keeps the slot, so evicting the clean page writes nothing:
    // every page is written to swap at most once.
    assert!(
        roomy["swap"]["pswpout"].as_u64().unwrap() <= 3000,
        "{}",
        roomy["swap"]
    );
    assert!(roomy["swap"]["pswpin"].as_u64().unwrap() > 5000);
}

fn discard_run(mode: &str) -> serde_json::Value {
    // Sequential rewrites: write faults free slots in order, so clusters empty one after another.
    let mut c = one(2048, memtouch(4096, 12_288, "seq", 100, 1));
    set(&mut c, &["host", "swap", "cluster_slots"], json!(256));
    set(
        &mut c,
        &["host", "swap", "discard"],
        json!({"mode": mode, "slots": 8}),
    );
    run_report(&c, true)
}

#[test]
fn cluster_discard_discards_whole_emptied_clusters() {
    let r = discard_run("cluster");
    let n = r["swap"]["discard_requests"].as_u64().unwrap();
    assert!(n >= 10, "{}", r["swap"]);
    assert_eq!(r["swap"]["discard_pages"].as_u64().unwrap(), n * 256);
    assert_eq!(r["swap"]["discard_request_sizes"], json!({"0256": n}));
    let off = discard_run("off");
    assert_eq!(off["swap"]["discard_requests"], 0);
    let fine = discard_run("fine");
    let f = fine["swap"]["discard_requests"].as_u64().unwrap();
    assert!(f > n * 10, "fine {f} vs cluster {n}");
    assert_eq!(fine["swap"]["discard_request_sizes"], json!({"0008": f}));
    // The device saw the TRIMs.
    assert!(
        r["device"]["details"]["ftl"]["trimmed_units"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// The verified report of `c` run with `host.readahead` set to `ra`.
fn with_readahead(c: &mut Value, ra: Value) -> Value {
    set(c, &["host", "readahead"], ra);
    run_report(c, true)
}

#[test]
fn vma_readahead_reads_eight_page_windows_on_sequential_faults() {
    let mut c = one(2048, memtouch(4096, 8192, "seq", 0, 1));
    let r = with_readahead(&mut c, json!({"policy": "vma", "page_cluster": 3}));
    let mean = r["swap"]["read_request_pages_mean"].as_f64().unwrap();
    assert!(mean > 7.0, "{}", r["swap"]);
    assert!(r["swap"]["readahead_hits"].as_u64().unwrap() > 5000);
    let r = with_readahead(&mut c, json!({"policy": "off"}));
    assert_eq!(r["swap"]["read_request_pages_mean"], 1.0);
    let r = with_readahead(&mut c, json!({"policy": "cluster", "page_cluster": 2}));
    let mean = r["swap"]["read_request_pages_mean"].as_f64().unwrap();
    assert!(mean > 2.0 && mean <= 4.0, "{}", r["swap"]);
}

#[test]
fn random_faults_shrink_the_window_to_one_page() {
    let mut c = one(2048, memtouch(4096, 20_000, "uniform", 50, 2));
    let r = with_readahead(&mut c, json!({"policy": "vma", "page_cluster": 3}));
    let mean = r["swap"]["read_request_pages_mean"].as_f64().unwrap();
    assert!(mean < 1.1, "{}", r["swap"]);
}

#[test]
fn slot_cache_frees_in_batches() {
    let mut c = one(2048, memtouch(4096, 30_000, "uniform", 100, 4));
    set(&mut c, &["host", "swap", "slot_cache"], json!(64));
    let r = run_report(&c, true);
    assert!(r["swap"]["slot_cache_flushes"].as_u64().unwrap() > 50);
    assert!(r["swap"]["slot_cache_refills"].as_u64().unwrap() > 50);
}

#[test]
fn blk_throttle_limits_a_cgroups_swap_writes() {
    let mut c = base();
    set(
        &mut c,
        &["host", "cgroups"],
        json!([{"name": "slow", "limit_mib": 4, "swap_write_mib_per_s": 20.0},
               {"name": "fast", "limit_mib": 4}]),
    );
    let w = json!({"type": "vm_scalability", "size_mib": 8, "pattern": "seq", "write_ratio": 1.0, "passes": 2});
    set(
        &mut c,
        &["workload", "processes"],
        json!([{"cgroup": "slow", "workload": w}, {"cgroup": "fast", "workload": w}]),
    );
    let r = run_report(&c, true);
    let (slow, fast) = (&r["cgroups"][1], &r["cgroups"][2]);
    assert!(slow["throttle_delay_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(fast["throttle_delay_ms"], 0.0);
    let bytes = slow["pswpout"].as_f64().unwrap() * 4096.0;
    let end = r["processes"][0]["end_s"].as_f64().unwrap();
    // The throttled process cannot outrun its limit by more than the writes still queued at the end.
    assert!(
        end >= 0.8 * bytes / (20.0 * 1048576.0),
        "end {end} s for {bytes} B"
    );
    assert!(r["processes"][1]["end_s"].as_f64().unwrap() < end);
}

/// A write fault frees the page's swap slot only when the fault holds the sole reference besides the
/// swap cache's (`should_try_to_free_swap`). A page whose write ended on the loop worker's CPU waits
/// in that CPU's `lru_rotate` batch, which holds one more, and the fault's `lru_add_drain` empties
/// only the faulting CPU's batches: that fault keeps the slot, and the page's next eviction writes it
/// there again. With the device completing on the faulting CPU (the block backend) no page waits in
/// another CPU's batch, so every write fault on a swap-cache page frees its slot.
#[test]
fn a_write_fault_keeps_the_slot_of_a_page_waiting_in_a_remote_rotate_batch() {
    let run = |backend: serde_json::Value| {
        // Hot pages (80% of accesses on 20% of 4096) come back soon after their eviction.
        let mut c = one(2048, memtouch(4096, 40_000, "hot", 100, 3));
        set(&mut c, &["host", "cpus"], json!(2));
        set(&mut c, &["host", "swap", "backend"], backend);
        run_report(&c, true)
    };
    let remote = run(json!({"kind": "loop"}));
    let kept = remote["swap"]["slots_kept_batched"].as_u64().unwrap();
    let freed = remote["swap"]["slots_freed_on_fault"].as_u64().unwrap();
    assert!(kept > 0 && freed > 10 * kept, "{}", remote["swap"]);
    let local = run(json!({"kind": "block"}));
    assert_eq!(local["swap"]["slots_kept_batched"], 0, "{}", local["swap"]);
    assert!(local["swap"]["slots_freed_on_fault"].as_u64().unwrap() > 0);
}

/// `host.fault.swapin_write` under a random read/write workload, verified every 20,000 references:
/// `map_writable` is the default (the same run, byte for byte); `reuse_swap_page` frees slots at the
/// first write to a read swap-in, so more are freed on a fault than under `map_writable`; `cow_copy`
/// copies such pages instead (COW faults, which the anonymous-only workload has none of otherwise).
#[test]
fn swapin_write_modes_keep_every_invariant() {
    let run = |mode: Option<&str>| {
        let mut c = one(1024, memtouch(3000, 30_000, "hot", 30, 4));
        if let Some(m) = mode {
            set(&mut c, &["host", "fault"], json!({"swapin_write": m}));
        }
        let mut r = run_report(&c, true);
        r.as_object_mut()
            .unwrap()
            .remove("wall_references_per_second");
        r
    };
    let default = run(None);
    assert_eq!(run(Some("map_writable")), default);
    let reuse = run(Some("reuse_swap_page"));
    let freed = |r: &serde_json::Value| r["swap"]["slots_freed_on_fault"].as_u64().unwrap();
    assert!(
        freed(&reuse) > freed(&default),
        "{} vs {}",
        reuse["swap"],
        default["swap"]
    );
    let cow = run(Some("cow_copy"));
    assert_eq!(default["faults"]["cow"], 0, "{}", default["faults"]);
    assert!(
        cow["faults"]["cow"].as_u64().unwrap() > 0,
        "{}",
        cow["faults"]
    );
}

/// Two processes swapping on a timed device, at queue depth `qd` (`None`: the default, no limit).
fn queued_run(qd: Option<u32>) -> serde_json::Value {
    let mut c = base();
    set(&mut c, &["device", "timing", "enabled"], json!(true));
    set(
        &mut c,
        &["host", "cgroups"],
        json!([{"name": "a", "limit_mib": 4}, {"name": "b", "limit_mib": 4}]),
    );
    let w = json!({"type": "vm_scalability", "size_mib": 8, "pattern": "seq", "write_ratio": 0.5, "passes": 2});
    set(
        &mut c,
        &["workload", "processes"],
        json!([{"cgroup": "a", "workload": w}, {"cgroup": "b", "workload": w}]),
    );
    if let Some(d) = qd {
        set(&mut c, &["host", "block", "queue_depth"], json!(d));
    }
    let mut r = run_report(&c, true);
    r.as_object_mut()
        .unwrap()
        .remove("wall_references_per_second");
    r
}

/// The host block layer's queue depth: unset changes nothing (a depth no run reaches gives the same
/// report, queue section aside); at 1 (eMMC 5.0) requests wait for the one in flight, and the run's
/// processes end no earlier.
#[test]
fn queue_depth_one_makes_requests_wait_and_the_default_is_unlimited() {
    let free = queued_run(None);
    assert!(free.get("block_queue").is_none());
    let mut wide = queued_run(Some(65_536));
    assert_eq!(wide["block_queue"]["waited_requests"], 0);
    wide.as_object_mut().unwrap().remove("block_queue");
    assert_eq!(free, wide);
    let one = queued_run(Some(1));
    let q = &one["block_queue"];
    assert_eq!(q["depth"], 1);
    assert!(q["waited_requests"].as_u64().unwrap() > 0, "{q}");
    assert!(q["wait_ms"].as_f64().unwrap() > 0.0, "{q}");
    for p in 0..2 {
        let end = |r: &serde_json::Value| r["processes"][p]["end_s"].as_f64().unwrap();
        assert!(end(&one) >= end(&free), "process {p}");
    }
}

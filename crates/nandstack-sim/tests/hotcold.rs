//! The hot/cold GC family (SUP-GC, MBF, GC-aware buffer) and the firmware cost model.

use nandstack_sim::{run_toml, Report, RunOptions};

/// 2 channels × 2 dies-worth of planes, 16 KiB pages, steady state on a filled device.
const DEV: &str = "[device.geometry]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\n\
    blocks_per_plane = 256\npages_per_block = 64\npage_size_bytes = 16384\n[device.timing]\nenabled = false\n\
    [precondition]\nwarmup_capacity_multiples = 2.0\n";

fn run(placement: &str, workload: &str) -> Report {
    let cfg = format!("{DEV}[device.ftl]\nover_provisioning = 0.12\nplacement = {placement}\n[workload]\n{workload}\nrequests = 300000\n");
    run_toml(&cfg, &RunOptions::default()).unwrap()
}

/// Zipf(1.2): strongly skewed with a smooth popularity curve. (On a two-level hot/cold mix, host/GC
/// separation alone barely changes greedy's WAF — see docs/sup-gc.md — so the direction is asserted here.)
const SKEWED: &str = "pattern = \"zipf\"\nzipf_theta = 1.2";
const UNIFORM: &str = "pattern = \"uniform\"";

#[test]
fn sup_gc_keeps_host_and_gc_data_apart() {
    let r = run("{ policy = \"sup_gc\" }", SKEWED);
    let c = r.device_num("streams");
    assert_eq!(c, 2.0);
    // Every host unit went to stream 0 (hot) blocks and every migrated unit to stream 1 (cold) blocks.
    let by_stream = &r.blk().units_by_stream;
    let upp = r.device_num("units_per_page");
    assert_eq!(
        by_stream[0] as f64 / upp,
        r.blk().flash_program_pages_by_cause.host
    );
    assert_eq!(
        by_stream[1] as f64 / upp,
        r.blk().flash_program_pages_by_cause.gc
    );
    assert_eq!(by_stream[1], r.gc_migrated_pages);
}

#[test]
fn sup_gc_migrates_less_than_greedy_on_skewed_and_no_worse_on_uniform() {
    let greedy = run("{ policy = \"single\" }", SKEWED);
    let sup = run("{ policy = \"sup_gc\" }", SKEWED);
    eprintln!(
        "skewed: greedy WAF {:?} moves {}, SUP-GC WAF {:?} moves {}",
        greedy.waf, greedy.gc_migrated_pages, sup.waf, sup.gc_migrated_pages
    );
    // Separation must pay off on a skewed workload: at least 1% fewer migrations (measured: about 2%).
    assert!((sup.gc_migrated_pages as f64) < 0.99 * greedy.gc_migrated_pages as f64);
    let greedy_u = run("{ policy = \"single\" }", UNIFORM);
    let sup_u = run("{ policy = \"sup_gc\" }", UNIFORM);
    eprintln!(
        "uniform: greedy WAF {:?}, SUP-GC WAF {:?}",
        greedy_u.waf, sup_u.waf
    );
    // Uniform random has nothing to separate: SUP-GC may not be worse than greedy by more than 5% WAF.
    assert!(sup_u.waf.unwrap() <= 1.05 * greedy_u.waf.unwrap());
}

#[test]
fn mbf_separates_hot_data_on_a_skewed_workload() {
    let greedy = run("{ policy = \"single\" }", SKEWED);
    let mbf = run("{ policy = \"mbf\" }", SKEWED);
    eprintln!(
        "skewed: greedy moves {}, MBF moves {}",
        greedy.gc_migrated_pages, mbf.gc_migrated_pages
    );
    eprintln!("MBF units by stream {:?}", mbf.blk().units_by_stream);
    // Both streams are used, and the identification pays off against single-stream greedy.
    assert!(mbf.blk().units_by_stream[0] > 0 && mbf.blk().units_by_stream[1] > 0);
    assert!(mbf.gc_migrated_pages < greedy.gc_migrated_pages);
    // On uniform traffic over a large space nothing is re-written within a few windows: what lands in the
    // hot stream are Bloom false positives (2 hashes, 1,024 bit-sets per 2,048-bit filter: about 15% per
    // filter, ~28% for "current or previous window"), so the hot share stays well below half.
    let uni = run("{ policy = \"mbf\" }", UNIFORM);
    let share = uni.blk().units_by_stream[0] as f64
        / (uni.blk().units_by_stream[0] + uni.blk().units_by_stream[1]) as f64;
    assert!(share < 0.35, "{:?}", uni.blk().units_by_stream);
}

/// One die, reads of never-written data: no flash work, so throughput is set by the controller CPU alone.
fn cpu_bound(placement: &str, firmware: &str) -> Report {
    let cfg = format!(
        "[device.geometry]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 64\n\
         pages_per_block = 32\npage_size_bytes = 4096\n[device.ftl]\nover_provisioning = 0.5\nplacement = {placement}\n\
         [device.controller.firmware]\n{firmware}\n[workload.io]\nqueue_depth = 8\n[precondition]\nfill_fraction = 0.0\n\
         warmup_capacity_multiples = 0.0\n[workload]\npattern = \"uniform\"\nread_fraction = 1.0\nrequests = 20000\n"
    );
    run_toml(&cfg, &RunOptions::default()).unwrap()
}

#[test]
fn firmware_cost_limits_throughput_by_the_configured_amount() {
    // 10 µs per command: at most 100,000 commands per simulated second.
    let base = cpu_bound("{ policy = \"single\" }", "ns_per_request = 10000");
    assert!(
        (base.iops.unwrap() - 100_000.0).abs() / 100_000.0 < 0.001,
        "{:?}",
        base.iops
    );
    // Doubling the per-command cost halves throughput.
    let slow = cpu_bound("{ policy = \"single\" }", "ns_per_request = 20000");
    assert!((slow.iops.unwrap() / base.iops.unwrap() - 0.5).abs() < 0.001);
}

#[test]
fn mbf_hash_cost_shows_up_in_write_throughput() {
    let cfg = |placement: &str| {
        format!(
            "[device.geometry]\nchannels = 4\nchips_per_channel = 2\ndies_per_chip = 2\nplanes_per_die = 2\nblocks_per_plane = 64\n\
             pages_per_block = 64\npage_size_bytes = 4096\n[device.timing]\nprogram_us = 1.0\nread_us = 1.0\n\
             [device.ftl]\nover_provisioning = 0.5\nplacement = {placement}\n\
             [device.controller.firmware]\nns_per_request = 5000\n[workload.io]\nqueue_depth = 32\n[precondition]\nfill_fraction = 0.0\n\
             warmup_capacity_multiples = 0.0\n[workload]\npattern = \"uniform\"\nfootprint_fraction = 0.3\nrequests = 20000\n"
        )
    };
    let base = run_toml(&cfg("{ policy = \"single\" }"), &RunOptions::default()).unwrap();
    // MBF: 4 filters × 2 hashes to score + 2 to record = 10 hash operations per write at 25 ns = 250 ns,
    // i.e. 5% of the 5 µs per-command cost: throughput drops by 1 − 5000/5250 ≈ 4.8%.
    let mbf = run_toml(
        &cfg("{ policy = \"mbf\", ns_per_hash = 25 }"),
        &RunOptions::default(),
    )
    .unwrap();
    let drop = 1.0 - mbf.iops.unwrap() / base.iops.unwrap();
    eprintln!("MBF throughput drop {:.2}%", drop * 100.0);
    assert!(
        (drop - (1.0 - 5000.0 / 5250.0)).abs() < 0.005,
        "drop {drop}"
    );
    // SUP-GC costs what the baseline costs.
    let sup = run_toml(&cfg("{ policy = \"sup_gc\" }"), &RunOptions::default()).unwrap();
    assert_eq!(sup.iops, base.iops);
}

#[test]
fn gc_aware_buffer_prefers_dies_not_in_gc() {
    let cfg = |eviction: &str| {
        format!(
            "[device.geometry]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\nplanes_per_die = 1\nblocks_per_plane = 64\n\
             pages_per_block = 32\npage_size_bytes = 4096\n[device.ftl]\nover_provisioning = 0.15\n\
             [device.controller.write_buffer]\nbytes = 65536\neviction = \"{eviction}\"\ngc_aware_scan = 8\n\
             [precondition]\nwarmup_capacity_multiples = 1.0\n[workload]\npattern = \"uniform\"\nrequests = 30000\n"
        )
    };
    let lru = run_toml(
        &cfg("lru"),
        &RunOptions {
            seed: None,
            verify: true,
            ..Default::default()
        },
    )
    .unwrap();
    let aware = run_toml(
        &cfg("gc_aware"),
        &RunOptions {
            seed: None,
            verify: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(lru.blk().caches.write_buffer_gc_aware_skips, 0);
    assert!(
        aware.blk().caches.write_buffer_gc_aware_skips > 0,
        "GC-aware replacement never skipped a die in GC"
    );
    eprintln!(
        "p99 write latency: LRU {:?} GC-aware {:?}",
        lru.write_latency_us.map(|p| p.p99),
        aware.write_latency_us.map(|p| p.p99)
    );
}

/// The issue-12 setup: one plane of 1024 blocks × 64 × 4 KiB, OP 7%, device-scope GC, sequential fill,
/// 8× warm-up, 95% of the writes to 5% of the space, default GC schedule.
fn skewed_single_plane(placement: &str, victim: &str) -> f64 {
    let cfg = format!(
        "[device.geometry]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\n\
         blocks_per_plane = 1024\npages_per_block = 64\npage_size_bytes = 4096\n[device.timing]\nenabled = false\n\
         [device.ftl]\nover_provisioning = 0.07\nplacement = {{ policy = \"{placement}\" }}\n[device.ftl.gc]\nscope = \"device\"\n\
         victim = {victim}\n[precondition]\nwarmup_capacity_multiples = 8.0\n[workload]\npattern = \"hot_cold\"\n\
         hot_ops_fraction = 0.95\nhot_space_fraction = 0.05\nrequests = 500000\n"
    );
    run_toml(&cfg, &RunOptions::default()).unwrap().waf.unwrap()
}

#[test]
fn skewed_single_frontier_matches_independent_single_frontier_references() {
    // References computed outside nandstack on the same setup (issue 12): brute-force single-frontier
    // models with greedy ties oldest-first 9.41 … newest-first 9.86, cost-benefit 9.83, d-choices 9.56,
    // FIFO's two-class closed form 10.38; SUP-GC (host/GC split) 7.52 … 8.38.
    let within = |got: f64, lo: f64, hi: f64| got >= 0.97 * lo && got <= 1.03 * hi;
    let greedy = skewed_single_plane("single", "{ policy = \"greedy\" }");
    let newest = skewed_single_plane("single", "{ policy = \"greedy\", tie_break = \"newest\" }");
    let cb = skewed_single_plane("single", "{ policy = \"cost_benefit\" }");
    let dc = skewed_single_plane("single", "{ policy = \"d_choices\", d = 10 }");
    let fifo = skewed_single_plane("single", "{ policy = \"fifo\" }");
    let sup = skewed_single_plane("sup_gc", "{ policy = \"greedy\" }");
    eprintln!(
        "greedy {greedy:.3} (newest {newest:.3}), cost-benefit {cb:.3}, d-choices {dc:.3}, fifo {fifo:.3}, SUP-GC {sup:.3}"
    );
    assert!(within(greedy, 9.41, 9.86), "greedy {greedy}");
    assert!(within(newest, 9.41, 9.86), "greedy newest {newest}");
    assert!(within(cb, 9.83, 9.83), "cost-benefit {cb}");
    assert!(within(dc, 9.56, 9.56), "d-choices {dc}");
    assert!(within(fifo, 10.38, 10.38), "fifo {fifo}");
    assert!(within(sup, 7.52, 8.38), "SUP-GC {sup}");
    // The separation is the placement's alone: SUP-GC well below single-stream greedy.
    assert!(sup < 0.85 * greedy, "SUP-GC {sup} vs single {greedy}");
}

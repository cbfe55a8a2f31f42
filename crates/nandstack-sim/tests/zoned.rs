//! Block workloads on a zoned device through the host-side block layer (`[device.zoned.block_layer]`):
//! its GC is the block FTL's model moved into the host, so on the same media, spare space, thresholds and
//! victim policy its write amplification must match the block FTL's with a separate GC stream (one "block"
//! per zone) — an independent check of the layer (the block FTL is itself checked against brute-force
//! references). With verification, every read checks the per-LBA metadata the layer wrote.

use nandstack_sim::{run_toml, RunOptions};

/// The zn540-small media (64 zones of 16 × 66 pages of 16 KiB = 4,224 units) and, as a block SSD, one
/// plane of 64 blocks of 4,224 units; the same OP, GC watermarks (3 → 4 free) and greedy victims.
fn pair(pattern: &str, victim: &str) -> (String, String) {
    let workload = format!(
        "[workload]\nrequests = 150000\nread_fraction = 0.2\npattern = \"{pattern}\"\n\
         [precondition]\nfill_fraction = 1.0\nwarmup_capacity_multiples = 1.0\n"
    );
    let zoned = format!(
        "{workload}[device]\nkind = \"zoned\"\n[device.zoned.block_layer]\nover_provisioning = 0.2\n\
         gc_low_free_zones = 3\ngc_high_free_zones = 4\nvictim = {{ policy = \"{victim}\" }}\n"
    );
    let block = format!(
        "{workload}[device]\nkind = \"block\"\n[device.geometry]\nchannels = 1\nchips_per_channel = 1\n\
         dies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 64\npages_per_block = 4224\n\
         page_size_bytes = 4096\n[device.timing]\nenabled = false\n[device.ftl]\nover_provisioning = 0.2\n\
         placement = {{ policy = \"host_gc\" }}\n[device.ftl.gc]\nstart_free_blocks = 3\n\
         stop_free_blocks = 4\nburst = \"to_stop\"\nvictim = {{ policy = \"{victim}\" }}\n"
    );
    (zoned, block)
}

#[test]
fn block_layer_waf_matches_the_block_ftl_on_the_same_media() {
    for (pattern, victim) in [
        ("uniform", "greedy"),
        ("hot_cold", "greedy"),
        ("uniform", "fifo"),
    ] {
        let (zoned, block) = pair(pattern, victim);
        let z = run_toml(&zoned, &RunOptions::default()).unwrap();
        let b = run_toml(&block, &RunOptions::default()).unwrap();
        assert_eq!(z.device_num("logical_bytes"), b.device_num("logical_bytes"));
        assert_eq!(z.host_write_bytes, b.host_write_bytes);
        let (wz, wb) = (z.waf.unwrap(), b.waf.unwrap());
        assert!(wb > 1.5, "{pattern}/{victim}: GC ran ({wb})");
        assert!(
            (wz / wb - 1.0).abs() < 0.01,
            "{pattern}/{victim}: zoned block layer WAF {wz:.4} vs block FTL {wb:.4}"
        );
        // The layer's own figures: every migrated unit was read and rewritten, victims were reset.
        let layer = &z.device["block_layer"]["counters"];
        assert!(layer["gc_victim_zones"].as_u64().unwrap() > 0);
        assert_eq!(
            z.gc_migrated_pages,
            layer["gc_migrated_units"].as_u64().unwrap()
        );
        // Timing is on for the zoned device: latencies exist and GC shows in the write tail.
        let w = z.write_latency_us.as_ref().unwrap();
        assert!(w.p99 > w.p50, "{pattern}/{victim}");
    }
}

#[test]
fn block_layer_verifies_reads_and_trims_reset_empty_zones() {
    let (mut zoned, _) = pair("uniform", "greedy");
    zoned = zoned.replace(
        "read_fraction = 0.2",
        "read_fraction = 0.3\ntrim_fraction = 0.1",
    );
    let r = run_toml(
        &zoned,
        &RunOptions {
            verify: true,
            ..RunOptions::default()
        },
    )
    .unwrap();
    assert!(r.verified && r.host_trim_requests > 0 && r.host_read_requests > 0);
    // A sequential overwrite of everything leaves whole zones invalid: they are reset without GC.
    let seq = pair("sequential", "greedy")
        .0
        .replace("read_fraction = 0.2", "read_fraction = 0.0");
    let s = run_toml(&seq, &RunOptions::default()).unwrap();
    let c = &s.device["block_layer"]["counters"];
    assert!(c["empty_zone_resets"].as_u64().unwrap() > 10, "{c}");
    assert!(
        s.waf.unwrap() < 1.05,
        "sequential overwrite needs no migration: {:?}",
        s.waf
    );
}

/// The `host-znswap` preset end to end with verification: swap-outs are zone appends, the host GC
/// collects zones (its copies are device writes too), every swap-in checked its reverse map, and the
/// run is deterministic.
#[test]
fn the_host_znswap_preset_runs_with_verification() {
    let toml = nandstack_sim::presets::preset("host-znswap").unwrap().toml;
    let cfg = nandstack_sim::config::SimConfig::from_toml(toml).unwrap();
    let opts = nandstack_sim::RunOptions {
        verify: true,
        ..Default::default()
    };
    let r = nandstack_sim::run::run(cfg.clone(), &opts, &mut |_| true).unwrap();
    assert!(r.verified);
    assert_eq!(r.device["kind"], "zoned");
    let host = r.host.as_ref().unwrap();
    let b = &host["swap"]["backend"];
    assert_eq!(b["kind"], "znswap");
    let (out, gc) = (
        host["pswpout"].as_u64().unwrap(),
        b["gc"]["pages_written"].as_u64().unwrap(),
    );
    assert!(
        out > 100_000 && b["gc"]["victims"].as_u64().unwrap() > 5,
        "{b}"
    );
    // The device wrote exactly the swap-outs and the GC's copies.
    assert_eq!(r.host_write_bytes, (out + gc) * 4096);
    assert_eq!(b["append_pages"].as_u64().unwrap(), out);
    let waf = b["waf"].as_f64().unwrap();
    assert!((waf - (out + gc) as f64 / out as f64).abs() < 1e-12 && waf > 1.0);
    let again = nandstack_sim::run::run(cfg, &opts, &mut |_| true).unwrap();
    assert_eq!(again.host.as_ref().unwrap()["swap"]["backend"], *b);
}

/// Host programs on a zoned device need ZNSwap: Linux block swap is refused before anything runs.
#[test]
fn block_swap_on_a_zoned_device_is_refused_by_name() {
    let toml = nandstack_sim::presets::preset("host-znswap").unwrap().toml;
    let toml = toml
        .replace("kind = \"znswap\"", "kind = \"block\"")
        .replace("policy = { kind = \"per_core\" }\n", "");
    let cfg = nandstack_sim::config::SimConfig::from_toml(&toml).unwrap();
    let e = cfg.validate().unwrap_err().to_string();
    assert!(
        e.contains("host.swap.backend.kind") && e.contains("znswap"),
        "{e}"
    );
}

/// ZNSwap starts from empty zones: aging the zoned device under it is refused by name when the config
/// is checked (before anything runs), not left to fail later as a zone-protocol error.
#[test]
fn preconditioning_under_znswap_is_refused_by_name() {
    let toml = nandstack_sim::presets::preset("host-znswap").unwrap().toml;
    for key in ["fill_fraction = 0.5", "warmup_capacity_multiples = 1.0"] {
        let toml = format!("{toml}\n[precondition]\n{key}\n");
        let cfg = nandstack_sim::config::SimConfig::from_toml(&toml).unwrap();
        let e = cfg.validate().unwrap_err().to_string();
        assert!(
            e.contains("precondition") && e.contains("ZNSwap"),
            "{key}: {e}"
        );
        let e = nandstack_sim::run::run(cfg, &Default::default(), &mut |_| true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("precondition") && e.contains("ZNSwap"),
            "{key}: {e}"
        );
    }
    let cfg = nandstack_sim::config::SimConfig::from_toml(toml).unwrap();
    cfg.validate().expect("the preset itself is valid");
}

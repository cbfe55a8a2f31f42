//! Configuration (preset, derived sizes, every impossible value named), statistics and verification.

use super::*;

#[test]
fn the_zn540_small_preset_has_its_figures() {
    let p = ZonedConfig::zn540_small().resolve().unwrap();
    assert_eq!(p.geometry.planes(), 16);
    assert_eq!(p.blocks_per_zone, 16);
    assert_eq!(p.zones, 64);
    assert_eq!(p.zone_capacity_bytes, 16 * 66 * 16384); // 16.5 MiB
    assert_eq!(p.zone_size_bytes, 32 << 20);
    assert_eq!((p.max_open_zones, p.max_active_zones), (Some(14), Some(14)));
    // Capacity/size as the ZN540's 1077 MiB / 2048 MiB, within 0.01.
    let ratio = p.zone_capacity_bytes as f64 / p.zone_size_bytes as f64;
    assert!((ratio - 1077.0 / 2048.0).abs() < 0.011, "{ratio}");
    let d = ZonedSsd::with_params(p);
    assert_eq!(d.capacity_bytes(), 2 << 30);
    assert_eq!(d.kind(), crate::device::DeviceKind::Zoned);
    // The real drive's zone size is its 1077 MiB capacity rounded up to a power of two, as the default.
    assert_eq!((1077u64 << 20).next_power_of_two(), 2048 << 20);
}

#[test]
fn sizes_derive_from_blocks_or_capacity() {
    let block = 4 * 8192;
    let p = ZonedConfig {
        zone_capacity_bytes: Some(3 * block),
        ..small_cfg(0, 0)
    }
    .resolve()
    .unwrap();
    assert_eq!(p.blocks_per_zone, 3);
    assert_eq!(p.zones, 2); // 8 blocks ÷ 3
    assert_eq!(p.zone_size_bytes, 128 * 1024); // 96 KiB rounded up
    let p = ZonedConfig {
        blocks_per_zone: Some(1),
        zones: Some(5),
        zone_size_bytes: Some(40960),
        ..small_cfg(0, 0)
    }
    .resolve()
    .unwrap();
    assert_eq!(
        (p.zones, p.zone_capacity_bytes, p.zone_size_bytes),
        (5, 32768, 40960)
    );
    // A geometry preset of the block device works too.
    let p = ZonedConfig {
        preset: "diss".into(),
        ..ZonedConfig::default()
    }
    .resolve()
    .unwrap();
    assert_eq!(p.blocks_per_zone, 128);
    assert_eq!(p.timing.read_us, Some(4.0)); // the DISS preset's tR
}

#[test]
fn impossible_values_name_their_key() {
    let cases: Vec<(ZonedConfig, &str)> = vec![
        (
            ZonedConfig {
                preset: "nope".into(),
                ..small_cfg(0, 0)
            },
            "device.zoned.preset",
        ),
        (
            ZonedConfig {
                blocks_per_zone: Some(0),
                ..small_cfg(0, 0)
            },
            "device.zoned.blocks_per_zone",
        ),
        (
            ZonedConfig {
                blocks_per_zone: Some(9),
                ..small_cfg(0, 0)
            },
            "device.zoned.blocks_per_zone",
        ),
        (
            ZonedConfig {
                zone_capacity_bytes: Some(4096),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_capacity_bytes",
        ),
        (
            ZonedConfig {
                zone_capacity_bytes: Some(0),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_capacity_bytes",
        ),
        (
            ZonedConfig {
                zone_capacity_bytes: Some(9 * 32768),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_capacity_bytes",
        ),
        (
            ZonedConfig {
                blocks_per_zone: Some(2),
                zone_capacity_bytes: Some(32768),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_capacity_bytes",
        ),
        (
            ZonedConfig {
                zone_size_bytes: Some(32768),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_size_bytes",
        ),
        (
            ZonedConfig {
                zone_size_bytes: Some(65536 + 100),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_size_bytes",
        ),
        (
            ZonedConfig {
                zone_size_bytes: Some(1 << 41),
                ..small_cfg(0, 0)
            },
            "device.zoned.zone_size_bytes",
        ),
        (
            // 8 Mi one-page blocks, one per zone, zones of 1 TiB: 2^63 bytes.
            ZonedConfig {
                geometry: GeometryOverrides {
                    channels: Some(64),
                    chips_per_channel: Some(64),
                    dies_per_chip: Some(4),
                    planes_per_die: Some(4),
                    blocks_per_plane: Some(128),
                    pages_per_block: Some(1),
                    page_size_bytes: Some(4096),
                    cell_mode: None,
                },
                blocks_per_zone: Some(1),
                zone_size_bytes: Some(1 << 40),
                ..ZonedConfig::default()
            },
            "2^62-byte LBA space",
        ),
        (
            ZonedConfig {
                zones: Some(0),
                ..small_cfg(0, 0)
            },
            "device.zoned.zones",
        ),
        (
            ZonedConfig {
                zones: Some(5),
                ..small_cfg(0, 0)
            },
            "device.zoned.zones",
        ),
        (small_cfg(3, 2), "device.zoned.max_open_zones"),
        (
            ZonedConfig {
                striping_order: vec![crate::ftl::config::ParallelUnit::Plane; 4],
                ..small_cfg(0, 0)
            },
            "device.zoned.striping_order",
        ),
        (
            ZonedConfig {
                timing: crate::nand::TimingConfig {
                    read_us: Some(-1.0),
                    ..Default::default()
                },
                ..small_cfg(0, 0)
            },
            "device.timing.read_us",
        ),
        (
            ZonedConfig {
                geometry: GeometryOverrides {
                    channels: Some(0),
                    ..small_geometry()
                },
                ..small_cfg(0, 0)
            },
            "channels",
        ),
    ];
    for (cfg, key) in cases {
        let e = err(ZonedSsd::new(&cfg).map(|_| ()));
        assert!(e.contains(key), "expected `{key}` in `{e}`");
    }
    assert!(err(ZonedConfig {
        preset: "nope".into(),
        ..ZonedConfig::default()
    }
    .resolve())
    .contains("zn540-small"));
    // Unknown keys are errors; every documented key parses.
    let bad: std::result::Result<ZonedConfig, _> = serde_json::from_str(r#"{"zone_count": 3}"#);
    assert!(bad.unwrap_err().to_string().contains("zone_count"));
    let ok: ZonedConfig = serde_json::from_str(
        r#"{"preset": "zn540-small", "geometry": {"blocks_per_plane": 32}, "timing": {"program_us": 500},
            "blocks_per_zone": 8, "zone_capacity_bytes": 8650752, "zone_size_bytes": 16777216, "zones": 10,
            "max_open_zones": 4, "max_active_zones": 6, "finish_padding": "page", "flush": "retain",
            "cross_zone_reads": true, "striping_order": ["plane", "die", "chip", "channel"]}"#,
    )
    .unwrap();
    let p = ok.resolve().unwrap();
    assert_eq!(
        (p.blocks_per_zone, p.zones, p.max_open_zones),
        (8, 10, Some(4))
    );
    // No limit (0) on either side is allowed.
    assert_eq!(small_cfg(0, 3).resolve().unwrap().max_open_zones, None);
}

#[test]
fn stats_and_details_report_the_zoned_device() {
    let mut d = small(2, 3);
    write(&mut d, 0, 0, 0, 16).unwrap();
    write(&mut d, 0, 1, 0, 3).unwrap();
    open(&mut d, 2).unwrap();
    finish(&mut d, 1).unwrap();
    reset(&mut d, 0).unwrap();
    d.submit(Nanos(0), Command::read(65536, 4 * U)).unwrap();
    let s = d.stats();
    assert_eq!((s.host_write_requests, s.host_write_bytes), (2, 19 * U));
    assert_eq!((s.host_read_requests, s.host_read_bytes), (1, 4 * U));
    assert_eq!((s.gc_migrated_units, s.host_trim_requests), (0, 0));
    assert_eq!(s.flash_program_pages, 8 + 1 + 7); // zone 0; zone 1's host page and 7 finish pages
    assert_eq!(s.erase_count, 2);
    assert_eq!(s.page_size_bytes, 8192);
    let j = d.details();
    assert_eq!(j["kind"], "zoned");
    assert_eq!(j["zones"]["by_state"]["empty"], 2);
    assert_eq!(j["zones"]["by_state"]["full"], 1);
    assert_eq!(j["zones"]["by_state"]["explicitly_open"], 1);
    assert_eq!(j["state_counters"]["resets"], 1);
    assert_eq!(j["state_counters"]["finishes"], 1);
    assert_eq!(j["state_counters"]["open_high_water"], 2);
    assert_eq!(j["state_counters"]["active_high_water"], 2);
    assert_eq!(j["counters"]["finish_padded_pages"], 7);
    assert_eq!(j["counters"]["padding_units"], 1 + 6 * 2);
    assert_eq!(j["erases"]["max"], 1);
    assert_eq!(j["erases"]["endurance_pe_cycles"], 3000);
    assert_eq!(j["erases"]["histogram"][0], 6);
    assert_eq!(j["erases"]["histogram"][1], 2);
    d.reset_counters();
    assert_eq!(d.stats().flash_program_pages, 0);
    assert_eq!(d.state_counters().open_high_water, 1); // zone 2 is still open
    assert_eq!(d.erase_summary().max, 1); // wear stays
    d.check_invariants().unwrap();
}

#[test]
fn verification_catches_a_unit_that_does_not_hold_what_was_written() {
    let mut d = small(0, 0);
    write(&mut d, 0, 0, 0, 4).unwrap();
    d.verify_all().unwrap();
    let pua = d.layout.phys_unit(0, 2);
    d.versions.as_mut().unwrap().physical[pua] = 999;
    let e = err(d.submit(Nanos(0), Command::read(2 * U, U)));
    assert!(
        e.contains("read-after-write check failed for zone 0 unit 2"),
        "{e}"
    );
    assert!(err(d.verify_all()).contains("unit 2"));
    assert!(err(d.check_invariants()).contains("unit 2"));
}

#[test]
fn verification_turned_on_late_covers_existing_data() {
    let mut d = ZonedSsd::new(&small_cfg(0, 0)).unwrap();
    write(&mut d, 0, 0, 0, 3).unwrap();
    finish(&mut d, 1).unwrap();
    d.enable_verification();
    d.verify_all().unwrap();
    write(&mut d, 0, 0, 3, 5).unwrap();
    d.submit(Nanos(0), Command::read(0, 8 * U)).unwrap();
    d.verify_all().unwrap();
}

#[test]
fn invariants_catch_broken_counts() {
    let mut d = small(0, 0);
    write(&mut d, 0, 0, 0, 1).unwrap();
    d.table.open = 0;
    assert!(err(d.check_invariants()).contains("zone counts"));
    let mut d = small(0, 0);
    d.erase_counts[3] = 1;
    assert!(err(d.check_invariants()).contains("erase counts add up"));
}

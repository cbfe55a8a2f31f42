//! Hand-computed small cases. Geometry: one plane of 6 blocks × 4 pages of 4 KiB (24 units), logical
//! capacity 8 units (op = 2.0), GC start = stop = 2 free blocks.
//!
//! The scenarios run under both GC schedules: `every_write` (the default: the threshold is tested before
//! every host write, so GC survivors land in the host's open block) and `block_open` (tested only when a
//! host write needs a new block, before taking it).

use super::*;
use crate::nand::CellMode;

const U: u64 = 4096;

fn tiny(victim: VictimConfig) -> Ftl {
    tiny_with(victim, GcTrigger::EveryWrite)
}

fn tiny_with(victim: VictimConfig, trigger: GcTrigger) -> Ftl {
    tiny_burst(victim, trigger, GcBurst::ToStart)
}

fn tiny_burst(victim: VictimConfig, trigger: GcTrigger, burst: GcBurst) -> Ftl {
    let geo = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 6,
        pages_per_block: 4,
        page_size_bytes: 4096,
        cell_mode: CellMode::Tlc,
    };
    let mut cfg = FtlConfig {
        over_provisioning: 2.0,
        ..FtlConfig::default()
    };
    cfg.gc = GcConfig {
        victim,
        start_free_blocks: 2,
        stop_free_blocks: 2,
        trigger,
        burst,
        ..GcConfig::default()
    };
    let mut f = Ftl::new(geo, cfg, 1).unwrap();
    f.enable_verification();
    f
}

fn write_units(f: &mut Ftl, lpns: &[u64]) {
    for &l in lpns {
        f.write(l * U, U).unwrap();
        f.check_invariants().unwrap();
    }
}

/// `(gc_invocations, gc_victim_blocks, gc_migrated_units, gc_erases)`.
fn gc_counts(c: &Counters) -> (u64, u64, u64, u64) {
    (
        c.gc_invocations,
        c.gc_victim_blocks,
        c.gc_migrated_units,
        c.gc_erases,
    )
}

/// Fill 0..8 (blocks 0, 1), then four rounds of the hot set {0, 4, 1, 5}.
fn scenario(victim: VictimConfig, trigger: GcTrigger) -> Ftl {
    let mut f = tiny_with(victim, trigger);
    assert_eq!(f.logical_units(), 8);
    write_units(&mut f, &[0, 1, 2, 3, 4, 5, 6, 7]);
    for _ in 0..4 {
        write_units(&mut f, &[0, 4, 1, 5]);
    }
    f.verify_all_versions().unwrap();
    f
}

#[test]
fn block_open_fifo_migrates_the_oldest_blocks() {
    // Rounds 1–3 open blocks 2, 3, 4; round 4's first write needs a block and finds one free (< 2): GC.
    // FIFO takes block 0 (lpn 2, 3 still valid) then block 1 (lpn 6, 7): both migrate into block 5, which
    // fills and seals; two erases bring the pool to 2. The host then reopens block 0: host and GC data
    // never share a block.
    let f = scenario(VictimConfig::Fifo, GcTrigger::BlockOpen);
    let c = f.counters();
    assert_eq!(c.gc_invocations, 1);
    assert_eq!(c.gc_victim_blocks, 2);
    assert_eq!(c.gc_migrated_units, 4);
    assert_eq!(c.gc_read_pages, 4);
    assert_eq!(c.gc_erases, 2);
    assert_eq!(c.host_write_units, 24);
    assert_eq!(c.flash_program_pages, 28);
    assert!((f.waf() - 28.0 / 24.0).abs() < 1e-12);
    for (lpn, pua) in [
        (2, 20),
        (3, 21),
        (6, 22),
        (7, 23),
        (0, 0),
        (4, 1),
        (1, 2),
        (5, 3),
    ] {
        assert_eq!(f.lookup(lpn), Some(pua), "lpn {lpn}");
    }
    assert_eq!(&f.blocks().erase_count, &[1, 1, 0, 0, 0, 0]);
    assert_eq!(f.free_blocks(), 1);
    let c = f.counters();
    assert_eq!(
        (
            c.sealed_blocks_host_only,
            c.sealed_blocks_migrated_only,
            c.sealed_blocks_mixed
        ),
        (6, 1, 0)
    );
}

#[test]
fn one_victim_block_open_collects_one_block_and_the_host_continues_in_gc_block() {
    // The Cosmos+ GreedyFTL schedule. Round 4's first write needs a block with one free (< 2): GC takes
    // FIFO block 0 alone (lpn 2, 3 into block 5, the last free block; erase: 1 free) and the host goes on
    // in block 5 (lpn 0, 4), with no second victim. Lpn 1 then needs a block, again with 1 free: GC takes
    // block 1 alone (lpn 6, 7 into block 0), and the host fills block 0 (lpn 1, 5).
    let mut f = tiny_burst(VictimConfig::Fifo, GcTrigger::BlockOpen, GcBurst::OneVictim);
    write_units(&mut f, &[0, 1, 2, 3, 4, 5, 6, 7]);
    for _ in 0..4 {
        write_units(&mut f, &[0, 4, 1, 5]);
    }
    f.verify_all_versions().unwrap();
    let c = f.counters();
    assert_eq!(gc_counts(c), (2, 2, 4, 2));
    assert_eq!(c.flash_program_pages, 28);
    let placed = [
        (2, 20),
        (3, 21),
        (0, 22),
        (4, 23),
        (6, 0),
        (7, 1),
        (1, 2),
        (5, 3),
    ];
    // Survivors and host writes share blocks 5 and 0.
    assert_layout(&f, &placed, &[1, 1, 0, 0, 0, 0], 1, (5, 0, 2));
}

/// Where each lpn lives, the erase counts, the free blocks and the sealed-block composition
/// (host-only, migrated-only, mixed) after a scenario.
fn assert_layout(
    f: &Ftl,
    placed: &[(u32, u32)],
    erases: &[u32],
    free: u32,
    sealed: (u64, u64, u64),
) {
    for &(lpn, pua) in placed {
        assert_eq!(f.lookup(lpn), Some(pua), "lpn {lpn}");
    }
    assert_eq!(&f.blocks().erase_count, erases);
    assert_eq!(f.free_blocks(), free);
    let c = f.counters();
    let got = (
        c.sealed_blocks_host_only,
        c.sealed_blocks_migrated_only,
        c.sealed_blocks_mixed,
    );
    assert_eq!(got, sealed);
}

#[test]
fn every_write_fifo_interleaves_survivors_with_host_writes() {
    // Round 3's first write (lpn 0) opens block 4 (free 2 → 1). The next write finds 1 < 2 free: GC first.
    // FIFO takes block 0 (valid 2, 3), moves them into block 4 behind lpn 0, erases it (free 2); then
    // lpn 4 fills block 4 = [0, 2, 3, 4]. Lpn 1 opens block 5 (free 1); before lpn 5, GC takes block 1
    // (valid 6, 7) into block 5 = [1, 6, 7, 5]. Round 4: lpn 0 opens block 0; before lpn 4, GC takes block
    // 2 (round 1, all invalid): an erase only. Block 0 = [0, 4, 1, 5].
    let f = scenario(VictimConfig::Fifo, GcTrigger::EveryWrite);
    let c = f.counters();
    assert_eq!(gc_counts(c), (3, 3, 4, 3));
    assert_eq!(c.gc_read_pages, 4);
    assert_eq!(c.host_write_units, 24);
    assert_eq!(c.flash_program_pages, 28);
    let placed = [
        (2, 17),
        (3, 18),
        (6, 21),
        (7, 22),
        (0, 0),
        (4, 1),
        (1, 2),
        (5, 3),
    ];
    // Blocks 0..3 and the final block 0 hold host data only; blocks 4 and 5 mix survivors and host writes.
    assert_layout(&f, &placed, &[1, 1, 1, 0, 0, 0], 2, (5, 0, 2));
}

#[test]
fn every_write_greedy_takes_the_empty_block() {
    // Round 3: lpn 0 opens block 4 (free 1); before lpn 4, greedy's zero bucket holds block 2 (round 1's
    // writes, all overwritten in round 2) and it goes first (oldest arrival): an erase, no migration.
    // Round 4: lpn 0 opens block 5 (the free pool is FIFO: 5 before the erased 2; free 1); before lpn 4,
    // the zero bucket holds block 3: erased.
    let f = scenario(VictimConfig::greedy(), GcTrigger::EveryWrite);
    let c = f.counters();
    assert_eq!(gc_counts(c), (2, 2, 0, 2));
    assert_eq!(c.flash_program_pages, 24);
    assert_eq!(&f.blocks().erase_count, &[0, 0, 1, 1, 0, 0]);
    assert_eq!(f.lookup(0), Some(20));
}

#[test]
fn greedy_newest_tie_break_takes_the_last_arrival_in_the_bucket() {
    // Fill 0..8 (blocks 0, 1), rewrite 0..8 (blocks 2, 3): blocks 0 and 1 are in the zero bucket, 0
    // first. Lpn 0 then opens block 4 (free 1), so the write of lpn 1 runs GC first: the oldest arrival
    // is block 0, the newest block 1.
    for (tie_break, victim) in [(TieBreak::Oldest, 0u32), (TieBreak::Newest, 1)] {
        let mut f = tiny_with(VictimConfig::Greedy { tie_break }, GcTrigger::EveryWrite);
        f.record_gc_events(true);
        write_units(&mut f, &[0, 1, 2, 3, 4, 5, 6, 7]);
        write_units(&mut f, &[0, 1, 2, 3, 4, 5, 6, 7]);
        write_units(&mut f, &[0, 1]);
        let ev = f.drain_gc_events();
        assert_eq!(ev.len(), 1, "{tie_break:?}");
        assert_eq!(
            (ev[0].victim, ev[0].valid_units),
            (victim, 0),
            "{tie_break:?}"
        );
    }
}

#[test]
fn block_open_greedy_takes_an_empty_block_instead() {
    // Blocks 2 and 3 hold no valid data; greedy takes block 2 (first into the zero bucket): no migration.
    let f = scenario(VictimConfig::greedy(), GcTrigger::BlockOpen);
    let c = f.counters();
    assert_eq!(gc_counts(c), (1, 1, 0, 1));
    assert_eq!(c.flash_program_pages, 24);
    assert_eq!(f.lookup(0), Some(20));
    assert_eq!(&f.blocks().erase_count, &[0, 0, 1, 0, 0, 0]);
    let census = f.census();
    assert_eq!(
        census,
        UnitCensus {
            valid: 8,
            invalid: 12,
            free: 4,
            total: 24
        }
    );
}

#[test]
fn partial_writes_are_read_modify_written() {
    let mut f = tiny(VictimConfig::greedy());
    f.write(0, 100).unwrap(); // unmapped: no read needed
    assert_eq!(
        (
            f.counters().partial_unit_writes,
            f.counters().rmw_read_pages
        ),
        (1, 0)
    );
    f.write(10, 100).unwrap(); // mapped: read the old unit first
    assert_eq!(
        (
            f.counters().partial_unit_writes,
            f.counters().rmw_read_pages
        ),
        (2, 1)
    );
    f.write(2048, 8192).unwrap(); // units 0 (partial, mapped), 1 (whole), 2 (partial, unmapped)
    let c = f.counters();
    assert_eq!(
        (c.partial_unit_writes, c.rmw_read_pages, c.host_write_units),
        (4, 2, 5)
    );
    assert_eq!(c.host_write_bytes, 8392);
    f.check_invariants().unwrap();
}

#[test]
fn trim_unmaps_whole_units_only() {
    let mut f = tiny(VictimConfig::greedy());
    write_units(&mut f, &[0, 1, 2]);
    f.trim(100, 2 * U).unwrap(); // covers unit 1 entirely, units 0 and 2 partially
    assert_eq!(f.lookup(0), Some(0));
    assert_eq!(f.lookup(1), None);
    assert_eq!(f.lookup(2), Some(2));
    assert_eq!(f.counters().trimmed_units, 1);
    f.read(0, 3 * U).unwrap();
    assert_eq!(
        (
            f.counters().unmapped_read_units,
            f.counters().host_read_pages
        ),
        (1, 2)
    );
    f.trim(U, U).unwrap(); // already unmapped: not counted again
    assert_eq!(f.counters().trimmed_units, 1);
    f.check_invariants().unwrap();
    f.verify_all_versions().unwrap();
}

#[test]
fn out_of_range_requests_are_errors() {
    let mut f = tiny(VictimConfig::greedy());
    assert!(matches!(f.write(8 * U, 1), Err(Error::OutOfRange(_))));
    assert!(matches!(f.read(7 * U, U + 1), Err(Error::OutOfRange(_))));
    assert!(matches!(f.trim(0, 0), Err(Error::OutOfRange(_))));
    assert!(matches!(
        f.write(u64::MAX - 10, 100),
        Err(Error::OutOfRange(_))
    ));
}

#[test]
fn large_pages_program_when_full_and_flush_pads() {
    let geo = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 8,
        pages_per_block: 4,
        page_size_bytes: 16384,
        cell_mode: CellMode::Qlc,
    };
    let cfg = FtlConfig {
        over_provisioning: 3.0,
        ..FtlConfig::default()
    };
    let mut f = Ftl::new(geo, cfg, 0).unwrap();
    f.write(0, 3 * U).unwrap();
    assert_eq!(f.counters().flash_program_pages, 0);
    f.write(3 * U, 2 * U).unwrap();
    assert_eq!(f.counters().flash_program_pages, 1);
    f.flush();
    assert_eq!(
        (f.counters().flash_program_pages, f.counters().padding_units),
        (2, 3)
    );
    assert_eq!(
        f.census(),
        UnitCensus {
            valid: 5,
            invalid: 3,
            free: 8 * 16 - 8,
            total: 128
        }
    );
    // 5 host units = 1.25 pages; 2 pages programmed.
    assert!((f.waf() - 2.0 / 1.25).abs() < 1e-12);
    f.check_invariants().unwrap();
}

#[test]
fn static_striping_follows_the_order() {
    let geo = Geometry {
        channels: 2,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 4,
        page_size_bytes: 4096,
        cell_mode: CellMode::Tlc,
    };
    let plane_of_lpn = |order: Vec<ParallelUnit>| {
        let cfg = FtlConfig {
            over_provisioning: 3.0,
            striping_order: order,
            ..FtlConfig::default()
        };
        let mut f = Ftl::new(geo.clone(), cfg, 0).unwrap();
        (0..4u64)
            .map(|l| {
                f.write(l * U, U).unwrap();
                f.blocks()
                    .plane_of(f.lookup(l as u32).unwrap() / f.geometry().units_per_block())
            })
            .collect::<Vec<_>>()
    };
    use ParallelUnit::*;
    let g = &geo;
    let idx = |channel, chip, plane| {
        g.plane_index(PlaneAddr {
            channel,
            chip,
            die: 0,
            plane,
        })
    };
    assert_eq!(
        plane_of_lpn(vec![Channel, Chip, Die, Plane]),
        vec![idx(0, 0, 0), idx(1, 0, 0), idx(0, 1, 0), idx(1, 1, 0)]
    );
    assert_eq!(
        plane_of_lpn(vec![Plane, Die, Chip, Channel]),
        vec![idx(0, 0, 0), idx(0, 0, 1), idx(0, 1, 0), idx(0, 1, 1)]
    );
}

#[test]
fn config_errors_name_the_key() {
    let geo = Geometry::default();
    let bad = FtlConfig {
        over_provisioning: 0.0,
        ..FtlConfig::default()
    };
    assert!(Ftl::new(geo.clone(), bad, 0)
        .err()
        .unwrap()
        .to_string()
        .contains("device.ftl.over_provisioning"));
    let mut bad = FtlConfig::default();
    bad.gc.start_free_blocks = 5;
    bad.gc.stop_free_blocks = 4;
    assert!(Ftl::new(geo.clone(), bad, 0)
        .err()
        .unwrap()
        .to_string()
        .contains("stop_free_blocks"));
    let mut bad = FtlConfig {
        placement: PlacementConfig::HostGc,
        ..FtlConfig::default()
    };
    bad.gc.start_free_blocks = 2;
    assert!(Ftl::new(geo.clone(), bad, 0)
        .err()
        .unwrap()
        .to_string()
        .contains("start_free_blocks"));
    let mut bad = FtlConfig {
        over_provisioning: 0.001,
        ..FtlConfig::default()
    };
    bad.gc.stop_free_blocks = 10;
    bad.gc.start_free_blocks = 10;
    let e = Ftl::new(geo, bad, 0).err().unwrap().to_string();
    assert!(e.contains("leaves no room"), "{e}");
}

#[test]
fn device_fills_then_reports_full_instead_of_panicking_when_op_too_small_for_thresholds() {
    // Allowed by validation but GC cannot keep up? It must either succeed or return DeviceFull — never panic.
    let mut f = tiny(VictimConfig::Fifo);
    for i in 0..2000u64 {
        let lpn = (i * 7) % 8;
        f.write(lpn * U, U).unwrap();
    }
    f.check_invariants().unwrap();
    f.verify_all_versions().unwrap();
}

// ---- DISS: swap-range registration, CL-SDI, SDS ----

/// One plane of 64 blocks × 8 pages, OP 0.5; `invalidate` turns CL-SDI on, `sds` the swap/file placement.
fn diss_ftl(invalidate: bool, sds: bool) -> Ftl {
    let geo = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 64,
        pages_per_block: 8,
        page_size_bytes: 4096,
        cell_mode: CellMode::Tlc,
    };
    let mut cfg = FtlConfig {
        over_provisioning: 0.5,
        ..FtlConfig::default()
    };
    cfg.swap.invalidate_on_read = invalidate;
    if sds {
        cfg.placement = PlacementConfig::SwapFile;
    }
    let mut f = Ftl::new(geo, cfg, 3).unwrap();
    f.enable_verification();
    f
}

#[test]
fn cl_sdi_invalidates_exactly_the_swap_units_read() {
    let mut f = diss_ftl(true, false);
    let n = f.logical_units() as u64;
    let (swap_first, swap_end) = (n / 2, n);
    for l in 0..n {
        f.write(l * U, U).unwrap();
    }
    // Before registration every read is a plain read.
    f.read(swap_first * U, 4 * U).unwrap();
    assert_eq!(f.counters().swap_invalidated_units, 0);
    f.register_swap_range(swap_first * U, (swap_end - swap_first) * U)
        .unwrap();
    // File reads never invalidate.
    f.read(0, swap_first * U).unwrap();
    assert_eq!(f.counters().swap_invalidated_units, 0);
    // A read spanning the boundary invalidates exactly its swap units.
    f.read((swap_first - 2) * U, 5 * U).unwrap();
    assert_eq!(f.counters().swap_invalidated_units, 3);
    for l in swap_first..swap_first + 3 {
        assert_eq!(
            f.map.l2p[l as usize], NONE,
            "unit {l} still mapped after its swap-in"
        );
    }
    assert!(
        f.map.l2p[(swap_first - 1) as usize] != NONE
            && f.map.l2p[(swap_first + 3) as usize] != NONE
    );
    // The invalidated units read as no data afterwards (verified), without a flash read, and are not
    // invalidated twice.
    let pages = f.counters().host_read_pages;
    f.read(swap_first * U, 3 * U).unwrap();
    assert_eq!(f.counters().host_read_pages, pages);
    assert_eq!(f.counters().swap_invalidated_units, 3);
    // They cost GC nothing: a TRIM would have done the same, without its command.
    assert_eq!(f.counters().trimmed_units, 0);
    f.check_invariants().unwrap();
    f.verify_all_versions().unwrap();
    // Without CL-SDI the range changes nothing.
    let mut g = diss_ftl(false, false);
    g.write(0, 8 * U).unwrap();
    g.register_swap_range(0, 8 * U).unwrap();
    g.read(0, 8 * U).unwrap();
    assert_eq!(g.counters().swap_invalidated_units, 0);
}

#[test]
fn sds_never_mixes_swap_and_file_data_in_a_block() {
    let mut f = diss_ftl(true, true);
    let n = f.logical_units() as u64;
    let swap_first = n / 3;
    f.register_swap_range(swap_first * U, (n - swap_first) * U)
        .unwrap();
    let mut rng = nandstack_core::Rng::new(11);
    // Random writes over both kinds, swap-ins of swap data: enough for GC to run many times.
    for i in 0..20 * n {
        let l = rng.below(n);
        if i % 5 == 4 && l >= swap_first {
            f.read(l * U, U).unwrap();
        } else {
            f.write(l * U, U).unwrap();
        }
    }
    assert!(f.counters().gc_victim_blocks > 10, "GC ran");
    assert!(f.counters().swap_invalidated_units > 0);
    // Every block's valid data is of one kind (swap or file).
    let upb = f.upb as usize;
    for b in 0..f.blocks.len() as usize {
        let mut kinds = [false; 2];
        for off in 0..upb {
            let pua = (b * upb + off) as u32;
            if f.is_valid_unit(pua) {
                kinds[usize::from(f.map.p2l[pua as usize] as u64 >= swap_first)] = true;
            }
        }
        assert!(
            !(kinds[0] && kinds[1]),
            "block {b} mixes swap and file data"
        );
    }
    assert_eq!(f.counters().units_by_stream.len(), 2);
    assert!(f.counters().units_by_stream.iter().all(|&u| u > 0));
    f.check_invariants().unwrap();
    f.verify_all_versions().unwrap();
}

//! The queued engine inside `BlockSsd` (with the FTL): the direct engine as its independent twin, a
//! randomized run of every mechanism through `Device::enqueue` / `advance`, the idle detector, and the
//! GC page-move paths and per-level times of the direct engine.

use nandstack_core::{Nanos, Rng};

use super::test_util::{geometry, idle_gc, late_gc_ftl, roomy_ftl, verified_ssd, TE, TP, TR, U, X};
use super::*;
use crate::cache::{MappingCacheConfig, WriteBufferConfig};
use crate::device::{Command, Device, Tag};
use crate::ftl::{FtlConfig, GcConfig, Migration};
use crate::nand::{CellMode, Geometry, LevelOrder, PageLevels};

/// `channels` × `dies` one-die chips × `planes` × `blocks`, blocks of 8 pages of 8 KiB.
fn geo(channels: u32, dies: u32, planes: u32, blocks: u32) -> Geometry {
    geometry(channels, dies, planes, blocks, 8, 8192)
}

fn build(g: Geometry, ftl: FtlConfig, ctl: ControllerConfig, timing: &TimingConfig) -> BlockSsd {
    verified_ssd(g, ftl, ctl, timing, 3)
}

/// A random command: mostly writes and reads over the first half of the space, some TRIMs.
fn random_cmd(rng: &mut Rng, units: u64) -> Command<'static> {
    let first = rng.below(units / 2);
    let n = 1 + rng.below(4);
    let (off, len) = (first * U, n * U);
    match rng.below(10) {
        0..=4 => Command::write(off, len),
        5..=8 => Command::read(off, len),
        _ => Command::trim(off, len),
    }
}

fn flavours() -> Vec<(&'static str, FtlConfig, ControllerConfig)> {
    let small_gc = || FtlConfig {
        over_provisioning: 0.3,
        gc: GcConfig {
            start_free_blocks: 3,
            stop_free_blocks: 4,
            ..GcConfig::default()
        },
        ..FtlConfig::default()
    };
    let buffered = ControllerConfig {
        write_buffer: WriteBufferConfig {
            bytes: 16 * U,
            dram_access_ns: 1000,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut mapcache = small_gc();
    mapcache.mapping_cache = MappingCacheConfig { entries: 64 };
    let mut any_plane = small_gc();
    any_plane.gc.migration = Migration::AnyPlane;
    vec![
        ("plain", small_gc(), ControllerConfig::default()),
        ("write buffer", small_gc(), buffered.clone()),
        ("mapping cache", mapcache, ControllerConfig::default()),
        ("any-plane GC", any_plane, buffered),
    ]
}

/// One command at a time (each submitted when the previous completed, plus a random gap): the queued
/// engine with `fifo` and nothing else gives every completion time the direct engine gives.
#[test]
fn queued_fifo_matches_the_direct_engine_one_command_at_a_time() {
    for (name, ftl, ctl) in flavours() {
        let mut queued_ctl = ctl.clone();
        queued_ctl.scheduling.engine = EngineChoice::Queued;
        let t = TimingConfig::default();
        let mut direct = build(geo(2, 2, 2, 32), ftl.clone(), ctl, &t);
        let mut queued = build(geo(2, 2, 2, 32), ftl, queued_ctl, &t);
        assert!(!direct.is_queued() && queued.is_queued());
        let units = direct.logical_bytes() / U;
        let mut rng = Rng::new(11);
        let mut now = 0u64;
        for i in 0..3000 {
            let cmd = random_cmd(&mut rng, units);
            let a = Device::submit(&mut direct, Nanos(now), cmd.clone()).unwrap();
            let b = Device::submit(&mut queued, Nanos(now), cmd.clone()).unwrap();
            assert_eq!(a.done, b.done, "{name}: command {i} {cmd:?} at {now}");
            now = a.done.0 + rng.below(3) * rng.below(2_000_000);
        }
        assert!(direct.ftl.counters().gc_victim_blocks > 10, "{name}: no GC");
        queued.ftl.verify_all_versions().unwrap();
    }
}

/// Many commands in flight through enqueue / advance with every mechanism on, random tags and flows:
/// each command completes exactly once, never before its submission, the FTL invariants and every
/// read-after-write version hold, and the same run twice gives the same completions.
#[test]
fn every_mechanism_at_once_keeps_every_command_and_every_version() {
    let run = |policy: SchedulerKind| {
        let mut ctl = flavours()[1].2.clone();
        ctl.scheduling.policy = policy;
        ctl.scheduling.multi_plane = true;
        ctl.suspension.program = true;
        ctl.suspension.erase = true;
        ctl.gc_preemption.enabled = true;
        ctl.background_gc.enabled = true;
        ctl.background_gc.idle_threshold_us = 500.0;
        let levels = TimingConfig {
            page_levels: Some(PageLevels {
                read_us: vec![50.0, 66.0, 80.0],
                program_us: vec![400.0, 730.0, 1100.0],
                order: LevelOrder::WordLine,
            }),
            ..TimingConfig::default()
        };
        let mut d = build(geo(2, 2, 2, 32), flavours()[0].1.clone(), ctl, &levels);
        let units = d.logical_bytes() / U;
        let mut rng = Rng::new(5);
        let (mut now, mut out, mut submitted) = (0u64, Vec::new(), Vec::new());
        for i in 0..4000u64 {
            if rng.chance(0.3) {
                now += rng.below(400_000);
            }
            Device::advance(&mut d, Nanos(now), &mut out).unwrap();
            let tag = Tag {
                id: i,
                flow: rng.below(3) as u32,
            };
            Device::enqueue(&mut d, Nanos(now), random_cmd(&mut rng, units), tag).unwrap();
            submitted.push(now);
        }
        while let Some(t) = Device::next_event(&d) {
            Device::advance(&mut d, t, &mut out).unwrap();
        }
        let mut seen = vec![false; submitted.len()];
        for (tag, c) in &out {
            assert!(
                !seen[tag.id as usize],
                "{policy:?}: {tag:?} completed twice"
            );
            seen[tag.id as usize] = true;
            assert!(
                c.done.0 >= submitted[tag.id as usize],
                "{policy:?}: {tag:?}"
            );
        }
        let missing = seen.iter().filter(|s| !**s).count();
        if missing > 0 {
            let dump = d.engine.as_ref().expect("queued").dump();
            panic!("{policy:?}: {missing} commands never completed\n{dump}");
        }
        d.ftl.check_invariants().unwrap();
        d.ftl.verify_all_versions().unwrap();
        let (_, c) = d.scheduling_report().unwrap();
        (
            out.iter()
                .map(|(t, c)| (t.id, c.done.0))
                .collect::<Vec<_>>(),
            c,
            d.ftl.counters().gc_victim_blocks,
        )
    };
    for policy in [
        SchedulerKind::Fifo,
        SchedulerKind::OutOfOrder,
        SchedulerKind::ReadPriority,
        SchedulerKind::Fair,
    ] {
        let (a, counters, victims) = run(policy);
        assert_eq!(a, run(policy).0, "{policy:?}: not deterministic");
        assert!(victims > 10, "{policy:?}: no GC");
        assert!(
            counters.program_suspensions + counters.erase_suspensions > 0,
            "{policy:?}: {counters:?}"
        );
        assert!(
            counters.multi_plane_programs > 0,
            "{policy:?}: {counters:?}"
        );
        assert!(counters.preemptible_gc_commands > 0, "{policy:?}");
    }
}

#[test]
fn the_queued_idle_detector_collects_in_idle_time() {
    let mut ctl = ControllerConfig::default();
    ctl.scheduling.engine = EngineChoice::Queued;
    ctl.background_gc = idle_gc();
    let g = geometry(1, 1, 1, 6, 4, 4096);
    let mut s = build(g, late_gc_ftl(), ctl, &TimingConfig::default());
    let mut t = 0;
    for i in 0..16u64 {
        t = Device::write(&mut s, Nanos(t), (i % 4) * U, U).unwrap().0;
    }
    let free_before = s.ftl.free_blocks();
    // The device is idle from `t`: the timer fires at t + 100 µs and collects (no request needed).
    let mut out = Vec::new();
    Device::advance(&mut s, Nanos(t + 99_000), &mut out).unwrap();
    assert_eq!(s.ftl.counters().background_gc_victims, 0);
    Device::advance(&mut s, Nanos(t + 100_000), &mut out).unwrap();
    assert_eq!(s.ftl.counters().background_gc_victims, 1);
    let start = t + 1_000_000_000;
    let done = Device::write(&mut s, Nanos(start), 0, U).unwrap().0;
    assert!(s.ftl.free_blocks() + 1 > free_before);
    assert_eq!(done, start + X + TP, "background GC was done before");
    let (_, c) = s.scheduling_report().unwrap();
    assert_eq!(
        c.background_gc_commands,
        s.ftl.counters().background_gc_victims
    );
}

/// A GC page move through the controller costs the page's transfer out and back in; copyback does not.
#[test]
fn gc_page_moves_by_copyback_or_through_the_controller() {
    let mut latency = Vec::new();
    for moves in [GcPageMoves::Copyback, GcPageMoves::Controller] {
        let mut cfg = late_gc_ftl();
        cfg.gc.victim = crate::ftl::VictimConfig::Fifo;
        let ctl = ControllerConfig {
            gc_page_moves: moves,
            ..Default::default()
        };
        let g = geometry(1, 1, 1, 6, 4, 4096);
        let mut s = build(g, cfg, ctl, &TimingConfig::default());
        // Block 0 gets units 0..3; then 0, 1, 2, 4 over and over: block 0 keeps only unit 3, and it is
        // the oldest sealed block, FIFO's first victim: one page to move.
        let (mut t, mut i) = (0, 0);
        loop {
            let u = if i < 4 { i } else { [0, 1, 2, 4][i % 4] };
            let start = t + 10_000_000;
            t = s.write(u as u64 * U, U, start).unwrap();
            i += 1;
            if s.ftl.counters().gc_victim_blocks > 0 {
                latency.push(t - start);
                break;
            }
            assert!(i < 100);
        }
        assert_eq!(s.ftl.counters().gc_migrated_units, 1, "{moves:?}");
    }
    // Copyback: read, program, erase, then the host page; through the controller the moved page also
    // crosses the channel out and back in.
    assert_eq!(latency[0], TR + TP + TE + X + TP);
    assert_eq!(latency[1], latency[0] + 2 * X);
    // Over a random run (one-unit pages, so every GC page read and every GC page program moves exactly
    // one page) the channel works exactly one page transfer more per GC page read and page programmed.
    let mut busy = Vec::new();
    for moves in [GcPageMoves::Copyback, GcPageMoves::Controller] {
        let ctl = ControllerConfig {
            gc_page_moves: moves,
            ..Default::default()
        };
        let mut g = geo(2, 2, 2, 32);
        g.page_size_bytes = 4096;
        let mut d = build(g, flavours()[0].1.clone(), ctl, &TimingConfig::default());
        let units = d.logical_bytes() / U;
        let mut rng = Rng::new(9);
        for _ in 0..6000 {
            Device::submit(&mut d, Nanos(0), random_cmd(&mut rng, units)).unwrap();
        }
        let c = d.ftl.counters();
        let pages = c.gc_read_pages + c.program_units_gc;
        busy.push((d.timelines().unwrap().channel_busy_ns, pages));
    }
    assert_eq!(busy[0].1, busy[1].1);
    assert!(busy[0].1 > 100, "{busy:?}");
    assert_eq!(busy[1].0 - busy[0].0, busy[0].1 * X);
    let bad = ControllerConfig {
        gc_page_moves: GcPageMoves::Copyback,
        ..Default::default()
    };
    let mut f = roomy_ftl();
    f.gc.migration = Migration::AnyPlane;
    let e = BlockSsd::new(
        Ftl::new(geo(1, 1, 2, 24), f, 0).unwrap(),
        &TimingConfig::default(),
        bad,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("gc_page_moves"), "{e}");
}

#[test]
fn page_levels_in_the_direct_engine() {
    let t = TimingConfig {
        page_levels: Some(PageLevels {
            read_us: vec![40.0, 60.0],
            program_us: vec![300.0, 900.0],
            order: LevelOrder::WordLine,
        }),
        ..TimingConfig::default()
    };
    let mut g = geo(1, 1, 1, 16);
    (g.cell_mode, g.pages_per_block, g.page_size_bytes) = (CellMode::Mlc, 4, 4096);
    let f = roomy_ftl();
    let mut s = build(g.clone(), f.clone(), ControllerConfig::default(), &t);
    // Pages 0 (LSB) and 1 (MSB) of block 0: 300 µs then 900 µs; reads 40 and 60 µs.
    assert_eq!(s.write(0, U, 0).unwrap(), X + 300_000);
    assert_eq!(s.write(U, U, 0).unwrap(), X + 1_200_000);
    let r = 10_000_000;
    assert_eq!(s.read(U, U, r).unwrap(), r + 60_000 + X);
    assert_eq!(s.read(0, U, 2 * r).unwrap(), 2 * r + 40_000 + X);
    // The wrong number of levels for the cell mode is a named error.
    g.cell_mode = CellMode::Tlc;
    let e = BlockSsd::new(Ftl::new(g, f, 0).unwrap(), &t, ControllerConfig::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("page_levels.read_us"), "{e}");
}

//! Hand-computed cases, each manager's defining behaviour, the shared manager conformance test, and
//! property tests that hammer resizes, migrations and GC.

use nandstack_core::{Rng, MAPPING_UNIT_BYTES as U};
use proptest::prelude::*;

use super::managers::{DwaConfig, DwaManager, ManagerConfig, ManagerKind, StaticConfig, TABLE2};
use super::*;

/// 64 blocks; 16 KiB pages (4 units); 4 pages (16 units) per SLC block, 16 (64 units) per QLC block;
/// 25% OP: 3,276 logical units.
pub(crate) fn small(buffer_units: u32) -> HybridParams {
    HybridDeviceConfig {
        total_blocks: Some(64),
        slc_pages_per_block: Some(4),
        qlc_pages_per_block: Some(16),
        over_provisioning: Some(0.25),
        write_buffer_bytes: Some(buffer_units as u64 * U),
        ..Default::default()
    }
    .params()
    .unwrap()
}

fn manager(kind: ManagerKind, p: &HybridParams, seed: u64) -> Box<dyn SlcManager> {
    let mut cfg = ManagerConfig {
        kind,
        ..Default::default()
    };
    cfg.static_cache.slc_fraction = 0.2;
    cfg.rl.step_slc_blocks = 2;
    cfg.build(p, seed, None).unwrap()
}

/// A seeded mix of small hot writes, large sequential writes, reads and a few TRIMs over `space` units.
fn drive(d: &mut HybridSsd, seed: u64, requests: u32, space: u64, check_every: u32) {
    let mut rng = Rng::new(seed);
    let mut seq = 0u64;
    for i in 0..requests {
        let r = rng.below(100);
        if r < 55 {
            let units = 1 + rng.below(4);
            let lpn = rng.below(space / 8); // hot eighth
            d.write(lpn * U, units * U - rng.below(2) * 512).unwrap();
        } else if r < 85 {
            let units = 16 + rng.below(48);
            if seq + units > space {
                seq = 0;
            }
            d.write(seq * U, units * U).unwrap();
            seq += units;
        } else if r < 97 {
            let lpn = rng.below(space - 8);
            d.read(lpn * U, 8 * U).unwrap();
        } else {
            let lpn = rng.below(space - 4);
            d.trim(lpn * U, 4 * U).unwrap();
        }
        let f = d.ftl();
        assert!(f.slc_target() <= f.max_slc_blocks(), "request {i}");
        if check_every > 0 && i % check_every == 0 {
            d.check()
                .unwrap_or_else(|e| panic!("seed {seed} request {i}: {e}"));
        }
    }
    d.flush().unwrap();
    d.check()
        .unwrap_or_else(|e| panic!("seed {seed} after flush: {e}"));
}

#[test]
fn hand_computed_costs_without_buffer() {
    let p = small(0);
    let mut cfg = ManagerConfig {
        kind: ManagerKind::Static,
        static_cache: StaticConfig {
            slc_fraction: 0.25,
            theta_bytes: 16 * 1024,
        },
        ..Default::default()
    };
    let mut d = HybridSsd::new(p.clone(), cfg.build(&p, 1, None).unwrap(), true, 1).unwrap();
    assert_eq!(d.ftl().slc_target(), 16);
    // One 16 KiB write (≤ θ) fills one SLC page: one SLC program of 160 µs.
    assert_eq!(d.write(0, 16 * 1024).unwrap(), 160_000);
    // A 20 KiB write (> θ) covers 5 units in QLC: one page programmed (3,102 µs), one unit waits.
    assert_eq!(d.write(64 * U, 20 * 1024).unwrap(), 3_102_000);
    // Flush pads the open QLC page: one more QLC program.
    assert_eq!(d.flush().unwrap(), 3_102_000);
    let c = d.ftl().costs();
    assert_eq!(c.get(CostKind::HostToSlc).slc_page_programs, 1);
    assert_eq!(c.get(CostKind::HostToQlc).qlc_page_programs, 2);
    assert_eq!(c.total_ns(), 160_000 + 2 * 3_102_000);
    assert_eq!(d.ftl().counters().padding_units, 3);
    d.read(0, 4 * U).unwrap();
    assert_eq!(d.ftl().counters().read_slc_page_reads, 1);
    d.check().unwrap();
    cfg.kind = ManagerKind::QlcOnly;
    let mut q = HybridSsd::new(p.clone(), cfg.build(&p, 1, None).unwrap(), true, 1).unwrap();
    assert_eq!(
        q.write(0, 4096).unwrap(),
        0,
        "a quarter page waits in the page register"
    );
}

#[test]
fn migration_hand_case() {
    // SLC region of 8 blocks (threshold 5): the 4th SLC block allocation finds 5 free → fine; the next
    // finds 4 < 5 and migrates the greedy victim first.
    let p = small(0);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, true, 1);
    assert_eq!(f.set_slc_target(8).unwrap(), 8);
    // Fill 3 SLC blocks (48 units) with distinct data, then invalidate 10 units of the second block.
    f.write(0, 48, Region::Slc).unwrap();
    f.write(16, 10, Region::Slc).unwrap(); // rewrites land in a 4th block
    assert_eq!(f.slc_used(), 4);
    assert_eq!(f.counters().migrated_units, 0);
    f.write(100, 6, Region::Slc).unwrap(); // fills the 4th block (10 + 6 = 16 units)
    f.write(200, 1, Region::Slc).unwrap(); // needs a 5th: free = 8 − 4 = 4 < 5 → migrate
                                           // Greedy: the second block holds 6 valid units (10 of 16 overwritten).
    assert_eq!(f.counters().migrated_units, 6);
    assert_eq!(f.counters().slc_migration_victims, 1);
    let m = f.costs().get(CostKind::SlcToQlc);
    // 6 valid units sit in pages 2 and 3 of the block (units 10–15): 2 SLC page reads, 1 SLC erase;
    // one QLC page programmed (4 units), 2 units wait.
    assert_eq!(
        (m.slc_page_reads, m.slc_block_erases, m.qlc_page_programs),
        (2, 1, 1)
    );
    assert_eq!(m.ns, 2 * 30_000 + 3_000_000 + 3_102_000);
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
    // Shrink to zero migrates everything and closes the open SLC block.
    f.set_slc_target(0).unwrap();
    assert_eq!(f.slc_used(), 0);
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
    f.read(0, 300).unwrap();
}

#[test]
fn grow_is_paid_by_qlc_gc_and_clamped_by_capacity() {
    let p = small(0);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, true, 1);
    // Fill 60% of the logical space in QLC, then overwrite half of it to leave invalid space.
    let fill = p.logical_units as u64 * 6 / 10;
    f.write(0, fill, Region::Qlc).unwrap();
    f.write(0, fill / 2, Region::Qlc).unwrap();
    let max = f.max_slc_blocks();
    assert_eq!(max, 64 - 9 - 39);
    let before = f.costs().get(CostKind::QlcToQlc).qlc_block_erases;
    let got = f.set_slc_target(1000).unwrap();
    assert_eq!(got, max);
    assert!(
        f.costs().get(CostKind::QlcToQlc).qlc_block_erases > before,
        "growth needs QLC GC"
    );
    assert!(f.qlc_free() >= p.qlc_free_threshold as i64);
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
    // Below the minimum non-zero size: rounded up to it.
    let mut g = HybridFtl::new(p.clone(), SlcLayout::Shared, false, 1);
    assert_eq!(g.set_slc_target(1).unwrap(), p.min_slc_blocks());
}

#[test]
fn qlc_only_never_writes_slc() {
    let p = small(8);
    let mut d = HybridSsd::new(p.clone(), manager(ManagerKind::QlcOnly, &p, 3), true, 1).unwrap();
    drive(&mut d, 3, 4000, 2000, 500);
    let c = d.ftl().costs();
    assert_eq!(c.get(CostKind::HostToSlc).ns, 0);
    assert_eq!(c.get(CostKind::SlcToQlc).ns, 0);
    assert!(c
        .by_kind
        .iter()
        .all(|k| k.slc_page_programs == 0 && k.slc_page_reads == 0));
    assert!(d.ftl().erase_counts().0.iter().all(|&e| e == 0));
    assert!(
        c.get(CostKind::QlcToQlc).qlc_block_erases > 0,
        "the run should reach QLC GC"
    );
    assert_eq!(d.stats().resizes, 0);
}

#[test]
fn static_never_resizes_and_routes_by_theta() {
    let p = small(8);
    let mut d = HybridSsd::new(p.clone(), manager(ManagerKind::Static, &p, 4), true, 1).unwrap();
    assert_eq!(d.ftl().slc_target(), 13);
    drive(&mut d, 4, 4000, 1500, 500);
    assert_eq!(d.stats().resizes, 0);
    assert_eq!(d.ftl().slc_target(), 13);
    let c = d.ftl().counters();
    assert!(c.host_units_to_slc > 0 && c.host_units_to_qlc > 0);
    assert!(c.migrated_units > 0, "the small SLC region must migrate");
}

#[test]
fn dwa_follows_table2() {
    let p = small(0);
    for setting in [1u8, 2] {
        for (bin, &(lo, _, _)) in TABLE2.iter().enumerate() {
            // Precondition to the middle of each utilisation bin.
            let hi = TABLE2.get(bin + 1).map_or(100.0, |b| b.0);
            let u = (lo + hi) / 2.0 / 100.0;
            let fill = (u * p.logical_units as f64) as u64 * U;
            let cfg = DwaConfig {
                setting,
                ..Default::default()
            };
            let m = Box::new(DwaManager::new(&cfg));
            let d = HybridSsd::with_fill(p.clone(), m, false, 1, Some((0, fill))).unwrap();
            let want = DwaManager::new(&cfg).blocks_for(bin, p.total_blocks);
            let f = d.ftl();
            let (max, min) = (f.max_slc_blocks(), p.min_slc_blocks());
            let w = want.min(max);
            let expect = if w > 0 && w < min {
                if min <= max {
                    min
                } else {
                    0
                }
            } else {
                w
            };
            assert_eq!(f.slc_target(), expect, "setting {setting} bin {bin} u {u}");
            assert_eq!(d.theta_bytes(), 32 * 1024);
        }
    }
}

#[test]
fn dwa_resizes_as_utilisation_crosses_bins() {
    let p = small(8);
    let m = ManagerConfig {
        kind: ManagerKind::Dwa,
        ..Default::default()
    };
    let mut d = HybridSsd::new(p.clone(), m.build(&p, 1, None).unwrap(), true, 1).unwrap();
    assert_eq!(d.ftl().slc_target(), 35); // 56% of 64
                                          // Sequential large writes raise the utilisation through every bin.
    let mut seen = vec![d.ftl().slc_target()];
    for k in 0..(p.logical_units as u64 * 95 / 100 / 32) {
        d.write(k * 32 * U, 32 * U + 1).unwrap();
        let s = d.ftl().slc_target();
        if *seen.last().unwrap() != s {
            seen.push(s);
        }
    }
    d.check().unwrap();
    assert!(
        seen.windows(2).all(|w| w[1] < w[0]),
        "sizes only shrink: {seen:?}"
    );
    assert!(seen.len() >= 5, "{seen:?}");
}

#[test]
fn ust_respects_max_slc_and_sends_everything_to_slc_first() {
    let p = small(8);
    let m = ManagerConfig {
        kind: ManagerKind::Ust,
        ..Default::default()
    };
    let mut d = HybridSsd::new(p.clone(), m.build(&p, 1, None).unwrap(), true, 1).unwrap();
    let mut rng = Rng::new(9);
    for i in 0..6000u32 {
        let lpn = rng.below(1200);
        let units = 1 + rng.below(if i % 5 == 0 { 40 } else { 3 });
        d.write(lpn * U, units * U).unwrap();
        assert!(d.ftl().slc_blocks_per_logical_block().all(|n| n <= 6));
        if i % 700 == 0 {
            d.check().unwrap();
        }
    }
    d.flush().unwrap();
    d.check().unwrap();
    let c = d.ftl().counters();
    assert_eq!(
        c.host_units_to_qlc, 0,
        "UST writes every host unit to SLC first"
    );
    assert!(c.slc_gc_units > 0 && c.migrated_units > 0, "{c:?}");
    assert!(d.ftl().costs().get(CostKind::SlcToSlc).ns > 0);
}

/// Every SLC manager, for the tests that run them all.
const MANAGERS: [ManagerKind; 5] = [
    ManagerKind::QlcOnly,
    ManagerKind::Static,
    ManagerKind::Dwa,
    ManagerKind::Ust,
    ManagerKind::Rl,
];

/// The shared conformance test: every manager keeps the invariants and read-after-write versions, its
/// size stays within the device's bounds, and the cost breakdown adds up.
#[test]
fn conformance_every_manager() {
    for kind in MANAGERS {
        for seed in [1u64, 2] {
            let p = small(8);
            let mut d = HybridSsd::new(p.clone(), manager(kind, &p, seed), true, 1).unwrap();
            drive(&mut d, seed, 3000, 1800, 300);
            let f = d.ftl();
            let c = f.costs();
            let sum: u64 = CostKind::ALL.iter().map(|&k| c.get(k).ns).sum();
            assert_eq!(sum, c.total_ns());
            let t = |n: u64, us: u64| n * us * 1000;
            let recomputed: u64 = c
                .by_kind
                .iter()
                .map(|k| {
                    t(k.slc_page_reads, 30)
                        + t(k.slc_page_programs, 160)
                        + t(k.slc_block_erases, 3000)
                        + t(k.qlc_page_reads, 140)
                        + t(k.qlc_page_programs, 3102)
                        + t(k.qlc_block_erases, 3500)
                })
                .sum();
            assert_eq!(recomputed, c.total_ns(), "{kind:?}");
            // Every host unit that reached flash was programmed once as host data: page programs × 4
            // units ≥ host units to flash.
            let host_pages = c.get(CostKind::HostToSlc).page_programs()
                + c.get(CostKind::HostToQlc).page_programs();
            assert!(
                host_pages * 4 >= f.counters().host_units_to_slc + f.counters().host_units_to_qlc
            );
            assert!(
                f.slc_target() <= f.max_slc_blocks() || f.slc_target() == 0,
                "{kind:?}"
            );
        }
    }
}

/// The device skips `after_write` where a manager does not observe; there it must decide nothing. A
/// twin of each manager sees the device after every request of a run.
#[test]
fn a_manager_decides_nothing_where_it_does_not_observe() {
    for kind in MANAGERS {
        let p = small(8);
        let mut d = HybridSsd::new(p.clone(), manager(kind, &p, 1), false, 1).unwrap();
        let mut twin = manager(kind, &p, 1);
        twin.initial(&d.observation());
        let (mut skipped, mut observed) = (0, 0);
        let mut rng = Rng::new(5);
        for i in 0..3000u64 {
            let units = 1 + rng.below(if i % 3 == 0 { 48 } else { 4 });
            let lpn = rng.below(1800 - units);
            d.write(lpn * U, units * U).unwrap();
            let obs = d.observation();
            if twin.observes(obs.host_write_bytes) {
                observed += 1;
                twin.after_write(&obs);
            } else {
                skipped += 1;
                assert_eq!(twin.after_write(&obs), None, "{kind:?} request {i}");
            }
        }
        let expect_skips = matches!(
            kind,
            ManagerKind::QlcOnly | ManagerKind::Static | ManagerKind::Rl
        );
        assert_eq!(
            skipped > 0,
            expect_skips,
            "{kind:?}: {skipped} skipped, {observed} observed"
        );
    }
}

#[test]
fn same_seed_same_run() {
    let run = |seed| {
        let p = small(8);
        let mut d =
            HybridSsd::new(p.clone(), manager(ManagerKind::Rl, &p, seed), false, 1).unwrap();
        drive(&mut d, 11, 2000, 1800, 0);
        (*d.ftl().costs(), d.manager().report())
    };
    assert_eq!(run(5), run(5));
}

#[derive(Clone, Debug)]
enum Op {
    Write { lpn: u64, units: u64, slc: bool },
    Trim { lpn: u64, units: u64 },
    Read { lpn: u64, units: u64 },
    Resize(u32),
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..3000, 1u64..160, any::<bool>()).prop_map(|(lpn, units, slc)| Op::Write { lpn, units, slc }),
        1 => (0u64..3000, 1u64..30).prop_map(|(lpn, units)| Op::Trim { lpn, units }),
        1 => (0u64..3000, 1u64..30).prop_map(|(lpn, units)| Op::Read { lpn, units }),
        2 => (0u32..70).prop_map(Op::Resize),
        1 => Just(Op::Flush),
    ]
}

fn run_ops(layout: SlcLayout, buffer: u32, ops: &[Op]) -> Result<FtlCounters, TestCaseError> {
    let p = small(buffer);
    let mut f = HybridFtl::new(p.clone(), layout, true, 1);
    for (i, o) in ops.iter().enumerate() {
        let clip = |lpn: u64, n: u64| (lpn, n.min(p.logical_units as u64 - lpn));
        match *o {
            Op::Write { lpn, units, slc } => {
                let (l, n) = clip(lpn, units);
                let r = if slc { Region::Slc } else { Region::Qlc };
                f.write(l, n, r)
                    .map_err(|e| TestCaseError::fail(format!("op {i}: {e}")))?;
                // As the device does after every host write: shrink when the data leaves less room.
                if f.slc_target() > f.max_slc_blocks() {
                    f.set_slc_target(f.max_slc_blocks())
                        .map_err(|e| TestCaseError::fail(format!("op {i}: {e}")))?;
                }
            }
            Op::Trim { lpn, units } => {
                let (l, n) = clip(lpn, units);
                f.trim(l, n).unwrap();
            }
            Op::Read { lpn, units } => {
                let (l, n) = clip(lpn, units);
                f.read(l, n)
                    .map_err(|e| TestCaseError::fail(format!("op {i}: {e}")))?;
            }
            Op::Resize(s) => {
                let got = f
                    .set_slc_target(s)
                    .map_err(|e| TestCaseError::fail(format!("op {i}: {e}")))?;
                prop_assert!(got <= f.max_slc_blocks());
            }
            Op::Flush => f.flush().unwrap(),
        }
        if i % 16 == 0 {
            f.check_invariants()
                .map_err(|e| TestCaseError::fail(format!("op {i} {o:?}: {e}")))?;
        }
    }
    f.flush().unwrap();
    f.check_invariants()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    f.verify_versions()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    f.read(0, p.logical_units as u64)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(f.counters().clone())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn shared_layout_keeps_every_invariant(ops in proptest::collection::vec(op(), 1..600), buf in 0u32..12) {
        run_ops(SlcLayout::Shared, buf, &ops)?;
    }

    #[test]
    fn ust_layout_keeps_every_invariant(ops in proptest::collection::vec(op(), 1..600), buf in 0u32..12) {
        run_ops(SlcLayout::PerLogicalBlock { max_blocks: 3 }, buf, &ops)?;
    }
}

#[test]
fn property_ops_reach_gc_and_migration() {
    // The generator's scale: a fixed long sequence reaches QLC GC, migration and UST SLC GC.
    let mut rng = Rng::new(77);
    let ops: Vec<Op> = (0..600)
        .map(|_| match rng.below(11) {
            0..=5 => Op::Write {
                lpn: rng.below(3000),
                units: 1 + rng.below(159),
                slc: rng.below(2) == 0,
            },
            6 => Op::Trim {
                lpn: rng.below(3000),
                units: 1 + rng.below(29),
            },
            7 => Op::Read {
                lpn: rng.below(3000),
                units: 1 + rng.below(29),
            },
            8 | 9 => Op::Resize(rng.below(70) as u32),
            _ => Op::Flush,
        })
        .collect();
    let c = run_ops(SlcLayout::Shared, 4, &ops).unwrap();
    assert!(c.qlc_gc_victims > 0 && c.slc_migration_victims > 0, "{c:?}");
    let c = run_ops(SlcLayout::PerLogicalBlock { max_blocks: 3 }, 4, &ops).unwrap();
    assert!(
        c.qlc_gc_victims > 0 && c.ust_gc_runs > 0 && c.slc_gc_units > 0,
        "{c:?}"
    );
}

#[test]
fn slc_region_conversion_preserves_data_and_capacity() {
    // Fill a large SLC region with host data (some of it overwritten), shrink it to nothing, grow it back:
    // every logical unit keeps its one valid copy at its latest version, the logical capacity and the
    // valid count never change, and shrinking to 0 leaves no block in SLC mode.
    let p = small(0);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, true, 1);
    let logical = p.logical_units as u64;
    let got = f.set_slc_target(30).unwrap();
    assert_eq!(got, 30);
    f.write(0, 300, Region::Slc).unwrap();
    f.write(100, 50, Region::Slc).unwrap(); // overwrites in SLC
    f.write(1000, 200, Region::Qlc).unwrap();
    f.flush().unwrap();
    assert!(f.slc_used() > 0);
    let valid = f.valid_units();
    assert_eq!(valid, 500);
    for target in [12, 0, 25, 7, 0] {
        let got = f.set_slc_target(target).unwrap();
        assert!(got <= target.max(p.min_slc_blocks()), "{target} -> {got}");
        assert_eq!(f.valid_units(), valid, "after resizing to {target}");
        assert_eq!(f.params().logical_units as u64, logical);
        f.check_invariants().unwrap();
        f.verify_versions().unwrap();
        f.read(0, logical).unwrap(); // every read checks the version it finds
        if target == 0 {
            assert_eq!(got, 0, "shrinking to zero is always possible");
            assert_eq!(f.slc_used(), 0, "a zero-sized region holds no SLC block");
        }
    }
    // The shrinks paid for the moves: SLC reads and QLC programs charged to SLC→QLC migration.
    let moved = f.costs().get(CostKind::SlcToQlc);
    assert!(moved.slc_page_reads > 0 && moved.qlc_page_programs > 0 && moved.slc_block_erases > 0);
}

/// The shared version table catches a lost update and a stale copy in the hybrid FTL (fault injection:
/// the mapping is pointed back at an older copy, as a buggy migration would leave it).
#[test]
fn verification_catches_a_mapping_left_on_a_stale_copy() {
    let p = small(0);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, false, 1);
    f.write(0, 40, Region::Qlc).unwrap();
    f.flush().unwrap();
    // Turned on after the data exists (as after preconditioning): existing data is version 1.
    f.enable_verification();
    f.read(0, 40).unwrap();
    f.verify_versions().unwrap();
    let old = f.map.get(3);
    f.write(3, 1, Region::Qlc).unwrap();
    f.flush().unwrap();
    f.read(0, 40).unwrap();
    // Inject: the mapping goes back to the old (stale, invalid) copy.
    let new = f.map.get(3);
    assert_ne!(old, new);
    f.map.bind(3, old);
    let e = f.verify_versions().unwrap_err();
    assert!(e.to_string().contains("logical unit 3"), "{e}");
    assert!(
        f.read(3, 1).is_err(),
        "a read of the stale copy fails the check"
    );
    f.map.bind(3, new);
    // A trimmed unit must read as no data.
    f.trim(5, 1).unwrap();
    f.read(5, 1).unwrap();
    f.verify_versions().unwrap();
    assert!(f.reads_checked() >= 81);
}

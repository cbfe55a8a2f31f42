//! Differential test of batched migrations: a placement that answers `migration_stream` lets GC move a
//! victim's units as one run (`collect::Run`); the same placement hiding that answer makes GC ask
//! `stream_for` and go through `append`/`commit` per unit. On the same seeded streams both must leave
//! identical devices: mappings, block tables, counters, recorded operations and GC victims. (The
//! batched side runs `Ftl::move_runs`, the other `Ftl::move_units`.)

use super::placement::{HostGc, PlacementPolicy, Single, WriteCause, WriteCtx};
use super::*;
use crate::nand::CellMode;

/// `P` with `migration_stream` hidden (the default `None`): every move asks `stream_for`.
#[derive(Clone)]
struct PerUnit<P>(P);

impl<P: PlacementPolicy + Clone + 'static> PlacementPolicy for PerUnit<P> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn streams(&self) -> u32 {
        self.0.streams()
    }
    fn stream_for(&mut self, ctx: &WriteCtx) -> u8 {
        self.0.stream_for(ctx)
    }
}

fn geometry(pages_per_block: u32, page_size_bytes: u32, planes: u32) -> Geometry {
    Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: planes,
        blocks_per_plane: 40,
        pages_per_block,
        page_size_bytes,
        cell_mode: CellMode::Tlc,
    }
}

struct Case {
    geo: Geometry,
    cfg: FtlConfig,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let victims = [
        VictimConfig::Greedy {
            tie_break: TieBreak::Oldest,
        },
        VictimConfig::CostBenefit,
        VictimConfig::Fifo,
    ];
    for (k, victim) in victims.into_iter().enumerate() {
        for (ppb, page, planes) in [(8, 4096, 1), (6, 16384, 2), (4, 8192, 2)] {
            let mut cfg = FtlConfig {
                over_provisioning: 0.25,
                ..FtlConfig::default()
            };
            cfg.gc.victim = victim.clone();
            cfg.wear_leveling = WearLevelingConfig {
                enabled: k == 0,
                threshold: 2,
                check_every_erases: 3,
            };
            // Cost-benefit (which keeps block ages) under the block-open trigger; FIFO with a cached map
            // (whose moves never run batched: both sides go unit by unit, as a control).
            if k == 1 {
                cfg.gc.trigger = GcTrigger::BlockOpen;
            }
            if k == 2 {
                cfg.mapping_cache.entries = 16;
            }
            out.push(Case {
                geo: geometry(ppb, page, planes),
                cfg,
            });
        }
    }
    out
}

/// Everything observable of a device after `n` seeded requests (writes, trims, reads; a swap range for
/// the counters that depend on it).
fn drive(mut f: Ftl, seed: u64, n: u32) -> String {
    f.enable_verification();
    f.record_ops(true);
    f.record_gc_events(true);
    let units = f.logical_units() as u64;
    f.register_swap_range(0, units / 4 * 4096).unwrap();
    let mut rng = Rng::new(seed);
    let (mut ops, mut all_ops, mut gcs) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        // Skewed so that victims hold both valid and invalid units.
        let r = rng.next_u64();
        let lpn = if r.is_multiple_of(4) {
            r % units
        } else {
            r % (units / 5 + 1)
        };
        let len = 4096 * (1 + (r >> 40) % 3).min(units - lpn);
        match (r >> 20) % 10 {
            0 => f.trim(lpn * 4096, len).unwrap(),
            1 => f.read(lpn * 4096, len).unwrap(),
            _ => f.write(lpn * 4096, len).unwrap(),
        }
        f.drain_ops(&mut ops);
        all_ops.extend(ops.iter().map(|o| format!("{o:?}")));
        gcs.extend(f.drain_gc_events());
        if i % 512 == 0 {
            f.check_invariants().unwrap();
        }
    }
    f.check_invariants().unwrap();
    assert!(
        f.counters().gc_migrated_units > 0,
        "the stream must make GC move data"
    );
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{all_ops:?}\n{gcs:?}",
        f.counters(),
        f.mapping().l2p,
        f.mapping().p2l,
        f.blocks(),
        f.free_blocks()
    )
}

fn twins<P: PlacementPolicy + Clone + 'static>(p: P) {
    for (c, case) in cases().into_iter().enumerate() {
        for seed in [1, 2, 3] {
            let batched = Ftl::with_placement(
                case.geo.clone(),
                case.cfg.clone(),
                seed,
                Box::new(p.clone()),
            )
            .unwrap();
            let per_unit = Ftl::with_placement(
                case.geo.clone(),
                case.cfg.clone(),
                seed,
                Box::new(PerUnit(p.clone())),
            )
            .unwrap();
            let (a, b) = (drive(batched, seed, 6000), drive(per_unit, seed, 6000));
            assert!(
                a == b,
                "{} case {c} seed {seed}: batched migrations differ from per-unit ones",
                p.name()
            );
        }
    }
}

#[test]
fn batched_migrations_match_per_unit_moves_single_stream() {
    twins(Single);
}

#[test]
fn batched_migrations_match_per_unit_moves_host_gc() {
    twins(HostGc);
}

#[test]
fn migration_streams_agree_with_stream_for() {
    let policies: [Box<dyn PlacementPolicy>; 2] = [Box::new(Single), Box::new(HostGc)];
    for mut p in policies {
        for source in 0..p.streams() as u8 {
            for cause in [WriteCause::Gc, WriteCause::WearLeveling] {
                let fixed = p.migration_stream(source, cause).expect("answers");
                for lpn in [0, 7, 1 << 20] {
                    let ctx = WriteCtx {
                        lpn,
                        cause,
                        source_stream: Some(source),
                        request_bytes: 0,
                    };
                    assert_eq!(p.stream_for(&ctx), fixed, "{}", p.name());
                }
            }
        }
    }
}

//! Differential tests: the engine's FTL against the brute-force reference (`reference.rs`), which shares no
//! code with it.
//!
//! (a) Lockstep: the same seeded stream through both; after every operation the GC victims (block and
//!     valid units moved) must be identical, and after every operation that ran GC every block's valid
//!     count and state and the flash program count must be identical — for every victim policy (both
//!     greedy tie-breaks), placement (single, host/GC split = SUP-GC, two-stream temperature oracle), GC
//!     scope, trigger and burst.
//! (b) Steady state: WAF within 2% over uniform, hot/cold 80/20, 90/10, 95/5, zipf θ 0.8 / 0.99 / 1.2 and a
//!     stream with TRIMs, for every victim × placement × scope under the default schedule. The reference's
//!     random policies draw from their own RNG stream here, so they agree statistically, not by identity.

use nandstack_core::Rng;
use nandstack_device::ftl::placement::{PlacementPolicy, WriteCtx};
use nandstack_device::ftl::{
    FtlConfig, GcBurst, GcConfig, GcScope, GcTrigger, PlacementConfig, TieBreak, VictimConfig,
};
use nandstack_device::nand::{CellMode, Geometry};
use nandstack_device::Ftl;

use super::reference::{Burst, Placement, RefConfig, RefFtl, State, Trigger, Victim};

const U: u64 = 4096;

/// Label of the engine FTL's victim RNG (`Rng::derive(seed, 0x6763)`), so lockstep runs draw the same picks.
const FTL_RNG_LABEL: u64 = 0x6763;

/// The engine's side of the temperature oracle: hot units to stream 0, cold to 1, for every cause.
#[derive(Clone)]
struct Oracle(Vec<bool>);

impl PlacementPolicy for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }
    fn streams(&self) -> u32 {
        2
    }
    fn stream_for(&mut self, ctx: &WriteCtx) -> u8 {
        u8::from(!self.0[ctx.lpn as usize])
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Place {
    Single,
    HostGc,
    Oracle,
}

#[derive(Copy, Clone, Debug)]
struct Dev {
    planes: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    page_size: u32,
    op: f64,
}

#[derive(Copy, Clone, Debug)]
struct Case {
    victim: Victim,
    place: Place,
    device_scope: bool,
    trigger: Trigger,
    burst: Burst,
}

fn victim_config(v: Victim) -> VictimConfig {
    match v {
        Victim::Greedy { newest } => VictimConfig::Greedy {
            tie_break: if newest {
                TieBreak::Newest
            } else {
                TieBreak::Oldest
            },
        },
        Victim::CostBenefit => VictimConfig::CostBenefit,
        Victim::Fifo => VictimConfig::Fifo,
        Victim::Random => VictimConfig::Random,
        Victim::DChoices(d) => VictimConfig::DChoices { d },
    }
}

const VICTIMS: [Victim; 6] = [
    Victim::Greedy { newest: false },
    Victim::Greedy { newest: true },
    Victim::CostBenefit,
    Victim::Fifo,
    Victim::Random,
    Victim::DChoices(4),
];
const PLACES: [Place; 3] = [Place::Single, Place::HostGc, Place::Oracle];

/// GC thresholds: per plane, start must exceed the streams; device scope keeps a few per plane.
fn thresholds(dev: &Dev, device_scope: bool) -> (u32, u32) {
    if device_scope {
        (2 + 2 * dev.planes, 4 + 2 * dev.planes)
    } else {
        (3, 5)
    }
}

/// Build both sides. `hot` is the oracle's temperature map (by logical unit); `ref_seed` seeds the
/// reference's victim RNG (equal to the engine's for lockstep).
fn build(dev: &Dev, case: &Case, hot: &[bool], seed: u64, ref_seed: u64) -> (Ftl, RefFtl) {
    let (geo, cfg) = engine_config(dev, case);
    let (start, stop) = thresholds(dev, case.device_scope);
    let ftl = if case.place == Place::Oracle {
        Ftl::with_placement(geo, cfg, seed, Box::new(Oracle(hot.to_vec())))
    } else {
        Ftl::new(geo, cfg, seed)
    }
    .unwrap_or_else(|e| panic!("{case:?}: {e}"));
    let reference = RefFtl::new(
        RefConfig {
            planes: dev.planes,
            blocks_per_plane: dev.blocks_per_plane,
            pages_per_block: dev.pages_per_block,
            units_per_page: dev.page_size / U as u32,
            logical_units: ftl.logical_units(),
            start,
            stop,
            burst: case.burst,
            trigger: case.trigger,
            device_scope: case.device_scope,
            victim: case.victim,
            placement: match case.place {
                Place::Single => Placement::Single,
                Place::HostGc => Placement::HostGc,
                Place::Oracle => Placement::Oracle(hot.to_vec()),
            },
        },
        Rng::derive(ref_seed, FTL_RNG_LABEL),
    );
    (ftl, reference)
}

/// The engine's geometry and FTL config for `dev` and `case`.
fn engine_config(dev: &Dev, case: &Case) -> (Geometry, FtlConfig) {
    let geo = Geometry {
        channels: dev.planes,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: dev.blocks_per_plane,
        pages_per_block: dev.pages_per_block,
        page_size_bytes: dev.page_size,
        cell_mode: CellMode::Tlc,
    };
    let (start, stop) = thresholds(dev, case.device_scope);
    let cfg = FtlConfig {
        over_provisioning: dev.op,
        placement: match case.place {
            Place::Single => PlacementConfig::Single,
            Place::HostGc | Place::Oracle => PlacementConfig::SupGc,
        },
        gc: GcConfig {
            victim: victim_config(case.victim),
            scope: if case.device_scope {
                GcScope::Device
            } else {
                GcScope::Plane
            },
            start_free_blocks: start,
            stop_free_blocks: stop,
            trigger: match case.trigger {
                Trigger::EveryWrite => GcTrigger::EveryWrite,
                Trigger::BlockOpen => GcTrigger::BlockOpen,
            },
            burst: match case.burst {
                Burst::ToStart => GcBurst::ToStart,
                Burst::ToStop => GcBurst::ToStop,
                Burst::OneVictim => GcBurst::OneVictim,
            },
            ..GcConfig::default()
        },
        ..FtlConfig::default()
    };
    (geo, cfg)
}

/// An operation of a test stream.
#[derive(Copy, Clone, Debug)]
enum Op {
    Write(u32),
    Trim(u32),
    Flush,
}

/// Access pattern over `n` logical units, with the true temperature of each unit.
#[derive(Clone, Debug)]
enum Pattern {
    Uniform,
    /// `ops` of the writes go to the first `space` of the units.
    HotCold {
        ops: f64,
        space: f64,
    },
    /// Rank r (unit r) is written with probability ∝ 1 / (r + 1)^θ.
    Zipf(f64),
}

struct Stream {
    rng: Rng,
    n: u32,
    pattern: Pattern,
    /// Cumulative probabilities (zipf).
    cdf: Vec<f64>,
    trim: f64,
    flush_every: u64,
    issued: u64,
}

impl Stream {
    fn new(n: u32, pattern: Pattern, trim: f64, flush_every: u64, seed: u64) -> Stream {
        let cdf = match pattern {
            Pattern::Zipf(theta) => {
                let mut acc = 0.0;
                let mut c: Vec<f64> = (0..n)
                    .map(|r| {
                        acc += 1.0 / ((r + 1) as f64).powf(theta);
                        acc
                    })
                    .collect();
                c.iter_mut().for_each(|x| *x /= acc);
                c
            }
            _ => Vec::new(),
        };
        Stream {
            rng: Rng::new(seed),
            n,
            pattern,
            cdf,
            trim,
            flush_every,
            issued: 0,
        }
    }

    /// Whether unit `u` is written more often than the average unit (its true temperature).
    fn hot_map(&self) -> Vec<bool> {
        let n = self.n as usize;
        match self.pattern {
            Pattern::Uniform => vec![false; n],
            Pattern::HotCold { space, .. } => {
                let h = hot_units(self.n, space);
                (0..n).map(|u| (u as u32) < h).collect()
            }
            Pattern::Zipf(_) => (0..n)
                .map(|u| {
                    let p = self.cdf[u] - if u == 0 { 0.0 } else { self.cdf[u - 1] };
                    p > 1.0 / n as f64
                })
                .collect(),
        }
    }

    fn unit(&mut self) -> u32 {
        match self.pattern {
            Pattern::Uniform => self.rng.below(self.n as u64) as u32,
            Pattern::HotCold { ops, space } => {
                let h = hot_units(self.n, space);
                if self.rng.chance(ops) {
                    self.rng.below(h as u64) as u32
                } else {
                    h + self.rng.below((self.n - h) as u64) as u32
                }
            }
            Pattern::Zipf(_) => {
                let x = self.rng.unit_f64();
                self.cdf
                    .partition_point(|&c| c <= x)
                    .min(self.n as usize - 1) as u32
            }
        }
    }

    fn next_op(&mut self) -> Op {
        self.issued += 1;
        if self.flush_every > 0 && self.issued.is_multiple_of(self.flush_every) {
            return Op::Flush;
        }
        if self.trim > 0.0 && self.rng.chance(self.trim) {
            return Op::Trim(self.rng.below(self.n as u64) as u32);
        }
        Op::Write(self.unit())
    }
}

fn hot_units(n: u32, space: f64) -> u32 {
    ((n as f64 * space) as u32).clamp(1, n - 1)
}

fn apply(ftl: &mut Ftl, reference: &mut RefFtl, op: Op) {
    match op {
        Op::Write(u) => {
            ftl.write(u as u64 * U, U).unwrap();
            reference.write(u);
        }
        Op::Trim(u) => {
            ftl.trim(u as u64 * U, U).unwrap();
            reference.trim(u);
        }
        Op::Flush => {
            ftl.flush();
            reference.flush();
        }
    }
}

/// Run `ops` operations in lockstep, comparing after each one.
fn lockstep(dev: &Dev, case: &Case, pattern: Pattern, ops: u64, seed: u64) {
    let units_per_page = dev.page_size / U as u32;
    let flush_every = if units_per_page > 1 { 997 } else { 0 };
    // The logical size is the engine's; build once to learn it.
    let (ftl0, _) = build(dev, case, &[], seed, seed);
    let n = ftl0.logical_units();
    drop(ftl0);
    let mut stream = Stream::new(n, pattern, 0.03, flush_every, seed ^ 0x5eed);
    let hot = stream.hot_map();
    let (mut ftl, mut reference) = build(dev, case, &hot, seed, seed);
    ftl.record_gc_events(true);
    let mut gcs = 0usize;
    for i in 0..ops {
        let op = stream.next_op();
        apply(&mut ftl, &mut reference, op);
        let engine_events: Vec<(u32, u32)> = ftl
            .drain_gc_events()
            .iter()
            .map(|e| (e.victim, e.valid_units))
            .collect();
        let ref_events = std::mem::take(&mut reference.gc_log);
        assert_eq!(
            engine_events, ref_events,
            "{case:?}: GC victims differ at operation {i} ({op:?}); {gcs} victims agreed before"
        );
        if engine_events.is_empty() {
            continue;
        }
        gcs += engine_events.len();
        let c = ftl.counters();
        assert_eq!(
            c.flash_program_pages, reference.programs,
            "{case:?}: program counts differ after operation {i}"
        );
        let table = ftl.blocks();
        for b in 0..reference.total_blocks() {
            let want = reference.valid(b);
            assert_eq!(
                want,
                reference.scanned_valid(b),
                "reference count of block {b}"
            );
            assert_eq!(
                table.valid[b as usize], want,
                "{case:?}: valid count of block {b} differs after operation {i}"
            );
            let engine_sealed =
                table.state[b as usize] == nandstack_device::ftl::blocks::BlockState::Sealed;
            assert_eq!(
                engine_sealed,
                reference.state(b) == State::Sealed,
                "{case:?}: state of block {b} differs after operation {i}"
            );
        }
    }
    assert!(
        gcs > 50,
        "{case:?}: the stream must exercise GC ({gcs} victims)"
    );
    assert_eq!(ftl.counters().flash_program_pages, reference.programs);
    assert_eq!(ftl.counters().gc_migrated_units, reference.moved_units);
    assert_eq!(ftl.counters().gc_erases, reference.erases);
    ftl.check_invariants().unwrap();
}

fn all_cases() -> Vec<Case> {
    let mut v = Vec::new();
    for victim in VICTIMS {
        for place in PLACES {
            for device_scope in [false, true] {
                for trigger in [Trigger::EveryWrite, Trigger::BlockOpen] {
                    for burst in [Burst::ToStart, Burst::ToStop, Burst::OneVictim] {
                        v.push(Case {
                            victim,
                            place,
                            device_scope,
                            trigger,
                            burst,
                        });
                    }
                }
            }
        }
    }
    v
}

#[test]
fn lockstep_with_the_reference_for_every_policy_placement_scope_and_schedule() {
    let dev = Dev {
        planes: 2,
        blocks_per_plane: 48,
        pages_per_block: 16,
        page_size: 4096,
        op: 0.25,
    };
    for (k, case) in all_cases().iter().enumerate() {
        lockstep(
            &dev,
            case,
            Pattern::HotCold {
                ops: 0.9,
                space: 0.1,
            },
            6_000,
            k as u64,
        );
    }
}

#[test]
fn lockstep_with_multi_unit_pages_and_flushes() {
    // 16 KiB pages: four units per program; a flush every 997 operations pads the open pages.
    let dev = Dev {
        planes: 2,
        blocks_per_plane: 40,
        pages_per_block: 8,
        page_size: 16384,
        op: 0.3,
    };
    for (k, case) in all_cases().iter().enumerate().filter(|(k, _)| k % 3 == 0) {
        lockstep(&dev, case, Pattern::Zipf(0.99), 6_000, 1000 + k as u64);
    }
}

/// Steady-state WAF of both sides: warm up with 4 × the logical units of operations, measure 12 × more.
fn steady_waf(dev: &Dev, case: &Case, pattern: Pattern, trim: f64, seed: u64) -> (f64, f64) {
    let (probe, _) = build(dev, case, &[], seed, seed);
    let n = probe.logical_units();
    drop(probe);
    let mut stream = Stream::new(n, pattern, trim, 0, seed ^ 0x5eed);
    let hot = stream.hot_map();
    // The reference's random policies draw from a different stream than the engine's.
    let (mut ftl, mut reference) = build(dev, case, &hot, seed, seed.wrapping_add(0x9e37));
    for _ in 0..4 * n as u64 {
        let op = stream.next_op();
        apply(&mut ftl, &mut reference, op);
    }
    let (e0, e1) = (
        ftl.counters().flash_program_pages,
        ftl.counters().host_write_units,
    );
    let (r0, r1) = (reference.programs, reference.host_units);
    for _ in 0..12 * n as u64 {
        let op = stream.next_op();
        apply(&mut ftl, &mut reference, op);
    }
    let engine = (ftl.counters().flash_program_pages - e0) as f64
        / (ftl.counters().host_write_units - e1) as f64;
    let refw = (reference.programs - r0) as f64 / (reference.host_units - r1) as f64;
    (engine, refw)
}

#[test]
fn steady_state_waf_agrees_with_the_reference_within_two_percent() {
    let dev = Dev {
        planes: 2,
        blocks_per_plane: 64,
        pages_per_block: 32,
        page_size: 4096,
        op: 0.15,
    };
    let workloads: [(&str, Pattern, f64); 8] = [
        ("uniform", Pattern::Uniform, 0.0),
        (
            "hot/cold 80/20",
            Pattern::HotCold {
                ops: 0.8,
                space: 0.2,
            },
            0.0,
        ),
        (
            "hot/cold 90/10",
            Pattern::HotCold {
                ops: 0.9,
                space: 0.1,
            },
            0.0,
        ),
        (
            "hot/cold 95/5",
            Pattern::HotCold {
                ops: 0.95,
                space: 0.05,
            },
            0.0,
        ),
        ("zipf 0.8", Pattern::Zipf(0.8), 0.0),
        ("zipf 0.99", Pattern::Zipf(0.99), 0.0),
        ("zipf 1.2", Pattern::Zipf(1.2), 0.0),
        ("uniform + 10% TRIM", Pattern::Uniform, 0.1),
    ];
    let mut worst = (0.0f64, String::new());
    let mut failures = Vec::new();
    for (w, (name, pattern, trim)) in workloads.iter().enumerate() {
        for victim in VICTIMS {
            for place in PLACES {
                for device_scope in [false, true] {
                    let case = Case {
                        victim,
                        place,
                        device_scope,
                        trigger: Trigger::EveryWrite,
                        burst: Burst::ToStart,
                    };
                    // Randomized victims' WAF is noisy: average it over seeds on both sides.
                    let seeds = match victim {
                        Victim::Random => 16,
                        Victim::DChoices(_) => 6,
                        _ => 1,
                    };
                    let (mut e, mut r) = (0.0, 0.0);
                    for s in 0..seeds {
                        let (es, rs) = steady_waf(
                            &dev,
                            &case,
                            pattern.clone(),
                            *trim,
                            77 + w as u64 + 100 * s,
                        );
                        e += es / seeds as f64;
                        r += rs / seeds as f64;
                    }
                    let rel = (e - r).abs() / r;
                    let label = format!("{name} {case:?}: engine {e:.3} reference {r:.3}");
                    if rel > worst.0 {
                        worst = (rel, label.clone());
                    }
                    if rel > 0.02 {
                        failures.push(label);
                    }
                }
            }
        }
    }
    eprintln!(
        "worst relative WAF difference {:.2}%: {}",
        100.0 * worst.0,
        worst.1
    );
    assert!(
        failures.is_empty(),
        "WAF differs by more than 2%:\n{}",
        failures.join("\n")
    );
}

/// Lockstep on geometries drawn at random (planes, blocks, pages per block, page size, spare share),
/// each with a victim policy, placement, scope, schedule and pattern drawn too, so that no size the
/// fixed cases use is special. `NANDSTACK_DIFF_GEOMETRIES` sets how many (default 16).
#[test]
fn lockstep_on_random_geometries() {
    let count = super::diff_geometries(16);
    let mut rng = Rng::new(0x6e0);
    let mut refused = 0;
    for g in 0..count {
        let dev = Dev {
            planes: 1 + rng.below(6) as u32,
            blocks_per_plane: 24 + rng.below(80) as u32,
            pages_per_block: 1 << (2 + rng.below(5)),
            page_size: 4096 << rng.below(3),
            op: 0.12 + 0.3 * rng.unit_f64(),
        };
        let case = Case {
            victim: VICTIMS[rng.below(VICTIMS.len() as u64) as usize],
            place: PLACES[rng.below(PLACES.len() as u64) as usize],
            device_scope: rng.chance(0.5),
            trigger: if rng.chance(0.5) {
                Trigger::EveryWrite
            } else {
                Trigger::BlockOpen
            },
            burst: [Burst::ToStart, Burst::ToStop, Burst::OneVictim][rng.below(3) as usize],
        };
        let pattern = match rng.below(3) {
            0 => Pattern::Uniform,
            1 => Pattern::HotCold {
                ops: 0.7 + 0.25 * rng.unit_f64(),
                space: 0.05 + 0.25 * rng.unit_f64(),
            },
            _ => Pattern::Zipf(0.6 + 0.6 * rng.unit_f64()),
        };
        let (geo, cfg) = engine_config(&dev, &case);
        if let Err(e) = Ftl::new(geo, cfg, 1) {
            // Too little spare space for the thresholds: refused by name, as a config error.
            let msg = e.to_string();
            assert!(
                msg.contains("over_provisioning") && msg.contains("leaves no room for GC"),
                "geometry {g}: {dev:?} {case:?} refused with an unexpected error: {msg}"
            );
            refused += 1;
            continue;
        }
        let units = dev.planes as u64
            * dev.blocks_per_plane as u64
            * dev.pages_per_block as u64
            * (dev.page_size as u64 / U);
        eprintln!("geometry {g}: {dev:?} {case:?} {pattern:?}");
        lockstep(&dev, &case, pattern, 4 * units + 3_000, 5_000 + g);
    }
    assert!(
        refused * 2 < count,
        "{refused} of {count} geometries refused: the draw should mostly give usable devices"
    );
}

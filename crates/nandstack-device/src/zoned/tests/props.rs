//! Property tests: random command sequences on random small zoned devices. After every command the
//! invariants hold; a failed command changes no zone; a write succeeds only at the write pointer of a
//! writable zone; appends land at the write pointer; every read returns the metadata last written (and,
//! in verification mode, the version last written) and zeros past the write pointer; completions are never
//! before submission. The same sequence run twice gives the same completions and the same summary.

use proptest::prelude::*;

use super::*;

#[derive(Clone, Debug)]
enum Op {
    /// Write `units` at the write pointer + `skew` units (skew 0 most of the time).
    Write {
        zone: u32,
        skew: i8,
        units: u32,
    },
    Append {
        zone: u32,
        units: u32,
    },
    Read {
        zone: u32,
        unit: u32,
        units: u32,
    },
    Open(u32),
    Close(u32),
    Finish(u32),
    Reset(u32),
    Flush,
    Fail {
        zone: u32,
        offline: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let skew = prop_oneof![8 => Just(0i8), 1 => -2i8..3];
    prop_oneof![
        32 => (0u32..8, skew, 1u32..12).prop_map(|(zone, skew, units)| Op::Write { zone, skew, units }),
        24 => (0u32..8, 1u32..12).prop_map(|(zone, units)| Op::Append { zone, units }),
        24 => (0u32..8, 0u32..80, 1u32..12).prop_map(|(zone, unit, units)| Op::Read { zone, unit, units }),
        8 => (0u32..8).prop_map(Op::Open),
        8 => (0u32..8).prop_map(Op::Close),
        4 => (0u32..8).prop_map(Op::Finish),
        12 => (0u32..8).prop_map(Op::Reset),
        4 => Just(Op::Flush),
        1 => (0u32..8, prop::bool::weighted(0.3)).prop_map(|(zone, offline)| Op::Fail { zone, offline }),
    ]
}

fn config() -> impl Strategy<Value = ZonedConfig> {
    (
        (1u32..3, 1u32..3, 1u32..3, 4u32..7),
        (
            prop_oneof![Just(2u32), Just(3), Just(4)],
            prop_oneof![Just(4096u32), Just(8192), Just(16384)],
        ),
        (1u32..5, 0u32..4, 0u32..3, 0u64..3),
        (any::<bool>(), any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                (ch, chips, planes, blocks),
                (pages, page),
                (bpz, open, extra_active, gap),
                flags,
            )| {
                let geometry = GeometryOverrides {
                    channels: Some(ch),
                    chips_per_channel: Some(chips),
                    dies_per_chip: Some(1),
                    planes_per_die: Some(planes),
                    blocks_per_plane: Some(blocks),
                    pages_per_block: Some(pages),
                    page_size_bytes: Some(page),
                    cell_mode: None,
                };
                let capacity = bpz as u64 * pages as u64 * page as u64;
                ZonedConfig {
                    geometry,
                    blocks_per_zone: Some(bpz),
                    zone_size_bytes: Some(capacity + gap * U),
                    max_open_zones: open,
                    max_active_zones: if open == 0 { 0 } else { open + extra_active },
                    finish_padding: if flags.0 {
                        FinishPadding::Zone
                    } else {
                        FinishPadding::Page
                    },
                    flush: if flags.1 {
                        FlushMode::Pad
                    } else {
                        FlushMode::Retain
                    },
                    cross_zone_reads: flags.2,
                    ..ZonedConfig::default()
                }
            },
        )
}

/// What each command answered: its completion time, append location and read metadata, or its error.
type Outcome = std::result::Result<(u64, Option<u64>, Vec<u64>), String>;

/// Run `ops` on a fresh device built from `cfg`, checking the properties; returns every outcome and the
/// final summary.
fn run(cfg: &ZonedConfig, ops: &[(Op, u16)]) -> (Vec<Outcome>, serde_json::Value) {
    let mut d = dev(cfg);
    let zones = d.params().zones;
    let size = d.params().zone_size_bytes;
    let mut shadow: Vec<Vec<u64>> = vec![Vec::new(); zones as usize];
    let (mut at, mut next_meta) = (0u64, 1u64);
    let mut outcomes = Vec::new();
    for (op, gap_us) in ops {
        at += *gap_us as u64 * 1000;
        let before = zone(&mut d, at, ZoneCommand::Report).unwrap().zones;
        let writable = |z: u32| {
            !matches!(
                before[z as usize].state,
                ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
            )
        };
        let mut wrote: Option<(u32, Vec<u64>)> = None;
        let r = match *op {
            Op::Write {
                zone: z,
                skew,
                units,
            } => {
                let z = z % zones;
                let meta: Vec<u64> = (0..units as u64).map(|i| next_meta + i).collect();
                // Stay inside zone z (at a full zone's end the next zone starts).
                let unit = ((shadow[z as usize].len() as i64 + skew as i64).max(0) as u64)
                    .min(size / U - 1);
                let r = d.submit(
                    Nanos(at),
                    Command::Write {
                        offset: z as u64 * size + unit * U,
                        len: units as u64 * U,
                        meta: &meta,
                    },
                );
                if r.is_ok() {
                    assert!(
                        writable(z) && unit == shadow[z as usize].len() as u64,
                        "{op:?}"
                    );
                    wrote = Some((z, meta));
                }
                r
            }
            Op::Append { zone: z, units } => {
                let z = z % zones;
                let meta: Vec<u64> = (0..units as u64).map(|i| next_meta + i).collect();
                let r = super::zone(
                    &mut d,
                    at,
                    ZoneCommand::Append {
                        zone: z,
                        len: units as u64 * U,
                        meta: &meta,
                    },
                );
                if let Ok(c) = &r {
                    assert!(writable(z));
                    assert_eq!(
                        c.written_at,
                        Some(z as u64 * size + shadow[z as usize].len() as u64 * U)
                    );
                    wrote = Some((z, meta));
                }
                r
            }
            Op::Read {
                zone: z,
                unit,
                units,
            } => {
                let (z, unit) = (z % zones, unit as u64 % (size / U));
                let r = d.submit(
                    Nanos(at),
                    Command::read(z as u64 * size + unit * U, units as u64 * U),
                );
                if let Ok(c) = &r {
                    for (k, m) in c.meta.iter().enumerate() {
                        let g = z as u64 * (size / U) + unit + k as u64;
                        let (zz, uu) = ((g / (size / U)) as usize, (g % (size / U)) as usize);
                        assert_eq!(
                            *m,
                            shadow[zz].get(uu).copied().unwrap_or(0),
                            "zone {zz} unit {uu}"
                        );
                    }
                }
                r
            }
            Op::Open(z) => super::zone(&mut d, at, ZoneCommand::Open { zone: z % zones }),
            Op::Close(z) => super::zone(&mut d, at, ZoneCommand::Close { zone: z % zones }),
            Op::Finish(z) => super::zone(&mut d, at, ZoneCommand::Finish { zone: z % zones }),
            Op::Reset(z) => {
                let r = super::zone(&mut d, at, ZoneCommand::Reset { zone: z % zones });
                if r.is_ok() {
                    shadow[(z % zones) as usize].clear();
                }
                r
            }
            Op::Flush => d.submit(Nanos(at), Command::Flush),
            Op::Fail { zone: z, offline } => {
                let to = if offline {
                    ZoneState::Offline
                } else {
                    ZoneState::ReadOnly
                };
                d.set_zone_condition(z % zones, to)
                    .map(|_| Completion::at(Nanos(at)))
            }
        };
        if let Some((z, meta)) = wrote {
            next_meta += meta.len() as u64;
            shadow[z as usize].extend(meta);
        }
        match &r {
            Ok(c) => assert!(c.done.0 >= at, "{op:?} completed before it was submitted"),
            Err(_) => assert_eq!(
                zone(&mut d, at, ZoneCommand::Report).unwrap().zones,
                before,
                "{op:?}"
            ),
        }
        d.check_invariants()
            .unwrap_or_else(|e| panic!("after {op:?}: {e}"));
        for (z, s) in shadow.iter().enumerate() {
            let info = d.zone_info(z as u32).unwrap();
            if !matches!(
                info.state,
                ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
            ) {
                assert_eq!(
                    info.write_pointer - info.start,
                    s.len() as u64 * U,
                    "zone {z}"
                );
            }
        }
        outcomes.push(
            r.map(|c| (c.done.0, c.written_at, c.meta))
                .map_err(|e| e.to_string()),
        );
    }
    d.verify_all().unwrap();
    (outcomes, d.details())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_commands_keep_every_invariant(cfg in config(), ops in prop::collection::vec((op(), 0u16..2000), 1..250)) {
        let Ok(_) = cfg.resolve() else { return Ok(()); };
        let (a, sa) = run(&cfg, &ops);
        // Determinism: the same commands give the same answers and the same summary.
        let (b, sb) = run(&cfg, &ops);
        prop_assert_eq!(a, b);
        prop_assert_eq!(sa.to_string(), sb.to_string());
    }
}

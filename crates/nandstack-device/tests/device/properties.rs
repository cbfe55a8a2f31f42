//! Property tests: random sequences of writes (aligned and not), reads, TRIMs and flushes, with GC, across
//! geometries and policies. After every operation the FTL's invariants hold; every read returns the
//! version last written (verification mode); a shadow model of the logical space agrees with the mapping.

use nandstack_device::ftl::{
    Allocation, FtlConfig, GcBurst, GcConfig, GcScope, GcTrigger, Migration, PlacementConfig,
    VictimConfig, WearLevelingConfig,
};
use nandstack_device::nand::{CellMode, Geometry};
use nandstack_device::Ftl;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Cmd {
    Write { unit: u32, byte: u32, len: u32 },
    Read { unit: u32, units: u32 },
    Trim { unit: u32, units: u32 },
    Flush,
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        6 => (0u32..10_000, 0u32..4096, 1u32..20_000).prop_map(|(unit, byte, len)| Cmd::Write { unit, byte, len }),
        2 => (0u32..10_000, 1u32..8).prop_map(|(unit, units)| Cmd::Read { unit, units }),
        1 => (0u32..10_000, 1u32..8).prop_map(|(unit, units)| Cmd::Trim { unit, units }),
        1 => Just(Cmd::Flush),
    ]
}

fn victim() -> impl Strategy<Value = VictimConfig> {
    prop_oneof![
        Just(VictimConfig::greedy()),
        Just(VictimConfig::CostBenefit),
        Just(VictimConfig::Fifo),
        Just(VictimConfig::Random),
        (1u32..6).prop_map(|d| VictimConfig::DChoices { d }),
    ]
}

#[derive(Clone, Debug)]
struct Setup {
    geo: Geometry,
    cfg: FtlConfig,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        (1u32..3, 1u32..3, 1u32..3),
        (
            14u32..24,
            prop_oneof![Just(4u32), Just(8), Just(16)],
            prop_oneof![Just(4096u32), Just(8192), Just(16384)],
        ),
        victim(),
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                (channels, chips, planes),
                (blocks, pages, page),
                victim,
                (dev, dynamic, hostgc, anyplane, wl),
                (block_open, to_stop),
            )| {
                let geo = Geometry {
                    channels,
                    chips_per_channel: chips,
                    dies_per_chip: 1,
                    planes_per_die: planes,
                    blocks_per_plane: blocks,
                    pages_per_block: pages,
                    page_size_bytes: page,
                    cell_mode: CellMode::Mlc,
                };
                let streams = if hostgc { 2 } else { 1 };
                let gc = GcConfig {
                    victim,
                    scope: if dev { GcScope::Device } else { GcScope::Plane },
                    start_free_blocks: if dev {
                        2 + streams * geo.planes()
                    } else {
                        streams + 1
                    },
                    stop_free_blocks: if dev {
                        3 + streams * geo.planes()
                    } else {
                        streams + 2
                    },
                    migration: if anyplane {
                        Migration::AnyPlane
                    } else {
                        Migration::SamePlane
                    },
                    trigger: if block_open {
                        GcTrigger::BlockOpen
                    } else {
                        GcTrigger::EveryWrite
                    },
                    burst: if to_stop {
                        GcBurst::ToStop
                    } else {
                        GcBurst::ToStart
                    },
                };
                let cfg = FtlConfig {
                    over_provisioning: 0.8,
                    allocation: if dynamic {
                        Allocation::Dynamic
                    } else {
                        Allocation::Static
                    },
                    placement: if hostgc {
                        PlacementConfig::HostGc
                    } else {
                        PlacementConfig::Single
                    },
                    gc,
                    wear_leveling: WearLevelingConfig {
                        enabled: wl,
                        threshold: 2,
                        check_every_erases: 3,
                    },
                    ..FtlConfig::default()
                };
                Setup { geo, cfg }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_keep_every_invariant(s in setup(), cmds in prop::collection::vec(cmd(), 1..400), seed in any::<u64>()) {
        let mut ftl = match Ftl::new(s.geo.clone(), s.cfg.clone(), seed) {
            Ok(f) => f,
            Err(e) => { prop_assert!(e.to_string().contains("ftl.")); return Ok(()); }
        };
        ftl.enable_verification();
        let units = ftl.logical_units();
        let cap = ftl.logical_bytes();
        // Shadow: which logical units hold data.
        let mut mapped = vec![false; units as usize];
        // Hammer with a background of overwrites so GC runs hard.
        for i in 0..(units as u64 * 3) {
            let u = (i.wrapping_mul(2654435761) % units as u64) as u32;
            ftl.write(u as u64 * 4096, 4096).unwrap();
            mapped[u as usize] = true;
        }
        ftl.check_invariants().unwrap();
        for c in cmds {
            match c {
                Cmd::Write { unit, byte, len } => {
                    let off = (unit % units) as u64 * 4096 + byte as u64;
                    let len = (len as u64).min(cap - off.min(cap - 1)).max(1);
                    if off + len > cap { continue; }
                    ftl.write(off, len).unwrap();
                    for u in off / 4096..=(off + len - 1) / 4096 { mapped[u as usize] = true; }
                }
                Cmd::Read { unit, units: n } => {
                    let u = unit % units;
                    let n = n.min(units - u);
                    ftl.read(u as u64 * 4096, n as u64 * 4096).unwrap();
                }
                Cmd::Trim { unit, units: n } => {
                    let u = unit % units;
                    let n = n.min(units - u);
                    ftl.trim(u as u64 * 4096, n as u64 * 4096).unwrap();
                    for x in u..u + n { mapped[x as usize] = false; }
                }
                Cmd::Flush => ftl.flush(),
            }
            ftl.check_invariants().unwrap();
        }
        ftl.verify_all_versions().unwrap();
        for (u, &m) in mapped.iter().enumerate() {
            prop_assert_eq!(ftl.lookup(u as u32).is_some(), m, "unit {}", u);
        }
        let c = ftl.census();
        prop_assert_eq!(c.valid + c.invalid + c.free, c.total);
        prop_assert_eq!(c.valid, mapped.iter().filter(|&&m| m).count() as u64);
        prop_assert!(ftl.counters().gc_erases > 0);
    }
}

//! Shared conformance test of the victim-policy contract, plus each policy's defining choice.

use super::*;
use crate::ftl::blocks::{BlockState, BlockTable};

const PLANES: u32 = 2;
const BPP: u32 = 8;
const UPB: u32 = 16;

fn all_configs() -> Vec<VictimConfig> {
    vec![
        VictimConfig::greedy(),
        VictimConfig::CostBenefit,
        VictimConfig::Fifo,
        VictimConfig::Random,
        VictimConfig::DChoices { d: 3 },
    ]
}

/// A table where block b is sealed (in order of id) with `valid[b]` valid units.
fn sealed_table(valid: &[u32]) -> BlockTable {
    let mut t = BlockTable::new(PLANES * BPP, BPP, UPB);
    for (b, &v) in valid.iter().enumerate() {
        t.valid[b] = v;
        t.written[b] = UPB;
        t.state[b] = BlockState::Sealed;
        t.sealed_seq[b] = b as u64 + 1;
        t.modified_at[b] = b as u64 * 10;
    }
    t
}

#[test]
fn conformance() {
    let valid: Vec<u32> = (0..PLANES * BPP).map(|b| (b * 7) % (UPB + 1)).collect();
    for cfg in all_configs() {
        let mut t = sealed_table(&valid);
        let mut p = build(&cfg, PLANES, &t);
        for b in 0..t.len() {
            p.on_sealed(b, &t);
        }
        // Invalidate a few units of some blocks, notifying the policy each time.
        for b in [1u32, 5, 9, 12] {
            while t.valid[b as usize] > 2 {
                t.valid[b as usize] -= 1;
                p.on_invalidated(b, &t);
            }
        }
        // Remove one block by other means: it must never be selected.
        p.remove(3, &t);
        let mut rng = Rng::new(9);
        let mut seen = std::collections::BTreeSet::new();
        for plane in 0..PLANES {
            while let Some(b) = p.select(Scope::Plane(plane), &t, 1_000, &mut rng) {
                assert_eq!(
                    t.plane_of(b),
                    plane,
                    "{}: victim outside the plane",
                    p.name()
                );
                assert!(b != 3, "{}: removed block selected", p.name());
                assert!(seen.insert(b), "{}: block {b} selected twice", p.name());
                t.state[b as usize] = BlockState::Victim;
            }
        }
        assert_eq!(
            seen.len() as u32,
            t.len() - 1,
            "{}: every candidate is eventually selected",
            p.name()
        );
        assert_eq!(
            p.select(Scope::Device, &t, 0, &mut rng),
            None,
            "{}",
            p.name()
        );
        // Re-sealing makes a block a candidate again.
        p.on_sealed(7, &t);
        assert_eq!(
            p.select(Scope::Device, &t, 0, &mut rng),
            Some(7),
            "{}",
            p.name()
        );
    }
}

#[test]
fn greedy_is_min_valid_with_fifo_ties_and_device_scope() {
    let t = sealed_table(&[5, 3, 3, 9, 8, 8, 8, 8, 4, 2, 6, 6, 6, 6, 6, 6]);
    let mut p = build(&VictimConfig::greedy(), PLANES, &t);
    for b in 0..t.len() {
        p.on_sealed(b, &t);
    }
    let mut rng = Rng::new(0);
    assert_eq!(p.select(Scope::Plane(0), &t, 0, &mut rng), Some(1));
    assert_eq!(p.select(Scope::Plane(0), &t, 0, &mut rng), Some(2));
    assert_eq!(p.select(Scope::Device, &t, 0, &mut rng), Some(9)); // valid 2 in plane 1
    assert_eq!(p.select(Scope::Device, &t, 0, &mut rng), Some(8)); // valid 4
    assert_eq!(p.select(Scope::Device, &t, 0, &mut rng), Some(0)); // valid 5
}

#[test]
fn fifo_is_seal_order() {
    let mut t = sealed_table(&[9; 16]);
    t.sealed_seq[4] = 0; // sealed first
    let mut p = build(&VictimConfig::Fifo, PLANES, &t);
    for b in [4, 0, 1, 2, 3, 5, 6, 7, 8] {
        p.on_sealed(b, &t);
    }
    let mut rng = Rng::new(0);
    let order: Vec<u32> = std::iter::from_fn(|| p.select(Scope::Device, &t, 0, &mut rng)).collect();
    assert_eq!(order, vec![4, 0, 1, 2, 3, 5, 6, 7, 8]);
}

#[test]
fn cost_benefit_prefers_old_cold_blocks() {
    // Block 0: u = 0.5, age 1000; block 1: u = 0.25, age 10; block 2: u = 0.5, age 10.
    let mut t = sealed_table(&[8, 4, 8]);
    t.modified_at[0] = 0;
    t.modified_at[1] = 990;
    t.modified_at[2] = 990;
    let s0 = CostBenefit::score(&t, 0, 1000);
    let s1 = CostBenefit::score(&t, 1, 1000);
    assert!((s0 - 1001.0 * 0.5 / 1.0).abs() < 1e-9, "{s0}");
    assert!((s1 - 11.0 * 0.75 / 0.5).abs() < 1e-9, "{s1}");
    let mut p = build(&VictimConfig::CostBenefit, PLANES, &t);
    for b in 0..3 {
        p.on_sealed(b, &t);
    }
    let mut rng = Rng::new(0);
    assert_eq!(p.select(Scope::Plane(0), &t, 1000, &mut rng), Some(0));
    assert_eq!(p.select(Scope::Plane(0), &t, 1000, &mut rng), Some(1));
    // An empty block scores infinity.
    t.valid[2] = 0;
    assert_eq!(CostBenefit::score(&t, 2, 1000), f64::INFINITY);
}

/// Cost-benefit's buckets against scoring every candidate, on seeded events: blocks sealed late (their
/// `modified_at` older than blocks filed before them, as after a flush's padding), several events per
/// clock tick (equal ages: ties go to the lower id), empty and full blocks (every score infinite or
/// zero), plane and device scope.
#[test]
fn cost_benefit_matches_scoring_every_candidate() {
    for seed in [1u64, 2, 3, 99] {
        let mut rng = Rng::new(seed);
        let mut t = BlockTable::new(PLANES * BPP, BPP, UPB);
        let mut p = build(&VictimConfig::CostBenefit, PLANES, &t);
        let mut member = vec![false; t.len() as usize];
        let mut now = 0u64;
        for step in 0..20_000 {
            if rng.chance(0.3) {
                now += 1 + rng.below(3);
            }
            let b = rng.below(t.len() as u64) as u32;
            let i = b as usize;
            match rng.below(10) {
                0..=2 if !member[i] => {
                    // Sealed now, last modified up to 20 ticks ago.
                    t.valid[i] = rng.below(UPB as u64 + 1) as u32;
                    t.modified_at[i] = now.saturating_sub(rng.below(21));
                    t.state[i] = BlockState::Sealed;
                    member[i] = true;
                    p.on_sealed(b, &t);
                }
                3..=7 if member[i] && t.valid[i] > 0 => {
                    t.valid[i] -= 1;
                    t.modified_at[i] = now;
                    p.on_invalidated(b, &t);
                }
                8 if member[i] => {
                    member[i] = false;
                    t.state[i] = BlockState::Free;
                    p.remove(b, &t);
                }
                9 => {
                    let scope = if rng.chance(0.5) {
                        Scope::Plane(rng.below(PLANES as u64) as u32)
                    } else {
                        Scope::Device
                    };
                    let mut best: Option<(f64, u32)> = None;
                    for c in 0..t.len() {
                        let in_scope = match scope {
                            Scope::Plane(q) => c / BPP == q,
                            Scope::Device => true,
                        };
                        if !member[c as usize] || !in_scope {
                            continue;
                        }
                        let u = t.valid[c as usize] as f64 / UPB as f64;
                        let score = if t.valid[c as usize] == 0 {
                            f64::INFINITY
                        } else {
                            ((now - t.modified_at[c as usize]) as f64 + 1.0) * (1.0 - u) / (2.0 * u)
                        };
                        if best.is_none_or(|(s, _)| score > s) {
                            best = Some((score, c));
                        }
                    }
                    let want = best.map(|(_, c)| c);
                    let got = p.select(scope, &t, now, &mut rng);
                    assert_eq!(got, want, "seed {seed}, step {step}, {scope:?}");
                    if let Some(v) = got {
                        member[v as usize] = false;
                        t.state[v as usize] = BlockState::Victim;
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn d_choices_with_large_d_is_greedy_and_random_is_uniform() {
    let valid: Vec<u32> = (0..16).map(|b| 16 - b).collect();
    let t = sealed_table(&valid);
    let mut p = build(&VictimConfig::DChoices { d: 200 }, PLANES, &t);
    for b in 0..16 {
        p.on_sealed(b, &t);
    }
    let mut rng = Rng::new(5);
    assert_eq!(p.select(Scope::Device, &t, 0, &mut rng), Some(15));
    // Random: each of 8 plane-0 candidates is the first pick about 1/8 of the time.
    let mut counts = [0u32; 8];
    for seed in 0..8000 {
        let mut p = build(&VictimConfig::Random, PLANES, &t);
        for b in 0..16 {
            p.on_sealed(b, &t);
        }
        let b = p
            .select(Scope::Plane(0), &t, 0, &mut Rng::new(seed))
            .unwrap();
        counts[b as usize] += 1;
    }
    for c in counts {
        assert!((c as i64 - 1000).abs() < 150, "{counts:?}");
    }
}

//! Differential test of the hybrid device's victim choice: SLC→QLC migration and QLC GC take their
//! victims from the block FTL's victim policies (one instance per region). Here each policy runs in
//! lockstep with a slow twin written for obviousness and sharing no code with it — the hybrid's former
//! full scan of the block table: keep the candidates in a flag vector, stamp a block each time it is
//! sealed or loses a valid unit, and take the sealed block with the fewest valid units and the oldest
//! stamp (greedy: the block that reached its count first) or the oldest seal (FIFO). At every selection
//! the two must agree (cost-benefit's twin scores every candidate: age × (1 − u) / 2u, the highest score
//! and then the lowest id), and the twin checks that its candidates are exactly the region's sealed blocks
//! in the block table (so the FTL told the policy about every candidate and nothing else).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use nandstack_core::Rng;
use nandstack_device::ftl::blocks::{BlockState, BlockTable};
use nandstack_device::ftl::gc::{self, Scope, VictimPolicy};
use nandstack_device::ftl::VictimConfig;
use nandstack_device::hybrid::{HybridDeviceConfig, HybridFtl, HybridParams, Region, SlcLayout};

/// Program mode index of the hybrid's block table.
const SLC: u8 = 0;
const QLC: u8 = 1;

/// The slow twin: a full scan.
#[derive(Clone)]
struct FullScan {
    /// The policy it stands in for: greedy, FIFO or cost-benefit.
    victim: VictimConfig,
    /// Program mode whose sealed blocks are the candidates.
    mode: u8,
    /// Check membership against every sealed block of `mode` (false where other sealed blocks of the
    /// mode are reclaimed otherwise: UST's per-logical-block SLC blocks).
    all_sealed: bool,
    member: Vec<bool>,
    stamp: Vec<u64>,
    clock: u64,
}

impl FullScan {
    fn new(n: u32, mode: u8, victim: &VictimConfig, all_sealed: bool) -> FullScan {
        FullScan {
            victim: victim.clone(),
            mode,
            all_sealed,
            member: vec![false; n as usize],
            stamp: vec![0; n as usize],
            clock: 0,
        }
    }
    fn pick(&mut self, t: &BlockTable, now: u64) -> Option<u32> {
        if self.victim == VictimConfig::CostBenefit {
            return self.pick_cost_benefit(t, now);
        }
        let mut best: Option<(u64, u64, u32)> = None;
        for b in 0..t.valid.len() {
            if self.all_sealed {
                let sealed_here = t.state[b] == BlockState::Sealed && t.mode[b] == self.mode;
                assert_eq!(
                    self.member[b], sealed_here,
                    "block {b}: candidate {} but sealed in mode {} = {sealed_here}",
                    self.member[b], self.mode
                );
            }
            if !self.member[b] {
                continue;
            }
            assert_eq!(
                t.state[b],
                BlockState::Sealed,
                "candidate {b} is not sealed"
            );
            let key = if self.victim == VictimConfig::Fifo {
                (t.sealed_seq[b], 0)
            } else {
                (t.valid[b] as u64, self.stamp[b])
            };
            if best.is_none_or(|(k0, k1, _)| key < (k0, k1)) {
                best = Some((key.0, key.1, b as u32));
            }
        }
        let b = best?.2;
        self.member[b as usize] = false;
        Some(b)
    }

    /// Cost-benefit: every candidate scored, the first (lowest id) of the highest score.
    fn pick_cost_benefit(&mut self, t: &BlockTable, now: u64) -> Option<u32> {
        let mut best: Option<(f64, usize)> = None;
        for b in 0..t.valid.len() {
            if !self.member[b] {
                continue;
            }
            let u = t.valid[b] as f64 / t.units_per_mode[t.mode[b] as usize] as f64;
            let score = if u == 0.0 {
                f64::INFINITY
            } else {
                ((now - t.modified_at[b]) as f64 + 1.0) * (1.0 - u) / (2.0 * u)
            };
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, b));
            }
        }
        let b = best?.1;
        self.member[b] = false;
        Some(b as u32)
    }
}

/// The engine's policy, with its twin beside it.
#[derive(Clone)]
struct Lockstep {
    fast: Box<dyn VictimPolicy>,
    twin: FullScan,
    selections: Arc<AtomicU64>,
}

impl VictimPolicy for Lockstep {
    fn name(&self) -> &'static str {
        "lockstep"
    }
    fn on_sealed(&mut self, block: u32, table: &BlockTable) {
        self.fast.on_sealed(block, table);
        self.twin.clock += 1;
        self.twin.member[block as usize] = true;
        self.twin.stamp[block as usize] = self.twin.clock;
    }
    fn on_invalidated(&mut self, block: u32, table: &BlockTable) {
        self.fast.on_invalidated(block, table);
        assert!(
            self.twin.member[block as usize],
            "invalidation of non-candidate {block}"
        );
        self.twin.clock += 1;
        self.twin.stamp[block as usize] = self.twin.clock;
    }
    fn remove(&mut self, block: u32, table: &BlockTable) {
        self.fast.remove(block, table);
        self.twin.member[block as usize] = false;
    }
    fn select(&mut self, scope: Scope, table: &BlockTable, now: u64, rng: &mut Rng) -> Option<u32> {
        let fast = self.fast.select(scope, table, now, rng);
        let slow = self.twin.pick(table, now);
        assert_eq!(
            fast,
            slow,
            "{} chose {fast:?}, the full scan {slow:?}",
            self.fast.name()
        );
        if let Some(b) = fast {
            assert_eq!(
                table.mode[b as usize], self.twin.mode,
                "victim {b} of the other region"
            );
            self.selections.fetch_add(1, Ordering::Relaxed);
        }
        fast
    }
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// A hybrid device's size: blocks, pages per SLC block (a QLC block holds four times as many), spare share.
#[derive(Clone, Copy, Debug)]
struct Size {
    blocks: u32,
    slc_pages: u32,
    op: f64,
}

/// 64 blocks of 16 KiB pages; 4 pages per SLC block, 16 per QLC block; 25% OP.
const SMALL: Size = Size {
    blocks: 64,
    slc_pages: 4,
    op: 0.25,
};

fn params(slc_victim: VictimConfig, size: Size) -> HybridParams {
    config(slc_victim, size)
        .params()
        .unwrap_or_else(|e| panic!("{size:?}: {e}"))
}

fn config(slc_victim: VictimConfig, size: Size) -> HybridDeviceConfig {
    HybridDeviceConfig {
        total_blocks: Some(size.blocks),
        slc_pages_per_block: Some(size.slc_pages),
        qlc_pages_per_block: Some(4 * size.slc_pages),
        over_provisioning: Some(size.op),
        write_buffer_bytes: Some(8 * 4096),
        slc_victim: Some(slc_victim),
        ..Default::default()
    }
}

/// Run a seeded mix of SLC/QLC writes, reads, TRIMs and resizes with both policies in lockstep;
/// returns the selections made by (SLC, QLC).
fn run(layout: SlcLayout, slc_victim: VictimConfig, seed: u64) -> (u64, u64) {
    run_sized(layout, slc_victim, SMALL, 4000, seed)
}

fn run_sized(
    layout: SlcLayout,
    slc_victim: VictimConfig,
    size: Size,
    ops: u64,
    seed: u64,
) -> (u64, u64) {
    let p = params(slc_victim.clone(), size);
    let n = p.total_blocks;
    let table = BlockTable::with_modes(n, n, &[p.slc_units_per_block, p.qlc_units_per_block]);
    let counts = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let shared = layout == SlcLayout::Shared;
    let slc = Lockstep {
        fast: Box::new(gc::build(&slc_victim, 1, &table)),
        twin: FullScan::new(n, SLC, &slc_victim, shared),
        selections: counts.0.clone(),
    };
    let qlc = Lockstep {
        fast: Box::new(gc::build(&VictimConfig::greedy(), 1, &table)),
        twin: FullScan::new(n, QLC, &VictimConfig::greedy(), true),
        selections: counts.1.clone(),
    };
    let mut f = HybridFtl::with_victims(
        p.clone(),
        layout,
        true,
        seed,
        gc::Victims::Other(Box::new(slc)),
        gc::Victims::Other(Box::new(qlc)),
    );
    let mut rng = Rng::new(seed);
    let logical = p.logical_units as u64;
    let max_slc = size.blocks as u64 * 5 / 8;
    for i in 0..ops {
        let lpn = rng.below(logical * 3 / 4);
        let n = (1 + rng.below(48)).min(logical - lpn);
        match rng.below(20) {
            0..=8 => f.write(lpn, n.min(8), Region::Slc).unwrap(),
            9..=14 => f.write(lpn, n, Region::Qlc).unwrap(),
            15 | 16 => f.read(lpn, n).unwrap(),
            17 => f.trim(lpn, n.min(4)).unwrap(),
            _ => {
                f.set_slc_target(rng.below(max_slc) as u32).unwrap();
            }
        }
        if f.slc_target() > f.max_slc_blocks() {
            f.set_slc_target(f.max_slc_blocks()).unwrap();
        }
        if i % 500 == 0 {
            f.check_invariants()
                .unwrap_or_else(|e| panic!("{size:?} seed {seed} op {i}: {e}"));
        }
    }
    f.set_slc_target(0).unwrap();
    f.flush().unwrap();
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
    (
        counts.0.load(Ordering::Relaxed),
        counts.1.load(Ordering::Relaxed),
    )
}

#[test]
fn hybrid_victims_agree_with_the_full_scan_in_lockstep() {
    for seed in 1..=3 {
        let (slc, qlc) = run(SlcLayout::Shared, VictimConfig::greedy(), seed);
        assert!(
            slc > 100 && qlc > 100,
            "seed {seed}: {slc} SLC, {qlc} QLC selections"
        );
        let (slc, qlc) = run(SlcLayout::Shared, VictimConfig::Fifo, seed);
        assert!(
            slc > 100 && qlc > 100,
            "seed {seed} fifo: {slc} SLC, {qlc} QLC selections"
        );
        let (slc, qlc) = run(SlcLayout::Shared, VictimConfig::CostBenefit, seed);
        assert!(
            slc > 100 && qlc > 100,
            "seed {seed} cost-benefit: {slc} SLC, {qlc} QLC selections"
        );
        let (slc, qlc) = run(
            SlcLayout::PerLogicalBlock { max_blocks: 3 },
            VictimConfig::greedy(),
            seed,
        );
        assert_eq!(slc, 0, "UST reclaims its SLC blocks per logical block");
        assert!(qlc > 100, "seed {seed} UST: {qlc} QLC selections");
    }
}

/// The same lockstep on device sizes drawn at random (32–223 blocks, 2–16 pages per SLC block,
/// 15–40% spare), each with a drawn layout and SLC victim policy. `NANDSTACK_DIFF_GEOMETRIES` sets how
/// many (default 8).
#[test]
fn hybrid_victims_agree_on_random_device_sizes() {
    let count = super::diff_geometries(8);
    let mut rng = Rng::new(0x4b1d);
    let mut refused = 0;
    for g in 0..count {
        let size = Size {
            blocks: 32 + rng.below(192) as u32,
            slc_pages: 2 << rng.below(4),
            op: 0.15 + 0.25 * rng.unit_f64(),
        };
        let victim = match rng.below(3) {
            0 => VictimConfig::greedy(),
            1 => VictimConfig::Fifo,
            _ => VictimConfig::CostBenefit,
        };
        let ust = rng.chance(0.25);
        let layout = if ust {
            SlcLayout::PerLogicalBlock {
                max_blocks: 1 + rng.below(4) as u32,
            }
        } else {
            SlcLayout::Shared
        };
        if let Err(e) = config(victim.clone(), size).params() {
            // Too small for the QLC reserve at this spare share: refused by name.
            let msg = e.to_string();
            assert!(
                msg.contains("over_provisioning") && msg.contains("a full logical space needs"),
                "{size:?} refused with an unexpected error: {msg}"
            );
            refused += 1;
            continue;
        }
        eprintln!("size {g}: {size:?} {victim:?} {layout:?}");
        // Enough operations to wrap the device several times.
        let ops = 6_000 + 60 * size.blocks as u64 * size.slc_pages as u64;
        let (slc, qlc) = run_sized(layout, victim, size, ops, 900 + g);
        if ust {
            assert_eq!(
                slc, 0,
                "{size:?}: UST reclaims its SLC blocks per logical block"
            );
        } else {
            assert!(slc > 20, "{size:?}: {slc} SLC selections");
        }
        assert!(qlc > 20, "{size:?}: {qlc} QLC selections");
    }
    assert!(
        refused * 2 < count,
        "{refused} of {count} sizes refused: the draw should mostly give usable devices"
    );
}

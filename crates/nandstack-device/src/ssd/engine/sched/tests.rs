//! The shared conformance test of the transaction schedulers (the module contract) and hand-checked
//! picks of each policy.

use nandstack_core::Rng;

use super::*;
use crate::ssd::engine::config::SchedulingConfig;

fn all() -> Vec<Box<dyn TxnScheduler>> {
    [
        SchedulerKind::Fifo,
        SchedulerKind::OutOfOrder,
        SchedulerKind::ReadPriority,
        SchedulerKind::Fair,
    ]
    .into_iter()
    .map(|policy| {
        build(
            &SchedulingConfig {
                policy,
                ..SchedulingConfig::default()
            },
            4,
        )
    })
    .collect()
}

fn cand(class: Class, ready: bool, seq: u64, flow: u32) -> Cand {
    Cand {
        class,
        ready,
        seq,
        flow,
        arrival_ns: seq * 1000,
        service_ns: match class {
            Class::Read => 66_000,
            _ => 730_000,
        },
    }
}

fn random_cands(rng: &mut Rng) -> Vec<Cand> {
    let n = 1 + rng.below(12) as usize;
    let mut seq = rng.below(100);
    (0..n)
        .map(|_| {
            seq += 1 + rng.below(3);
            let class = [Class::Read, Class::Write, Class::Gc][rng.below(3) as usize];
            cand(class, rng.chance(0.6), seq, rng.below(3) as u32)
        })
        .collect()
}

#[test]
fn every_policy_keeps_the_contract() {
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed);
        let mut pols = all();
        let mut twins = all();
        for _ in 0..20 {
            let cands = random_cands(&mut rng);
            let now = 200_000 + rng.below(1_000_000);
            let die = rng.below(4) as u32;
            for c in &cands {
                for p in pols.iter_mut().chain(twins.iter_mut()) {
                    p.on_arrival(c.arrival_ns, die, c.flow, c.class);
                }
            }
            let any_ready = cands.iter().any(|c| c.ready);
            for (p, twin) in pols.iter_mut().zip(twins.iter_mut()) {
                let got = p.pick(now, die, &cands);
                // Deterministic: an identical twin fed the same notifications picks the same.
                assert_eq!(got, twin.pick(now, die, &cands), "{} seed {seed}", p.name());
                if let Some(i) = got {
                    assert!(
                        cands[i].ready,
                        "{} picked a waiting one (seed {seed})",
                        p.name()
                    );
                }
                if p.name() == "fifo" {
                    let head = (0..cands.len()).min_by_key(|&i| cands[i].seq).unwrap();
                    assert_eq!(got, cands[head].ready.then_some(head), "seed {seed}");
                } else {
                    assert_eq!(got.is_some(), any_ready, "{} seed {seed}", p.name());
                }
            }
        }
    }
}

#[test]
fn hand_checked_picks() {
    // Arrival order: GC program (seq 1, ready), host write (2, ready), host read (3, ready),
    // host read (4, waiting).
    let cands = [
        cand(Class::Gc, true, 1, 0),
        cand(Class::Write, true, 2, 0),
        cand(Class::Read, true, 3, 1),
        cand(Class::Read, false, 4, 1),
    ];
    assert_eq!(Fifo.pick(0, 0, &cands), Some(0));
    assert_eq!(OutOfOrder.pick(0, 0, &cands), Some(0));
    assert_eq!(ReadPriority.pick(0, 0, &cands), Some(2));
    // The head waits: fifo holds the die, out_of_order takes the oldest ready.
    let waiting_head = [
        cand(Class::Write, false, 1, 0),
        cand(Class::Read, true, 2, 0),
    ];
    assert_eq!(Fifo.pick(0, 0, &waiting_head), None);
    assert_eq!(OutOfOrder.pick(0, 0, &waiting_head), Some(1));
}

#[test]
fn fair_serves_the_light_flow_first_then_the_most_slowed_down() {
    let mut f = Fair::new(1, 1_000_000, 2);
    // Flow 0 is heavy on die 0 (10 arrivals this epoch), flow 1 light (1 arrival).
    for _ in 0..10 {
        f.on_arrival(0, 0, 0, Class::Write);
    }
    f.on_arrival(0, 0, 1, Class::Write);
    let c = |seq: u64, flow: u32, arrival_ns: u64| Cand {
        class: Class::Write,
        ready: true,
        seq,
        flow,
        arrival_ns,
        service_ns: 100_000,
    };
    // The light flow's transaction goes first though it is the youngest.
    let cands = [c(1, 0, 0), c(2, 0, 0), c(3, 1, 50_000)];
    assert_eq!(f.pick(100_000, 0, &cands), Some(2));
    // Two heavy flows: slowdown = (now − arrival + service) / (service + own flow's older service).
    // At now = 400 µs, flow 0's oldest (arrived at 200 µs): 300 / 100 = 3.0; its second: 300 / 200 =
    // 1.5; flow 2's only one (arrived at 100 µs, queued here later): 400 / 100 = 4.0: it goes.
    for _ in 0..10 {
        f.on_arrival(0, 0, 2, Class::Write);
    }
    let cands = [c(1, 0, 200_000), c(2, 0, 200_000), c(3, 2, 100_000)];
    assert_eq!(f.pick(400_000, 0, &cands), Some(2));
    // Without it, flow 0's oldest (3.0 against 1.5).
    assert_eq!(f.pick(400_000, 0, &cands[..2]), Some(0));
    // In a new epoch the counts restart: everyone is light again, oldest first.
    assert_eq!(f.pick(1_500_000, 0, &cands), Some(0));
}

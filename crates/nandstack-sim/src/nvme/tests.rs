//! The arbitration contract for every policy, hand-computed fetch orders, and the link's times.

use super::*;
use crate::config::FlowPriority::{Normal, Urgent};

/// Fetch until every queue is empty; the order of queues fetched from.
fn drain(a: &mut dyn Arbiter, mut waiting: Vec<u32>) -> Vec<usize> {
    let mut order = Vec::new();
    while let Some(i) = a.pick(&waiting) {
        assert!(waiting[i] > 0, "{}: picked the empty queue {i}", a.name());
        waiting[i] -= 1;
        order.push(i);
        assert!(order.len() < 10_000);
    }
    assert!(
        waiting.iter().all(|&w| w == 0),
        "{}: not work-conserving",
        a.name()
    );
    order
}

fn every_policy(flows: &[(u32, FlowPriority)]) -> Vec<Box<dyn Arbiter>> {
    vec![
        build(Arbitration::RoundRobin, flows),
        build(Arbitration::WeightedRoundRobin, flows),
    ]
}

#[test]
fn conformance_work_conserving_and_no_starvation_within_a_class() {
    let flows = [(1, Normal), (4, Normal), (2, Normal), (1, Normal)];
    for mut a in every_policy(&flows) {
        assert_eq!(a.pick(&[0, 0, 0, 0]), None, "{}", a.name());
        drain(a.as_mut(), vec![3, 0, 7, 1]);
        // Queues that never empty: each is served within one round (the sum of the weights).
        let mut waiting = vec![u32::MAX / 2; 4];
        let mut last = [0usize; 4];
        for k in 1..=200 {
            let i = a.pick(&waiting).expect("work to do");
            waiting[i] -= 1;
            last[i] = k;
            for (q, &l) in last.iter().enumerate() {
                assert!(k - l <= 8, "{}: queue {q} starved at pick {k}", a.name());
            }
        }
    }
}

#[test]
fn round_robin_takes_one_command_per_queue_in_turn() {
    let mut a = RoundRobin::default();
    assert_eq!(drain(&mut a, vec![2, 1, 3]), [0, 1, 2, 0, 2, 2]);
}

#[test]
fn weighted_round_robin_bursts_by_weight_and_serves_urgent_first() {
    let mut a = WeightedRoundRobin::new(&[(3, Normal), (1, Normal)]);
    assert_eq!(drain(&mut a, vec![7, 3]), [0, 0, 0, 1, 0, 0, 0, 1, 0, 1]);
    // An urgent queue goes before every normal one, whatever the weights.
    let mut a = WeightedRoundRobin::new(&[(5, Normal), (1, Urgent), (1, Urgent)]);
    assert_eq!(drain(&mut a, vec![2, 2, 1]), [1, 2, 1, 0, 0]);
    // A queue that empties in its turn passes the turn on; the next turn starts a fresh burst.
    let mut a = WeightedRoundRobin::new(&[(2, Normal), (2, Normal)]);
    assert_eq!(a.pick(&[1, 5]), Some(0));
    assert_eq!(a.pick(&[0, 4]), Some(1));
    assert_eq!(a.pick(&[3, 3]), Some(1));
    assert_eq!(a.pick(&[3, 2]), Some(0));
}

#[test]
fn link_moves_data_at_lanes_times_rate_first_come_first_served() {
    // PCIe 3.0 x4: 4 × 8 GT/s × 128/130 ÷ 8 = 3.938 GB/s; 4 KiB take 4096 × 130 × 8 / (4 × 8 × 128)
    // = 1040 ns.
    let cfg = crate::config::NvmeConfig {
        link_lanes: 4,
        ..Default::default()
    };
    let rate = cfg.link_bytes_per_s().unwrap();
    assert!((rate - 3.938_461_5e9).abs() < 1e3, "{rate}");
    let mut l = Link::new(rate);
    assert_eq!(l.transfer(Dir::ToDevice, 0, 4096), 1040);
    // The second transfer waits for the first; the other direction does not.
    assert_eq!(l.transfer(Dir::ToDevice, 500, 4096), 2080);
    assert_eq!(l.transfer(Dir::ToHost, 500, 4096), 1540);
    assert_eq!(l.transfer(Dir::ToDevice, 5000, 8192), 5000 + 2080);
    assert_eq!(l.busy_ns, 1040 * 5);
}

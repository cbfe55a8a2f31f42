//! The event-driven issuer: against the classic issuer (its independent twin for one flow and a
//! neutral front end), hand-computed timelines of the link and the command overhead, and fetch orders
//! of the arbiters end to end.

use nandstack_workload::BlockGenerator;

use super::*;
use crate::config::{Arbitration, NvmeConfig, SimConfig};
use crate::drive::drive;

/// One channel, one die, one plane of TLC: every 4 KiB read of mapped data takes tR + one transfer.
const TINY: &str = r#"
[device]
kind = "block"
[device.geometry]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 64
pages_per_block = 16
page_size_bytes = 4096
cell_mode = "tlc"
[device.ftl]
over_provisioning = 0.5
[precondition]
warmup_capacity_multiples = 0.0
"#;
const TR: u64 = 66_000;
const X: u64 = 5_120;

fn device(extra: &str) -> (SimConfig, Box<dyn Device>) {
    let cfg = SimConfig::from_toml(&format!("{TINY}\n{extra}")).unwrap();
    let dev = nandstack_device::spec::build_for_block_requests(&cfg.device, cfg.seed, true, None)
        .unwrap();
    (cfg, dev)
}

/// Every unit written once (untimed), so reads find their data on flash.
fn fill(dev: &mut dyn Device) {
    for u in 0..dev.capacity_bytes() / 4096 {
        dev.precondition(Command::write(u * 4096, 4096)).unwrap();
    }
    dev.precondition(Command::Flush).unwrap();
    dev.reset_counters();
}

fn source(cfg: &SimConfig, dev: &dyn Device, seed: u64, requests: u64) -> Source {
    let gen = BlockGenerator::new(&cfg.workload.synthetic, dev.capacity_bytes(), seed).unwrap();
    Source::synthetic(gen, requests)
}

fn input<'s>(
    name: &str,
    source: &'s mut Source,
    qd: u32,
    weight: u32,
    p: FlowPriority,
) -> FlowInput<'s> {
    FlowInput {
        name: name.into(),
        source,
        queue_depth: qd,
        weight,
        priority: p,
    }
}

fn run(dev: &mut dyn Device, flows: Vec<FlowInput>, io: &IoConfig) -> (Measured, Vec<FlowReport>) {
    let mut cb = |_: &crate::Progress| true;
    let mut ticker = Ticker::new("measure", 0, &mut cb).unwrap();
    let mut checks = Checks {
        enabled: true,
        every: 500,
        done: 0,
    };
    let iv = Intervals::new(0, 0, 0.0, Some(1000));
    drive_flows(dev, flows, io, iv, &mut checks, &mut ticker, None).unwrap()
}

/// One flow, no front end, a device that answers at submission: the event-driven issuer gives every
/// figure the classic issuer gives (closed loop at several depths, and open loop).
#[test]
fn one_flow_without_a_front_end_matches_the_classic_issuer() {
    for (extra, qd) in [
        ("[workload]\nread_fraction = 0.5\npattern = \"zipf\"", 1),
        ("[workload]\nread_fraction = 0.3", 8),
        ("[workload]\nread_fraction = 0.6\narrival_iops = 5000.0\n[workload.io]\nmode = \"open_loop\"", 4),
    ] {
        let (cfg, mut a) = device(extra);
        let (_, mut b) = device(extra);
        let io = IoConfig {
            queue_depth: qd,
            ..cfg.workload.io.clone()
        };
        let n = 3000;
        let mut cb = |_: &crate::Progress| true;
        let mut ticker = Ticker::new("measure", 0, &mut cb).unwrap();
        let mut checks = Checks {
            enabled: false,
            every: 1,
            done: 0,
        };
        let mut src = source(&cfg, a.as_ref(), 3, n);
        let iv = Intervals::new(0, 0, 0.0, Some(n));
        let classic = drive(a.as_mut(), &mut src, &io, iv, &mut checks, &mut ticker, None).unwrap();
        let mut src_b = source(&cfg, b.as_ref(), 3, n);
        let flows = vec![input("f", &mut src_b, qd, 1, FlowPriority::Normal)];
        let (ev, reports) = run(b.as_mut(), flows, &io);
        assert_eq!(classic.requests, ev.requests, "{extra}");
        assert_eq!(classic.sim_ns, ev.sim_ns, "{extra}");
        assert_eq!(classic.flush_done_ns, ev.flush_done_ns, "{extra}");
        for (x, y) in [(&classic.reads, &ev.reads), (&classic.writes, &ev.writes)] {
            assert_eq!(x.percentiles(1.0), y.percentiles(1.0), "{extra}");
        }
        assert_eq!(a.stats(), b.stats(), "{extra}");
        assert_eq!(reports[0].requests, n);
        assert!(a.stats().host_write_requests > 500 && a.stats().host_read_requests > 500);
    }
}

/// A read crosses the link after the device, a write before it; each command pays the overhead once.
#[test]
fn link_and_command_overhead_by_hand() {
    let (cfg, mut dev) = device("[workload]\nread_fraction = 1.0");
    fill(dev.as_mut());
    let io = IoConfig {
        queue_depth: 1,
        nvme: NvmeConfig {
            link_lanes: 4,
            command_overhead_us: 1.6,
            ..Default::default()
        },
        ..cfg.workload.io.clone()
    };
    let mut src = source(&cfg, dev.as_ref(), 1, 3);
    let flows = vec![input("r", &mut src, 1, 1, FlowPriority::Normal)];
    let (m, _) = run(dev.as_mut(), flows, &io);
    // Overhead 1.6 µs, tR, the channel, then 4 KiB over a PCIe 3.0 x4 link: 1040 ns.
    let one = 1_600 + TR + X + 1_040;
    let p = m.reads.percentiles(1.0);
    assert_eq!((p.count, p.max, p.mean), (3, one as f64, one as f64));
    assert_eq!(m.sim_ns, 3 * one);
}

/// Two saturating flows on a device that serves one command at a time (one controller slot, reads of
/// one die): the fetch order decides when each flow finishes, to the command.
#[test]
fn arbitration_decides_the_order_of_service() {
    let s = TR + X; // one read, served alone
    let n = 30;
    let cases = [
        // (arbitration, weights, priorities, last completion of flow 0 and flow 1 in units of s)
        // Alternating: flow 0's 30th command is the 59th fetched.
        (
            Arbitration::RoundRobin,
            [3, 1],
            [FlowPriority::Normal; 2],
            [59, 60],
        ),
        // Rounds of 0, 0, 0, 1: flow 0's 30th command is the 39th fetched.
        (
            Arbitration::WeightedRoundRobin,
            [3, 1],
            [FlowPriority::Normal; 2],
            [39, 60],
        ),
        (
            Arbitration::WeightedRoundRobin,
            [1, 1],
            [FlowPriority::Normal, FlowPriority::Urgent],
            [60, 30],
        ),
    ];
    for (arb, w, p, last) in cases {
        let (cfg, mut dev) = device("[workload]\nread_fraction = 1.0");
        fill(dev.as_mut());
        let io = IoConfig {
            nvme: NvmeConfig {
                arbitration: arb,
                controller_slots: 1,
                ..Default::default()
            },
            ..cfg.workload.io.clone()
        };
        let mut srcs: Vec<_> = (0..2)
            .map(|i| source(&cfg, dev.as_ref(), 10 + i as u64, n))
            .collect();
        let flows = srcs
            .iter_mut()
            .enumerate()
            .map(|(i, src)| input(&format!("f{i}"), src, 4, w[i], p[i]))
            .collect();
        let (m, r) = run(dev.as_mut(), flows, &io);
        assert_eq!(m.requests, 2 * n);
        let span = |f: &FlowReport| (f.requests as f64 * 1e9 / f.iops).round() as u64;
        assert_eq!(
            [span(&r[0]), span(&r[1])],
            [last[0] * s, last[1] * s],
            "{arb:?} {w:?} {p:?}"
        );
        assert_eq!(m.sim_ns, 2 * n * s);
    }
}

//! Hand-computed timelines of the queued engine, fed with hand-written flash operations (no FTL).
//! Default TLC timing: tR 66 µs, tPROG 730 µs, tBERS 4.8 ms; 800 MB/s channel: 4 KiB = 5.12 µs.

use super::*;
use crate::ftl::ops::{FlashOp, OpCause, OpKind};
use crate::nand::{CellMode, LevelOrder, PageLevels, TimingConfig};
use crate::ssd::ControllerConfig;

const X: u64 = 5_120;
const TR: u64 = 66_000;
const TP: u64 = 730_000;
const TE: u64 = 4_800_000;
const US: u64 = 1_000;

struct Rig {
    eng: Engine,
    tl: Timelines,
    done: Vec<(Tag, u64)>,
    free: u32,
}

/// One channel; `dies` dies of `planes` planes; 16 blocks of 4 pages of 4 KiB per plane.
fn rig_with(dies: u32, planes: u32, ctl: ControllerConfig, timing: TimingConfig) -> Rig {
    let geo = Geometry {
        channels: 1,
        chips_per_channel: dies,
        dies_per_chip: 1,
        planes_per_die: planes,
        blocks_per_plane: 16,
        pages_per_block: 4,
        page_size_bytes: 4096,
        cell_mode: CellMode::Tlc,
    };
    Rig {
        eng: Engine::new(&geo, false, &ctl, true),
        tl: Timelines::new(&geo, &timing),
        done: Vec::new(),
        free: 10,
    }
}

fn rig(dies: u32, planes: u32, ctl: ControllerConfig) -> Rig {
    rig_with(dies, planes, ctl, TimingConfig::default())
}

fn op(kind: OpKind, cause: OpCause, plane: u32, block: u32, page: u32) -> FlashOp {
    FlashOp {
        kind,
        cause,
        plane,
        units: 1,
        block,
        page,
    }
}
use OpCause::{Gc, Host};
use OpKind::{Erase, Program, Read, Transfer};

/// A host write of one unit to (plane, block, page): its data transfer and the page's program.
fn write(plane: u32, block: u32, page: u32) -> Vec<FlashOp> {
    vec![
        op(Transfer, Host, plane, block, page),
        op(Program, Host, plane, block, page),
    ]
}

impl Rig {
    /// Submit command `id` (flow `flow`) at `at` (its flash work may start at once).
    fn cmd(&mut self, at: u64, id: u64, flow: u32, ops: &[FlashOp]) {
        self.eng.advance(&mut self.tl, at);
        let spec = CmdSpec {
            tag: Some(Tag { id, flow }),
            flow,
            wait_for_programs: true,
            min_done: 0,
            post_ns: 0,
            host: true,
        };
        let free = self.free;
        self.eng.submit(&mut self.tl, at, ops, spec, &|_| free);
    }
    /// Run to the end; the completion time of every command by id.
    fn run(&mut self) -> Vec<(u64, u64)> {
        while let Some(t) = self.eng.next_event() {
            self.eng.advance(&mut self.tl, t);
        }
        self.eng.drain_completions(&mut self.done);
        let mut v: Vec<(u64, u64)> = self.done.iter().map(|(t, d)| (t.id, *d)).collect();
        v.sort();
        v
    }
    fn at(&mut self, id: u64) -> u64 {
        self.run()
            .iter()
            .find(|(i, _)| *i == id)
            .map(|&(_, d)| d)
            .expect("completed")
    }
}

fn ctl(f: impl FnOnce(&mut ControllerConfig)) -> ControllerConfig {
    let mut c = ControllerConfig::default();
    c.scheduling.engine = EngineChoice::Queued;
    f(&mut c);
    c
}

#[test]
fn fifo_gives_the_direct_engines_closed_forms() {
    let mut r = rig(1, 1, ctl(|_| {}));
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(100 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    // Program 5.12 → 735.12 µs; the read waits for it, senses and moves its 4 KiB out.
    assert_eq!(r.run(), [(1, X + TP), (2, X + TP + TR + X)]);
    assert!(r.eng.next_event().is_none());
}

/// Two writes queued on one die, then a read: fifo and out_of_order keep the arrival order, read
/// priority lets the read pass the queued (not yet started) program.
#[test]
fn read_priority_passes_a_queued_program() {
    let expect = [
        (SchedulerKind::Fifo, X + 2 * TP + TR + X, X + 2 * TP),
        (SchedulerKind::OutOfOrder, X + 2 * TP + TR + X, X + 2 * TP),
        (
            SchedulerKind::ReadPriority,
            X + TP + TR + X,
            X + 2 * TP + TR + X,
        ),
    ];
    for (policy, read_done, second_write_done) in expect {
        let mut r = rig(1, 1, ctl(|c| c.scheduling.policy = policy));
        r.cmd(0, 1, 0, &write(0, 0, 0));
        r.cmd(0, 2, 0, &write(0, 0, 1));
        r.cmd(100 * US, 3, 0, &[op(Read, Host, 0, 1, 0)]);
        let got = r.run();
        assert_eq!(got[0], (1, X + TP), "{policy:?}");
        assert_eq!(got[1], (2, second_write_done), "{policy:?}");
        assert_eq!(got[2], (3, read_done), "{policy:?}");
    }
}

/// A read of a page whose program is still queued waits for that program, whatever the policy.
#[test]
fn a_read_never_passes_the_program_of_its_page() {
    let mut r = rig(
        1,
        1,
        ctl(|c| c.scheduling.policy = SchedulerKind::ReadPriority),
    );
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(0, 2, 0, &write(0, 0, 1));
    r.cmd(100 * US, 3, 0, &[op(Read, Host, 0, 0, 1)]);
    assert_eq!(r.at(3), X + 2 * TP + TR + X);
}

/// A program whose data is late (its transfer waits for GC on another die): fifo holds its die, so a
/// read arriving later waits; out_of_order serves the read meanwhile.
#[test]
fn out_of_order_does_not_hold_a_die_for_a_waiting_program() {
    let c1 = [
        op(Erase, Gc, 1, 16, 0), // GC erase on die 1 (blocks 16.. are plane 1's)
        op(Transfer, Host, 0, 0, 0),
        op(Program, Host, 0, 0, 0),
    ];
    for (policy, read_done) in [
        (SchedulerKind::Fifo, TE + X + TP + TR + X),
        (SchedulerKind::OutOfOrder, 10 * US + TR + X),
    ] {
        let mut r = rig(2, 1, ctl(|c| c.scheduling.policy = policy));
        r.cmd(0, 1, 0, &c1);
        r.cmd(10 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
        let got = r.run();
        assert_eq!(got[0], (1, TE + X + TP), "{policy:?}");
        assert_eq!(got[1], (2, read_done), "{policy:?}");
    }
}

#[test]
fn a_read_suspends_a_program_and_the_program_resumes() {
    let susp = |min_left: f64, resume: f64, max: u32| {
        ctl(move |c| {
            c.suspension.program = true;
            c.suspension.program_suspend_us = 100.0;
            c.suspension.program_min_remaining_us = min_left;
            c.suspension.resume_us = resume;
            c.suspension.max_per_operation = max;
        })
    };
    // Program 5.12 → 735.12 µs; a read at 100 µs: 635.12 µs left → suspended; the die is free at 200 µs,
    // the read senses and is out at 271.12 µs, the program resumes with 635.12 µs to go.
    let mut r = rig(1, 1, susp(100.0, 0.0, 4));
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(100 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    assert_eq!(r.run(), [(1, 271_120 + 635_120), (2, 271_120)]);
    assert_eq!(r.eng.counters.program_suspensions, 1);
    // Resume latency adds to the program.
    let mut r = rig(1, 1, susp(100.0, 20.0, 4));
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(100 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    assert_eq!(r.run(), [(1, 271_120 + 20 * US + 635_120), (2, 271_120)]);
    // Too little left: no suspension, the read waits.
    let mut r = rig(1, 1, susp(700.0, 0.0, 4));
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(100 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    assert_eq!(r.at(2), X + TP + TR + X);
    // Two reads in one suspension, served one after the other before the resume.
    let mut r = rig(1, 1, susp(100.0, 0.0, 4));
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(100 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    r.cmd(150 * US, 3, 0, &[op(Read, Host, 0, 2, 0)]);
    assert_eq!(
        r.run(),
        [(1, 342_240 + 635_120), (2, 271_120), (3, 342_240)]
    );
    // A second read after the resume: suspended again (max 2) or not (max 1). After the first
    // resume at 271.12 µs the program ends at 906.24 µs; a read at 300 µs finds 606.24 µs left.
    for (max, read2, prog) in [
        (1, 906_240 + TR + X, 906_240),
        (2, 400_000 + TR + X, 471_120 + 606_240),
    ] {
        let mut r = rig(1, 1, susp(100.0, 0.0, max));
        r.cmd(0, 1, 0, &write(0, 0, 0));
        r.cmd(100 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
        r.cmd(300 * US, 3, 0, &[op(Read, Host, 0, 2, 0)]);
        assert_eq!(r.run(), [(1, prog), (2, 271_120), (3, read2)], "max {max}");
    }
}

#[test]
fn a_read_suspends_an_erase() {
    let c = ctl(|c| c.suspension.erase = true); // MQSim's 700 µs suspend, 700 µs minimum left
    let mut r = rig(1, 1, c);
    r.cmd(0, 1, 0, &[op(Erase, Gc, 0, 3, 0)]);
    r.cmd(1000 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    // 3.8 ms left at 1 ms: the die is free at 1.7 ms, the read is out at 1.77112 ms, then 3.8 ms more.
    assert_eq!(r.run(), [(1, 1_771_120 + 3_800_000), (2, 1_771_120)]);
    assert_eq!(r.eng.counters.erase_suspensions, 1);
    // Program suspension alone does not touch erases.
    let mut r = rig(1, 1, ctl(|c| c.suspension.program = true));
    r.cmd(0, 1, 0, &[op(Erase, Gc, 0, 3, 0)]);
    r.cmd(1000 * US, 2, 0, &[op(Read, Host, 0, 1, 0)]);
    assert_eq!(r.at(2), TE + TR + X);
}

/// A write that triggered GC of two pages (copyback) and a read on the same die 10 µs later.
#[test]
fn semi_preemptible_gc_lets_host_work_between_page_moves() {
    let gc_write = [
        op(Read, Gc, 0, 0, 0),
        op(Read, Gc, 0, 0, 1),
        op(Program, Gc, 0, 1, 0),
        op(Program, Gc, 0, 1, 1),
        op(Erase, Gc, 0, 0, 0),
        op(Transfer, Host, 0, 2, 0),
        op(Program, Host, 0, 2, 0),
    ];
    let gc = 2 * TR + 2 * TP + TE;
    let run = |preempt: bool, policy: SchedulerKind, free: u32| {
        let mut r = rig(
            1,
            1,
            ctl(|c| {
                c.gc_preemption.enabled = preempt;
                c.scheduling.policy = policy;
            }),
        );
        r.free = free;
        r.cmd(0, 1, 0, &gc_write);
        r.cmd(10 * US, 2, 0, &[op(Read, Host, 0, 3, 0)]);
        r.run()
    };
    // Non-preemptive: the write's data waits for the whole GC, the read for the write's program.
    let write_done = gc + X + TP;
    assert_eq!(
        run(false, SchedulerKind::Fifo, 10),
        [(1, write_done), (2, write_done + TR + X)]
    );
    // Semi-preemptible: the first GC read runs (0 → 66 µs), then the host program (its data came in at
    // 5.12 µs) and the read go before the rest of the GC; the write does not wait for its GC.
    assert_eq!(
        run(true, SchedulerKind::Fifo, 10),
        [(1, TR + TP), (2, TR + TP + TR + X)]
    );
    // With read priority the read goes first.
    assert_eq!(
        run(true, SchedulerKind::ReadPriority, 10),
        [(1, TR + TR + X + TP), (2, TR + TR + X)]
    );
    // Urgent (the plane has 2 free blocks, the erase in flight leaves 1 ≤ 1): like non-preemptive.
    assert_eq!(
        run(true, SchedulerKind::Fifo, 2),
        [(1, write_done), (2, write_done + TR + X)]
    );
}

#[test]
fn multi_plane_commands_share_one_array_time() {
    for (mp, progs_done, reads_done) in [
        (false, 50 * US + 2 * TP, 2_000 * US + 2 * (TR + X)),
        (true, 50 * US + TP, 2_000 * US + TR + 2 * X),
    ] {
        let mut r = rig(1, 2, ctl(|c| c.scheduling.multi_plane = mp));
        // The data of one page per plane arrives first (a command that fills no page), then a command
        // programs both pages (plane 1's blocks start at 16).
        r.cmd(
            0,
            1,
            0,
            &[op(Transfer, Host, 0, 0, 0), op(Transfer, Host, 1, 16, 0)],
        );
        r.cmd(
            50 * US,
            2,
            0,
            &[op(Program, Host, 0, 0, 0), op(Program, Host, 1, 16, 0)],
        );
        // Two reads of page 0 on both planes: one sensing, the data out one plane after the other.
        r.cmd(
            2_000 * US,
            3,
            0,
            &[op(Read, Host, 0, 0, 0), op(Read, Host, 1, 16, 0)],
        );
        let got = r.run();
        assert_eq!(got[1], (2, progs_done), "multi_plane {mp}");
        assert_eq!(got[2], (3, reads_done), "multi_plane {mp}");
        assert_eq!(r.eng.counters.multi_plane_programs, u64::from(mp));
        assert_eq!(r.eng.counters.multi_plane_reads, u64::from(mp));
    }
}

/// A heavy flow queues ten programs on one die; a light flow's write arrives later.
#[test]
fn the_fair_scheduler_serves_a_light_flow_before_a_heavy_one() {
    for (policy, light_done) in [
        (SchedulerKind::Fifo, X + 11 * TP),
        (SchedulerKind::Fair, X + TP + TP),
    ] {
        let mut r = rig(1, 1, ctl(|c| c.scheduling.policy = policy));
        for i in 0..10 {
            r.cmd(0, i, 0, &write(0, i as u32 / 4, i as u32 % 4));
        }
        r.cmd(100 * US, 99, 1, &write(0, 8, 0));
        let got = r.run();
        // Heavy flow: programs back to back from 5.12 µs.
        assert_eq!(got[0], (0, X + TP), "{policy:?}");
        assert_eq!(got.last().unwrap().0, 99);
        assert_eq!(got.last().unwrap().1, light_done, "{policy:?}");
    }
}

#[test]
fn per_level_program_and_read_times() {
    let timing = TimingConfig {
        page_levels: Some(PageLevels {
            read_us: vec![50.0, 70.0, 90.0],
            program_us: vec![400.0, 700.0, 1000.0],
            order: LevelOrder::WordLine,
        }),
        ..TimingConfig::default()
    };
    let mut r = rig_with(1, 1, ctl(|_| {}), timing);
    r.cmd(0, 1, 0, &write(0, 0, 0));
    r.cmd(0, 2, 0, &write(0, 0, 1));
    r.cmd(0, 3, 0, &write(0, 0, 2));
    r.cmd(5_000 * US, 4, 0, &[op(Read, Host, 0, 0, 2)]);
    assert_eq!(
        r.run(),
        [
            (1, X + 400 * US),
            (2, X + 1_100 * US),
            (3, X + 2_100 * US),
            (4, 5_000 * US + 90 * US + X)
        ]
    );
}

//! The queued (event-driven) controller: the FTL's operations of each command become flash
//! transactions with their dependencies; every die keeps a queue of the transactions addressed to it,
//! and whenever a die or a channel frees up (or a transaction becomes ready) the scheduler decides what
//! the die does next. Completion times therefore depend on commands submitted later — a read may pass a
//! queued program, suspend a running one, or interleave with GC — so the device answers through
//! [`crate::Device::enqueue`] / [`crate::Device::advance`] instead of at submission.
//!
//! # Transactions and their dependencies (the direct engine's rules, `ssd/schedule.rs`, as a graph)
//! * Every transaction of a command waits for the command's gate (the controller CPU is done with it).
//! * A mapping (translation) read waits for the mapping reads before it in the command; every other
//!   read and every data transfer of the command waits for them too.
//! * GC and wear-levelling reads start at once; GC programs and erases wait for the GC reads logged before
//!   them (their data); a GC program through the controller first moves its page in over the channel.
//! * Host data transfers wait for the command's GC logged before them (foreground GC blocks the command
//!   — unless semi-preemptible GC lets the write go on) and for its read-modify-write reads; a page
//!   program waits for every transfer into its plane since the plane's last program.
//! * Physical order per block: programs of a block in page order and after a pending erase of it; a read
//!   of a page after that page's pending program; an erase after every pending read and program of the
//!   block.
//!
//! A command completes when its tracked transactions are done (reads out, data in, GC done, mapping
//! reads done; programs too when it waits for them), no earlier than its fixed lower bound (the DRAM
//! access of a buffered write), plus its fixed post time (TRIM overhead).
//!
//! # Resources
//! An array (a die, or a plane with `plane_parallelism`) runs one operation at a time: a read senses,
//! then holds the die until its data is out over the channel; a program or erase holds it for its time.
//! A channel moves one transfer at a time, first come first served. Suspension, multi-plane commands
//! and the GC rules are in `die.rs`; the scheduling policies in `sched/`.

mod build;
pub mod config;
mod die;
pub mod sched;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde::Serialize;

pub use config::{
    EngineChoice, GcPageMoves, GcPreemptionConfig, SchedulerKind, SchedulingConfig,
    SuspensionConfig,
};
use sched::{Class, TxnScheduler};

use crate::device::Tag;
use crate::nand::{Geometry, Timelines};

const NONE: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Read,
    Program,
    Erase,
    /// Data into a die's register over the channel (no array time).
    Xfer,
    /// A join of other transactions (no resource): done when they are.
    Join,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum St {
    Waiting,
    Ready,
    Running,
    Done,
}

/// One flash transaction.
#[derive(Clone, Debug)]
struct Txn {
    kind: Kind,
    class: Class,
    st: St,
    plane: u32,
    block: u32,
    page: u32,
    /// Read: bytes out over the channel after sensing; transfer: bytes in.
    bytes: u64,
    cmd: u32,
    flow: u32,
    seq: u64,
    /// Dependencies not yet done.
    waiting: u32,
    /// Transactions that depend on this one.
    out: Vec<u32>,
    /// Its command waits for it.
    tracked: bool,
    /// Part of a GC job that runs first on its die once started (non-preemptive or urgent GC).
    prio_gc: bool,
    /// Part of an urgent GC job (never suspended, goes before host work).
    urgent: bool,
    /// Sits in its plane's list of transfers a program must wait for.
    plane_xfer: bool,
}

/// One host (or background) command in flight.
#[derive(Clone, Debug)]
struct Cmd {
    tag: Option<Tag>,
    outstanding: u32,
    /// Completion no earlier than this, ns.
    min_done: u64,
    /// Added after the tracked transactions, ns.
    post_ns: u64,
    arrival_ns: u64,
    /// Latest end of a tracked transaction so far (starts at the gate time).
    last_ns: u64,
    /// A host command (counts for the idle detector).
    host: bool,
}

/// What the engine did, for the summary (`device.scheduling`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EngineCounters {
    pub transactions: u64,
    pub program_suspensions: u64,
    pub erase_suspensions: u64,
    /// Reads served while a program or erase was suspended.
    pub reads_during_suspension: u64,
    pub multi_plane_reads: u64,
    pub multi_plane_programs: u64,
    pub multi_plane_erases: u64,
    /// Commands whose GC was semi-preemptible (host work went first, the write did not wait).
    pub preemptible_gc_commands: u64,
    /// Commands whose GC was urgent (ran first and blocked the write).
    pub urgent_gc_commands: u64,
    /// Background (idle-time) GC victims collected through the queued engine.
    pub background_gc_commands: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A command's gate opens (its transactions may start).
    Gate(u32),
    /// The array operation of a die ends (stale if the token changed: suspended).
    DieEnd(u32, u32),
    /// A die's suspend latency has passed: it may serve reads.
    SuspendReady(u32, u32),
    /// A channel transfer ends.
    ChanEnd(u32),
    /// A command completes at a time after its last transaction (lower bound or post time).
    CmdDone(u32),
}

/// What a command submitted to the engine is.
#[derive(Copy, Clone, Debug)]
pub(crate) struct CmdSpec {
    pub tag: Option<Tag>,
    pub flow: u32,
    pub wait_for_programs: bool,
    pub min_done: u64,
    pub post_ns: u64,
    pub host: bool,
}

/// A running (or suspended) array operation.
#[derive(Clone, Debug)]
struct Active {
    txns: Vec<u32>,
    kind: Kind,
    /// When the current busy segment started (busy-time accounting).
    seg_start: u64,
    /// Array end (running) or time left (suspended), ns.
    end: u64,
    /// Waiting for / using the channel (reads, after sensing).
    out_phase: bool,
    urgent: bool,
    suspensions: u32,
}

#[derive(Clone, Debug, Default)]
struct Die {
    /// Transactions addressed to this die, not started, in arrival order.
    pending: Vec<u32>,
    active: Option<Active>,
    suspended: Option<Active>,
    /// Reserved until then by a suspend command.
    suspending_until: u64,
    token: u32,
    /// The prioritised GC job started here (command id), or NONE.
    gc_job: u32,
}

#[derive(Copy, Clone, Debug)]
struct ChanReq {
    /// The die whose read data goes out, or NONE for a transfer in (`txn`).
    die: u32,
    txn: u32,
    bytes: u64,
}

#[derive(Clone, Debug, Default)]
struct Chan {
    queue: VecDeque<ChanReq>,
    cur: Option<ChanReq>,
}

#[derive(Clone)]
pub(crate) struct Engine {
    now: u64,
    seq: u64,
    ev_seq: u64,
    events: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    txns: Vec<Txn>,
    free_txns: Vec<u32>,
    cmds: Vec<Cmd>,
    free_cmds: Vec<u32>,
    dies: Vec<Die>,
    chans: Vec<Chan>,
    /// Per block: its pending reads, programs and erases, in arrival order.
    block_q: Vec<Vec<u32>>,
    /// Per plane: transfers since its last program (the next program needs their data).
    plane_xfers: Vec<Vec<u32>>,
    /// Per plane: erases not yet done.
    pending_erases: Vec<u32>,
    planes_per_array: u32,
    planes_per_channel: u32,
    page_bytes: u64,
    copyback: bool,
    multi_plane: bool,
    preemptible: bool,
    urgent_free_blocks: u32,
    susp: SuspensionConfig,
    sched: Box<dyn TxnScheduler>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    completions: Vec<(Tag, u64)>,
    /// Host commands in flight.
    live_host: u32,
    /// Background commands in flight.
    live_background: u32,
    /// When the last host command completed.
    last_host_done: u64,
    cands: Vec<sched::Cand>,
    cand_ids: Vec<u32>,
    pub counters: EngineCounters,
}

impl Engine {
    pub(crate) fn new(
        geo: &Geometry,
        plane_parallelism: bool,
        cfg: &super::ControllerConfig,
        copyback: bool,
    ) -> Engine {
        let planes_per_array = if plane_parallelism {
            1
        } else {
            geo.planes_per_die
        };
        let arrays = geo.planes() / planes_per_array;
        Engine {
            now: 0,
            seq: 0,
            ev_seq: 0,
            events: BinaryHeap::new(),
            txns: Vec::new(),
            free_txns: Vec::new(),
            cmds: Vec::new(),
            free_cmds: Vec::new(),
            dies: vec![
                Die {
                    gc_job: NONE,
                    ..Die::default()
                };
                arrays as usize
            ],
            chans: vec![Chan::default(); geo.channels as usize],
            block_q: vec![Vec::new(); geo.total_blocks() as usize],
            plane_xfers: vec![Vec::new(); geo.planes() as usize],
            pending_erases: vec![0; geo.planes() as usize],
            planes_per_array,
            planes_per_channel: geo.planes() / geo.channels,
            page_bytes: geo.page_size_bytes as u64,
            copyback,
            multi_plane: cfg.scheduling.multi_plane,
            preemptible: cfg.gc_preemption.enabled,
            urgent_free_blocks: cfg.gc_preemption.urgent_free_blocks,
            susp: cfg.suspension.clone(),
            sched: sched::build(&cfg.scheduling, arrays),
            dirty: Vec::new(),
            is_dirty: vec![false; arrays as usize],
            completions: Vec::new(),
            live_host: 0,
            live_background: 0,
            last_host_done: 0,
            cands: Vec::new(),
            cand_ids: Vec::new(),
            counters: EngineCounters::default(),
        }
    }

    pub(crate) fn now(&self) -> u64 {
        self.now
    }
    pub(crate) fn scheduler_name(&self) -> &'static str {
        self.sched.name()
    }
    /// No host command in flight (the idle detector's test) and since when.
    pub(crate) fn host_idle_since(&self) -> Option<u64> {
        (self.live_host == 0).then_some(self.last_host_done)
    }
    pub(crate) fn background_busy(&self) -> bool {
        self.live_background > 0
    }

    /// Time of the next internal event, if any.
    pub(crate) fn next_event(&self) -> Option<u64> {
        self.events.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Completions since the last call, in completion-time order.
    pub(crate) fn drain_completions(&mut self, out: &mut Vec<(Tag, u64)>) {
        out.append(&mut self.completions);
    }

    /// Forget every queued operation and restart the clock at 0 (after preconditioning).
    pub(crate) fn reset(&mut self) {
        self.events.clear();
        self.txns.clear();
        self.free_txns.clear();
        self.cmds.clear();
        self.free_cmds.clear();
        for d in &mut self.dies {
            *d = Die {
                gc_job: NONE,
                ..Die::default()
            };
        }
        for c in &mut self.chans {
            *c = Chan::default();
        }
        self.block_q.iter_mut().for_each(Vec::clear);
        self.plane_xfers.iter_mut().for_each(Vec::clear);
        self.pending_erases.iter_mut().for_each(|e| *e = 0);
        self.completions.clear();
        self.dirty.clear();
        self.is_dirty.iter_mut().for_each(|d| *d = false);
        (
            self.now,
            self.live_host,
            self.live_background,
            self.last_host_done,
        ) = (0, 0, 0, 0);
        self.counters = EngineCounters::default();
    }

    fn push(&mut self, t: u64, ev: Ev) {
        debug_assert!(t >= self.now, "event in the past: {t} < {}", self.now);
        self.ev_seq += 1;
        self.events.push(Reverse((t, self.ev_seq, ev)));
    }

    /// Run every event up to and including `until` (the clock ends at `until`).
    pub(crate) fn advance(&mut self, tl: &mut Timelines, until: u64) {
        while let Some(&Reverse((t, _, ev))) = self.events.peek() {
            if t > until {
                break;
            }
            self.events.pop();
            self.now = t;
            self.handle(tl, ev);
            self.flush_dirty(tl);
        }
        self.now = self.now.max(until);
    }

    fn handle(&mut self, tl: &mut Timelines, ev: Ev) {
        match ev {
            Ev::Gate(id) => self.complete(tl, id),
            Ev::DieEnd(d, token) => {
                if self.dies[d as usize].token == token {
                    self.array_done(tl, d);
                }
            }
            Ev::SuspendReady(d, token) => {
                if self.dies[d as usize].token == token {
                    self.dies[d as usize].suspending_until = 0;
                    self.mark(d);
                }
            }
            Ev::ChanEnd(c) => self.channel_done(tl, c),
            Ev::CmdDone(c) => self.emit(c),
        }
    }

    fn mark(&mut self, die: u32) {
        if !self.is_dirty[die as usize] {
            self.is_dirty[die as usize] = true;
            self.dirty.push(die);
        }
    }

    fn flush_dirty(&mut self, tl: &mut Timelines) {
        let mut i = 0;
        while i < self.dirty.len() {
            let d = self.dirty[i];
            self.is_dirty[d as usize] = false;
            self.dispatch(tl, d);
            i += 1;
        }
        self.dirty.clear();
    }

    fn alloc_txn(&mut self, t: Txn) -> u32 {
        self.counters.transactions += u64::from(t.kind != Kind::Join);
        match self.free_txns.pop() {
            Some(i) => {
                let out = std::mem::take(&mut self.txns[i as usize].out);
                self.txns[i as usize] = Txn { out, ..t };
                i
            }
            None => {
                self.txns.push(t);
                (self.txns.len() - 1) as u32
            }
        }
    }

    fn alloc_cmd(&mut self, c: Cmd) -> u32 {
        match self.free_cmds.pop() {
            Some(i) => {
                self.cmds[i as usize] = c;
                i
            }
            None => {
                self.cmds.push(c);
                (self.cmds.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn array_of(&self, plane: u32) -> u32 {
        plane / self.planes_per_array
    }
    #[inline]
    fn channel_of(&self, plane: u32) -> u32 {
        plane / self.planes_per_channel
    }

    /// `child` waits for `parent` (if it is not done).
    fn depend(&mut self, child: u32, parent: u32) {
        if parent == NONE || self.txns[parent as usize].st == St::Done {
            return;
        }
        self.txns[parent as usize].out.push(child);
        self.txns[child as usize].waiting += 1;
    }

    fn make_ready(&mut self, tl: &mut Timelines, id: u32) {
        self.txns[id as usize].st = St::Ready;
        let t = &self.txns[id as usize];
        match t.kind {
            Kind::Join => self.complete(tl, id),
            Kind::Xfer => {
                let (c, bytes) = (self.channel_of(t.plane), t.bytes);
                self.request_channel(
                    tl,
                    c,
                    ChanReq {
                        die: NONE,
                        txn: id,
                        bytes,
                    },
                );
            }
            _ => self.mark(self.array_of(t.plane)),
        }
    }

    /// `id` is done at `now`: release its dependents and account it to its command.
    fn complete(&mut self, tl: &mut Timelines, id: u32) {
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            let t = &mut self.txns[id as usize];
            t.st = St::Done;
            let out = std::mem::take(&mut t.out);
            let (kind, block, plane, cmd, tracked, plane_xfer) =
                (t.kind, t.block, t.plane, t.cmd, t.tracked, t.plane_xfer);
            if block != NONE && matches!(kind, Kind::Read | Kind::Program | Kind::Erase) {
                let q = &mut self.block_q[block as usize];
                if let Some(p) = q.iter().position(|&x| x == id) {
                    q.remove(p);
                }
            }
            if kind == Kind::Erase && block != NONE {
                self.pending_erases[plane as usize] -= 1;
            }
            if plane_xfer {
                let q = &mut self.plane_xfers[plane as usize];
                if let Some(p) = q.iter().position(|&x| x == id) {
                    q.remove(p);
                }
            }
            for &d in &out {
                let c = &mut self.txns[d as usize];
                c.waiting -= 1;
                if c.waiting == 0 && c.st == St::Waiting {
                    if c.kind == Kind::Join {
                        c.st = St::Ready;
                        stack.push(d);
                    } else {
                        self.make_ready(tl, d);
                    }
                }
            }
            let mut out = out;
            out.clear();
            self.txns[id as usize].out = out;
            if tracked && cmd != NONE {
                let c = &mut self.cmds[cmd as usize];
                c.outstanding -= 1;
                c.last_ns = c.last_ns.max(self.now);
                if c.outstanding == 0 {
                    self.finish_cmd(cmd);
                }
            }
            self.free_txns.push(id);
        }
    }

    fn finish_cmd(&mut self, c: u32) {
        let cmd = &self.cmds[c as usize];
        let done = cmd.last_ns.max(cmd.min_done) + cmd.post_ns;
        if done > self.now {
            self.push(done, Ev::CmdDone(c));
        } else {
            self.emit(c);
        }
    }

    fn emit(&mut self, c: u32) {
        let cmd = &self.cmds[c as usize];
        let done = cmd.last_ns.max(cmd.min_done) + cmd.post_ns;
        if let Some(tag) = cmd.tag {
            self.completions.push((tag, done));
        }
        if cmd.host {
            self.live_host -= 1;
            self.last_host_done = self.last_host_done.max(done);
        } else {
            self.live_background -= 1;
        }
        self.free_cmds.push(c);
    }
}

#[cfg(test)]
impl Engine {
    /// A description of everything still pending (for failing tests).
    pub(crate) fn dump(&self) -> String {
        let mut s = format!("now {} events {}\n", self.now, self.events.len());
        for (d, die) in self.dies.iter().enumerate() {
            if die.pending.is_empty() && die.active.is_none() && die.suspended.is_none() {
                continue;
            }
            s += &format!(
                "die {d}: active {:?} suspended {} gc_job {} pending:\n",
                die.active.as_ref().map(|a| (&a.txns, a.kind, a.end)),
                die.suspended.is_some(),
                die.gc_job
            );
            for &id in die.pending.iter().take(8) {
                let t = &self.txns[id as usize];
                s += &format!(
                    "  #{id} {:?} {:?} {:?} plane {} block {} page {} seq {} waiting {} cmd {}\n",
                    t.kind, t.class, t.st, t.plane, t.block, t.page, t.seq, t.waiting, t.cmd
                );
            }
        }
        for (i, t) in self.txns.iter().enumerate() {
            if t.st != St::Done && !t.out.is_empty() {
                s += &format!("#{i} {:?} {:?} -> {:?}\n", t.kind, t.st, t.out);
            }
        }
        s
    }
}

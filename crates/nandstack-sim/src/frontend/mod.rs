//! The event-driven issuer: flows (tenants) with their own submission queues, the NVMe front end
//! (arbitration under a limit on the commands the controller holds, the PCIe link, a per-command
//! overhead) and devices that schedule ([`Device::queued`]: a completion may depend on later commands).
//! The classic issuer ([`crate::drive`]) serves the rest: one flow, no front end, a device that answers
//! at submission.
//!
//! A request's life: its flow issues it (closed loop: when one of the flow's `queue_depth` requests
//! completes; open loop: at its arrival) into the flow's submission queue; the arbiter fetches it when
//! the controller has a free slot; after the command overhead (and, for a write, its data crossing the
//! link to the device) the device gets it; when the device completes it (and a read's data has crossed
//! back) the host sees the completion, the slot frees and the latency is recorded (from issue in closed
//! loop, from arrival in open loop).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use nandstack_core::histogram::Percentiles;
use nandstack_core::{Histogram, Nanos, Result};
use nandstack_device::{Command, Device, Tag};
use nandstack_workload::{BlockRequest, Op};
use serde::Serialize;

use crate::config::{FlowPriority, IoConfig, IoMode};
use crate::drive::{Checks, Measured};
use crate::nvme::{self, Arbiter, Dir, Link};
use crate::progress::Ticker;
use crate::series::{Intervals, Recorder, SeriesSink};
use crate::source::{Source, Timed};

/// One flow to drive.
pub struct FlowInput<'s> {
    pub name: String,
    pub source: &'s mut Source,
    pub queue_depth: u32,
    pub weight: u32,
    pub priority: FlowPriority,
}

/// Per-flow figures of the measured phase (`workload.flows` in the summary).
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    pub name: String,
    pub requests: u64,
    pub read_latency_us: Percentiles,
    pub write_latency_us: Percentiles,
    /// The flow's requests per simulated second, from its first issue to its last completion.
    pub iops: f64,
}

struct Flow<'s> {
    input: FlowInput<'s>,
    /// Open loop: the next request, pulled ahead for its arrival time.
    ahead: Option<Timed>,
    /// Issue time of the flow's latest request (open loop: never before the previous one).
    clock_ns: u64,
    /// Issued and not yet completed.
    outstanding: u32,
    sq: VecDeque<u32>,
    reads: Histogram,
    writes: Histogram,
    requests: u64,
    first_ns: Option<u64>,
    last_ns: u64,
    done: bool,
}

/// A request between its issue and its completion.
#[derive(Clone, Debug)]
struct Inflight {
    flow: u32,
    req: BlockRequest,
    /// Latency is measured from here (issue, or arrival in open loop).
    base_ns: u64,
    issue_ns: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Open loop: a flow's next request arrives.
    Arrive(u32),
    /// A command reaches the device.
    Submit(u32),
    /// The device has completed a command (an answering device's completion time).
    DeviceDone(u32),
    /// The host sees the completion.
    Deliver(u32),
}

struct Frontend<'a, 's> {
    dev: &'a mut dyn Device,
    io: &'a IoConfig,
    flows: Vec<Flow<'s>>,
    slots: Vec<Option<Inflight>>,
    free: Vec<u32>,
    events: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    arbiter: Box<dyn Arbiter>,
    waiting: Vec<u32>,
    in_controller: u32,
    link: Option<Link>,
    overhead_ns: u64,
    submitted: u64,
    last_done: u64,
    rec: Recorder,
    reads: Histogram,
    writes: Histogram,
    trims: Histogram,
    completed: Vec<(Tag, nandstack_device::Completion)>,
}

/// Issue every flow's requests to `dev` and measure. Returns the run's figures and each flow's.
#[allow(clippy::too_many_arguments)]
pub fn drive_flows(
    dev: &mut dyn Device,
    flows: Vec<FlowInput<'_>>,
    io: &IoConfig,
    intervals: Intervals,
    checks: &mut Checks,
    ticker: &mut Ticker,
    sink: Option<SeriesSink>,
) -> Result<(Measured, Vec<FlowReport>)> {
    let cpu0 = crate::usage::cpu_seconds();
    let rec = Recorder::new(intervals, dev, sink)?;
    let weights: Vec<_> = flows.iter().map(|f| (f.weight, f.priority)).collect();
    let n = flows.len();
    let mut fe = Frontend {
        dev,
        io,
        flows: flows
            .into_iter()
            .map(|input| Flow {
                input,
                ahead: None,
                clock_ns: 0,
                outstanding: 0,
                sq: VecDeque::new(),
                reads: Histogram::new(),
                writes: Histogram::new(),
                requests: 0,
                first_ns: None,
                last_ns: 0,
                done: false,
            })
            .collect(),
        slots: Vec::new(),
        free: Vec::new(),
        events: BinaryHeap::new(),
        seq: 0,
        arbiter: nvme::build(io.nvme.arbitration, &weights),
        waiting: vec![0; n],
        in_controller: 0,
        link: io.nvme.link_bytes_per_s().map(Link::new),
        overhead_ns: (io.nvme.command_overhead_us * 1000.0).round() as u64,
        submitted: 0,
        last_done: 0,
        rec,
        reads: Histogram::new(),
        writes: Histogram::new(),
        trims: Histogram::new(),
        completed: Vec::new(),
    };
    let interrupted = fe.run(checks, ticker)?;
    // Write back the buffer and pad open pages; device-internal, so not part of the measured time.
    let last_done = fe.last_done;
    let flush_done_ns = fe.dev.flush(Nanos(last_done))?.0;
    fe.rec.finish(fe.dev, last_done, fe.submitted)?;
    let cpu_seconds = cpu0.zip(crate::usage::cpu_seconds()).map(|(a, b)| b - a);
    let reports = fe
        .flows
        .iter()
        .map(|f| {
            let span = f.last_ns.saturating_sub(f.first_ns.unwrap_or(0));
            FlowReport {
                name: f.input.name.clone(),
                requests: f.requests,
                read_latency_us: f.reads.percentiles(1e-3),
                write_latency_us: f.writes.percentiles(1e-3),
                iops: if span > 0 {
                    f.requests as f64 * 1e9 / span as f64
                } else {
                    0.0
                },
            }
        })
        .collect();
    let measured = Measured {
        requests: fe.submitted,
        reads: fe.reads,
        writes: fe.writes,
        trims: fe.trims,
        sim_ns: last_done,
        series: fe.rec.into_series()?,
        cpu_seconds,
        flush_done_ns,
        interrupted,
    };
    Ok((measured, reports))
}

impl Frontend<'_, '_> {
    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    /// The main loop; returns whether the run was interrupted.
    fn run(&mut self, checks: &mut Checks, ticker: &mut Ticker) -> Result<bool> {
        for f in 0..self.flows.len() as u32 {
            match self.io.mode {
                IoMode::ClosedLoop => {
                    for _ in 0..self.flows[f as usize].input.queue_depth {
                        self.issue(f, 0)?;
                    }
                }
                IoMode::OpenLoop => self.schedule_arrival(f)?,
            }
        }
        self.fetch(0);
        loop {
            let next_driver = self.events.peek().map(|Reverse((t, _, _))| *t);
            let next_device = if self.dev.queued() {
                self.dev.next_event().map(|t| t.0)
            } else {
                None
            };
            match (next_driver, next_device) {
                (None, None) => break,
                (d, Some(e)) if d.is_none_or(|d| e <= d) => {
                    self.dev.advance(Nanos(e), &mut self.completed)?;
                    for (tag, c) in std::mem::take(&mut self.completed) {
                        self.device_done(tag.id as u32, c.done.0);
                    }
                }
                _ => {
                    let Reverse((t, _, ev)) = self.events.pop().expect("peeked");
                    match ev {
                        Ev::Arrive(f) => {
                            let item = self.flows[f as usize].ahead.take().expect("pulled");
                            self.enter(f, item, t)?;
                            self.schedule_arrival(f)?;
                            self.fetch(t);
                        }
                        Ev::Submit(s) => {
                            self.submit(s, t)?;
                            self.submitted += 1;
                            let issue = self.slot(s).issue_ns;
                            self.rec.after(self.dev, issue, self.submitted)?;
                            match ticker.tick(self.submitted) {
                                Err(nandstack_core::Error::Interrupted) => return Ok(true),
                                other => other?,
                            }
                            checks.maybe(self.dev, self.submitted - 1)?;
                        }
                        Ev::DeviceDone(s) => self.device_done(s, t),
                        Ev::Deliver(s) => self.deliver(s, t)?,
                    }
                }
            }
        }
        Ok(false)
    }

    fn slot(&self, s: u32) -> &Inflight {
        self.slots[s as usize].as_ref().expect("in flight")
    }

    /// Closed loop: flow `f` issues its next request at `t` (if it has one).
    fn issue(&mut self, f: u32, t: u64) -> Result<()> {
        let flow = &mut self.flows[f as usize];
        if flow.done {
            return Ok(());
        }
        match flow.input.source.next() {
            Some(item) => self.enter(f, item?, t),
            None => {
                flow.done = true;
                Ok(())
            }
        }
    }

    /// Open loop: pull flow `f`'s next request and schedule its arrival.
    fn schedule_arrival(&mut self, f: u32) -> Result<()> {
        let flow = &mut self.flows[f as usize];
        let Some(item) = flow.input.source.next() else {
            flow.done = true;
            return Ok(());
        };
        let item = item?;
        let a = (item.1.unwrap_or(0) as f64 * self.io.time_scale).round() as u64;
        // Out-of-order arrivals are issued no earlier than the previous one.
        let at = flow.clock_ns.max(a);
        flow.ahead = Some(item);
        self.push(at, Ev::Arrive(f));
        Ok(())
    }

    /// A request of flow `f` enters its submission queue at `t`.
    fn enter(&mut self, f: u32, (req, arrival): Timed, t: u64) -> Result<()> {
        let flow = &mut self.flows[f as usize];
        flow.clock_ns = flow.clock_ns.max(t);
        let base_ns = match self.io.mode {
            IoMode::ClosedLoop => t,
            IoMode::OpenLoop => {
                let a = (arrival.unwrap_or(0) as f64 * self.io.time_scale).round() as u64;
                a.min(t)
            }
        };
        flow.outstanding += 1;
        flow.first_ns.get_or_insert(t);
        let inflight = Inflight {
            flow: f,
            req,
            base_ns,
            issue_ns: t,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(inflight);
                s
            }
            None => {
                self.slots.push(Some(inflight));
                (self.slots.len() - 1) as u32
            }
        };
        self.flows[f as usize].sq.push_back(s);
        self.waiting[f as usize] += 1;
        Ok(())
    }

    /// Move commands from the submission queues into the controller while it has room.
    fn fetch(&mut self, t: u64) {
        let limit = self.io.nvme.controller_slots;
        while limit == 0 || self.in_controller < limit {
            let Some(f) = self.arbiter.pick(&self.waiting) else {
                return;
            };
            let s = self.flows[f].sq.pop_front().expect("counted");
            self.waiting[f] -= 1;
            self.in_controller += 1;
            let mut at = t + self.overhead_ns;
            let req = self.slot(s).req;
            if let (Some(link), Op::Write) = (self.link.as_mut(), req.op) {
                at = link.transfer(Dir::ToDevice, at, req.len);
            }
            self.push(at, Ev::Submit(s));
        }
    }

    fn submit(&mut self, s: u32, t: u64) -> Result<()> {
        let inf = self.slot(s);
        let req = inf.req;
        let cmd = match req.op {
            Op::Write => Command::write(req.offset, req.len),
            Op::Read => Command::read(req.offset, req.len),
            Op::Trim => Command::trim(req.offset, req.len),
        };
        if self.dev.queued() {
            let tag = Tag {
                id: s as u64,
                flow: inf.flow,
            };
            self.dev.enqueue(Nanos(t), cmd, tag)
        } else {
            let done = self.dev.submit(Nanos(t), cmd)?.done.0;
            self.push(done, Ev::DeviceDone(s));
            Ok(())
        }
    }

    /// The device completed command `s` at `t`: a read's data crosses the link back.
    fn device_done(&mut self, s: u32, t: u64) {
        let req = self.slot(s).req;
        let at = match (self.link.as_mut(), req.op) {
            (Some(link), Op::Read) => link.transfer(Dir::ToHost, t, req.len),
            _ => t,
        };
        self.push(at, Ev::Deliver(s));
    }

    /// The host sees command `s` complete at `t`.
    fn deliver(&mut self, s: u32, t: u64) -> Result<()> {
        let inf = self.slots[s as usize].take().expect("in flight");
        self.free.push(s);
        self.in_controller -= 1;
        let latency = t - inf.base_ns;
        let flow = &mut self.flows[inf.flow as usize];
        flow.outstanding -= 1;
        flow.requests += 1;
        flow.last_ns = flow.last_ns.max(t);
        match inf.req.op {
            Op::Write => {
                self.writes.record(latency);
                flow.writes.record(latency);
                self.rec.writes.record(latency);
            }
            Op::Read => {
                self.reads.record(latency);
                flow.reads.record(latency);
                self.rec.reads.record(latency);
            }
            Op::Trim => self.trims.record(latency),
        }
        self.last_done = self.last_done.max(t);
        if self.io.mode == IoMode::ClosedLoop {
            self.issue(inf.flow, t)?;
        }
        self.fetch(t);
        Ok(())
    }
}

#[cfg(test)]
mod tests;

//! The block-request issuer of the measured phase: closed loop (queue depth N) or open loop (arrival
//! times), per-request latency, histograms and the interval time series — over any [`Device`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nandstack_core::{Histogram, Nanos, Result};
use nandstack_device::{Command, Device};
use nandstack_workload::Op;

use crate::config::{IoConfig, IoMode};
use crate::progress::Ticker;
use crate::series::{Intervals, Recorder, SeriesSink, TimeSeries};
use crate::source::{Source, Timed};

/// What the measured phase produced besides the device's counters.
pub struct Measured {
    pub requests: u64,
    pub reads: Histogram,
    pub writes: Histogram,
    pub trims: Histogram,
    /// Simulated time from the first issue to the last completion, ns.
    pub sim_ns: u64,
    pub series: TimeSeries,
    /// CPU seconds spent in the measured phase (None where the OS does not tell).
    pub cpu_seconds: Option<f64>,
    /// Flush at the end: its completion time (device-internal, not part of the measured time).
    pub flush_done_ns: u64,
    /// The caller stopped the run (Ctrl-C) before the workload ended: the figures cover what ran.
    pub interrupted: bool,
}

/// An arrival time × `workload.io.time_scale`, or an error when it passes 2^64 ns (584 years).
fn scaled(arrival_ns: u64, time_scale: f64, request: u64) -> Result<u64> {
    if time_scale == 1.0 {
        return Ok(arrival_ns);
    }
    let t = (arrival_ns as f64 * time_scale).round();
    if t < u64::MAX as f64 {
        return Ok(t as u64);
    }
    Err(nandstack_core::Error::config(
        "workload.io.time_scale",
        format!(
            "request #{request} arrives at {arrival_ns} ns × {time_scale}, past 2^64 ns (584 years) of \
             simulated time"
        ),
    ))
}

/// Requests the measured phase reads ahead of the one it issues, for the device's prefetch pipeline.
/// Pure cache hints: the requests are issued in order, so results do not depend on it (the warm-up keeps
/// its own depth, since the requests it generated ahead are dropped from the synthetic stream).
pub const LOOKAHEAD: usize = 6;
/// The distance (1 = the next request) of the request whose lines each stage of `Device::prefetch`
/// fetches: the greedy index's neighbours, the block metadata, the mapping entry. Each stage reads what
/// the one after it fetched `STAGES[k+1] − STAGES[k]` requests earlier.
const STAGES: [usize; 3] = [1, 3, LOOKAHEAD];

/// Periodic full checks under `--verify`.
pub struct Checks {
    pub enabled: bool,
    pub every: u64,
    pub done: u64,
}

impl Checks {
    #[inline]
    pub fn maybe(&mut self, dev: &dyn Device, i: u64) -> Result<()> {
        if self.enabled && i % self.every == self.every - 1 {
            dev.check_invariants()?;
            self.done += 1;
        }
        Ok(())
    }
}

/// Issue every request of `source` to `dev` and measure. An interrupt from the progress callback ends
/// the phase early (`Measured::interrupted`); every other error ends the run.
pub fn drive(
    dev: &mut dyn Device,
    source: &mut Source,
    io: &IoConfig,
    intervals: Intervals,
    checks: &mut Checks,
    ticker: &mut Ticker,
    sink: Option<SeriesSink>,
) -> Result<Measured> {
    let cpu0 = crate::usage::cpu_seconds();
    let mut rec = Recorder::new(intervals, dev, sink)?;
    let (mut reads, mut writes, mut trims) = (Histogram::new(), Histogram::new(), Histogram::new());
    // Completion times of the requests in flight (closed loop). Those at or before `now` are only
    // counted (`done_by_now`): `now` never decreases, so popping any of them leaves `now` as it is, and
    // the heap's minimum is one of them whenever there is one — the same `now` as a heap of all.
    let mut outstanding: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut done_by_now = 0usize;
    let qd = io.queue_depth as usize;
    let mut now = 0u64; // issue time of the latest request (non-decreasing)
    let mut last_done = 0u64;
    let mut n = 0u64;
    let mut interrupted = false;
    // `LOOKAHEAD` requests ahead feed the device's prefetch pipeline (`Device::prefetch`). A source
    // error is kept aside and returned when the requests before it have been issued.
    let mut queue: std::collections::VecDeque<Timed> = std::collections::VecDeque::new();
    let mut failed = None;
    let mut pull = |queue: &mut std::collections::VecDeque<Timed>, failed: &mut Option<_>| {
        if failed.is_none() {
            match source.next() {
                Some(Ok(t)) => queue.push_back(t),
                Some(Err(e)) => *failed = Some(e),
                None => {}
            }
        }
    };
    for _ in 0..LOOKAHEAD {
        pull(&mut queue, &mut failed);
    }
    loop {
        let Some((req, arrival)) = queue.pop_front() else {
            match failed {
                Some(e) => return Err(e),
                None => break,
            }
        };
        pull(&mut queue, &mut failed);
        let offset_at = |i: usize| queue.get(i).map(|(r, _)| r.offset);
        dev.prefetch(STAGES.map(|d| offset_at(d - 1)));
        let (issue, base) = match io.mode {
            IoMode::ClosedLoop => {
                if outstanding.len() + done_by_now >= qd {
                    if done_by_now > 0 {
                        done_by_now -= 1;
                    } else {
                        let Reverse(t) = outstanding.pop().expect("non-empty");
                        now = now.max(t);
                    }
                }
                (now, now)
            }
            IoMode::OpenLoop => {
                let a = scaled(arrival.unwrap_or(0), io.time_scale, n + 1)?;
                now = now.max(a); // out-of-order arrivals are issued no earlier than the previous one
                (now, a.min(now))
            }
        };
        let cmd = match req.op {
            Op::Write => Command::write(req.offset, req.len),
            Op::Read => Command::read(req.offset, req.len),
            Op::Trim => Command::trim(req.offset, req.len),
        };
        let done = dev.submit(Nanos(issue), cmd)?.done.0;
        let latency = done - base;
        match req.op {
            Op::Write => {
                writes.record(latency);
                rec.writes.record(latency);
            }
            Op::Read => {
                reads.record(latency);
                rec.reads.record(latency);
            }
            Op::Trim => trims.record(latency),
        }
        if io.mode == IoMode::ClosedLoop {
            if done <= now {
                done_by_now += 1;
            } else {
                outstanding.push(Reverse(done));
            }
        }
        last_done = last_done.max(done);
        n += 1;
        rec.after(dev, issue, n)?;
        match ticker.tick(n) {
            Err(nandstack_core::Error::Interrupted) => {
                interrupted = true;
                break;
            }
            other => other?,
        }
        checks.maybe(dev, n - 1)?;
    }
    // Write back the buffer and pad open pages; device-internal, so not part of the measured time.
    let flush_done_ns = dev.flush(Nanos(last_done))?.0;
    rec.finish(dev, last_done, n)?;
    let cpu_seconds = cpu0.zip(crate::usage::cpu_seconds()).map(|(a, b)| b - a);
    Ok(Measured {
        requests: n,
        reads,
        writes,
        trims,
        sim_ns: last_done,
        series: rec.into_series()?,
        cpu_seconds,
        flush_done_ns,
        interrupted,
    })
}

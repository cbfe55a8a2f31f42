//! The host interface model: closed loop (queue depth N) or open loop (arrival times), per-request
//! latency, histograms and the interval time series.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nandstack_core::{Histogram, Result};
use nandstack_workload::Op;

use crate::config::HostMode;
use crate::run::{Simulation, Ticker};
use crate::series::Recorder;
use crate::source::Source;
use crate::Progress;

/// What the measured phase produced besides the device's counters.
pub struct Measured {
    pub requests: u64,
    pub reads: Histogram,
    pub writes: Histogram,
    pub trims: Histogram,
    /// Simulated time from the first issue to the last completion, ns.
    pub sim_ns: u64,
    pub series: crate::series::TimeSeries,
    /// CPU seconds spent in the measured phase (None where the OS does not tell).
    pub cpu_seconds: Option<f64>,
}

pub fn drive(
    sim: &mut Simulation,
    mut source: Source,
    cb: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Measured> {
    let cpu0 = crate::bench::cpu_seconds();
    let host = sim.cfg.host.clone();
    let total = source.len_hint();
    let mut ticker = Ticker::new("measure", total.unwrap_or(0), cb)?;
    let mut rec = Recorder::new(
        sim.cfg.run.interval_host_bytes,
        sim.cfg.run.interval_sim_seconds,
        total,
    );
    let every = sim.check_every(total.unwrap_or(1 << 20));
    let (mut reads, mut writes, mut trims) = (Histogram::new(), Histogram::new(), Histogram::new());
    let mut outstanding: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let qd = host.queue_depth as usize;
    let mut now = 0u64; // issue time of the latest request (non-decreasing)
    let mut last_done = 0u64;
    let mut n = 0u64;
    // One request of lookahead: touching the next request's mapping entry early overlaps its cache miss
    // with the current request's work.
    // Three requests of lookahead feed the FTL's prefetch pipeline (see `Ftl::prefetch`).
    let mut queue: std::collections::VecDeque<Result<crate::source::Timed>> =
        source.by_ref().take(3).collect();
    while let Some(item) = queue.pop_front() {
        let (req, arrival) = item?;
        if let Some(next) = source.next() {
            queue.push_back(next);
        }
        let offset_at = |i: usize| match queue.get(i) {
            Some(Ok((r, _))) => Some(r.offset),
            _ => None,
        };
        sim.ssd
            .ftl
            .prefetch([offset_at(0), offset_at(1), offset_at(2)]);
        let (issue, base) = match host.mode {
            HostMode::ClosedLoop => {
                if outstanding.len() >= qd {
                    let Reverse(t) = outstanding.pop().expect("non-empty");
                    now = now.max(t);
                }
                (now, now)
            }
            HostMode::OpenLoop => {
                let a = (arrival.unwrap_or(0) as f64 * host.time_scale).round() as u64;
                now = now.max(a); // out-of-order arrivals are issued no earlier than the previous one
                (now, a.min(now))
            }
        };
        let done = match req.op {
            Op::Write => sim.ssd.write(req.offset, req.len, issue)?,
            Op::Read => sim.ssd.read(req.offset, req.len, issue)?,
            Op::Trim => sim.ssd.trim(req.offset, req.len, issue)?,
        };
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
        if host.mode == HostMode::ClosedLoop {
            outstanding.push(Reverse(done));
        }
        last_done = last_done.max(done);
        n += 1;
        rec.after(&sim.ssd, issue, n);
        ticker.tick(n)?;
        sim.maybe_check(n - 1, every)?;
    }
    // Write back the buffer and pad open pages; device-internal, so not part of the measured time.
    sim.ssd.flush(last_done)?;
    rec.finish(&sim.ssd, last_done, n);
    if sim.verify {
        sim.ssd.ftl.check_invariants()?;
        sim.ssd.ftl.verify_all_versions()?;
    }
    let cpu_seconds = cpu0.zip(crate::bench::cpu_seconds()).map(|(a, b)| b - a);
    Ok(Measured {
        requests: n,
        reads,
        writes,
        trims,
        sim_ns: last_done,
        series: rec.series,
        cpu_seconds,
    })
}

//! The device model behind the FUSE file: each request goes to the model at the device's "now", its
//! data to the page store, its completion time to the responder; the measured window (between the
//! `start` and `stop` control words) is counted, traced and reported.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use nandstack_core::{Histogram, Nanos, Result};
use nandstack_device::{Command, Device};
use nandstack_sim::drive::Measured;
use nandstack_sim::report::{Report, RunFacts, WorkloadInfo};
use nandstack_sim::SimConfig;

use crate::clock::{Clock, Lag};
use crate::store::PageStore;

#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// fsync of the file (the loop device turns the kernel's flushes into one): NVMe Flush.
    Flush,
}

pub struct Engine {
    pub cfg: SimConfig,
    pub dev: Box<dyn Device>,
    pub store: PageStore,
    pub clock: Clock,
    pub lag: Lag,
    pub verify: bool,
    trace_path: Option<String>,
    trace: Option<BufWriter<File>>,
    reads: Histogram,
    writes: Histogram,
    requests: u64,
    flushes: u64,
    last_issue: u64,
    first_issue: Option<u64>,
    last_done: u64,
    started: Option<Instant>,
    /// Requests the model refused (answered EIO), with the first error.
    pub errors: u64,
    pub first_error: Option<String>,
}

impl Engine {
    pub fn new(
        cfg: SimConfig,
        dev: Box<dyn Device>,
        store: PageStore,
        clock: Clock,
        lag: Lag,
        trace_path: Option<String>,
        verify: bool,
    ) -> Engine {
        Engine {
            cfg,
            dev,
            store,
            clock,
            lag,
            verify,
            trace_path,
            trace: None,
            reads: Histogram::new(),
            writes: Histogram::new(),
            requests: 0,
            flushes: 0,
            last_issue: 0,
            first_issue: None,
            last_done: 0,
            started: None,
            errors: 0,
            first_error: None,
        }
    }

    /// Submit one request to the model now; the wall instant its reply is due.
    pub fn serve(&mut self, op: Op, offset: u64, len: u64) -> Result<Instant> {
        let issue = self.clock.device_now().max(self.last_issue);
        self.last_issue = issue;
        let cmd = match op {
            Op::Read => Command::read(offset, len),
            Op::Write => Command::write(offset, len),
            Op::Flush => Command::Flush,
        };
        let done = self.dev.submit(Nanos(issue), cmd)?.done.0.max(issue);
        if self.started.is_some() && op == Op::Flush {
            self.flushes += 1;
        } else if self.started.is_some() {
            let h = if op == Op::Read {
                &mut self.reads
            } else {
                &mut self.writes
            };
            h.record(done - issue);
            self.requests += 1;
            self.first_issue.get_or_insert(issue);
            self.last_done = self.last_done.max(done);
            if let Some(t) = &mut self.trace {
                let code = if op == Op::Read { 'R' } else { 'W' };
                let secs = self.clock.t0.elapsed().as_secs_f64();
                // The kernel-swap capture format: sectors relative to the swap device's start.
                writeln!(
                    t,
                    "{secs:.9},{code},{},{},live",
                    offset / 512,
                    len.div_ceil(512)
                )
                .map_err(|e| io_err("trace", e))?;
            }
        }
        Ok(self.clock.wall_at(done))
    }

    /// A request the model refused (answered EIO): counted, the first one named in the report.
    pub fn refused(&mut self, e: &nandstack_core::Error) {
        self.errors += 1;
        self.first_error.get_or_insert(e.to_string());
    }

    /// `start`: zero the counters, open the trace, measure from now.
    pub fn start(&mut self) -> Result<()> {
        self.dev.reset_counters();
        self.reads.reset();
        self.writes.reset();
        self.requests = 0;
        self.flushes = 0;
        self.first_issue = None;
        self.last_done = 0;
        if let Ok(mut l) = self.lag.lock() {
            *l = Default::default();
        }
        if let Some(p) = &self.trace_path {
            let f = File::create(p).map_err(|e| io_err(p, e))?;
            let mut w = BufWriter::with_capacity(1 << 20, f);
            writeln!(w, "time_s,op,sector,sectors,comm").map_err(|e| io_err(p, e))?;
            self.trace = Some(w);
        }
        self.started = Some(Instant::now());
        Ok(())
    }

    /// `stop`: the report of the measured window (the device's summary as for any run plus a `live`
    /// section); closes the trace.
    pub fn report(&mut self) -> Result<serde_json::Value> {
        if let Some(mut t) = self.trace.take() {
            t.flush().map_err(|e| io_err("trace", e))?;
        }
        let wall = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        let first = self.first_issue.unwrap_or(0);
        // Write back the buffer and pad open pages, as at the end of any run (device-internal: after the
        // measured window, so not part of its time; WAF then counts every program the writes cause).
        let at = self.clock.device_now().max(self.last_issue);
        let flush_done_ns = self.dev.flush(Nanos(at))?.0;
        let measured = Measured {
            requests: self.requests,
            reads: self.reads.clone(),
            writes: self.writes.clone(),
            trims: Histogram::new(),
            sim_ns: self.last_done.saturating_sub(first),
            series: Default::default(),
            cpu_seconds: None,
            flush_done_ns,
            interrupted: false,
        };
        let report = Report::build(RunFacts {
            cfg: &self.cfg,
            dev: self.dev.as_ref(),
            measured: &measured,
            workload: WorkloadInfo {
                kind: "live",
                name: String::new(),
                clipped_requests: 0,
                trace: None,
                flows: Vec::new(),
            },
            host: None,
            pretraining: Vec::new(),
            verified: self.verify,
            wall_pre: 0.0,
            wall,
        });
        let mut v: serde_json::Value = serde_json::from_str(&report.to_json())
            .map_err(|e| nandstack_core::Error::Invariant(format!("report: {e}")))?;
        v.as_object_mut()
            .expect("the report is an object")
            .remove("timeseries");
        v["live"] = self.live_section(wall);
        Ok(v)
    }

    fn live_section(&self, wall: f64) -> serde_json::Value {
        let (lag, late) = self
            .lag
            .lock()
            .map(|l| (l.hist.clone(), l.late_over_1ms))
            .unwrap_or_default();
        let mismatch = self.store.first_mismatch.map(|(at, want, got)| {
            format!("page at byte {at}: checksum {got:#x}, last written {want:#x}")
        });
        serde_json::json!({
            "time_scale": self.clock.time_scale,
            "flushes": self.flushes,
            "data_store": "memory",
            "data_held_bytes": self.store.held_bytes(),
            "measured_wall_seconds": wall,
            "lag_us": (!lag.is_empty()).then(|| lag.percentiles(1e-3)),
            "late_replies_over_1ms": late,
            "model_errors": self.errors,
            "first_model_error": self.first_error,
            "verify": {
                "enabled": self.verify,
                "pages_checked": self.store.verified_pages,
                "pages_mismatched": self.store.mismatched_pages,
                "first_mismatch": mismatch,
            },
        })
    }
}

pub fn io_err(path: &str, source: std::io::Error) -> nandstack_core::Error {
    nandstack_core::Error::Io {
        path: path.to_string(),
        source,
    }
}

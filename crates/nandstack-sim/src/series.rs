//! The one interval time-series format: a row every N host bytes (read + written), every N bytes
//! written, every N simulated seconds, or every 1/20 of the measured requests, with interval and
//! cumulative figures from the device's common counters, then the device's own gauges (block: free
//! blocks and buffered bytes; hybrid: SLC blocks, θ, utilisation) and, for host programs, the host's.

use std::fs::File;
use std::io::{BufWriter, Write};

use nandstack_core::{Error, Histogram, Result};
use nandstack_device::{Device, DeviceStats};
use serde::Serialize;

/// The columns every series starts with.
pub const COMMON_COLUMNS: [&str; 15] = [
    "sim_seconds",
    "requests",
    "host_write_bytes",
    "host_read_bytes",
    "waf_interval",
    "waf_cumulative",
    "gc_migrated_pages",
    "flash_erases",
    "iops_interval",
    "read_latency_us_p50",
    "read_latency_us_p99",
    "write_latency_us_p50",
    "write_latency_us_p99",
    "read_latency_us_mean",
    "write_latency_us_mean",
];

#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeSeries {
    pub columns: Vec<String>,
    /// The rows, unless they were streamed to `path` as they were produced (bounded memory).
    pub rows: Vec<Vec<f64>>,
    /// Where the rows were written (CSV with a header), when streamed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Streams rows to a CSV file as they come (the run's memory stays bounded however long the series).
pub struct SeriesSink {
    out: BufWriter<File>,
    path: String,
}

impl SeriesSink {
    pub fn create(path: &str) -> Result<SeriesSink> {
        let f = File::create(path).map_err(|e| Error::Io {
            path: path.into(),
            source: e,
        })?;
        Ok(SeriesSink {
            out: BufWriter::with_capacity(1 << 16, f),
            path: path.into(),
        })
    }
    fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.out, "{text}").map_err(|e| Error::Io {
            path: self.path.clone(),
            source: e,
        })
    }
    fn finish(mut self) -> Result<String> {
        self.out.flush().map_err(|e| Error::Io {
            path: self.path.clone(),
            source: e,
        })?;
        Ok(self.path)
    }
}

impl TimeSeries {
    /// Write the series as CSV to `path` (for series built whole, e.g. the host's) and drop the rows.
    pub fn stream_to(&mut self, path: &str) -> Result<()> {
        let mut sink = SeriesSink::create(path)?;
        sink.line(&self.columns.join(","))?;
        for r in &self.rows {
            sink.line(&csv_row(r))?;
        }
        self.path = Some(sink.finish()?);
        self.rows.clear();
        Ok(())
    }

    /// CSV with a header; non-finite values are empty cells.
    pub fn to_csv(&self) -> String {
        let mut s = self.columns.join(",");
        s.push('\n');
        for r in &self.rows {
            s.push_str(&csv_row(r));
            s.push('\n');
        }
        s
    }
}

/// One CSV line (no newline).
pub fn csv_row(r: &[f64]) -> String {
    let cells: Vec<String> = r
        .iter()
        .map(|v| {
            if v.is_finite() {
                format!("{v}")
            } else {
                String::new()
            }
        })
        .collect();
    cells.join(",")
}

/// When rows are due.
#[derive(Clone, Copy, Debug, Default)]
pub struct Intervals {
    pub host_bytes: u64,
    pub written_bytes: u64,
    pub ns: u64,
    pub requests: u64,
}

impl Intervals {
    /// From the run config; with nothing set, every 1/20 of `total_requests` (or 100,000 requests).
    pub fn new(
        host_bytes: u64,
        written_bytes: u64,
        seconds: f64,
        total_requests: Option<u64>,
    ) -> Self {
        let ns = (seconds * 1e9).round() as u64;
        let requests = if host_bytes == 0 && written_bytes == 0 && ns == 0 {
            total_requests.map_or(100_000, |n| (n / 20).max(1))
        } else {
            0
        };
        Intervals {
            host_bytes,
            written_bytes,
            ns,
            requests,
        }
    }
}

pub struct Recorder {
    sink: Option<SeriesSink>,
    every: Intervals,
    next: Intervals,
    last: Snapshot,
    pub reads: Histogram,
    pub writes: Histogram,
    pub series: TimeSeries,
    gauges: usize,
}

#[derive(Clone, Copy, Default)]
struct Snapshot {
    t_ns: u64,
    requests: u64,
    programs: u64,
    written: u64,
    migrated: u64,
    erases: u64,
}

fn snapshot(s: &DeviceStats, t_ns: u64, requests: u64) -> Snapshot {
    Snapshot {
        t_ns,
        requests,
        programs: s.flash_program_pages,
        written: s.host_write_bytes,
        migrated: s.gc_migrated_units,
        erases: s.erase_count,
    }
}

impl Recorder {
    /// A recorder for `dev`: its gauge names become the last columns. With `sink`, rows go to the file
    /// as they are produced instead of memory.
    pub fn new(every: Intervals, dev: &dyn Device, sink: Option<SeriesSink>) -> Result<Recorder> {
        let gauges = dev.gauges();
        let mut columns: Vec<String> = COMMON_COLUMNS.iter().map(|c| c.to_string()).collect();
        columns.extend(gauges.iter().map(|(n, _)| n.to_string()));
        let mut sink = sink;
        if let Some(s) = sink.as_mut() {
            s.line(&columns.join(","))?;
        }
        Ok(Recorder {
            sink,
            every,
            next: every,
            last: Snapshot::default(),
            reads: Histogram::new(),
            writes: Histogram::new(),
            series: TimeSeries {
                columns,
                rows: Vec::new(),
                path: None,
            },
            gauges: gauges.len(),
        })
    }

    /// The series (its rows, or the file they went to).
    pub fn into_series(mut self) -> Result<TimeSeries> {
        if let Some(sink) = self.sink.take() {
            self.series.path = Some(sink.finish()?);
        }
        Ok(self.series)
    }

    /// Called after each request (cheap unless a row is due).
    #[inline]
    pub fn after(&mut self, dev: &dyn Device, t_ns: u64, requests: u64) -> Result<()> {
        let e = self.every;
        let due_req = e.requests > 0 && requests >= self.next.requests;
        let due_ns = e.ns > 0 && t_ns >= self.next.ns;
        let (due_bytes, due_written) = if e.host_bytes > 0 || e.written_bytes > 0 {
            let (written, read) = dev.host_bytes();
            (
                e.host_bytes > 0 && written + read >= self.next.host_bytes,
                e.written_bytes > 0 && written >= self.next.written_bytes,
            )
        } else {
            (false, false)
        };
        if due_req || due_ns || due_bytes || due_written {
            self.emit(dev, t_ns, requests)?;
        }
        Ok(())
    }

    /// Emit the final (partial) interval if anything happened since the last row.
    pub fn finish(&mut self, dev: &dyn Device, t_ns: u64, requests: u64) -> Result<()> {
        if requests > self.last.requests {
            self.emit(dev, t_ns, requests)?;
        }
        Ok(())
    }

    fn emit(&mut self, dev: &dyn Device, t_ns: u64, requests: u64) -> Result<()> {
        let s = dev.stats();
        let e = self.every;
        let advance = |next: &mut u64, every: u64, at: u64| {
            while every > 0 && *next <= at {
                *next += every;
            }
        };
        advance(&mut self.next.requests, e.requests, requests);
        advance(&mut self.next.ns, e.ns, t_ns);
        advance(
            &mut self.next.host_bytes,
            e.host_bytes,
            s.host_write_bytes + s.host_read_bytes,
        );
        advance(
            &mut self.next.written_bytes,
            e.written_bytes,
            s.host_write_bytes,
        );
        let now = snapshot(&s, t_ns, requests);
        let page = s.page_size_bytes.max(1) as f64;
        let d_written = (now.written - self.last.written) as f64 / page;
        let waf_i = if d_written > 0.0 {
            (now.programs - self.last.programs) as f64 / d_written
        } else {
            f64::NAN
        };
        let dt = (now.t_ns.saturating_sub(self.last.t_ns)) as f64 / 1e9;
        let us = |h: &Histogram, q: f64| {
            if h.is_empty() {
                f64::NAN
            } else {
                h.quantile(q) as f64 / 1e3
            }
        };
        let mean = |h: &Histogram| {
            if h.is_empty() {
                f64::NAN
            } else {
                h.mean() / 1e3
            }
        };
        let mut row = vec![
            t_ns as f64 / 1e9,
            requests as f64,
            now.written as f64,
            s.host_read_bytes as f64,
            waf_i,
            s.waf(),
            (now.migrated - self.last.migrated) as f64,
            (now.erases - self.last.erases) as f64,
            if dt > 0.0 {
                (requests - self.last.requests) as f64 / dt
            } else {
                f64::NAN
            },
            us(&self.reads, 0.5),
            us(&self.reads, 0.99),
            us(&self.writes, 0.5),
            us(&self.writes, 0.99),
            mean(&self.reads),
            mean(&self.writes),
        ];
        let gauges = dev.gauges();
        debug_assert_eq!(gauges.len(), self.gauges, "a device's gauges never change");
        row.extend(gauges.iter().map(|(_, v)| *v));
        match self.sink.as_mut() {
            Some(s) => s.line(&csv_row(&row))?,
            None => self.series.rows.push(row),
        }
        self.reads.reset();
        self.writes.reset();
        self.last = now;
        Ok(())
    }
}

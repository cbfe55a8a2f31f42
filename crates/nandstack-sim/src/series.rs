//! The interval time series: one row every N host bytes or N simulated seconds (or every 1/20 of the
//! measured requests), with interval and cumulative figures.

use nandstack_core::Histogram;
use nandstack_device::ssd::BlockSsd;
use serde::Serialize;

pub const COLUMNS: [&str; 16] = [
    "sim_seconds",
    "requests",
    "host_write_bytes",
    "host_read_bytes",
    "waf_interval",
    "waf_cumulative",
    "free_blocks",
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
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<f64>>,
}

impl TimeSeries {
    pub fn to_csv(&self) -> String {
        let mut s = self.columns.join(",");
        s.push('\n');
        for r in &self.rows {
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
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        s
    }
}

pub struct Recorder {
    every_bytes: u64,
    every_ns: u64,
    every_requests: u64,
    next_bytes: u64,
    next_ns: u64,
    next_requests: u64,
    last: Snapshot,
    pub reads: Histogram,
    pub writes: Histogram,
    pub series: TimeSeries,
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

fn snapshot(ssd: &BlockSsd, t_ns: u64, requests: u64) -> Snapshot {
    let c = ssd.ftl.counters();
    Snapshot {
        t_ns,
        requests,
        programs: c.flash_program_pages,
        written: ssd.counters().write_bytes,
        migrated: c.gc_migrated_units,
        erases: c.gc_erases + c.wear_leveling_erases,
    }
}

impl Recorder {
    pub fn new(every_bytes: u64, every_seconds: f64, total_requests: Option<u64>) -> Recorder {
        let every_ns = (every_seconds * 1e9).round() as u64;
        let every_requests = if every_bytes == 0 && every_ns == 0 {
            total_requests.map_or(100_000, |n| (n / 20).max(1))
        } else {
            0
        };
        Recorder {
            every_bytes,
            every_ns,
            every_requests,
            next_bytes: every_bytes,
            next_ns: every_ns,
            next_requests: every_requests,
            last: Snapshot::default(),
            reads: Histogram::new(),
            writes: Histogram::new(),
            series: TimeSeries {
                columns: COLUMNS.to_vec(),
                rows: Vec::new(),
            },
        }
    }

    /// Called after each request; emits a row when an interval boundary is crossed.
    #[inline]
    pub fn after(&mut self, ssd: &BlockSsd, t_ns: u64, requests: u64) {
        let bytes = ssd.counters().write_bytes + ssd.counters().read_bytes;
        let due = (self.every_requests > 0 && requests >= self.next_requests)
            || (self.every_bytes > 0 && bytes >= self.next_bytes)
            || (self.every_ns > 0 && t_ns >= self.next_ns);
        if due {
            while self.every_requests > 0 && self.next_requests <= requests {
                self.next_requests += self.every_requests;
            }
            while self.every_bytes > 0 && self.next_bytes <= bytes {
                self.next_bytes += self.every_bytes;
            }
            while self.every_ns > 0 && self.next_ns <= t_ns {
                self.next_ns += self.every_ns;
            }
            self.emit(ssd, t_ns, requests);
        }
    }

    /// Emit the final (partial) interval if anything happened since the last row.
    pub fn finish(&mut self, ssd: &BlockSsd, t_ns: u64, requests: u64) {
        if requests > self.last.requests {
            self.emit(ssd, t_ns, requests);
        }
    }

    fn emit(&mut self, ssd: &BlockSsd, t_ns: u64, requests: u64) {
        let now = snapshot(ssd, t_ns, requests);
        let page = ssd.ftl.geometry().page_size_bytes as f64;
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
        self.series.rows.push(vec![
            t_ns as f64 / 1e9,
            requests as f64,
            now.written as f64,
            ssd.counters().read_bytes as f64,
            waf_i,
            ssd.waf(),
            ssd.ftl.free_blocks() as f64,
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
        ]);
        self.reads.reset();
        self.writes.reset();
        self.last = now;
    }
}

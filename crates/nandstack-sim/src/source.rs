//! Where the measured phase's requests come from: the synthetic generator or a trace, with the trace's
//! addresses checked, wrapped or scaled onto the device.

use std::path::{Path, PathBuf};

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use nandstack_workload::standin::StandinGenerator;
use nandstack_workload::trace::{self, TraceFormat, TraceOptions, TraceReader};
use nandstack_workload::{BlockGenerator, BlockRequest, Op};

use crate::config::{LbaPolicy, TraceConfig};
use crate::progress::Ticker;

/// A request with its arrival time (ns), when the source has one.
pub type Timed = (BlockRequest, Option<u64>);

// One `Source` per run: the size difference costs nothing, and the synthetic variant is the hot path.
#[allow(clippy::large_enum_variant)]
pub enum Source {
    Synthetic {
        generator: BlockGenerator,
        remaining: u64,
        clock_ns: u64,
    },
    Trace(Box<TraceSource>),
    Standin {
        generator: StandinGenerator,
    },
}

/// A trace replay: one pass after another (`repeat`), each at most `max_requests` requests, every
/// request fitted onto the device by [`map_lba`]. Arrival times of later passes follow the previous
/// pass's last arrival.
pub struct TraceSource {
    reader: TraceReader,
    path: PathBuf,
    format: TraceFormat,
    options: TraceOptions,
    /// Counts of the passes before the current one.
    done: TraceCounts,
    lba: LbaPolicy,
    capacity: u64,
    extent: u64,
    max_per_pass: u64,
    passes_left: u32,
    /// Passes before the current one.
    pass: u32,
    in_pass: u64,
    index: u64,
    /// Arrival offset of the current pass, and the last arrival seen.
    pass_base_ns: u64,
    last_arrival_ns: u64,
    pub clipped: u64,
}

impl Source {
    pub fn synthetic(generator: BlockGenerator, requests: u64) -> Source {
        Source::Synthetic {
            generator,
            remaining: requests,
            clock_ns: 0,
        }
    }

    pub fn standin(generator: StandinGenerator) -> Source {
        Source::Standin { generator }
    }

    /// A trace replay. With `lba = "scale"` the trace is read once first for its extent (progress
    /// phase "scan", interruptible through `ticker`).
    pub fn trace(cfg: &TraceConfig, capacity: u64, ticker: &mut Ticker) -> Result<Source> {
        let path = Path::new(&cfg.path);
        let options = cfg.options();
        let extent = if cfg.lba == LbaPolicy::Scale {
            ticker.phase("scan", 0)?;
            let mut end = 1u64;
            for (i, r) in trace::open_with(path, cfg.format, options)?.enumerate() {
                end = end.max(r?.end_bytes());
                ticker.tick(i as u64 + 1)?;
            }
            end
        } else {
            0
        };
        let reader = trace::open_with(path, cfg.format, options)?;
        Ok(Source::Trace(Box::new(TraceSource {
            reader,
            path: path.to_path_buf(),
            format: cfg.format,
            options,
            done: TraceCounts::default(),
            lba: cfg.lba,
            capacity,
            extent,
            max_per_pass: if cfg.max_requests == 0 {
                u64::MAX
            } else {
                cfg.max_requests
            },
            passes_left: cfg.repeat.max(1) - 1,
            pass: 0,
            in_pass: 0,
            index: 0,
            pass_base_ns: 0,
            last_arrival_ns: 0,
            clipped: 0,
        })))
    }

    /// Requests left, if known (for progress).
    pub fn len_hint(&self) -> Option<u64> {
        match self {
            Source::Synthetic { remaining, .. } => Some(*remaining),
            Source::Trace(t) => {
                (t.max_per_pass != u64::MAX).then(|| t.max_per_pass * (t.passes_left as u64 + 1))
            }
            Source::Standin { .. } => None,
        }
    }

    /// Trace requests whose length was clipped to the device's capacity.
    pub fn clipped(&self) -> u64 {
        match self {
            Source::Trace(t) => t.clipped,
            _ => 0,
        }
    }

    /// A trace replay's row counts so far (every pass).
    pub fn trace_counts(&self) -> Option<TraceCounts> {
        match self {
            Source::Trace(t) => Some(t.done.plus(&TraceCounts::of(&t.reader))),
            _ => None,
        }
    }
}

/// What a trace replay did with the rows of its file(s): the summary's `trace` section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TraceCounts {
    /// Rows earlier than the row just before them in the file (put in time order by the reorder window).
    pub out_of_order_rows: u64,
    /// Rows earlier than a row already replayed (the window was too small): replayed at once.
    pub late_rows: u64,
    /// Malformed lines skipped (`workload.trace.malformed = "lenient"`).
    pub malformed_rows: u64,
    /// Data lines that deliberately give no request (other blkparse actions, zero-length rows, …).
    pub skipped_rows: u64,
}

impl TraceCounts {
    fn of(r: &TraceReader) -> TraceCounts {
        TraceCounts {
            out_of_order_rows: r.out_of_order(),
            late_rows: r.late(),
            malformed_rows: r.malformed(),
            skipped_rows: r.skipped(),
        }
    }
    fn plus(&self, o: &TraceCounts) -> TraceCounts {
        TraceCounts {
            out_of_order_rows: self.out_of_order_rows + o.out_of_order_rows,
            late_rows: self.late_rows + o.late_rows,
            malformed_rows: self.malformed_rows + o.malformed_rows,
            skipped_rows: self.skipped_rows + o.skipped_rows,
        }
    }
}

impl TraceSource {
    fn next_record(&mut self) -> Option<Result<Timed>> {
        loop {
            if self.in_pass < self.max_per_pass {
                match self.reader.next() {
                    Some(Ok(rec)) => {
                        self.in_pass += 1;
                        self.index += 1;
                        let mut req = rec.request();
                        match map_lba(&mut req, self.lba, self.capacity, self.extent) {
                            Ok(clipped) => self.clipped += u64::from(clipped),
                            Err(e) => {
                                return Some(Err(Error::OutOfRange(format!(
                                    "{}: request #{}: {e}",
                                    self.path.display(),
                                    self.index
                                ))))
                            }
                        }
                        let arrival = match rec.arrival_ns.map(|a| self.pass_base_ns.checked_add(a)) {
                            None => None,
                            Some(Some(t)) => {
                                self.last_arrival_ns = self.last_arrival_ns.max(t);
                                Some(t)
                            }
                            Some(None) => {
                                return Some(Err(Error::config(
                                    "workload.trace.repeat",
                                    format!(
                                        "{}: pass {} of the trace would arrive past 2^64 ns (584 years)",
                                        self.path.display(),
                                        self.pass + 1
                                    ),
                                )))
                            }
                        };
                        return Some(Ok((req, arrival)));
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    None => {}
                }
            }
            // End of a pass.
            if self.passes_left == 0 {
                return None;
            }
            self.passes_left -= 1;
            self.pass += 1;
            self.in_pass = 0;
            self.pass_base_ns = self.last_arrival_ns;
            match trace::open_with(&self.path, self.format, self.options) {
                Ok(r) => {
                    self.done = self.done.plus(&TraceCounts::of(&self.reader));
                    self.reader = r;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for Source {
    type Item = Result<Timed>;

    fn next(&mut self) -> Option<Result<Timed>> {
        match self {
            Source::Synthetic {
                generator,
                remaining,
                clock_ns,
            } => {
                if *remaining == 0 {
                    return None;
                }
                *remaining -= 1;
                let arrival = match generator.next_arrival_ns(*clock_ns) {
                    Ok(a) => a,
                    Err(e) => return Some(Err(e)),
                };
                if let Some(a) = arrival {
                    *clock_ns = a;
                }
                Some(Ok((generator.next_request(), arrival)))
            }
            Source::Trace(t) => t.next_record(),
            Source::Standin { generator } => generator.next().map(|(offset, len)| {
                Ok((
                    BlockRequest {
                        op: Op::Write,
                        offset,
                        len,
                    },
                    None,
                ))
            }),
        }
    }
}

/// Fit a trace request onto a device of `capacity` bytes — the one function every device's trace
/// replay uses. `error`: a request that does not fit is an error; `wrap`: the offset modulo the
/// capacity (a request crossing the end restarts at 0); `scale`: the trace's extent mapped onto the
/// capacity, 4 KiB-aligned, and a request that would cross the end moved back to end there. Under
/// `wrap` and `scale` a request longer than the device is clipped to its capacity. Returns whether the
/// request was clipped.
pub fn map_lba(
    req: &mut BlockRequest,
    policy: LbaPolicy,
    capacity: u64,
    extent: u64,
) -> std::result::Result<bool, String> {
    let mut clipped = false;
    if req.len > capacity {
        if policy == LbaPolicy::Error {
            return Err(format!(
                "{} bytes is larger than the whole device ({capacity} bytes)",
                req.len
            ));
        }
        req.len = capacity;
        clipped = true;
    }
    let end = req.offset.saturating_add(req.len);
    match policy {
        LbaPolicy::Error => {
            if end > capacity {
                return Err(format!(
                    "offset {} + length {} is beyond the device's logical capacity of {capacity} bytes; set workload.trace.lba = \"wrap\" or \"scale\" (--lba wrap|scale on the command line)",
                    req.offset, req.len
                ));
            }
        }
        LbaPolicy::Wrap => {
            req.offset %= capacity;
            if req.offset + req.len > capacity {
                req.offset = 0;
            }
        }
        LbaPolicy::Scale => {
            if extent > capacity {
                let scaled = (req.offset as u128 * capacity as u128 / extent as u128) as u64;
                req.offset = scaled / MAPPING_UNIT_BYTES * MAPPING_UNIT_BYTES;
            }
            if req.offset + req.len > capacity {
                req.offset = (capacity - req.len) / MAPPING_UNIT_BYTES * MAPPING_UNIT_BYTES;
            }
        }
    }
    Ok(clipped)
}

/// One streaming pass over a trace, summarised as JSON (`records`, `reads`, `writes`, `trims`, their
/// bytes, `max_end_bytes`, `first_ns`, `last_ns`). `format` is a format name of docs/trace-formats.md; an
/// unknown name is a config error listing the formats, a malformed line an error with its line number.
pub fn trace_stats_json(path: &str, format: &str) -> Result<String> {
    let f: TraceFormat = serde_json::from_value(serde_json::Value::from(format))
        .map_err(|e| Error::config("format", e.to_string()))?;
    let s = trace::scan(Path::new(path), f)?;
    Ok(serde_json::json!({
        "records": s.records,
        "reads": s.reads,
        "writes": s.writes,
        "trims": s.trims,
        "read_bytes": s.read_bytes,
        "write_bytes": s.write_bytes,
        "trim_bytes": s.trim_bytes,
        "max_end_bytes": s.max_end_bytes,
        "first_ns": s.first_ns,
        "last_ns": s.last_ns,
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandstack_workload::Op;

    #[test]
    fn lba_policies() {
        let r = |offset, len| BlockRequest {
            op: Op::Write,
            offset,
            len,
        };
        let mut q = r(9000, 2000);
        assert!(map_lba(&mut q, LbaPolicy::Error, 10_000, 0)
            .unwrap_err()
            .contains("beyond"));
        let mut q = r(25_000, 1000);
        map_lba(&mut q, LbaPolicy::Wrap, 10_000, 0).unwrap();
        assert_eq!(q.offset, 5000);
        let mut q = r(9500, 1000);
        map_lba(&mut q, LbaPolicy::Wrap, 10_000, 0).unwrap();
        assert_eq!(q.offset, 0);
        // Scale a 1 MiB trace onto 64 KiB: offset 512 KiB → 32 KiB.
        let mut q = r(512 << 10, 4096);
        map_lba(&mut q, LbaPolicy::Scale, 64 << 10, 1 << 20).unwrap();
        assert_eq!(q.offset, 32 << 10);
        // Longer than the device: an error, or clipped to the capacity.
        let mut q = r(0, 20_000);
        assert!(map_lba(&mut q, LbaPolicy::Error, 10_000, 0).is_err());
        let mut q = r(4096, 20_000);
        assert_eq!(map_lba(&mut q, LbaPolicy::Wrap, 8192, 0), Ok(true));
        assert_eq!((q.offset, q.len), (0, 8192));
        let mut q = r(1 << 20, 20_000);
        assert_eq!(map_lba(&mut q, LbaPolicy::Scale, 8192, 2 << 20), Ok(true));
        assert_eq!((q.offset, q.len), (0, 8192));
        // An offset at the trace's very end scales onto the last unit that fits.
        let mut q = r(1 << 20, 4096);
        assert_eq!(
            map_lba(&mut q, LbaPolicy::Scale, 64 << 10, 1 << 20),
            Ok(false)
        );
        assert_eq!(q.offset, (64 << 10) - 4096);
    }
}

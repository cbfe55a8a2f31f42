//! Where the measured phase's requests come from: the synthetic generator or a trace, with the trace's
//! addresses checked, wrapped or scaled onto the device.

use std::path::Path;

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use nandstack_workload::trace::{self, TraceFormat, TraceReader};
use nandstack_workload::{BlockGenerator, BlockRequest};

use crate::config::{LbaPolicy, TraceConfig};

/// A request with its arrival time (ns), when the source has one.
pub type Timed = (BlockRequest, Option<u64>);

pub enum Source {
    Synthetic {
        generator: BlockGenerator,
        remaining: u64,
        clock_ns: u64,
    },
    Trace {
        reader: TraceReader,
        lba: LbaPolicy,
        capacity: u64,
        trace_extent: u64,
        remaining: u64,
        index: u64,
        name: String,
    },
}

impl Source {
    pub fn synthetic(generator: BlockGenerator, requests: u64) -> Source {
        Source::Synthetic {
            generator,
            remaining: requests,
            clock_ns: 0,
        }
    }

    pub fn trace(cfg: &TraceConfig, capacity: u64) -> Result<Source> {
        let format: TraceFormat = cfg.format.parse().map_err(|e: Error| match e {
            Error::Config { msg, .. } => Error::config("trace.format", msg),
            other => other,
        })?;
        let path = Path::new(&cfg.path);
        let trace_extent = if cfg.lba == LbaPolicy::Scale {
            trace::scan(path, format)?.max_end_bytes
        } else {
            0
        };
        let reader = trace::open(path, format)?;
        let remaining = if cfg.max_requests == 0 {
            u64::MAX
        } else {
            cfg.max_requests
        };
        Ok(Source::Trace {
            reader,
            lba: cfg.lba,
            capacity,
            trace_extent,
            remaining,
            index: 0,
            name: cfg.path.clone(),
        })
    }

    /// Requests left, if known (for progress).
    pub fn len_hint(&self) -> Option<u64> {
        match self {
            Source::Synthetic { remaining, .. } => Some(*remaining),
            Source::Trace { remaining, .. } => (*remaining != u64::MAX).then_some(*remaining),
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
                let arrival = generator.next_arrival_ns(*clock_ns);
                if let Some(a) = arrival {
                    *clock_ns = a;
                }
                Some(Ok((generator.next_request(), arrival)))
            }
            Source::Trace {
                reader,
                lba,
                capacity,
                trace_extent,
                remaining,
                index,
                name,
            } => {
                if *remaining == 0 {
                    return None;
                }
                *remaining -= 1;
                let rec = match reader.next()? {
                    Ok(r) => r,
                    Err(e) => return Some(Err(e)),
                };
                *index += 1;
                let mut req = rec.request();
                if let Err(e) = map_lba(&mut req, *lba, *capacity, *trace_extent) {
                    return Some(Err(Error::OutOfRange(format!(
                        "{name}: request #{index}: {e}"
                    ))));
                }
                Some(Ok((req, rec.arrival_ns)))
            }
        }
    }
}

/// Fit a trace request onto a device of `capacity` bytes.
pub fn map_lba(
    req: &mut BlockRequest,
    policy: LbaPolicy,
    capacity: u64,
    extent: u64,
) -> std::result::Result<(), String> {
    if req.len > capacity {
        return Err(format!(
            "{} bytes is larger than the whole device ({capacity} bytes)",
            req.len
        ));
    }
    let end = req.offset.saturating_add(req.len);
    match policy {
        LbaPolicy::Error => {
            if end > capacity {
                return Err(format!(
                    "offset {} + length {} is beyond the device's logical capacity of {capacity} bytes; set trace.lba = \"wrap\" or \"scale\"",
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
    Ok(())
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
        let mut q = r(0, 20_000);
        assert!(map_lba(&mut q, LbaPolicy::Wrap, 10_000, 0).is_err());
    }
}

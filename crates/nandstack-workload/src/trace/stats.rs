//! One streaming pass over a trace: counts, bytes, extent and time span.

use std::path::Path;

use nandstack_core::Result;

use super::{open_with, TraceFormat, TraceOptions, TraceRecord};
use crate::block::Op;

/// What one pass over a trace found.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    pub records: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    /// Largest `offset + len` over all records: the logical space the trace touches.
    pub max_end_bytes: u64,
    /// Arrival of the first record (always `Some(0)` for timed formats, `None` for untimed ones).
    pub first_ns: Option<u64>,
    /// Latest arrival over all records: the trace's span. For sorted traces this is the last record's
    /// arrival; for unsorted ones (SYSTOR, Tencent) it is the maximum.
    pub last_ns: Option<u64>,
}

impl TraceStats {
    /// Account for one record. Byte totals saturate rather than overflow.
    pub fn add(&mut self, r: &TraceRecord) {
        if self.records == 0 {
            self.first_ns = r.arrival_ns;
        }
        self.records += 1;
        let (count, bytes) = match r.op {
            Op::Read => (&mut self.reads, &mut self.read_bytes),
            Op::Write => (&mut self.writes, &mut self.write_bytes),
            Op::Trim => (&mut self.trims, &mut self.trim_bytes),
        };
        *count += 1;
        *bytes = bytes.saturating_add(r.len);
        self.max_end_bytes = self.max_end_bytes.max(r.end_bytes());
        if let Some(t) = r.arrival_ns {
            self.last_ns = Some(self.last_ns.map_or(t, |l| l.max(t)));
        }
    }
}

/// Read the whole trace once (streaming) and summarise it; the first malformed line is an error.
pub fn scan(path: &Path, format: TraceFormat) -> Result<TraceStats> {
    scan_with(path, format, TraceOptions::default())
}

/// [`scan`] with reader options.
pub fn scan_with(path: &Path, format: TraceFormat, options: TraceOptions) -> Result<TraceStats> {
    let mut stats = TraceStats::default();
    for record in open_with(path, format, options)? {
        stats.add(&record?);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::test_util::rec;

    #[test]
    fn accumulates() {
        let mut s = TraceStats::default();
        for r in [
            rec(Some(0), Op::Read, 0, 4096, 0),
            rec(Some(900), Op::Write, 8192, 512, 0),
            rec(Some(300), Op::Trim, 1 << 20, 1 << 20, 0),
            rec(Some(500), Op::Write, 0, 4096, 0),
        ] {
            s.add(&r);
        }
        assert_eq!(
            s,
            TraceStats {
                records: 4,
                reads: 1,
                writes: 2,
                trims: 1,
                read_bytes: 4096,
                write_bytes: 4608,
                trim_bytes: 1 << 20,
                max_end_bytes: 2 << 20,
                first_ns: Some(0),
                last_ns: Some(900),
            }
        );
        let mut untimed = TraceStats::default();
        untimed.add(&rec(None, Op::Read, 0, 1, 0));
        assert_eq!((untimed.first_ns, untimed.last_ns), (None, None));
    }
}

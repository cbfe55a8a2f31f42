//! Linux `blkparse` default text output (`blkparse -i sda` with no `-f`/`-F` format), one event per line:
//!
//! `  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [kworker/u8:0]`
//!
//! | column        | unit / meaning                                                       | record          |
//! |---------------|----------------------------------------------------------------------|-----------------|
//! | `maj,min`     | device numbers                                                       | `device` = maj << 20 \| min (the kernel's `MKDEV`) |
//! | cpu, seq, pid | CPU, per-CPU sequence number, process id                             | checked, ignored |
//! | time          | seconds since the trace start, 9 fraction digits                     | exact ns        |
//! | action        | `Q` queued, `G` get request, `I` inserted, `D` issued, `C` completed, `M`/`F` merged, `X` split, `A` remapped, `P`/`U` plug/unplug, `m` message, … | only the chosen action |
//! | RWBS          | `R` read, `W` write, `D` discard, `E` secure erase, `F` flush/FUA, `N` none, `S` sync, `M` meta, `A` ahead | `op`  |
//! | payload       | `sector + count [process]` (512-B sectors)                           | × 512 B         |
//!
//! Each request goes through several actions; the reader takes exactly one of them per request,
//! [`BlkparseAction::Issue`](super::BlkparseAction) (`D`, what the device sees) by default, configurable
//! with [`TraceOptions::blkparse_action`](super::TraceOptions). Lines of other actions are skipped.
//!
//! Op from RWBS: a `D` (discard, including `DE` secure erase) → trim, else `W` → write, else `R` → read;
//! flush-only events (`FN`, `F` with no `sector + count`) and `N` events are skipped, as are SCSI
//! pass-through events (`D R 24 (12 00 …) [sg_inq]`, whose payload is a byte count and a CDB) and
//! zero-sector events. blkparse's own non-event lines — `Input file … added`, the per-CPU and `Total`
//! summaries from their `CPU0 (8,0):` / `Total (8,0):` headings on, the `Throughput`/`Events`/`Skips`
//! footers — are ignored; any other line that does not start with `maj,min` is malformed (an error, or
//! skipped and counted in lenient mode). Time base: the first
//! record. Input need not be sorted: an event earlier than its predecessor is handled as described in
//! the module docs on out-of-order arrivals.

use super::fields::{
    parse_decimal_ns, parse_sectors, parse_u32, parse_u64, quote, words, FieldResult,
};
use super::format::BlkparseAction;
use super::parsed::Parsed;
use crate::block::Op;

/// Largest device major (12 bits) and minor (20 bits) numbers of a Linux `dev_t`.
const MAX_MAJOR: u32 = (1 << 12) - 1;
const MAX_MINOR: u32 = (1 << 20) - 1;

pub(crate) struct Parser {
    action: u8,
    /// The per-CPU / total summary blkparse prints at the end has begun: its lines are not events.
    in_summary: bool,
}

/// Lines blkparse prints besides events: summary headings (`CPU0 (8,0):`, `Total (8,0):`), its footer
/// (`Throughput (R/W): …`, `Events (8,0): … entries`, `Skips: …`) and input notes (`Input file … added`).
const NON_EVENT_PREFIXES: [&[u8]; 6] = [
    b"CPU",
    b"Total (",
    b"Throughput (",
    b"Events (",
    b"Skips:",
    b"Input file ",
];

impl Parser {
    pub(crate) fn new(action: BlkparseAction) -> Self {
        Parser {
            action: action.letter(),
            in_summary: false,
        }
    }

    pub(crate) fn parse(&mut self, line: &[u8]) -> FieldResult<Parsed> {
        let mut w = words(line);
        let Some((major, minor)) = w.next().and_then(split_dev) else {
            // Not an event: blkparse's own non-event lines (and everything inside its summary) are
            // ignored; anything else is not blkparse output.
            if NON_EVENT_PREFIXES.iter().any(|p| line.starts_with(p)) {
                self.in_summary |= line.starts_with(b"CPU") || line.starts_with(b"Total (");
                return Ok(Parsed::Ignore);
            }
            if self.in_summary {
                return Ok(Parsed::Ignore);
            }
            return Err(
                "not a blkparse event line (`maj,min cpu seq time pid action RWBS …`) nor part of its summary"
                    .to_string(),
            );
        };
        let mut next = |name: &str| {
            w.next()
                .ok_or_else(|| format!("event line ends before the `{name}` field"))
        };
        let (cpu, seq, time, pid) = (next("cpu")?, next("sequence")?, next("time")?, next("pid")?);
        let (action, rwbs) = (next("action")?, next("RWBS")?);
        let sector = w.next();
        let plus = w.next();
        let count = w.next();
        parse_u32(cpu, "cpu")?;
        parse_u64(seq, "sequence")?;
        let time_ns = parse_decimal_ns(time, "time", 9)?;
        parse_u64(pid, "pid")?;
        let device = make_dev(major, minor)?;
        if action != [self.action] {
            return Ok(Parsed::Skip);
        }
        let Some(op) = op_of(rwbs)? else {
            return Ok(Parsed::Skip);
        };
        // Payload: `sector + count [...]`; no sector (`[process]` right away) is a flush-only event, and
        // `bytes (cdb…)` a pass-through command.
        let Some(sector) = sector.filter(|s| s.first().is_some_and(u8::is_ascii_digit)) else {
            return Ok(Parsed::Skip);
        };
        if plus.is_some_and(|p| p.first() == Some(&b'(')) {
            return Ok(Parsed::Skip);
        }
        let (Some(b"+"), Some(count)) = (plus, count) else {
            return Err("expected `sector + count` after the RWBS field".to_string());
        };
        let offset = parse_sectors(sector, "sector")?;
        let len = parse_sectors(count, "count")?;
        Ok(Parsed::record(Some(time_ns), op, offset, len, device))
    }
}

/// `maj,min` as two digit strings, or `None` when the word is not a device (a summary line).
fn split_dev(word: &[u8]) -> Option<(&[u8], &[u8])> {
    let comma = word.iter().position(|&b| b == b',')?;
    let (major, minor) = (&word[..comma], &word[comma + 1..]);
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    (digits(major) && digits(minor)).then_some((major, minor))
}

fn make_dev(major: &[u8], minor: &[u8]) -> FieldResult<u32> {
    let (major, minor) = (parse_u32(major, "major")?, parse_u32(minor, "minor")?);
    if major > MAX_MAJOR || minor > MAX_MINOR {
        return Err(format!(
            "device {major},{minor} is outside Linux's 12-bit major / 20-bit minor range"
        ));
    }
    Ok(major << 20 | minor)
}

/// The op an RWBS string stands for; `None` for events without data (flush-only, `N`).
fn op_of(rwbs: &[u8]) -> FieldResult<Option<Op>> {
    if rwbs.len() > 8 || !rwbs.iter().all(|b| b"RWDEFNSMAB".contains(b)) {
        return Err(format!(
            "field `RWBS` is not an RWBS string (`{}`)",
            quote(rwbs)
        ));
    }
    Ok(if rwbs.contains(&b'D') {
        Some(Op::Trim)
    } else if rwbs.contains(&b'W') {
        Some(Op::Write)
    } else if rwbs.contains(&b'R') {
        Some(Op::Read)
    } else {
        None
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, parse_with, rec};
    use super::super::TraceFormat::Blkparse;
    use super::super::{BlkparseAction, TraceOptions};
    use crate::block::Op;

    /// A short trace in blkparse's default output, with the summary it prints at the end.
    const TRACE: &str = "\
  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [kworker/u8:0]
  8,0    3        2     0.000001735  4162  G  WS 3417048 + 8 [kworker/u8:0]
  8,0    3        3     0.000002549  4162  P   N [kworker/u8:0]
  8,0    3        4     0.000003577  4162  I  WS 3417048 + 8 [kworker/u8:0]
  8,0    3        5     0.000004412  4162  U   N [kworker/u8:0] 1
  8,0    3        6     0.000007026  4162  D  WS 3417048 + 8 [kworker/u8:0]
  8,0    0        0     0.000010000     0  m   N cfq4162S / alloced
  8,0    1        1     0.000100000   917  Q FWS [jbd2/sda1-8]
  8,0    1        2     0.000101000   917  D  FN [jbd2/sda1-8]
  8,0    3        7     0.000129535     0  C  WS 3417048 + 8 [0]
  8,16   2        1     0.001000000  5000  D   R 1024 + 256 [fio]
  8,16   2        2     0.001500000  5000  D  DS 2048 + 2048 [fstrim]
  8,16   2        3     0.002000000  5000  D   R 24 (12 00 00 00 24 00 ..) [sg_inq]
  8,16   2        4     0.002500000  5000  D  WFS 4096 + 0 [kworker]
  8,16   2        5     0.003000000  5000  D RSM 8 + 16 [ls]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,        4KiB
Total (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
Throughput (R/W): 0KiB/s / 30KiB/s
Events (8,0): 10 entries
Skips: 0 forward (0 -   0.0%)
";

    #[test]
    fn issue_events_by_default() {
        let got = parse(TRACE, Blkparse).unwrap();
        let sda = 8 << 20;
        let sdb = 8 << 20 | 16;
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 3_417_048 * 512, 4096, sda),
                rec(Some(992_974), Op::Read, 1024 * 512, 131_072, sdb),
                rec(Some(1_492_974), Op::Trim, 2048 * 512, 1_048_576, sdb),
                rec(Some(2_992_974), Op::Read, 8 * 512, 8192, sdb),
            ]
        );
    }

    #[test]
    fn other_actions_on_request() {
        let queue = TraceOptions {
            blkparse_action: BlkparseAction::Queue,
            ..TraceOptions::default()
        };
        let got = parse_with(TRACE, Blkparse, queue).unwrap();
        // `Q FWS` has no sector: a flush, skipped.
        assert_eq!(
            got,
            vec![rec(Some(0), Op::Write, 3_417_048 * 512, 4096, 8 << 20)]
        );
        let complete = TraceOptions {
            blkparse_action: BlkparseAction::Complete,
            ..TraceOptions::default()
        };
        let got = parse_with(TRACE, Blkparse, complete).unwrap();
        assert_eq!(
            got,
            vec![rec(Some(0), Op::Write, 3_417_048 * 512, 4096, 8 << 20)]
        );
    }

    #[test]
    fn errors() {
        assert!(
            parse_err("  8,0  3  1  abc  4162  D  WS 1 + 8 [x]", Blkparse, 1).contains("`time`")
        );
        assert!(
            parse_err("  8,0  3  1  0.1  4162  D  WS 1 - 8 [x]", Blkparse, 1)
                .contains("`sector + count`")
        );
        assert!(parse_err("  8,0  3  1  0.1  4162  D  Wq 1 + 8 [x]", Blkparse, 1).contains("RWBS"));
        assert!(parse_err("  8,0  3  1  0.1", Blkparse, 1).contains("ends before the `pid`"));
        assert!(
            parse_err("  9999,0  3  1  0.1  1  D  W 1 + 8 [x]", Blkparse, 1)
                .contains("12-bit major")
        );
        assert!(parse_err("  8,0  3  1  0.1  1  D  W 1 + x [x]", Blkparse, 1).contains("`count`"));
        // Garbage is not skipped: it is not blkparse output (before its summary begins).
        let garbage = "  8,0  3  1  0.1  1  D  W 1 + 8 [x]\nhello world\n";
        assert!(parse_err(garbage, Blkparse, 2).contains("not a blkparse event line"));
        assert!(parse_err("Reads Queued: 1\n", Blkparse, 1).contains("not a blkparse event line"));
        // A header alone holds no request: the named error of every trace without one.
        assert!(parse_err("Input file sda.blktrace.0 added\n", Blkparse, 1).contains("no requests"));
    }
}

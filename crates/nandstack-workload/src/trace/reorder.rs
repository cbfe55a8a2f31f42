//! Time order: records pass through a bounded reorder window before their times are made relative to
//! the first record, so a trace whose rows are not sorted (SYSTOR'17, Tencent CBS, merged per-CPU
//! blkparse output) is replayed in arrival order.
//!
//! The window holds the records read but not yet released, ordered by (time, read order): those at or
//! after the last record of the in-order run join its end (a deque: a trace in time order never leaves
//! it, and each record costs O(1)), the others go to a min-heap; the earlier of the run's first and the
//! heap's top is the earliest held. The earliest is released once the window holds more than
//! `window_rows` records, or once it spans more than `window_ns` of trace time (latest time read −
//! earliest held) while holding more than [`MIN_WINDOW_ROWS`] records (so a sparse trace, a few rows a
//! second, is still sorted over a useful number of rows), and every record is released at the end. A
//! record is *out of order* when it is earlier than the record read just before it (a place where the
//! file's time goes backwards; the window sorts it); it is *late* when it is earlier than a record
//! already released — the window was too small for it. A late record is kept (never lost) and released
//! at once with the time of the last released record; past `max_late_rows` of them the reader stops
//! with an error naming the line.
//!
//! Records without a time (ARC, u32 blocks, fio v2) keep their file order.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use nandstack_core::{Error, Result};

use super::{Raw, TraceRecord};
use crate::block::Op;

/// The time bound of the window applies only beyond this many held records (fewer than `window_rows`
/// when that is smaller).
pub const MIN_WINDOW_ROWS: usize = 1024;

/// A parsed, checked record with its absolute time and where it came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Staged {
    pub raw: Raw,
    /// Line (text formats) or record number (binary formats).
    pub line: u64,
}

/// A held record (64 bytes): ordered by (key time, read order) only. `key` is the record's time (a late
/// record's: the last released time; an untimed record's: the latest time read).
struct Held {
    key: u128,
    seq: u64,
    line: u64,
    offset: u64,
    len: u64,
    device: u32,
    op: Op,
    timed: bool,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.key, self.seq) == (other.key, other.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.key, self.seq).cmp(&(other.key, other.seq))
    }
}

/// The reorder window and the clock that makes released times relative to the first released record.
pub(crate) struct Reorder {
    window_ns: u128,
    window_rows: usize,
    max_late_rows: u64,
    /// Held records in (key, read order) order, each at or after the one before: in a trace already in
    /// time order every record comes here and leaves from the front, in O(1).
    run: VecDeque<Held>,
    /// The held records that came earlier than the run's last one.
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    /// Latest time read so far, and the time of the record read last.
    latest: Option<u128>,
    previous: Option<u128>,
    /// Time of the last released record (released times never decrease).
    released: Option<u128>,
    /// Time of the first released record: arrival 0.
    base: Option<u128>,
    pub out_of_order: u64,
    pub late: u64,
}

impl Reorder {
    pub(crate) fn new(window_ns: u64, window_rows: u64, max_late_rows: u64) -> Reorder {
        Reorder {
            window_ns: u128::from(window_ns),
            window_rows: usize::try_from(window_rows).unwrap_or(usize::MAX),
            max_late_rows,
            run: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            latest: None,
            previous: None,
            released: None,
            base: None,
            out_of_order: 0,
            late: 0,
        }
    }

    /// Drop the records held (after an error: nothing follows it); the counts stay.
    pub(crate) fn clear(&mut self) {
        self.run.clear();
        self.heap.clear();
    }

    /// Take in a record read from `file`. Fails when it is one late record too many.
    pub(crate) fn push(&mut self, s: Staged, file: &str) -> Result<()> {
        let key = match s.raw.time_ns {
            None => self.latest.or(self.released).unwrap_or(0),
            Some(t) => {
                if self.previous.is_some_and(|p| t < p) {
                    self.out_of_order += 1;
                }
                self.previous = Some(t);
                self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
                match self.released {
                    Some(r) if t < r => {
                        self.late += 1;
                        if self.late > self.max_late_rows {
                            return Err(late_error(file, &s, r, self));
                        }
                        r
                    }
                    _ => t,
                }
            }
        };
        self.seq += 1;
        let held = Held {
            key,
            seq: self.seq,
            line: s.line,
            offset: s.raw.offset,
            len: s.raw.len,
            device: s.raw.device,
            op: s.raw.op,
            timed: s.raw.time_ns.is_some(),
        };
        // A later read order breaks ties, so a key at or after the run's last keeps the run sorted.
        if self.run.back().is_none_or(|b| key >= b.key) {
            self.run.push_back(held);
        } else {
            self.heap.push(Reverse(held));
        }
        Ok(())
    }

    /// The next record the window lets go of (`end`: the input has ended, release everything).
    pub(crate) fn pop(&mut self, end: bool, file: &str) -> Option<Result<TraceRecord>> {
        // The earliest held record (`Held`'s order: time key, then read order) is the run's first or
        // the heap's top.
        let (min, from_run) = match (self.run.front(), self.heap.peek()) {
            (None, None) => return None,
            (Some(f), Some(Reverse(t))) if t < f => (t.key, false),
            (Some(f), _) => (f.key, true),
            (None, Some(Reverse(t))) => (t.key, false),
        };
        let held = self.run.len() + self.heap.len();
        let due = end
            || held > self.window_rows
            || (held > MIN_WINDOW_ROWS.min(self.window_rows)
                && self
                    .latest
                    .is_some_and(|l| l.saturating_sub(min) > self.window_ns));
        if !due {
            return None;
        }
        let h = if from_run {
            self.run.pop_front()?
        } else {
            self.heap.pop()?.0
        };
        Some(self.release(h, file))
    }

    fn release(&mut self, h: Held, file: &str) -> Result<TraceRecord> {
        let raw = Raw {
            time_ns: h.timed.then_some(h.key),
            op: h.op,
            offset: h.offset,
            len: h.len,
            device: h.device,
        };
        let arrival_ns = match raw.time_ns {
            None => None,
            Some(t) => {
                self.released = Some(t);
                let base = *self.base.get_or_insert(t);
                Some(u64::try_from(t - base).map_err(|_| {
                    super::trace_error(
                        file,
                        h.line,
                        describe(&raw).as_bytes(),
                        "timestamp is more than 2^64 ns (584 years) after the first record"
                            .to_string(),
                    )
                })?)
            }
        };
        Ok(TraceRecord {
            arrival_ns,
            op: raw.op,
            offset: raw.offset,
            len: raw.len,
            device: raw.device,
        })
    }
}

fn late_error(file: &str, s: &Staged, released: u128, w: &Reorder) -> Error {
    let t = s.raw.time_ns.unwrap_or(0);
    super::trace_error(
        file,
        s.line,
        describe(&s.raw).as_bytes(),
        format!(
            "arrives {:.6} s before a record already replayed: {} records so far came too late for the \
             reorder window ({} s of trace time or {} records), more than the {} allowed; raise \
             workload.trace.reorder_window_seconds / reorder_window_rows (or max_late_rows)",
            (released - t) as f64 / 1e9,
            w.late,
            w.window_ns as f64 / 1e9,
            w.window_rows,
            w.max_late_rows
        ),
    )
}

/// A record as text for error messages (the line itself is no longer at hand).
fn describe(raw: &Raw) -> String {
    let op = match raw.op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Trim => "trim",
    };
    let time = raw
        .time_ns
        .map_or_else(String::new, |t| format!("time {t} ns, "));
    format!("{time}{op} of {} bytes at {}", raw.len, raw.offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(t: u128, line: u64) -> Staged {
        Staged {
            raw: Raw {
                time_ns: Some(t),
                op: Op::Write,
                offset: line * 4096,
                len: 4096,
                device: 0,
            },
            line,
        }
    }

    /// Push every time in order, popping whatever is due; the released (line, arrival) pairs.
    fn run(w: &mut Reorder, times: &[u128]) -> Result<Vec<(u64, u64)>> {
        let mut out = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            w.push(staged(t, i as u64 + 1), "f")?;
            while let Some(r) = w.pop(false, "f") {
                let r = r?;
                out.push((r.offset / 4096, r.arrival_ns.unwrap()));
            }
        }
        while let Some(r) = w.pop(true, "f") {
            let r = r?;
            out.push((r.offset / 4096, r.arrival_ns.unwrap()));
        }
        Ok(out)
    }

    #[test]
    fn sorts_within_the_window() {
        let mut w = Reorder::new(1_000, 100, 0);
        let out = run(&mut w, &[500, 100, 300, 200, 900]).unwrap();
        assert_eq!(out, [(2, 0), (4, 100), (3, 200), (1, 400), (5, 800)]);
        assert_eq!((w.out_of_order, w.late), (2, 0));
    }

    #[test]
    fn rows_bound_the_window_and_late_rows_are_counted() {
        // A window of one row: 100 comes after 300 has been released, so it is late and replayed at
        // 300's time, right after it.
        let mut w = Reorder::new(u64::MAX, 1, 5);
        let out = run(&mut w, &[200, 300, 350, 100, 400]).unwrap();
        assert_eq!(out, [(1, 0), (2, 100), (4, 100), (3, 150), (5, 200)]);
        assert_eq!((w.out_of_order, w.late), (1, 1));
    }

    #[test]
    fn time_bounds_the_window() {
        // 2,000 rows 1 µs apart and a 10 ns window: beyond the 1,024-row floor the time bound releases
        // rows, so a row 1,995 µs back comes too late while one 10 µs back is still sorted in.
        let mut times: Vec<u128> = (0..2000).map(|i| i * 1000).collect();
        times.extend([5_000, 1_990_000, 2_000_000]);
        let mut w = Reorder::new(10, 1 << 20, 5);
        let out = run(&mut w, &times).unwrap();
        assert_eq!((w.out_of_order, w.late), (1, 1));
        assert!(out.windows(2).all(|p| p[0].1 <= p[1].1));
        // Below the floor the time bound does not apply: everything is sorted.
        let mut w = Reorder::new(10, 1 << 20, 0);
        run(&mut w, &[0, 20, 15, 30, 5]).unwrap();
        assert_eq!((w.out_of_order, w.late), (2, 0));
    }

    #[test]
    fn too_many_late_rows_is_an_error_naming_the_line() {
        let mut w = Reorder::new(0, 0, 1);
        match run(&mut w, &[100, 200, 50, 300, 60]) {
            Err(Error::Trace { line, msg, .. }) => {
                assert_eq!(line, 5);
                assert!(msg.contains("reorder window"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_held_record_is_64_bytes() {
        assert_eq!(std::mem::size_of::<Reverse<Held>>(), 64);
    }

    #[test]
    fn untimed_records_keep_file_order() {
        let mut w = Reorder::new(10, 10, 0);
        for i in 0..3u64 {
            let mut s = staged(0, i);
            s.raw.time_ns = None;
            w.push(s, "f").unwrap();
        }
        let lines: Vec<u64> = std::iter::from_fn(|| w.pop(true, "f"))
            .map(|r| r.unwrap().offset / 4096)
            .collect();
        assert_eq!(lines, [0, 1, 2]);
    }

    /// The window as its contract states it, with no shared code: every held record in one vector,
    /// the earliest (time key, read order) found by a full scan.
    #[derive(Default)]
    struct PlainWindow {
        window_ns: u128,
        window_rows: usize,
        max_late: u64,
        /// (key, read order, record id, timed)
        held: Vec<(u128, u64, u64, bool)>,
        reads: u64,
        latest: Option<u128>,
        previous: Option<u128>,
        released: Option<u128>,
        base: Option<u128>,
        out_of_order: u64,
        late: u64,
    }

    impl PlainWindow {
        fn new(window_ns: u64, window_rows: u64, max_late: u64) -> PlainWindow {
            PlainWindow {
                window_ns: window_ns.into(),
                window_rows: window_rows as usize,
                max_late,
                ..PlainWindow::default()
            }
        }

        /// False when this late record is one too many.
        fn push(&mut self, time: Option<u128>, id: u64) -> bool {
            let key = if let Some(t) = time {
                if let Some(p) = self.previous {
                    if t < p {
                        self.out_of_order += 1;
                    }
                }
                self.previous = Some(t);
                self.latest = Some(match self.latest {
                    Some(l) if l > t => l,
                    _ => t,
                });
                match self.released {
                    Some(r) if t < r => {
                        self.late += 1;
                        if self.late > self.max_late {
                            return false;
                        }
                        r
                    }
                    _ => t,
                }
            } else {
                self.latest.or(self.released).unwrap_or(0)
            };
            self.reads += 1;
            self.held.push((key, self.reads, id, time.is_some()));
            true
        }

        /// (record id, arrival) of the next record released.
        fn pop(&mut self, end: bool) -> Option<(u64, Option<u64>)> {
            let mut at = 0;
            for i in 1..self.held.len() {
                let (a, b) = (self.held[i], self.held[at]);
                if (a.0, a.1) < (b.0, b.1) {
                    at = i;
                }
            }
            let (key, _, id, timed) = *self.held.get(at)?;
            let n = self.held.len();
            let spans = self
                .latest
                .is_some_and(|l| l > key && l - key > self.window_ns);
            if !(end || n > self.window_rows || (n > self.window_rows.min(1024) && spans)) {
                return None;
            }
            self.held.remove(at);
            let arrival = timed.then(|| {
                self.released = Some(key);
                let base = *self.base.get_or_insert(key);
                (key - base) as u64
            });
            Some((id, arrival))
        }
    }

    /// Release whatever each window lets go of: (record id, arrival) pairs.
    fn drain(
        fast: &mut Reorder,
        plain: &mut PlainWindow,
        end: bool,
        got: &mut Vec<(u64, Option<u64>)>,
        want: &mut Vec<(u64, Option<u64>)>,
    ) {
        while let Some(r) = fast.pop(end, "f") {
            let r = r.unwrap();
            got.push((r.offset / 4096, r.arrival_ns));
        }
        while let Some(r) = plain.pop(end) {
            want.push(r);
        }
    }

    /// Seeded streams of every shape — in time order, with equal times, nearly in order, merged from
    /// several clocks, shuffled, with untimed records among them — through windows bounded by rows, by
    /// time and by both: the same records released in the same order with the same arrivals, the same
    /// counts and the same late-row error as the plain window.
    #[test]
    fn releases_what_a_plain_window_releases() {
        use nandstack_core::Rng;
        let mut rng = Rng::new(0x7265_6f72);
        let mut used_heap = 0;
        for case in 0..400u64 {
            let n = 1 + rng.below(3000) as usize;
            let shape = case % 6;
            let clocks = 1 + rng.below(6);
            let mut clock = vec![0u128; clocks as usize];
            let times: Vec<Option<u128>> = (0..n as u64)
                .map(|i| match shape {
                    0 => Some(u128::from(i) * 1000),
                    1 => Some(u128::from(i / (1 + rng.below(5))) * 10),
                    2 => Some((u128::from(i) * 1000).saturating_sub(u128::from(rng.below(5000)))),
                    3 => {
                        let c = rng.below(clocks) as usize;
                        clock[c] += u128::from(rng.below(3000));
                        Some(clock[c])
                    }
                    4 => Some(u128::from(rng.below(1_000_000))),
                    _ => {
                        (!rng.chance(0.2)).then(|| u128::from(i) * 100 + u128::from(rng.below(400)))
                    }
                })
                .collect();
            let rows = [0, 1, 7, 100, 1500, 1 << 20][rng.below(6) as usize];
            let ns = [0, 500, 20_000, u64::MAX][rng.below(4) as usize];
            let max_late = [0, 3, 1 << 20][rng.below(3) as usize];
            let mut fast = Reorder::new(ns, rows, max_late);
            let mut plain = PlainWindow::new(ns, rows, max_late);
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let mut failed = (false, false);
            let mut heap_used = false;
            for (id, &t) in times.iter().enumerate() {
                let mut s = staged(t.unwrap_or(0), id as u64);
                s.raw.time_ns = t;
                if fast.push(s, "f").is_err() {
                    failed.0 = true;
                }
                if !plain.push(t, id as u64) {
                    failed.1 = true;
                }
                assert_eq!(
                    failed.0, failed.1,
                    "case {case}: the late-row error at record {id}"
                );
                heap_used |= !fast.heap.is_empty();
                if failed.0 {
                    break;
                }
                drain(&mut fast, &mut plain, false, &mut got, &mut want);
                assert_eq!(
                    got.len(),
                    want.len(),
                    "case {case}: released by record {id}"
                );
            }
            if !failed.0 {
                drain(&mut fast, &mut plain, true, &mut got, &mut want);
            }
            assert_eq!(
                got, want,
                "case {case} (shape {shape}, rows {rows}, ns {ns})"
            );
            assert_eq!(
                (fast.out_of_order, fast.late),
                (plain.out_of_order, plain.late),
                "case {case}"
            );
            used_heap += u32::from(heap_used);
        }
        assert!(
            used_heap > 100,
            "the heap held records in {used_heap} cases only"
        );
    }

    #[test]
    fn span_past_2_64_ns_is_an_error() {
        let mut w = Reorder::new(0, 0, 0);
        assert!(run(&mut w, &[0, 1u128 << 70]).is_err());
    }
}

//! Streaming block-trace readers.
//!
//! [`open`] a trace file in one of the [`TraceFormat`]s and iterate [`TraceRecord`]s; [`scan`] makes one
//! pass and returns [`TraceStats`] (the simulator uses `max_end_bytes` to scale a trace onto a device).
//! Files are read through a buffer, one line (or binary record) at a time, never loaded whole, and
//! gzip / bzip2 / xz / zstd input is decompressed transparently, chosen by magic bytes
//! ([`detect_compression`]), whatever the file is called.
//!
//! Every reader produces the same record:
//! * `offset` and `len` in bytes (sector units are converted; see each format's module);
//! * `arrival_ns` relative to the trace's first record in time order (first = 0), converted exactly from
//!   the format's time unit with integer arithmetic, or `None` for formats without time (ARC, fio v2,
//!   u32 blocks). Records pass through a bounded reorder window ([`reorder`]; default 10 s of trace time
//!   or 1,000,000 records, [`TraceOptions`]), so rows that are not sorted (SYSTOR, Tencent, merged
//!   blkparse output) come out in time order and arrival times never decrease. A record earlier than
//!   one already released (the window was too small for it) is *late*: counted, kept, and given the
//!   last released time; past `max_late_rows` of them the reader stops with an error naming the line;
//! * `device`: the trace's device / volume / disk / LUN column, else 0.
//!
//! Errors: a malformed line stops the reader with [`Error::Trace`] (file name, 1-based line number — or
//! record number for binary formats — the line's text, at most 200 characters, and which field is wrong
//! and why); after any error the iterator ends. With [`Malformed::Lenient`] a malformed line of a text
//! format is skipped and counted ([`TraceReader::malformed`]) instead. Blank lines and lines starting with `#` are skipped in
//! every text format; lines longer than [`MAX_LINE_BYTES`] are an error. The reader never panics on any
//! input.

mod arc;
mod blkparse;
mod cloudphysics;
mod compress;
mod disksim;
mod fields;
mod fio;
mod format;
mod heimdall;
mod hp_srt;
mod kswap;
mod mqsim;
mod msr;
mod parsed;
mod reorder;
mod ssdsim;
mod stats;
mod systor17;
mod tencent;
mod text;
mod u32_blocks;
mod wiscsee;

use std::io::{BufRead, Read};
use std::path::Path;

use nandstack_core::{Error, Result};

use crate::block::{BlockRequest, Op};
pub use compress::{decompress, detect_compression, Compression, XZ_MEM_LIMIT_KIB};
pub use format::{
    BlkparseAction, Malformed, TraceFormat, TraceOptions, DEFAULT_MAX_LATE_ROWS,
    DEFAULT_REORDER_WINDOW_NS, DEFAULT_REORDER_WINDOW_ROWS,
};
pub use stats::{scan, scan_with, TraceStats};
pub use text::{read_bounded_line, LineRead, MAX_LINE_BYTES};
pub use u32_blocks::U32_BLOCK_BYTES;

use fields::FieldResult;
use reorder::{Reorder, Staged};

/// One request read from a trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time in ns after the trace's first record (which is 0); `None` when the format has no time.
    pub arrival_ns: Option<u64>,
    pub op: Op,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes (never 0).
    pub len: u64,
    /// Device / volume / disk / LUN id from the trace, else 0.
    pub device: u32,
}

impl TraceRecord {
    /// The request without time and device.
    pub fn request(&self) -> BlockRequest {
        BlockRequest {
            op: self.op,
            offset: self.offset,
            len: self.len,
        }
    }

    /// One past the last byte (`offset + len`; the readers guarantee it does not overflow).
    pub fn end_bytes(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

impl From<TraceRecord> for BlockRequest {
    fn from(r: TraceRecord) -> BlockRequest {
        r.request()
    }
}

/// Open a trace file (compressed or not) for streaming with default options.
pub fn open(path: &Path, format: TraceFormat) -> Result<TraceReader> {
    open_with(path, format, TraceOptions::default())
}

/// Open a trace file (compressed or not) for streaming.
pub fn open_with(path: &Path, format: TraceFormat, options: TraceOptions) -> Result<TraceReader> {
    let reader = compress::open_file(path)?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(TraceReader::new(reader, &name, format, options))
}

/// A streaming trace reader: an iterator of records that ends after the first error.
pub struct TraceReader {
    source: Source,
    window: Reorder,
    file: String,
    format: TraceFormat,
    done: bool,
    /// A record has been read (a trace without any is an error, not a run of nothing).
    any: bool,
}

enum Source {
    Text(text::TextSource),
    HpSrt(hp_srt::SrtSource),
    U32(u32_blocks::U32Source),
}

impl TraceReader {
    /// A reader over already-decompressed data; `name` is used in error messages.
    pub fn new(
        reader: Box<dyn BufRead + Send>,
        name: &str,
        format: TraceFormat,
        options: TraceOptions,
    ) -> Self {
        let source = match format {
            TraceFormat::HpSrt => Source::HpSrt(hp_srt::SrtSource::new(reader)),
            TraceFormat::U32Blocks => Source::U32(u32_blocks::U32Source::new(reader)),
            _ => Source::Text(text::TextSource::new(reader, format, options)),
        };
        TraceReader {
            source,
            window: Reorder::new(
                options.reorder_window_ns,
                options.reorder_window_rows,
                options.max_late_rows,
            ),
            file: name.to_string(),
            format,
            done: false,
            any: false,
        }
    }

    /// A reader over `reader`, decompressed by magic bytes like [`open`] does.
    pub fn from_reader(
        reader: impl Read + Send + 'static,
        name: &str,
        format: TraceFormat,
        options: TraceOptions,
    ) -> Result<Self> {
        let (_, plain) = decompress(reader).map_err(|source| Error::Io {
            path: name.to_string(),
            source,
        })?;
        Ok(TraceReader::new(plain, name, format, options))
    }

    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The file name used in error messages.
    pub fn file_name(&self) -> &str {
        &self.file
    }

    /// Lines (text formats) or records (binary formats) read so far.
    pub fn position(&self) -> u64 {
        match &self.source {
            Source::Text(s) => s.line_no(),
            Source::HpSrt(s) => s.record_no(),
            Source::U32(s) => s.record_no(),
        }
    }

    /// Data lines deliberately not turned into records so far: zero-length requests where the format
    /// allows them, blkparse events of other actions and flush-only events, WiscSee `C` lines, fio file
    /// and sync actions. Blank, comment, header and summary lines are not counted.
    pub fn skipped(&self) -> u64 {
        match &self.source {
            Source::Text(s) => s.skipped(),
            Source::HpSrt(s) => s.skipped(),
            Source::U32(_) => 0,
        }
    }

    /// Malformed lines skipped so far (lenient mode; 0 in strict mode, where the first one is an error).
    pub fn malformed(&self) -> u64 {
        match &self.source {
            Source::Text(s) => s.malformed(),
            _ => 0,
        }
    }

    /// Records read so far that were earlier than the record read just before them (places where the
    /// file's time goes backwards; the window sorts them).
    pub fn out_of_order(&self) -> u64 {
        self.window.out_of_order
    }

    /// Records that came too late for the reorder window (replayed at the last released time).
    pub fn late(&self) -> u64 {
        self.window.late
    }
}

impl TraceReader {
    /// The error for a trace that ended without a single request: empty, only blank, comment or
    /// header lines, or only lines that yield no request.
    fn no_records(&self) -> Error {
        let what = if self.format.is_binary() {
            "records"
        } else {
            "request lines"
        };
        let mut msg = format!("no requests: the {} trace has no {what}", self.format);
        if self.skipped() + self.malformed() > 0 {
            msg += &format!(
                " ({} skipped, {} malformed)",
                self.skipped(),
                self.malformed()
            );
        }
        trace_error(&self.file, self.position(), b"", msg)
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Result<TraceRecord>> {
        loop {
            if let Some(r) = self.window.pop(self.done, &self.file) {
                if r.is_err() {
                    self.done = true;
                    self.window.clear();
                }
                return Some(r);
            }
            if self.done {
                return None;
            }
            let next = match &mut self.source {
                Source::Text(s) => s.next_record(&self.file),
                Source::HpSrt(s) => s.next_record(&self.file),
                Source::U32(s) => s.next_record(&self.file),
            };
            let pushed = match next {
                Ok(Some(staged)) => {
                    self.any = true;
                    self.window.push(staged, &self.file)
                }
                Ok(None) if !self.any => Err(self.no_records()),
                Ok(None) => {
                    self.done = true;
                    Ok(())
                }
                Err(e) => Err(e),
            };
            if let Err(e) = pushed {
                self.done = true;
                self.window.clear();
                return Some(Err(e));
            }
        }
    }
}

/// A parsed request before its time is made relative to the first record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Raw {
    /// Absolute time in the trace's own epoch, in ns (u128: FILETIME in ns nearly fills a u64).
    pub time_ns: Option<u128>,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub device: u32,
}

/// Check a parsed request (non-zero length, end within 64 bits) and stage it for the reorder window.
pub(crate) fn stage(raw: Raw, line: u64) -> FieldResult<Staged> {
    if raw.len == 0 {
        return Err("zero-length request".to_string());
    }
    if raw.offset.checked_add(raw.len).is_none() {
        return Err(format!(
            "request end (offset {} + length {}) overflows 64 bits",
            raw.offset, raw.len
        ));
    }
    Ok(Staged { raw, line })
}

/// Longest line text kept in an [`Error::Trace`].
const ERROR_TEXT_MAX_CHARS: usize = 200;

/// An [`Error::Trace`] for line (or record) `line` of `file`, quoting `text` (truncated).
pub(crate) fn trace_error(file: &str, line: u64, text: &[u8], msg: String) -> Error {
    let text = fields::shown(text, ERROR_TEXT_MAX_CHARS);
    Error::Trace {
        file: file.to_string(),
        line,
        text,
        msg,
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use std::io::Cursor;

    /// Parse `input` (plain bytes) as `format`, collecting records or the first error.
    pub(crate) fn parse_with(
        input: &str,
        format: TraceFormat,
        options: TraceOptions,
    ) -> Result<Vec<TraceRecord>> {
        let reader = TraceReader::new(
            Box::new(Cursor::new(input.as_bytes().to_vec())),
            "t.trace",
            format,
            options,
        );
        reader.collect()
    }

    pub(crate) fn parse(input: &str, format: TraceFormat) -> Result<Vec<TraceRecord>> {
        parse_with(input, format, TraceOptions::default())
    }

    /// The error message of parsing `input`, which must fail; checks the line number.
    pub(crate) fn parse_err(input: &str, format: TraceFormat, line: u64) -> String {
        match parse(input, format) {
            Err(Error::Trace {
                line: l, msg, file, ..
            }) => {
                assert_eq!(file, "t.trace");
                assert_eq!(l, line, "wrong line for error `{msg}`");
                msg
            }
            other => panic!("expected a trace error at line {line}, got {other:?}"),
        }
    }

    pub(crate) fn rec(
        arrival_ns: Option<u64>,
        op: Op,
        offset: u64,
        len: u64,
        device: u32,
    ) -> TraceRecord {
        TraceRecord {
            arrival_ns,
            op,
            offset,
            len,
            device,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<TraceReader>();
    }

    #[test]
    fn staging_checks_the_extent() {
        let raw = |offset: u64, len: u64| Raw {
            time_ns: None,
            op: Op::Write,
            offset,
            len,
            device: 0,
        };
        assert!(stage(raw(0, 1), 1).is_ok());
        assert!(stage(raw(u64::MAX, 1), 1)
            .unwrap_err()
            .contains("overflows"));
        assert!(stage(raw(0, 0), 1).is_err());
    }

    #[test]
    fn unsorted_rows_come_out_in_time_order() {
        let input = "0 0 0 8 0\n3000 0 8 8 0\n1000 0 16 8 0\n2000 0 24 8 1\n";
        let records = test_util::parse(input, TraceFormat::Mqsim).unwrap();
        let times: Vec<u64> = records.iter().map(|r| r.arrival_ns.unwrap()).collect();
        assert_eq!(times, [0, 1000, 2000, 3000]);
        let mut reader = TraceReader::new(
            Box::new(std::io::Cursor::new(input.as_bytes().to_vec())),
            "t",
            TraceFormat::Mqsim,
            TraceOptions::default(),
        );
        assert_eq!(reader.by_ref().count(), 4);
        assert_eq!((reader.out_of_order(), reader.late()), (1, 0));
    }

    #[test]
    fn error_text_is_truncated() {
        let long = vec![b'x'; 1000];
        match trace_error("f", 3, &long, "bad".into()) {
            Error::Trace { text, line, .. } => {
                assert_eq!(line, 3);
                assert_eq!(text.chars().count(), ERROR_TEXT_MAX_CHARS + 1);
            }
            e => panic!("{e:?}"),
        }
        let shown = trace_error("a.csv", 7, b"1,2", "field `size` is zero".into()).to_string();
        assert_eq!(shown, "a.csv:7: field `size` is zero: `1,2`");
        let shown = trace_error("a", 1, b"x\x0b\x1b[2J\ty\r", "bad".into()).to_string();
        assert_eq!(shown, "a:1: bad: `x\\u{b}\\u{1b}[2J\ty\\r`");
    }
}

//! The line loop shared by the text formats: read one line into a reused buffer, skip blank, comment
//! and header lines, hand the rest to the format's parser, and turn its verdict into a record or an
//! [`Error::Trace`](nandstack_core::Error::Trace).

use std::io::{self, BufRead};

use nandstack_core::Result;

use super::fields::FieldResult;
use super::format::{Malformed, TraceFormat, TraceOptions};
use super::parsed::Parsed;
use super::{
    arc, blkparse, cloudphysics, disksim, fio, heimdall, kswap, mqsim, msr, ssdsim, systor17,
    tencent, wiscsee,
};
use super::{stage, trace_error, Raw, Staged};
use crate::block::Op;

/// Longest accepted line, in bytes (a limit, so binary garbage without newlines cannot exhaust memory).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

impl Parsed {
    /// A request, or a skipped line when `len` is 0: the zero-length requests some captures log
    /// (formats that refuse them have already failed on the length field).
    pub(crate) fn record(
        time_ns: Option<u128>,
        op: Op,
        offset: u64,
        len: u64,
        device: u32,
    ) -> Parsed {
        if len == 0 {
            return Parsed::Skip;
        }
        Parsed::Record(Raw {
            time_ns,
            op,
            offset,
            len,
            device,
        })
    }
}

/// The per-format line parser. Stateless formats are plain functions; fio and blkparse keep state.
pub(crate) enum LineParser {
    Msr,
    Blkparse(blkparse::Parser),
    Disksim,
    Mqsim,
    Ssdsim,
    Fio(fio::Parser),
    Tencent,
    CloudPhysics,
    Systor17,
    Heimdall,
    Wiscsee,
    Arc,
    Kswap,
}

impl LineParser {
    fn new(format: TraceFormat, options: TraceOptions) -> Self {
        debug_assert!(!format.is_binary(), "{format} is not a text format");
        match format {
            TraceFormat::Msr => LineParser::Msr,
            TraceFormat::Blkparse => {
                LineParser::Blkparse(blkparse::Parser::new(options.blkparse_action))
            }
            TraceFormat::Disksim => LineParser::Disksim,
            TraceFormat::Mqsim => LineParser::Mqsim,
            TraceFormat::Ssdsim => LineParser::Ssdsim,
            TraceFormat::FioIolog => LineParser::Fio(fio::Parser::default()),
            TraceFormat::TencentCbs => LineParser::Tencent,
            TraceFormat::CloudPhysics => LineParser::CloudPhysics,
            TraceFormat::Systor17 => LineParser::Systor17,
            TraceFormat::Heimdall => LineParser::Heimdall,
            TraceFormat::Wiscsee => LineParser::Wiscsee,
            TraceFormat::Arc => LineParser::Arc,
            TraceFormat::Kswap => LineParser::Kswap,
            // Binary formats have their own readers and never get here.
            TraceFormat::HpSrt | TraceFormat::U32Blocks => LineParser::Arc,
        }
    }

    /// A header line the format may start with (matched case-insensitively as a prefix).
    fn header_prefix(&self) -> Option<&'static [u8]> {
        match self {
            LineParser::CloudPhysics => Some(cloudphysics::HEADER_PREFIX),
            LineParser::Systor17 => Some(systor17::HEADER_PREFIX),
            LineParser::Kswap => Some(kswap::HEADER_PREFIX),
            _ => None,
        }
    }

    fn parse(&mut self, line: &[u8]) -> FieldResult<Parsed> {
        match self {
            LineParser::Msr => msr::parse(line),
            LineParser::Blkparse(p) => p.parse(line),
            LineParser::Disksim => disksim::parse(line),
            LineParser::Mqsim => mqsim::parse(line),
            LineParser::Ssdsim => ssdsim::parse(line),
            LineParser::Fio(p) => p.parse(line),
            LineParser::Tencent => tencent::parse(line),
            LineParser::CloudPhysics => cloudphysics::parse(line),
            LineParser::Systor17 => systor17::parse(line),
            LineParser::Heimdall => heimdall::parse(line),
            LineParser::Wiscsee => wiscsee::parse(line),
            LineParser::Arc => arc::parse(line),
            LineParser::Kswap => kswap::parse(line),
        }
    }

    /// Called at end of input: a format may require something it has not seen (fio's header).
    fn finish(&self) -> FieldResult<()> {
        match self {
            LineParser::Fio(p) => p.finish(),
            _ => Ok(()),
        }
    }
}

pub(crate) struct TextSource {
    reader: Box<dyn BufRead + Send>,
    /// The current line, reused for every line.
    line: Vec<u8>,
    line_no: u64,
    skipped: u64,
    /// Malformed lines skipped (lenient mode).
    malformed: u64,
    lenient: bool,
    seen_data: bool,
    parser: LineParser,
}

/// What [`read_bounded_line`] found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LineRead {
    /// The end of the input, no line.
    Eof,
    /// A line (without its `\n`; the last line may lack one).
    Line,
    /// A line longer than the limit: its first bytes are in the buffer, the rest is left unread (a
    /// caller treats it as an error: skipping it could take for ever).
    TooLong,
}

/// Read one line of at most [`MAX_LINE_BYTES`] into `buf` (cleared first), for the other line readers
/// of user files (the host's memory traces): a file that never ends a line (`/dev/zero`) stops at the
/// limit instead of filling memory.
pub fn read_bounded_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<LineRead> {
    buf.clear();
    read_line(reader, buf, MAX_LINE_BYTES)
}

impl TextSource {
    pub(crate) fn new(
        reader: Box<dyn BufRead + Send>,
        format: TraceFormat,
        options: TraceOptions,
    ) -> Self {
        TextSource {
            reader,
            line: Vec::with_capacity(256),
            line_no: 0,
            skipped: 0,
            malformed: 0,
            lenient: options.malformed == Malformed::Lenient,
            seen_data: false,
            parser: LineParser::new(format, options),
        }
    }

    pub(crate) fn line_no(&self) -> u64 {
        self.line_no
    }

    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    pub(crate) fn malformed(&self) -> u64 {
        self.malformed
    }

    pub(crate) fn next_record(&mut self, file: &str) -> Result<Option<Staged>> {
        loop {
            self.line.clear();
            let read =
                read_line(&mut *self.reader, &mut self.line, MAX_LINE_BYTES).map_err(|source| {
                    nandstack_core::Error::Io {
                        path: file.to_string(),
                        source,
                    }
                })?;
            match read {
                LineRead::Eof => {
                    return match self.parser.finish() {
                        Ok(()) => Ok(None),
                        Err(msg) => Err(trace_error(file, self.line_no, b"", msg)),
                    }
                }
                LineRead::TooLong => {
                    self.line_no += 1;
                    if self.lenient {
                        self.malformed += 1;
                        skip_rest_of_line(&mut *self.reader).map_err(|source| {
                            nandstack_core::Error::Io {
                                path: file.to_string(),
                                source,
                            }
                        })?;
                        continue;
                    }
                    let msg =
                        format!("line longer than {MAX_LINE_BYTES} bytes (is this a text trace?)");
                    return Err(trace_error(file, self.line_no, &self.line, msg));
                }
                LineRead::Line => self.line_no += 1,
            }
            let line = self.line.trim_ascii();
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            if !self.seen_data {
                self.seen_data = true;
                if let Some(prefix) = self.parser.header_prefix() {
                    if line.len() >= prefix.len()
                        && line[..prefix.len()].eq_ignore_ascii_case(prefix)
                    {
                        continue;
                    }
                }
            }
            let line_no = self.line_no;
            let parsed = self.parser.parse(line).and_then(|p| match p {
                Parsed::Record(raw) => stage(raw, line_no).map(Some),
                Parsed::Skip => {
                    self.skipped += 1;
                    Ok(None)
                }
                Parsed::Ignore => Ok(None),
            });
            match parsed {
                Ok(Some(record)) => return Ok(Some(record)),
                Ok(None) => {}
                Err(_) if self.lenient => self.malformed += 1,
                Err(msg) => return Err(trace_error(file, self.line_no, line, msg)),
            }
        }
    }
}

/// `fill_buf`, retried when a signal interrupts it. (Once a call succeeds the buffer is borrowed again,
/// which reads nothing: returning the borrow from inside the loop does not pass the borrow checker.)
fn fill(reader: &mut dyn BufRead) -> io::Result<&[u8]> {
    loop {
        match reader.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            Ok(_) => break,
        }
    }
    reader.fill_buf()
}

/// Consume input up to and including the next `\n` (the rest of an over-long line).
fn skip_rest_of_line(reader: &mut dyn BufRead) -> io::Result<()> {
    loop {
        let available = fill(reader)?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = available.len();
                reader.consume(n);
            }
        }
    }
}

/// Append one line (without its `\n`) to `buf`, reading at most `max` bytes of it.
fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<LineRead> {
    loop {
        let available = fill(reader)?;
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            reader.consume(used);
            return Ok(LineRead::TooLong);
        }
        buf.extend_from_slice(chunk);
        reader.consume(used);
        if done {
            return Ok(LineRead::Line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty, blank or comment-only trace is the named "no requests" error of its file, in every
    /// text format (it would otherwise run nothing and exit 0).
    #[test]
    fn a_trace_without_requests_is_an_error() {
        use crate::trace::test_util::parse;
        for format in [
            TraceFormat::Msr,
            TraceFormat::Blkparse,
            TraceFormat::Disksim,
            TraceFormat::Mqsim,
            TraceFormat::FioIolog,
            TraceFormat::Systor17,
            TraceFormat::TencentCbs,
            TraceFormat::Arc,
            TraceFormat::Kswap,
        ] {
            for input in ["", "\n  \n", "# nothing here\n\n"] {
                match parse(input, format) {
                    // fio names its missing header first.
                    Err(nandstack_core::Error::Trace { msg, .. }) => assert!(
                        msg.contains("no requests")
                            || (format == TraceFormat::FioIolog && msg.contains("header")),
                        "{format} {input:?}: {msg}"
                    ),
                    Err(other) if input.starts_with('#') => {
                        // A format without comments calls `#` a bad line: named too.
                        assert!(other.to_string().contains("line"), "{format}: {other}")
                    }
                    other => panic!("{format} {input:?}: {other:?}"),
                }
            }
        }
    }
    use std::io::Cursor;

    #[test]
    fn lines_without_final_newline_and_crlf() {
        let mut r = Cursor::new(b"a\r\nbb\nccc".to_vec());
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut r, &mut buf, 100).unwrap() {
                LineRead::Eof => break,
                LineRead::Line => lines.push(String::from_utf8(buf.clone()).unwrap()),
                LineRead::TooLong => panic!(),
            }
        }
        assert_eq!(lines, ["a\r", "bb", "ccc"]);
    }

    #[test]
    fn over_long_lines_are_cut() {
        let mut r = Cursor::new(vec![b'x'; 50]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut r, &mut buf, 10).unwrap(),
            LineRead::TooLong
        ));
        assert_eq!(buf.len(), 10);
    }
}

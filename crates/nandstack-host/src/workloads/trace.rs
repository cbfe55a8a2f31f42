//! Streaming readers of memory-reference traces (`../shared/traces/memory/`, formats in its MANIFEST):
//! * vm: `hexaddr R|W` (32-bit byte address; page = address >> 12);
//! * UCSD: `l|s 0xADDR n` (load/store, byte address, instructions since the previous access);
//! * LIRS: one page number per line, `*` lines are checkpoints (skipped); no read/write;
//! * nsref: nandstack's own format ([`super::nsref`]).
//!
//! Files are decompressed by magic bytes and read one line at a time. A first pass finds the lowest and
//! highest page; the address space is that span (pages are shifted so the lowest is page 0). A bad line
//! is an `Error::Trace` with file, line number and text.

use std::fs::File;
use std::io::BufRead;
use std::path::Path;

use nandstack_core::{Error, Result, Rng};

use super::config::{RefFormat, TraceRefsConfig};
use super::{layout, nsref, MapKind, MemRef, RefStream, Workload, OP_READ, OP_WRITE};

/// Largest address-space span of a trace, pages (256 GiB).
const MAX_SPAN: u64 = 1 << 26;

fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    let io = |e| Error::Io {
        path: path.into(),
        source: e,
    };
    let f = File::open(path).map_err(io)?;
    if !f.metadata().map_err(io)?.is_file() {
        let msg =
            "not a regular file: a memory trace is read twice (first to size the address space), \
                   so it cannot be a device, pipe or folder";
        return Err(trace_err(path, 0, "", msg.into()));
    }
    nandstack_workload::trace::decompress(f)
        .map(|(_, r)| r)
        .map_err(|e| Error::Io {
            path: path.into(),
            source: e,
        })
}

fn trace_err(path: &str, line: u64, text: &str, msg: String) -> Error {
    Error::Trace {
        file: Path::new(path)
            .file_name()
            .map_or(path.into(), |f| f.to_string_lossy().into_owned()),
        line,
        text: text.chars().take(200).collect(),
        msg,
    }
}

/// The next line of `r` (line `no` of `path`) into `buf`: `None` at the end. A line longer than
/// `MAX_LINE_BYTES` (a file that never ends a line, such as `/dev/zero`) or not UTF-8 is a trace error.
fn next_line<'a>(
    r: &mut dyn BufRead,
    buf: &'a mut Vec<u8>,
    path: &str,
    no: u64,
) -> Result<Option<&'a str>> {
    use nandstack_workload::trace::{read_bounded_line, LineRead, MAX_LINE_BYTES};
    let got = read_bounded_line(r, buf).map_err(|e| Error::Io {
        path: path.into(),
        source: e,
    })?;
    let too_long = format!("line longer than {MAX_LINE_BYTES} bytes (is this a memory trace?)");
    match got {
        LineRead::Eof => Ok(None),
        LineRead::TooLong => Err(trace_err(path, no, "", too_long)),
        LineRead::Line => std::str::from_utf8(buf)
            .map(Some)
            .map_err(|e| trace_err(path, no, "", format!("not UTF-8 text ({e})"))),
    }
}

/// One parsed line: a record with an absolute page, or nothing (blank, comment, checkpoint).
fn parse_line(fmt: RefFormat, line: &str) -> std::result::Result<Option<(u64, u8)>, String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    let mut w = t.split_whitespace();
    let a = w.next().unwrap_or("");
    let b = w.next();
    match fmt {
        RefFormat::Vm => {
            let addr = u64::from_str_radix(a.trim_start_matches("0x"), 16)
                .map_err(|_| format!("address `{a}` is not hexadecimal"))?;
            let op = match b {
                Some("R") | Some("r") => OP_READ,
                Some("W") | Some("w") => OP_WRITE,
                other => {
                    return Err(format!(
                        "access type must be R or W, not `{}`",
                        other.unwrap_or("")
                    ))
                }
            };
            Ok(Some((addr >> 12, op)))
        }
        RefFormat::Ucsd => {
            let op = match a {
                "l" | "L" => OP_READ,
                "s" | "S" => OP_WRITE,
                other => return Err(format!("access type must be l or s, not `{other}`")),
            };
            let b = b.ok_or("missing address")?;
            let addr = u64::from_str_radix(b.trim_start_matches("0x").trim_start_matches("0X"), 16)
                .map_err(|_| format!("address `{b}` is not hexadecimal"))?;
            Ok(Some((addr >> 12, op)))
        }
        RefFormat::Lirs => {
            if a.starts_with('*') {
                return Ok(None);
            }
            let p = a
                .parse::<u64>()
                .map_err(|_| format!("page `{a}` is not a number"))?;
            Ok(Some((p, OP_READ)))
        }
        RefFormat::Nsref => {
            let r = nsref::parse_record(a, b)?;
            Ok(Some((r.page as u64, r.op)))
        }
        RefFormat::Auto => unreachable!("format resolved before parsing"),
    }
}

/// Decide the format from the first record line.
fn detect(path: &str) -> Result<RefFormat> {
    let mut r = open(path)?;
    let mut line = Vec::new();
    let mut n = 0u64;
    loop {
        n += 1;
        let Some(text) = next_line(&mut *r, &mut line, path, n)? else {
            return Err(trace_err(path, n, "", "empty trace".into()));
        };
        let t = text.trim();
        if t.starts_with("# nsref") {
            return Ok(RefFormat::Nsref);
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with('*') {
            continue;
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        return Ok(match w.as_slice() {
            [op, _, _] if matches!(*op, "l" | "s" | "L" | "S") => RefFormat::Ucsd,
            [_, op] if matches!(*op, "R" | "W" | "r" | "w") && w[0].len() > 1 => {
                if w[0].chars().all(|c| c.is_ascii_hexdigit()) {
                    RefFormat::Vm
                } else {
                    RefFormat::Nsref
                }
            }
            [op, _] if matches!(*op, "R" | "W" | "S" | "U") => RefFormat::Nsref,
            [n] if n.parse::<u64>().is_ok() => RefFormat::Lirs,
            _ => {
                return Err(trace_err(
                    path,
                    n,
                    t,
                    "cannot tell the format (vm, ucsd, lirs or nsref); set `format`".into(),
                ))
            }
        });
    }
}

/// First pass: lowest and highest page, and the number of records.
fn scan(path: &str, fmt: RefFormat) -> Result<(u64, u64, u64)> {
    let mut r = open(path)?;
    let (mut lo, mut hi, mut n) = (u64::MAX, 0u64, 0u64);
    let mut buf = Vec::new();
    let mut no = 0u64;
    loop {
        no += 1;
        let Some(line) = next_line(&mut *r, &mut buf, path, no)? else {
            break;
        };
        match parse_line(fmt, line) {
            Ok(Some((p, op))) => {
                if op <= OP_WRITE {
                    lo = lo.min(p);
                    hi = hi.max(p);
                }
                n += 1;
            }
            Ok(None) => {}
            Err(m) => return Err(trace_err(path, no, line.trim_end(), m)),
        }
    }
    if n == 0 || lo == u64::MAX {
        return Err(trace_err(path, no, "", "no memory references".into()));
    }
    Ok((lo, hi, n))
}

struct TraceStream {
    path: String,
    fmt: RefFormat,
    reader: Box<dyn BufRead + Send>,
    line: Vec<u8>,
    line_no: u64,
    base: u64,
    repeats_left: u32,
    max_refs: u64,
    emitted: u64,
    records: u64,
    rng: Rng,
    write_ratio: f64,
}

impl RefStream for TraceStream {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let mut n = 0;
        while n < max {
            if self.emitted >= self.max_refs {
                return Ok(false);
            }
            self.line_no += 1;
            let got = next_line(&mut *self.reader, &mut self.line, &self.path, self.line_no)?;
            let Some(line) = got else {
                self.repeats_left -= 1;
                if self.repeats_left == 0 {
                    return Ok(false);
                }
                self.reader = open(&self.path)?;
                self.line_no = 0;
                continue;
            };
            let rec = parse_line(self.fmt, line)
                .map_err(|m| trace_err(&self.path, self.line_no, line.trim_end(), m))?;
            if let Some((p, mut op)) = rec {
                let page = if op <= OP_WRITE {
                    (p - self.base) as u32
                } else {
                    p as u32
                };
                if self.fmt == RefFormat::Lirs
                    && self.write_ratio > 0.0
                    && self.rng.chance(self.write_ratio)
                {
                    op = OP_WRITE;
                }
                out.push(MemRef { page, op });
                self.emitted += 1;
                n += 1;
            }
        }
        Ok(true)
    }

    fn len_hint(&self) -> Option<u64> {
        Some((self.records * self.repeats_left as u64).min(self.max_refs))
    }
}

pub fn build(c: &TraceRefsConfig, seed: u64) -> Result<Workload> {
    let fmt = match c.format {
        RefFormat::Auto => detect(&c.path)?,
        f => f,
    };
    let (lo, hi, records) = scan(&c.path, fmt)?;
    // nsref pages are already relative to the process.
    let base = if fmt == RefFormat::Nsref { 0 } else { lo };
    let span = hi - base + 1;
    if span > MAX_SPAN {
        return Err(trace_err(
            &c.path,
            0,
            "",
            format!("pages span {span} (> 2^26): the address space is too sparse to map"),
        ));
    }
    let (pages, mappings) = layout(&[(span as u32, MapKind::Anon)]);
    let stream = TraceStream {
        path: c.path.clone(),
        fmt,
        reader: open(&c.path)?,
        line: Vec::new(),
        line_no: 0,
        base,
        repeats_left: c.repeat,
        max_refs: c.max_refs.unwrap_or(u64::MAX),
        emitted: 0,
        records,
        rng: Rng::derive(seed, 0x7472_6163),
        write_ratio: c.lirs_write_ratio,
    };
    Ok(Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads: vec![Box::new(stream)],
        kv: false,
        touches_all: false,
        describe: format!("{fmt:?} trace {} ({records} records, {span} pages)", c.path)
            .to_lowercase(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_format() {
        assert_eq!(
            parse_line(RefFormat::Vm, "0041f7a0 W"),
            Ok(Some((0x41f, OP_WRITE)))
        );
        assert_eq!(
            parse_line(RefFormat::Ucsd, "l 0x1fffff58 1"),
            Ok(Some((0x1ffff, OP_READ)))
        );
        assert_eq!(parse_line(RefFormat::Lirs, "*"), Ok(None));
        assert_eq!(parse_line(RefFormat::Lirs, "42"), Ok(Some((42, OP_READ))));
        assert_eq!(parse_line(RefFormat::Nsref, "W 7"), Ok(Some((7, OP_WRITE))));
        assert!(parse_line(RefFormat::Vm, "zz R").is_err());
        assert!(parse_line(RefFormat::Ucsd, "x 0x1 1").is_err());
    }

    /// A file that never ends a line is a named trace error, not an allocation abort; a path that is
    /// no regular file (`/dev/zero`, a pipe) is refused before it is read.
    #[test]
    fn endless_lines_are_a_trace_error() {
        let mut r: &[u8] = &[0u8; 70 * 1024];
        let mut buf = Vec::new();
        match next_line(&mut r, &mut buf, "zero", 1) {
            Err(Error::Trace { msg, .. }) => assert!(msg.contains("longer than"), "{msg}"),
            other => panic!("{other:?}"),
        }
        let mut r: &[u8] = b"\xff R\n";
        assert!(matches!(
            next_line(&mut r, &mut buf, "f", 1),
            Err(Error::Trace { .. })
        ));
        if Path::new("/dev/zero").exists() {
            for fmt in ["auto", "vm", "lirs"] {
                let c: TraceRefsConfig =
                    serde_json::from_value(serde_json::json!({"path": "/dev/zero", "format": fmt}))
                        .unwrap();
                match build(&c, 1) {
                    Err(Error::Trace { file, msg, .. }) => {
                        assert_eq!(file, "zero");
                        assert!(msg.contains("not a regular file"), "{msg}");
                    }
                    Err(other) => panic!("{other}"),
                    Ok(_) => panic!("/dev/zero read as a trace"),
                }
            }
        }
    }
}

//! HP Labs SRT ("short record trace", `$$TR_IOREC-1.3`) binary traces, e.g. `ajw.1week.srt` (Ruemmler &
//! Wilkes' 1992 HP-UX traces, shipped with DiskSim as `valid/ajw.1week.srt`).
//!
//! Layout: an ASCII header ending at the first `0x0C` byte, then records of big-endian 32-bit words:
//!
//! | word | field      | meaning                                                                  | record   |
//! |------|------------|--------------------------------------------------------------------------|----------|
//! | 0    | size       | record length in bytes (56 for the version-4 short I/O records here)     | checked  |
//! | 1    | id         | `version << 16 | type`; version 1..=4, type 1 = short I/O, 4 = suspect I/O | checked  |
//! | 2, 3 | sec, usec  | enqueue time, seconds + µs since the trace start                          | arrival  |
//! | 4, 5 | start,stop | µs from enqueue to start / completion                                    | ignored  |
//! | 6    | bytes      | request size in bytes                                                    | `len`    |
//! | 7    | sectno     | sector number on the disk (absolute, not section-relative)               | `offset` |
//! | 8    | devno      | HP-UX dev_t: major in bits 24..31, minor = disk << 8 | section            | `device` = disk |
//! | 9-12 | drivertype, cylno, ioflags, info | ioflags bit 0 (`B_READ`) = read, else write       | `op`     |
//! | 13   | queuelen   | version 4 only                                                           | ignored  |
//! | (14) | susflags   | suspect-I/O records only                                                 | ignored  |
//!
//! **Sector unit.** The header describes each disk, including `sectorsize`; sector numbers are in
//! that unit (256 B for the hp335h disks of `ajw.1week.srt`). Evidence from that file: the disk is
//! 113 sectors × 8 tracks × 1449 cylinders = 1,309,896 sectors, which is 335 MB (the "335" of hp335h)
//! only with 256-B sectors; the root section starts at sector 171,760 and its 291,362,816 bytes are
//! exactly 1,138,136 256-B sectors, ending precisely at sector 1,309,896; every traced `sectno` lies in
//! its section's range in 256-B units (maximum 1,308,080 < 1,309,896, while 512-B units would run past
//! the disk); and 560 consecutive requests continue exactly where the previous one ended with 256-B
//! units, against 24 with 512-B and 0 with 1-KiB units. So `offset = sectno × sectorsize`. When the
//! header declares no `sectorsize`, 512 B is assumed. (DiskSim's `hpl` reader takes `sectno` as its
//! own 512-B block number; that is a replay convention — its script warns it "validates HP trace
//! input, *not* the corresponding traced disk" — and would double every offset.)
//!
//! Time base: the first record (the file's own `sec` starts at 0). Zero-byte requests and suspect-I/O
//! records (which DiskSim also drops) are skipped. In errors, the "line" is the 1-based record number
//! (0 for the header) and the text is the record in hex.

use std::io::BufRead;

use nandstack_core::{Error, Result};

use super::compress::read_up_to;
use super::{stage, trace_error, Raw, Staged};
use crate::block::Op;

/// Longest header we search for the `0x0C` terminator.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Words before the optional ones: size, id, sec, usec, start, stop, bytes, sectno, devno,
/// drivertype, cylno, ioflags, info.
const BASE_WORDS: usize = 13;
/// Largest record we accept (base + queuelen + susflags).
const MAX_RECORD_BYTES: usize = (BASE_WORDS + 2) * 4;
const TYPE_SHORT_IO: u32 = 1;
const TYPE_SUSPECT_IO: u32 = 4;
const DEFAULT_SECTOR_BYTES: u64 = 512;

pub(crate) struct SrtSource {
    reader: Box<dyn BufRead + Send>,
    /// `None` until the header has been read.
    sector_bytes: Option<u64>,
    record_no: u64,
    skipped: u64,
}

impl SrtSource {
    pub(crate) fn new(reader: Box<dyn BufRead + Send>) -> Self {
        SrtSource {
            reader,
            sector_bytes: None,
            record_no: 0,
            skipped: 0,
        }
    }

    pub(crate) fn record_no(&self) -> u64 {
        self.record_no
    }

    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    pub(crate) fn next_record(&mut self, file: &str) -> Result<Option<Staged>> {
        let io = |source| Error::Io {
            path: file.to_string(),
            source,
        };
        let sector_bytes = match self.sector_bytes {
            Some(s) => s,
            None => {
                let header_error = |msg: String| trace_error(file, 0, b"<header>", msg);
                let header = read_header(&mut *self.reader).map_err(io)?.ok_or_else(|| {
                    header_error(format!(
                        "no 0x0C byte ends the ASCII header (searched {MAX_HEADER_BYTES} bytes)"
                    ))
                })?;
                let s = header_sector_bytes(&header).map_err(header_error)?;
                self.sector_bytes = Some(s);
                s
            }
        };
        loop {
            let mut buf = [0u8; MAX_RECORD_BYTES];
            let n = read_up_to(&mut self.reader, &mut buf[..8]).map_err(io)?;
            if n == 0 {
                return Ok(None);
            }
            self.record_no += 1;
            let at = self.record_no;
            if n < 8 {
                return Err(trace_error(
                    file,
                    at,
                    hex(&buf[..n]).as_bytes(),
                    truncated(n),
                ));
            }
            let size = word(&buf, 0) as usize;
            if !(16..=MAX_RECORD_BYTES).contains(&size) || size & 3 != 0 {
                let msg =
                    format!("record size {size} is not a multiple of 4 in 16..={MAX_RECORD_BYTES}");
                return Err(trace_error(file, at, hex(&buf[..8]).as_bytes(), msg));
            }
            let got = 8 + read_up_to(&mut self.reader, &mut buf[8..size]).map_err(io)?;
            let record = &buf[..got];
            if got < size {
                return Err(trace_error(
                    file,
                    at,
                    hex(record).as_bytes(),
                    truncated(got),
                ));
            }
            match parse_record(record, sector_bytes) {
                Ok(Some(raw)) => {
                    return stage(raw, at)
                        .map(Some)
                        .map_err(|msg| trace_error(file, at, hex(record).as_bytes(), msg))
                }
                Ok(None) => self.skipped += 1,
                Err(msg) => return Err(trace_error(file, at, hex(record).as_bytes(), msg)),
            }
        }
    }
}

fn truncated(n: usize) -> String {
    format!("truncated record: the file ends {n} bytes into it")
}

/// Word `i` (big-endian u32) of `record`; callers have checked the length.
fn word(record: &[u8], i: usize) -> u32 {
    match record.get(i * 4..i * 4 + 4) {
        Some(&[a, b, c, d]) => u32::from_be_bytes([a, b, c, d]),
        _ => 0,
    }
}

/// A record of `size` bytes (already validated as 16..=MAX and read whole) → request, or `None` to skip.
fn parse_record(record: &[u8], sector_bytes: u64) -> Result<Option<Raw>, String> {
    let id = word(record, 1);
    let (version, kind) = (id >> 16, id & 0xffff);
    if !(1..=4).contains(&version) || (kind != TYPE_SHORT_IO && kind != TYPE_SUSPECT_IO) {
        return Err(format!("record id {id:#010x}: expected version 1..=4 and type 1 (short I/O) or 4 (suspect I/O)"));
    }
    let expected =
        4 * (BASE_WORDS + usize::from(version == 4) + usize::from(kind == TYPE_SUSPECT_IO));
    if record.len() != expected {
        return Err(format!(
            "record size {} does not match id {id:#010x} (expected {expected})",
            record.len()
        ));
    }
    if kind == TYPE_SUSPECT_IO {
        return Ok(None);
    }
    let signed = |i: usize, name: &str| -> Result<u64, String> {
        let v = word(record, i) as i32;
        u64::try_from(v).map_err(|_| format!("field `{name}` is negative ({v})"))
    };
    let (sec, usec) = (signed(2, "sec")?, signed(3, "usec")?);
    if usec >= 1_000_000 {
        return Err(format!("field `usec` is {usec}, not below 1,000,000"));
    }
    let len = signed(6, "bytes")?;
    if len == 0 {
        return Ok(None);
    }
    let sectno = signed(7, "sectno")?;
    let devno = word(record, 8);
    let flags = word(record, 11);
    Ok(Some(Raw {
        time_ns: Some(u128::from(sec) * 1_000_000_000 + u128::from(usec) * 1_000),
        op: if flags & 1 == 1 { Op::Read } else { Op::Write },
        // sectno < 2^31 and sector_bytes <= 4096: no overflow.
        offset: sectno * sector_bytes,
        len,
        device: (devno >> 8) & 0xffff,
    }))
}

/// The header bytes up to (not including) the first `0x0C`, consuming the terminator; `None` when
/// there is no terminator before the end of the file or within [`MAX_HEADER_BYTES`].
fn read_header(reader: &mut dyn BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut header = Vec::new();
    loop {
        let available = match reader.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(None);
        }
        if let Some(i) = available.iter().position(|&b| b == 0x0c) {
            header.extend_from_slice(&available[..i]);
            reader.consume(i + 1);
            return Ok(Some(header));
        }
        let n = available.len();
        header.extend_from_slice(available);
        reader.consume(n);
        if header.len() > MAX_HEADER_BYTES {
            return Ok(None);
        }
    }
}

/// The disks' `sectorsize = N` entries in the header: all must agree; 512 when there are none.
fn header_sector_bytes(header: &[u8]) -> Result<u64, String> {
    const KEY: &[u8] = b"sectorsize";
    let is_ident = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let mut found: Option<u64> = None;
    let mut from = 0usize;
    while let Some(at) = header
        .get(from..)
        .and_then(|h| h.windows(KEY.len()).position(|w| w == KEY))
    {
        let start = from + at;
        from = start + KEY.len();
        let before = start.checked_sub(1).and_then(|i| header.get(i));
        let rest = header.get(from..).unwrap_or_default();
        if before.is_some_and(is_ident) || rest.first().is_some_and(is_ident) {
            continue;
        }
        let Some(value) = rest.trim_ascii_start().strip_prefix(b"=") else {
            continue;
        };
        let value = value.trim_ascii_start();
        let digits = &value[..value.iter().take_while(|b| b.is_ascii_digit()).count()];
        let size = match super::fields::parse_u64(digits, "sectorsize") {
            Ok(s) if s.is_power_of_two() && (256..=4096).contains(&s) => s,
            _ => {
                let shown = super::fields::quote(&value[..value.len().min(20)]);
                return Err(format!(
                    "header `sectorsize` is not a power of two in 256..=4096: `{shown}`"
                ));
            }
        };
        match found {
            Some(f) if f != size => {
                return Err(format!(
                    "header declares different sector sizes ({f} and {size})"
                ))
            }
            _ => found = Some(size),
        }
    }
    Ok(found.unwrap_or(DEFAULT_SECTOR_BYTES))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::super::{TraceFormat, TraceOptions, TraceReader, TraceRecord};
    use super::*;
    use std::io::Cursor;

    /// A version-4 short-I/O record.
    fn record(sec: i32, usec: i32, bytes: i32, sectno: i32, devno: u32, flags: u32) -> Vec<u8> {
        let words: [u32; 14] = [
            56,
            0x0004_0001,
            sec as u32,
            usec as u32,
            5,
            9,
            bytes as u32,
            sectno as u32,
            devno,
            4,
            1,
            flags,
            0,
            1,
        ];
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    fn read(bytes: Vec<u8>) -> Result<Vec<TraceRecord>> {
        TraceReader::new(
            Box::new(Cursor::new(bytes)),
            "t.srt",
            TraceFormat::HpSrt,
            TraceOptions::default(),
        )
        .collect()
    }

    const HEADER: &[u8] = b"$$TR_IOREC-1.3\n  disks = { 0 -> { sectorsize  = 256,\n } };\n\x0c";

    #[test]
    fn records_in_header_sector_units() {
        let mut file = HEADER.to_vec();
        file.extend(record(0, 0, 4096, 1056, 0x0800_0107, 27)); // read, disk 1
        file.extend(record(1, 500_000, 8192, 171_792, 0x0800_0008, 0x0088_100a)); // write, disk 0
        file.extend(record(2, 0, 0, 10, 0x0800_0008, 0)); // zero bytes: skipped
        let got = read(file).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0],
            TraceRecord {
                arrival_ns: Some(0),
                op: Op::Read,
                offset: 1056 * 256,
                len: 4096,
                device: 1
            }
        );
        assert_eq!(
            got[1],
            TraceRecord {
                arrival_ns: Some(1_500_000_000),
                op: Op::Write,
                offset: 171_792 * 256,
                len: 8192,
                device: 0
            }
        );
    }

    #[test]
    fn default_sector_size_and_bad_records() {
        let mut file = b"no sizes here\x0c".to_vec();
        file.extend(record(0, 0, 512, 3, 0, 1));
        assert_eq!(read(file.clone()).unwrap()[0].offset, 3 * 512);
        let mut truncated = file.clone();
        truncated.extend(&record(0, 0, 512, 3, 0, 1)[..20]);
        match read(truncated) {
            Err(Error::Trace { line: 2, msg, .. }) => assert!(msg.contains("truncated"), "{msg}"),
            other => panic!("{other:?}"),
        }
        let mut negative = b"\x0c".to_vec();
        negative.extend(record(0, 0, -4, 3, 0, 1));
        assert!(matches!(read(negative), Err(Error::Trace { line: 1, .. })));
        let mut bad_id = b"\x0c".to_vec();
        let mut r = record(0, 0, 512, 3, 0, 1);
        r[4..8].copy_from_slice(&0x0009_0001u32.to_be_bytes());
        bad_id.extend(r);
        assert!(matches!(read(bad_id), Err(Error::Trace { .. })));
        assert!(matches!(
            read(b"header without end".to_vec()),
            Err(Error::Trace { line: 0, .. })
        ));
        assert!(read(b"sectorsize = 300\n\x0c".to_vec()).is_err());
        assert!(read(b"sectorsize = 256, sectorsize = 512\x0c".to_vec()).is_err());
        assert_eq!(
            header_sector_bytes(b"physsectorsize = 1024; sectorsize=1024;"),
            Ok(1024)
        );
        assert_eq!(header_sector_bytes(b"sectorsize"), Ok(512));
    }
}

//! Raw block-number traces: a stream of little-endian `u32` block numbers, one per access, nothing else
//! (the CloudPhysics `w106` trace as redistributed with LIRS2 / Caffeine, `cloudphysics_w106_blocks.u32le.xz`).
//!
//! | bytes | field        | record                                  |
//! |-------|--------------|-----------------------------------------|
//! | 0..4  | block number | `offset = block × 4096`, `len = 4096`   |
//!
//! There is no time (`arrival_ns = None`), no operation (every access becomes a read: the trace is a
//! cache-reference stream) and no size; the 4 KiB block size is an assumption — the file does not
//! say, and 4 KiB is the block size of the VMware vscsi traces it was cut from. `device` is 0. The
//! values are little-endian (Caffeine reads them as big-endian, which only permutes cache keys). A
//! trailing partial word is an error; in errors, the "line" is the 1-based record number.

use std::io::BufRead;

use nandstack_core::{Error, Result};

use super::compress::read_up_to;
use super::{stage, trace_error, Raw, Staged};
use crate::block::Op;

/// Bytes per block assumed for every reference.
pub const U32_BLOCK_BYTES: u64 = 4096;

pub(crate) struct U32Source {
    reader: Box<dyn BufRead + Send>,
    record_no: u64,
}

impl U32Source {
    pub(crate) fn new(reader: Box<dyn BufRead + Send>) -> Self {
        U32Source {
            reader,
            record_no: 0,
        }
    }

    pub(crate) fn record_no(&self) -> u64 {
        self.record_no
    }

    pub(crate) fn next_record(&mut self, file: &str) -> Result<Option<Staged>> {
        let io = |source| Error::Io {
            path: file.to_string(),
            source,
        };
        let mut word = [0u8; 4];
        // Fast path: a whole word in the buffer.
        let n = match self.reader.fill_buf().map_err(io)?.get(..4) {
            Some(bytes) => {
                word.copy_from_slice(bytes);
                self.reader.consume(4);
                4
            }
            None => read_up_to(&mut self.reader, &mut word).map_err(io)?,
        };
        if n == 0 {
            return Ok(None);
        }
        self.record_no += 1;
        let error = |msg: String| {
            let text: String = word[..n].iter().map(|b| format!("{b:02x}")).collect();
            trace_error(file, self.record_no, text.as_bytes(), msg)
        };
        if n < 4 {
            return Err(error(format!(
                "truncated record: {n} trailing bytes, not a whole 4-byte block number"
            )));
        }
        let block = u64::from(u32::from_le_bytes(word));
        let raw = Raw {
            time_ns: None,
            op: Op::Read,
            offset: block * U32_BLOCK_BYTES,
            len: U32_BLOCK_BYTES,
            device: 0,
        };
        stage(raw, self.record_no).map(Some).map_err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{TraceFormat, TraceOptions, TraceReader, TraceRecord};
    use super::*;
    use std::io::Cursor;

    fn read(bytes: &[u8]) -> Result<Vec<TraceRecord>> {
        let r = Cursor::new(bytes.to_vec());
        TraceReader::new(
            Box::new(r),
            "w.u32",
            TraceFormat::U32Blocks,
            TraceOptions::default(),
        )
        .collect()
    }

    #[test]
    fn little_endian_blocks_become_4k_reads() {
        let got = read(&[1, 0, 0, 0, 0x49, 0x46, 0x12, 0x00, 0xff, 0xff, 0xff, 0xff]).unwrap();
        let offsets: Vec<u64> = got.iter().map(|r| r.offset).collect();
        assert_eq!(
            offsets,
            [4096, 1_197_641 * 4096, u64::from(u32::MAX) * 4096]
        );
        assert!(got
            .iter()
            .all(|r| r.op == Op::Read && r.len == 4096 && r.arrival_ns.is_none()));
        match read(&[]) {
            Err(Error::Trace { msg, .. }) => assert!(msg.contains("no requests"), "{msg}"),
            other => panic!("an empty trace must be an error, not {other:?}"),
        }
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        match read(&[1, 0, 0, 0, 7, 7]) {
            Err(Error::Trace { line: 2, text, .. }) => assert_eq!(text, "0707"),
            other => panic!("{other:?}"),
        }
    }
}

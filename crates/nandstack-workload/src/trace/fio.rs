//! fio iologs (`write_iolog=` / `read_iolog=`), versions 2 and 3, whitespace-separated. The first line
//! is the header `fio version 2 iolog` or `fio version 3 iolog` (version 1 logs are refused, as fio does).
//!
//! Version 2 lines are `filename action` (file actions) or `filename action offset length` (I/O
//! actions); version 3 prefixes every line with a timestamp in µs since the log started (fio writes it
//! with `utime_since_now`).
//!
//! | action                  | meaning                               | record                            |
//! |-------------------------|---------------------------------------|-----------------------------------|
//! | `read`/`write`/`trim`   | I/O of `length` bytes at byte `offset` | read / write / trim              |
//! | `sync`, `datasync`      | flush                                 | skipped                           |
//! | `wait`                  | v2 only: a delay                      | skipped (see below)               |
//! | `add`, `open`, `close`  | file management                       | skipped                           |
//!
//! Time: v2 logs carry no timestamps, so `arrival_ns = None` (replay as fast as the device allows).
//! `wait` lines are ignored: their argument's meaning changed across fio releases (a relative sleep in
//! µs in old releases; current fio waits until that many ms after the job started), and turning them
//! into times would mix timed and untimed records in one trace. Use a v3 log for timed replay. v3: the
//! timestamp, exact in ns, relative to the first record.
//!
//! `device` is the file's index in order of first appearance (0, 1, …; at most [`MAX_FILES`] files).
//! A zero `length` on a read/write/trim is an error (fio never logs one).

use super::fields::{parse_integer_ns, parse_nonzero, parse_u64, quote, words, FieldResult};
use super::parsed::Parsed;
use crate::block::Op;

/// Most distinct file names per log.
pub(crate) const MAX_FILES: usize = 4096;

#[derive(Default)]
pub(crate) struct Parser {
    /// 2 or 3 once the header has been read.
    version: Option<u8>,
    files: Vec<Box<[u8]>>,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &[u8]) -> FieldResult<Parsed> {
        let Some(version) = self.version else {
            self.version = Some(match line {
                b"fio version 2 iolog" => 2,
                b"fio version 3 iolog" => 3,
                _ => return Err(missing_header()),
            });
            return Ok(Parsed::Ignore);
        };
        let mut fields: [&[u8]; 5] = [&[]; 5];
        let mut count = 0usize;
        for w in words(line) {
            if let Some(slot) = fields.get_mut(count) {
                *slot = w;
            }
            count += 1;
        }
        let (time_ns, rest) = if version == 3 {
            if count == 0 {
                return Err(shape(version, count));
            }
            (
                Some(parse_integer_ns(fields[0], "timestamp", 1_000)?),
                &fields[1..count.min(5)],
            )
        } else {
            (None, &fields[..count.min(5)])
        };
        if count > 5 || (version == 2 && count == 5) {
            return Err(shape(version, count));
        }
        match *rest {
            [file, action] => match action {
                b"add" | b"open" | b"close" => {
                    self.device(file)?;
                    Ok(Parsed::Skip)
                }
                _ => Err(format!(
                    "unknown file action `{}` (expected add, open or close)",
                    quote(action)
                )),
            },
            [file, action, offset, length] => {
                let op = match action {
                    b"read" => Op::Read,
                    b"write" => Op::Write,
                    b"trim" => Op::Trim,
                    b"sync" | b"datasync" | b"wait" => return Ok(Parsed::Skip),
                    _ => {
                        let msg = "expected read, write, trim, sync, datasync or wait";
                        return Err(format!("unknown I/O action `{}` ({msg})", quote(action)));
                    }
                };
                let offset = parse_u64(offset, "offset")?;
                let len = parse_nonzero(length, "length")?;
                let device = self.device(file)?;
                Ok(Parsed::record(time_ns, op, offset, len, device))
            }
            _ => Err(shape(version, count)),
        }
    }

    pub(crate) fn finish(&self) -> FieldResult<()> {
        match self.version {
            Some(_) => Ok(()),
            None => Err(missing_header()),
        }
    }

    /// The index of `file`, registering it on first sight.
    fn device(&mut self, file: &[u8]) -> FieldResult<u32> {
        let index = match self.files.iter().position(|f| **f == *file) {
            Some(i) => i,
            None => {
                if self.files.len() >= MAX_FILES {
                    return Err(format!("more than {MAX_FILES} distinct file names"));
                }
                self.files.push(file.into());
                self.files.len() - 1
            }
        };
        u32::try_from(index).map_err(|_| "file index does not fit in 32 bits".to_string())
    }
}

fn missing_header() -> String {
    "expected the header `fio version 2 iolog` or `fio version 3 iolog` (iolog v1 is not supported)"
        .to_string()
}

fn shape(version: u8, count: usize) -> String {
    let prefix = if version == 3 { "timestamp " } else { "" };
    format!(
        "expected `{prefix}filename action` or `{prefix}filename action offset length` (iolog v{version}), found {count} fields"
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::FioIolog;
    use crate::block::Op;

    #[test]
    fn version_2_actions() {
        let input = "fio version 2 iolog\n\
                     /dev/nvme0n1 add\n/dev/nvme0n1 open\n\
                     /dev/nvme0n1 write 0 4096\n\
                     /dev/nvme0n1 wait 1000 0\n\
                     /dev/sdb read 8192 512\n\
                     /dev/nvme0n1 sync 0 0\n/dev/nvme0n1 datasync 0 0\n\
                     /dev/nvme0n1 trim 1048576 65536\n\
                     /dev/nvme0n1 close\n";
        let got = parse(input, FioIolog).unwrap();
        assert_eq!(
            got,
            vec![
                rec(None, Op::Write, 0, 4096, 0),
                rec(None, Op::Read, 8192, 512, 1),
                rec(None, Op::Trim, 1_048_576, 65_536, 0),
            ]
        );
    }

    #[test]
    fn version_3_timestamps_in_microseconds() {
        let input = "fio version 3 iolog\n2 Nvme1n1 add\n872 Nvme1n1 open\n878 Nvme1n1 write 0 16384\n891 Nvme1n1 read 16384 16384\n10001677 Nvme1n1 close\n";
        let got = parse(input, FioIolog).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 0, 16_384, 0),
                rec(Some(13_000), Op::Read, 16_384, 16_384, 0)
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("/dev/sda write 0 4096", FioIolog, 1).contains("header"));
        assert!(parse_err("", FioIolog, 0).contains("header"));
        assert!(
            parse_err("fio version 2 iolog\nf write 0 0", FioIolog, 2).contains("`length` is zero")
        );
        assert!(parse_err("fio version 2 iolog\nf erase 0 1", FioIolog, 2)
            .contains("unknown I/O action `erase`"));
        assert!(
            parse_err("fio version 2 iolog\nf delete", FioIolog, 2).contains("unknown file action")
        );
        assert!(parse_err("fio version 2 iolog\nf write 0", FioIolog, 2).contains("found 3 fields"));
        assert!(
            parse_err("fio version 2 iolog\n1 f write 0 4096", FioIolog, 2)
                .contains("found 5 fields")
        );
        assert!(
            parse_err("fio version 3 iolog\nf write 0 4096", FioIolog, 2).contains("`timestamp`")
        );
    }
}

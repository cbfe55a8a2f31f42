//! CloudPhysics vscsi block traces as CSV (libCacheSim `data/trace.csv`), with a header line
//! `version,time,op,size,lbn`:
//!
//! | column  | unit / meaning                                            | record     |
//! |---------|-----------------------------------------------------------|------------|
//! | version | vscsi record version                                      | ignored    |
//! | time    | µs, integer                                               | × 1000 ns  |
//! | op      | SCSI opcode in hex (see below)                            | `op`       |
//! | size    | bytes                                                     | as is      |
//! | lbn     | 512-B sector                                              | × 512 B    |
//!
//! Op codes: READ(6/10/12/16) = `08`/`28`/`a8`/`88` → read; WRITE(6/10/12/16) = `0a`/`2a`/`aa`/`8a` →
//! write; SYNCHRONIZE CACHE(10/16) = `35`/`91` → skipped (no data); any other opcode is an error. The
//! sample holds only `28` and `2a`. Time base: the first record. `size = 0` is skipped. No device
//! column: `device` is 0. The header line is skipped when it is the first line.

use super::fields::{
    parse_hex_u32, parse_integer_ns, parse_sectors, parse_u64, quote, split_sep, FieldResult,
};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) const HEADER_PREFIX: &[u8] = b"version,";
const COLUMNS: &str = "version,time,op,size,lbn";

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [_version, time, opcode, size, lbn] = split_sep::<5>(line, b',', COLUMNS)?;
    let op = match parse_hex_u32(opcode, "op")? {
        0x08 | 0x28 | 0xa8 | 0x88 => Op::Read,
        0x0a | 0x2a | 0xaa | 0x8a => Op::Write,
        0x35 | 0x91 => return Ok(Parsed::Skip),
        _ => {
            return Err(format!(
                "field `op`: unsupported SCSI opcode `{}` (expected a READ or WRITE opcode)",
                quote(opcode)
            ))
        }
    };
    let time_ns = parse_integer_ns(time, "time", 1_000)?;
    let len = parse_u64(size, "size")?;
    let offset = parse_sectors(lbn, "lbn")?;
    Ok(Parsed::record(Some(time_ns), op, offset, len, 0))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::CloudPhysics;
    use crate::block::Op;

    #[test]
    fn header_microseconds_opcodes_and_sectors() {
        let input = "version,time,op,size,lbn\n\
                     1,5633898368802,2a,512,42932745\n\
                     1,5633898611441,28,6656,40409911\n\
                     1,5633898611442,35,0,0\n\
                     1,5633898611443,88,4096,1\n";
        let got = parse(input, CloudPhysics).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 42_932_745 * 512, 512, 0),
                rec(Some(242_639_000), Op::Read, 40_409_911 * 512, 6656, 0),
                rec(Some(242_641_000), Op::Read, 512, 4096, 0),
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(
            parse_err("version,time,op,size,lbn\n1,2,12,512,0", CloudPhysics, 2)
                .contains("unsupported SCSI opcode `12`")
        );
        // A header anywhere but first is an error.
        assert!(
            parse_err("1,2,28,512,0\nversion,time,op,size,lbn", CloudPhysics, 2).contains("`op`")
        );
        assert!(parse_err("1,2,28,512", CloudPhysics, 1).contains("expected 5 fields"));
    }
}

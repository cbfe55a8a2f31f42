//! SSDsim ASCII traces (`example.ascii` of SSDsim), whitespace-separated, read by SSDsim with
//! `sscanf("%16lld %d %d %d %d")`:
//!
//! `time dev lsn size op`
//!
//! | column | unit / meaning                                        | record     |
//! |--------|-------------------------------------------------------|------------|
//! | time   | ns, integer                                           | as is      |
//! | dev    | device (the SPC ASU in the Financial1 example)        | `device`   |
//! | lsn    | 512-B sector                                          | × 512 B    |
//! | size   | 512-B sectors                                         | × 512 B    |
//! | op     | `1` = read, `0` = write                               | `op`       |
//!
//! Time base: the first record. `size = 0` is an error. (SSDsim's readme wants no newline after the
//! last line; this reader does not care either way.)

use super::fields::{
    parse_nonzero, parse_u32, parse_u64, quote, sectors_to_bytes, split_ws, FieldResult,
};
use super::text::Parsed;
use super::Raw;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, dev, lsn, size, kind] = split_ws::<5>(line, "time dev lsn size op")?;
    let op = match kind {
        b"1" => Op::Read,
        b"0" => Op::Write,
        _ => {
            return Err(format!(
                "field `op` must be 1 (read) or 0 (write), not `{}`",
                quote(kind)
            ))
        }
    };
    Ok(Parsed::Record(Raw {
        time_ns: Some(u128::from(parse_u64(time, "time")?)),
        op,
        offset: sectors_to_bytes(parse_u64(lsn, "lsn")?, "lsn")?,
        len: sectors_to_bytes(parse_nonzero(size, "size")?, "size")?,
        device: parse_u32(dev, "dev")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Ssdsim;
    use crate::block::Op;

    #[test]
    fn nanoseconds_sectors_and_op_codes() {
        let got = parse("0 0 303567 7 0\n78643005 1 55596 6 1\n", Ssdsim).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 303_567 * 512, 3584, 0),
                rec(Some(78_643_005), Op::Read, 55_596 * 512, 3072, 1)
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("0 0 1 1 R", Ssdsim, 1).contains("`op` must be 1 (read) or 0 (write)"));
        assert!(parse_err("0 0 1 0 1", Ssdsim, 1).contains("`size` is zero"));
        assert!(parse_err("0 -1 1 1 1", Ssdsim, 1).contains("`dev` is negative"));
    }
}

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
    one_of, parse_integer_ns, parse_nonzero_sectors, parse_sectors, parse_u32, split_ws, Case,
    FieldResult,
};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, dev, lsn, size, kind] = split_ws::<5>(line, "time dev lsn size op")?;
    let codes: &[(&[u8], Op)] = &[(b"1", Op::Read), (b"0", Op::Write)];
    let op = one_of(kind, "op", codes, Case::Exact, "1 (read) or 0 (write)")?;
    Ok(Parsed::record(
        Some(parse_integer_ns(time, "time", 1)?),
        op,
        parse_sectors(lsn, "lsn")?,
        parse_nonzero_sectors(size, "size")?,
        parse_u32(dev, "dev")?,
    ))
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

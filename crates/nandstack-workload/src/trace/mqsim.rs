//! MQSim ASCII traces (`traces/*.trace` in CMU-SAFARI/MQSim), whitespace-separated:
//!
//! `time dev lba size type`
//!
//! | column | unit / meaning                                          | record     |
//! |--------|---------------------------------------------------------|------------|
//! | time   | ns, integer                                             | as is      |
//! | dev    | original disk id (tpcc uses 16)                         | `device`   |
//! | lba    | 512-B sector                                            | × 512 B    |
//! | size   | 512-B sectors                                           | × 512 B    |
//! | type   | `0` = write, `1` = read                                 | `op`       |
//!
//! Time base: the first record. `size = 0` is an error (MQSim would issue an empty request).

use super::fields::{
    one_of, parse_integer_ns, parse_nonzero_sectors, parse_sectors, parse_u32, split_ws, Case,
    FieldResult,
};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, dev, lba, size, kind] = split_ws::<5>(line, "time dev lba size type")?;
    let codes: &[(&[u8], Op)] = &[(b"0", Op::Write), (b"1", Op::Read)];
    let op = one_of(kind, "type", codes, Case::Exact, "0 (write) or 1 (read)")?;
    Ok(Parsed::record(
        Some(parse_integer_ns(time, "time", 1)?),
        op,
        parse_sectors(lba, "lba")?,
        parse_nonzero_sectors(size, "size")?,
        parse_u32(dev, "dev")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Mqsim;
    use crate::block::Op;

    #[test]
    fn nanoseconds_sectors_and_type_codes() {
        let got = parse(
            "938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n",
            Mqsim,
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 264_719_034 * 512, 8192, 4),
                rec(Some(315_000), Op::Read, 197_570_570 * 512, 8192, 3),
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("1 0 0 8 2", Mqsim, 1).contains("`type` must be 0 (write) or 1 (read)"));
        assert!(parse_err("1 0 0 0 1", Mqsim, 1).contains("`size` is zero"));
        assert!(parse_err("1 0 0 8 1 9", Mqsim, 1).contains("found 6"));
        assert!(parse_err("1.5 0 0 8 1", Mqsim, 1).contains("`time` is not an unsigned integer"));
    }
}

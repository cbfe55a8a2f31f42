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
    parse_nonzero, parse_u32, parse_u64, quote, sectors_to_bytes, split_ws, FieldResult,
};
use super::text::Parsed;
use super::Raw;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, dev, lba, size, kind] = split_ws::<5>(line, "time dev lba size type")?;
    let op = match kind {
        b"0" => Op::Write,
        b"1" => Op::Read,
        _ => {
            return Err(format!(
                "field `type` must be 0 (write) or 1 (read), not `{}`",
                quote(kind)
            ))
        }
    };
    Ok(Parsed::Record(Raw {
        time_ns: Some(u128::from(parse_u64(time, "time")?)),
        op,
        offset: sectors_to_bytes(parse_u64(lba, "lba")?, "lba")?,
        len: sectors_to_bytes(parse_nonzero(size, "size")?, "size")?,
        device: parse_u32(dev, "dev")?,
    }))
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

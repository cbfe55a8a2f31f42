//! Heimdall traces (`ds_pipeline/data/raw_data/*.trace` of ucare-uchicago/Heimdall: 10 K-request
//! windows cut from MSR Cambridge), whitespace-separated:
//!
//! `time dev offset size op`
//!
//! | column | unit / meaning                                | record     |
//! |--------|-----------------------------------------------|------------|
//! | time   | ms, decimal (`223.412`)                       | exact ns   |
//! | dev    | device                                        | `device`   |
//! | offset | bytes                                         | as is      |
//! | size   | bytes                                         | as is      |
//! | op     | `1` = read, `0` = write                       | `op`       |
//!
//! Time base: the first record (the files start at `0.000`). `size = 0` is an error: Heimdall's
//! replayer issues every line as an I/O.

use super::fields::{
    one_of, parse_decimal_ns, parse_nonzero, parse_u32, parse_u64, split_ws, Case, FieldResult,
};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, dev, offset, size, kind] = split_ws::<5>(line, "time dev offset size op")?;
    let codes: &[(&[u8], Op)] = &[(b"1", Op::Read), (b"0", Op::Write)];
    let op = one_of(kind, "op", codes, Case::Exact, "1 (read) or 0 (write)")?;
    Ok(Parsed::record(
        Some(parse_decimal_ns(time, "time", 6)?),
        op,
        parse_u64(offset, "offset")?,
        parse_nonzero(size, "size")?,
        parse_u32(dev, "dev")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Heimdall;
    use crate::block::Op;

    #[test]
    fn milliseconds_bytes_and_op_codes() {
        let got = parse(
            "0.000 0 200626176 4096 0\n223.412 3 3159347200 36864 1\n",
            Heimdall,
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 200_626_176, 4096, 0),
                rec(Some(223_412_000), Op::Read, 3_159_347_200, 36_864, 3)
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(
            parse_err("0 0 0 4096 2", Heimdall, 1).contains("`op` must be 1 (read) or 0 (write)")
        );
        assert!(parse_err("0 0 0 0 1", Heimdall, 1).contains("`size` is zero"));
        assert!(parse_err("0 0 0 abc 1", Heimdall, 1).contains("`size` is not an unsigned integer"));
    }
}

//! DiskSim ASCII traces (`disksim … ascii trace.txt`), whitespace-separated:
//!
//! `time devno blkno bcount flags`
//!
//! | column | unit / meaning                                                       | record     |
//! |--------|----------------------------------------------------------------------|------------|
//! | time   | ms since the simulation start, decimal (`5265.313`)                   | exact ns   |
//! | devno  | device number                                                        | `device`   |
//! | blkno  | 512-B sector                                                         | × 512 B    |
//! | bcount | 512-B sectors                                                        | × 512 B    |
//! | flags  | hex (DiskSim reads it with `%x`); bit 0 set = read, clear = write    | `op`       |
//!
//! Time base: the first record. DiskSim requires ascending times; the reader does not (see the module
//! docs on out-of-order arrivals). `bcount = 0` is an error: DiskSim has no zero-length request.

use super::fields::{
    parse_decimal_ns, parse_hex_u32, parse_nonzero_sectors, parse_sectors, parse_u32, split_ws,
    FieldResult,
};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, dev, blkno, bcount, flags] = split_ws::<5>(line, "time devno blkno bcount flags")?;
    let time_ns = parse_decimal_ns(time, "time", 6)?;
    let device = parse_u32(dev, "devno")?;
    let offset = parse_sectors(blkno, "blkno")?;
    let len = parse_nonzero_sectors(bcount, "bcount")?;
    let op = if parse_hex_u32(flags, "flags")? & 1 == 1 {
        Op::Read
    } else {
        Op::Write
    };
    Ok(Parsed::record(Some(time_ns), op, offset, len, device))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Disksim;
    use crate::block::Op;

    #[test]
    fn milliseconds_sectors_and_flag_bits() {
        let input = "5265.313 0 6357144 8 0\n5265.703 2 6307768 8 1\n5297.450\t0  33701824 64 0x3\n5300 1 0 1 a\n";
        let got = parse(input, Disksim).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 6_357_144 * 512, 4096, 0),
                rec(Some(390_000), Op::Read, 6_307_768 * 512, 4096, 2),
                rec(Some(32_137_000), Op::Read, 33_701_824 * 512, 32_768, 0),
                // flags 0xa: bit 0 clear.
                rec(Some(34_687_000), Op::Write, 0, 512, 1),
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("1.0 0 0 0 0", Disksim, 1).contains("`bcount` is zero"));
        assert!(parse_err("1.0 0 0 8", Disksim, 1).contains("expected 5"));
        assert!(parse_err("1.0 0 0 8 0\n-2 0 0 8 0", Disksim, 2).contains("`time` is negative"));
        assert!(parse_err("1.0 0 0 8 z", Disksim, 1).contains("`flags`"));
        assert!(parse_err("1.0 0 36028797018963968 8 0", Disksim, 1).contains("× 512 B overflows"));
    }
}

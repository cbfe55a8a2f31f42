//! Real-kernel swap captures (`../shared/traces/kernel-swap/*.csv.gz`, recorded with
//! `capture-swap.sh` from tracefs `block:block_rq_issue`), CSV with a header line
//! `time_s,op,sector,sectors,comm`:
//!
//! | column  | unit / meaning                                              | record        |
//! |---------|-------------------------------------------------------------|---------------|
//! | time_s  | kernel clock, seconds with a fraction (`8911.668896`)       | exact ns      |
//! | op      | `R` read, `W` write, `D` discard                            | `op`          |
//! | sector  | 512-byte sectors from the start of the swap device (page 0 is the swap header) | × 512 B |
//! | sectors | 512-byte sectors                                            | × 512 B       |
//! | comm    | the task that issued the request                           | ignored       |
//!
//! Time base: the first record. `sectors = 0` is skipped. The header line is skipped when it is the
//! first line. Offsets are relative to the swap device, so the trace replays the swap partition at
//! the start of the device.

use super::fields::{one_of, parse_decimal_ns, parse_sectors, split_sep, Case, FieldResult};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) const HEADER_PREFIX: &[u8] = b"time_s,";
const COLUMNS: &str = "time_s,op,sector,sectors,comm";

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, kind, sector, sectors, _comm] = split_sep::<5>(line, b',', COLUMNS)?;
    let codes: &[(&[u8], Op)] = &[(b"R", Op::Read), (b"W", Op::Write), (b"D", Op::Trim)];
    let op = one_of(kind, "op", codes, Case::Exact, "`R`, `W` or `D`")?;
    let time_ns = parse_decimal_ns(time, "time_s", 9)?;
    let offset = parse_sectors(sector, "sector")?;
    let len = parse_sectors(sectors, "sectors")?;
    Ok(Parsed::record(Some(time_ns), op, offset, len, 0))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Kswap;
    use crate::block::Op;

    #[test]
    fn header_sectors_discards_and_time() {
        let input = "time_s,op,sector,sectors,comm\n\
                     8911.668896,W,8,1024,memtouch\n\
                     8911.669213,R,1032,8,kswapd0\n\
                     8911.700000,D,2048,4096,kworker/u8:1\n\
                     8911.700001,R,16,0,memtouch\n";
        let got = parse(input, Kswap).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 4096, 524_288, 0),
                rec(Some(317_000), Op::Read, 1032 * 512, 4096, 0),
                rec(Some(31_104_000), Op::Trim, 1_048_576, 2_097_152, 0),
            ]
        );
    }

    #[test]
    fn bad_fields_are_named() {
        let e = parse_err("1.0,X,8,8,memtouch\n", Kswap, 1);
        assert!(e.contains("field `op`"), "{e}");
        let e = parse_err("1.0,R,-8,8,memtouch\n", Kswap, 1);
        assert!(e.contains("`sector`"), "{e}");
        let e = parse_err("1.0,R,8,8\n", Kswap, 1);
        assert!(e.contains("time_s,op,sector,sectors,comm"), "{e}");
    }
}

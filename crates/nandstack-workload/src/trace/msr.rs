//! MSR Cambridge (SNIA IOTTA) CSV, no header:
//!
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`
//!
//! | column       | unit / meaning                                                   | record     |
//! |--------------|------------------------------------------------------------------|------------|
//! | Timestamp    | Windows FILETIME: 100-ns ticks since 1601-01-01 UTC              | × 100 ns   |
//! | Hostname     | text (`hm`, `src1`, …)                                           | ignored    |
//! | DiskNumber   | volume number on that host                                       | `device`   |
//! | Type         | `Read` / `Write` (any case)                                      | `op`       |
//! | Offset, Size | bytes                                                            | as is      |
//! | ResponseTime | 100-ns ticks                                                     | ignored    |
//!
//! Time base: the first record's FILETIME. A `Size` of 0 is skipped (counted in `skipped`): the SNIA
//! captures come from Windows ETW disk events, which can log zero-byte requests.

use super::fields::{one_of, parse_integer_ns, parse_u32, parse_u64, split_sep, Case, FieldResult};
use super::parsed::Parsed;
use crate::block::Op;

const COLUMNS: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, _host, disk, kind, offset, size, _response] = split_sep::<7>(line, b',', COLUMNS)?;
    let codes: &[(&[u8], Op)] = &[(b"Read", Op::Read), (b"Write", Op::Write)];
    let op = one_of(kind, "Type", codes, Case::Any, "`Read` or `Write`")?;
    // FILETIME ticks are 100 ns; integer ticks, so exact.
    let time_ns = parse_integer_ns(time, "Timestamp", 100)?;
    let device = parse_u32(disk, "DiskNumber")?;
    let offset = parse_u64(offset, "Offset")?;
    let len = parse_u64(size, "Size")?;
    Ok(Parsed::record(Some(time_ns), op, offset, len, device))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Msr;
    use crate::block::Op;

    #[test]
    fn reads_writes_and_filetime_ticks() {
        let input = "128166385295514663,hm,0,Write,9056014336,2048,2833\n\
                     128166385295514878,hm,0,Read,11855351808,512,2617\n\
                     128166385301451520,src1,3,write,3163095040,40960,3438\n";
        let got = parse(input, Msr).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Write, 9_056_014_336, 2048, 0),
                // 215 ticks × 100 ns.
                rec(Some(21_500), Op::Read, 11_855_351_808, 512, 0),
                // 5_936_857 ticks = 593.6857 ms.
                rec(Some(593_685_700), Op::Write, 3_163_095_040, 40_960, 3),
            ]
        );
    }

    #[test]
    fn zero_size_is_skipped_and_bad_fields_are_named() {
        let got = parse("1,hm,0,Read,0,0,1\n2,hm,0,Read,0,512,1\n", Msr).unwrap();
        assert_eq!(got, vec![rec(Some(0), Op::Read, 0, 512, 0)]);
        assert!(
            parse_err("1,hm,0,Flush,0,512,1", Msr, 1).contains("`Type` must be `Read` or `Write`")
        );
        assert!(parse_err("1,hm,0,Read,0,512", Msr, 1).contains("expected 7 fields"));
        assert!(parse_err("\n1,hm,0,Read,-5,512,1", Msr, 2).contains("`Offset` is negative"));
        assert!(parse_err("1.5,hm,0,Read,0,512,1", Msr, 1)
            .contains("`Timestamp` is not an unsigned integer"));
        assert!(parse_err("1,hm,x,Read,0,512,1", Msr, 1).contains("`DiskNumber`"));
    }
}

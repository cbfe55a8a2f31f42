//! SYSTOR'17 enterprise VDI traces (SNIA IOTTA; Lee et al., SYSTOR'17), CSV with a header line
//! `Timestamp,Response,IOType,LUN,Offset,Size`:
//!
//! | column    | unit / meaning                                   | record     |
//! |-----------|--------------------------------------------------|------------|
//! | Timestamp | Unix seconds with a ns fraction (`1455591804.310701000`) | exact ns |
//! | Response  | seconds                                          | ignored    |
//! | IOType    | `R` / `W` (any case)                             | `op`       |
//! | LUN       | logical unit                                     | `device`   |
//! | Offset    | bytes                                            | as is      |
//! | Size      | bytes                                            | as is      |
//!
//! Time base: the earliest record. Rows are **not** sorted by time (about a quarter of the sample rows
//! are earlier than the row before); the reader's reorder window sorts them, see the module docs. `Size = 0`
//! is skipped. The header line is skipped when it is the first line.

use super::fields::{one_of, parse_decimal_ns, parse_u32, parse_u64, split_sep, Case, FieldResult};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) const HEADER_PREFIX: &[u8] = b"timestamp,";
const COLUMNS: &str = "Timestamp,Response,IOType,LUN,Offset,Size";

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, _response, kind, lun, offset, size] = split_sep::<6>(line, b',', COLUMNS)?;
    let codes: &[(&[u8], Op)] = &[(b"R", Op::Read), (b"W", Op::Write)];
    let op = one_of(kind, "IOType", codes, Case::Any, "`R` or `W`")?;
    let time_ns = parse_decimal_ns(time, "Timestamp", 9)?;
    let device = parse_u32(lun, "LUN")?;
    let offset = parse_u64(offset, "Offset")?;
    let len = parse_u64(size, "Size")?;
    Ok(Parsed::record(Some(time_ns), op, offset, len, device))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Systor17;
    use crate::block::Op;

    #[test]
    fn header_fractional_seconds_and_unsorted_rows() {
        let input = "Timestamp,Response,IOType,LUN,Offset,Size\n\
                     1455591804.310701000,0.006475000,R,0,203468398592,32768\n\
                     1455591804.318699001,0.005276000,W,2,4590576115200,4096\n\
                     1455591804.300000000,0.011025000,R,0,4564742206976,65536\n";
        let got = parse(input, Systor17).unwrap();
        assert_eq!(
            got,
            vec![
                // Sorted by the reorder window: the third row is the earliest.
                rec(Some(0), Op::Read, 4_564_742_206_976, 65_536, 0),
                rec(Some(10_701_000), Op::Read, 203_468_398_592, 32_768, 0),
                rec(Some(18_699_001), Op::Write, 4_590_576_115_200, 4096, 2),
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err(
            "Timestamp,Response,IOType,LUN,Offset,Size\n1,0,X,0,0,512",
            Systor17,
            2
        )
        .contains("`IOType`"));
        assert!(parse_err("1,0,R,0,0,-512", Systor17, 1).contains("`Size` is negative"));
        assert!(parse_err("1e999,0,R,0,0,512", Systor17, 1).contains("`Timestamp`"));
    }
}

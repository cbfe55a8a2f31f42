//! Tencent CBS block traces (SNIA IOTTA trace set 27917, Zhang et al., USENIX ATC'20), CSV, no header:
//!
//! `Timestamp,Offset,Size,IOType,VolumeID`
//!
//! | column    | unit / meaning                                  | record     |
//! |-----------|-------------------------------------------------|------------|
//! | Timestamp | Unix seconds (integer; a fraction is accepted)  | exact ns   |
//! | Offset    | 512-B sectors (per the SNIA README)             | × 512 B    |
//! | Size      | 512-B sectors                                   | × 512 B    |
//! | IOType    | `0` = read, `1` = write                         | `op`       |
//! | VolumeID  | cloud volume                                    | `device`   |
//!
//! Time base: the earliest record. Rows are not sorted (within the one-second resolution, a row may carry
//! the previous second): the reader's reorder window sorts them, see the module docs. `Size = 0`
//! is skipped (a production capture). Note: Caffeine's reader divides `Offset` by 512 as if it were bytes;
//! the SNIA README says it is already in sectors, which is what we follow.

use super::fields::{
    one_of, parse_decimal_ns, parse_sectors, parse_u32, split_sep, Case, FieldResult,
};
use super::parsed::Parsed;
use crate::block::Op;

const COLUMNS: &str = "Timestamp,Offset,Size,IOType,VolumeID";

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [time, offset, size, kind, volume] = split_sep::<5>(line, b',', COLUMNS)?;
    let codes: &[(&[u8], Op)] = &[(b"0", Op::Read), (b"1", Op::Write)];
    let op = one_of(kind, "IOType", codes, Case::Exact, "0 (read) or 1 (write)")?;
    let time_ns = parse_decimal_ns(time, "Timestamp", 9)?;
    let offset = parse_sectors(offset, "Offset")?;
    let len = parse_sectors(size, "Size")?;
    let device = parse_u32(volume, "VolumeID")?;
    Ok(Parsed::record(Some(time_ns), op, offset, len, device))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::TencentCbs;
    use crate::block::Op;

    #[test]
    fn seconds_sectors_volumes_and_unsorted_rows() {
        let input = "1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n1538323202,8,0,0,1\n1538323201,16,8,0,7\n";
        let got = parse(input, TencentCbs).unwrap();
        assert_eq!(
            got,
            vec![
                // One second before the first row: sorted first by the reorder window.
                rec(Some(0), Op::Read, 13_896_880 * 512, 65_536, 1063),
                rec(
                    Some(1_000_000_000),
                    Op::Write,
                    4_247_200 * 512,
                    65_536,
                    1058
                ),
                // (The zero-size row is skipped.)
                rec(Some(2_000_000_000), Op::Read, 8192, 4096, 7),
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("1,2,3,R,4", TencentCbs, 1)
            .contains("`IOType` must be 0 (read) or 1 (write)"));
        assert!(parse_err("1,2,3,0", TencentCbs, 1).contains("expected 5 fields"));
        assert!(parse_err("1,2,3,0,4294967296", TencentCbs, 1)
            .contains("`VolumeID` does not fit in 32 bits"));
    }
}

//! ARC paper traces (Megiddo & Modha, FAST'03; `*.lis` as packaged by moka-rs/cache-trace),
//! whitespace-separated:
//!
//! `start_block nblocks ignore request_no`
//!
//! | column      | unit / meaning                  | record            |
//! |-------------|---------------------------------|-------------------|
//! | start_block | 512-B block                     | `offset` × 512 B  |
//! | nblocks     | 512-B blocks                    | `len` × 512 B     |
//! | ignore      | unused                          | ignored           |
//! | request_no  | request counter                 | ignored           |
//!
//! Reads only (the traces record cache references); no time (`arrival_ns = None`, order only);
//! `device` is 0. `nblocks = 0` is an error. Citing the traces requires citing Megiddo & Modha, FAST'03.

use super::fields::{parse_nonzero_sectors, parse_sectors, split_ws, FieldResult};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [start, count, _ignore, _request] =
        split_ws::<4>(line, "start_block nblocks ignore request_no")?;
    Ok(Parsed::record(
        None,
        Op::Read,
        parse_sectors(start, "start_block")?,
        parse_nonzero_sectors(count, "nblocks")?,
        0,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Arc;
    use crate::block::Op;

    #[test]
    fn blocks_become_reads_without_time() {
        let got = parse("1936993 8 0 0\n793041 16 0 1\n", Arc).unwrap();
        assert_eq!(
            got,
            vec![
                rec(None, Op::Read, 1_936_993 * 512, 4096, 0),
                rec(None, Op::Read, 793_041 * 512, 8192, 0)
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("1 0 0 0", Arc, 1).contains("`nblocks` is zero"));
        assert!(parse_err("1 8 0", Arc, 1).contains("expected 4"));
        assert!(parse_err("x 8 0 0", Arc, 1).contains("`start_block`"));
    }
}

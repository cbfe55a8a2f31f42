//! WiscSee `blkparse-events-for-ftlsim.txt` (junhe/wiscsee: blktrace events refined for its FTL
//! simulator), space-separated:
//!
//! `pid action op offset size time delta sync`
//!
//! | column | unit / meaning                                                   | record     |
//! |--------|------------------------------------------------------------------|------------|
//! | pid    | process id (0 for completions)                                   | ignored    |
//! | action | `D` = issued to the driver, `C` = completed                      | `D` only   |
//! | op     | `read` / `write` / `discard`                                     | `op`       |
//! | offset | bytes                                                            | as is      |
//! | size   | bytes                                                            | as is      |
//! | time   | seconds since the trace start, decimal (`1.413252182`)           | exact ns   |
//! | delta  | seconds since the previous event                                 | ignored    |
//! | sync   | `True` / `False`                                                 | ignored    |
//!
//! Each request appears twice (a `D` and a `C` line); only `D` lines become records, so requests are
//! counted once at their issue time. `C` lines are skipped; any other action is an error. Time base: the
//! first `D` record. `size = 0` is skipped. No device column: `device` is 0.

use super::fields::{one_of, parse_decimal_ns, parse_u64, split_ws, Case, FieldResult};
use super::parsed::Parsed;
use crate::block::Op;

pub(crate) fn parse(line: &[u8]) -> FieldResult<Parsed> {
    let [_pid, action, op, offset, size, time, _delta, _sync] =
        split_ws::<8>(line, "pid action op offset size time delta sync")?;
    let issued = one_of(
        action,
        "action",
        &[(b"D", true), (b"C", false)],
        Case::Exact,
        "`D` or `C`",
    )?;
    if !issued {
        return Ok(Parsed::Skip);
    }
    let codes: &[(&[u8], Op)] = &[
        (b"read", Op::Read),
        (b"write", Op::Write),
        (b"discard", Op::Trim),
    ];
    let op = one_of(op, "op", codes, Case::Exact, "`read`, `write` or `discard`")?;
    let offset = parse_u64(offset, "offset")?;
    let len = parse_u64(size, "size")?;
    let time_ns = parse_decimal_ns(time, "time", 9)?;
    Ok(Parsed::record(Some(time_ns), op, offset, len, 0))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{parse, parse_err, rec};
    use super::super::TraceFormat::Wiscsee;
    use crate::block::Op;

    #[test]
    fn issue_lines_only_with_all_ops() {
        let input = "39949 D read 299008 4096 0.000000000 0 False\n\
                     0 C read 299008 4096 0.000122793 0.000122793 False\n\
                     1386 D discard 136314880 4096 0.439239477 4.43e-06 False\n\
                     0 D write 143347712 8192 1.413252182 1.3045e-05 True\n";
        let got = parse(input, Wiscsee).unwrap();
        assert_eq!(
            got,
            vec![
                rec(Some(0), Op::Read, 299_008, 4096, 0),
                rec(Some(439_239_477), Op::Trim, 136_314_880, 4096, 0),
                rec(Some(1_413_252_182), Op::Write, 143_347_712, 8192, 0),
            ]
        );
    }

    #[test]
    fn errors() {
        assert!(parse_err("1 Q read 0 4096 0 0 False", Wiscsee, 1)
            .contains("`action` must be `D` or `C`"));
        assert!(parse_err("1 D flush 0 4096 0 0 False", Wiscsee, 1).contains("`op` must be"));
        assert!(parse_err("1 D read 0 4096 0 0", Wiscsee, 1).contains("expected 8"));
    }
}

//! Field splitting and number parsing shared by the text formats.
//!
//! Everything works on raw bytes (no UTF-8 validation, no allocation on the happy path). A problem is
//! reported as a message naming the field; the reader adds file name, line number and line text.

/// A field-level problem: the message names the field and says what is wrong with it.
pub(crate) type FieldResult<T> = std::result::Result<T, String>;

/// Bytes in one 512-B sector, the unit of most simulator and SNIA trace formats.
pub(crate) const SECTOR_BYTES: u64 = 512;

/// Longest field value quoted back in an error message.
const QUOTE_MAX_CHARS: usize = 40;

/// `bytes` as text for an error message: lossy UTF-8, control characters but tab escaped (`\u{b}`,
/// `\r`) so garbage cannot move a terminal's cursor or end the message's line, cut (`…`) before it
/// would pass `max` characters (an escape is never split).
pub(crate) fn shown(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in String::from_utf8_lossy(bytes).chars() {
        let piece: String = if c.is_control() && c != '\t' {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if count + n > max {
            out.push('…');
            break;
        }
        out.push_str(&piece);
        count += n;
    }
    out
}

/// `field` as text for an error message ([`shown`], at most 40 characters).
pub(crate) fn quote(field: &[u8]) -> String {
    shown(field, QUOTE_MAX_CHARS)
}

/// Split `line` on `sep` into exactly `N` fields, each trimmed of ASCII whitespace.
pub(crate) fn split_sep<'a, const N: usize>(
    line: &'a [u8],
    sep: u8,
    columns: &str,
) -> FieldResult<[&'a [u8]; N]> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut count = 0usize;
    for part in line.split(|&b| b == sep) {
        if let Some(slot) = out.get_mut(count) {
            *slot = part.trim_ascii();
        }
        count += 1;
    }
    if count != N {
        return Err(format!(
            "expected {N} fields `{columns}` separated by `{}`, found {count}",
            sep as char
        ));
    }
    Ok(out)
}

/// Split `line` on runs of spaces and tabs into exactly `N` fields.
pub(crate) fn split_ws<'a, const N: usize>(
    line: &'a [u8],
    columns: &str,
) -> FieldResult<[&'a [u8]; N]> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut count = 0usize;
    for part in words(line) {
        if let Some(slot) = out.get_mut(count) {
            *slot = part;
        }
        count += 1;
    }
    if count != N {
        return Err(format!(
            "expected {N} whitespace-separated fields `{columns}`, found {count}"
        ));
    }
    Ok(out)
}

/// The whitespace-separated words of `line` (spaces and tabs; empty words skipped).
pub(crate) fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b' ' || b == b'\t')
        .filter(|w| !w.is_empty())
}

/// An unsigned decimal integer.
pub(crate) fn parse_u64(field: &[u8], name: &str) -> FieldResult<u64> {
    if field.is_empty() {
        return Err(format!("field `{name}` is empty"));
    }
    if field[0] == b'-' {
        return Err(format!("field `{name}` is negative (`{}`)", quote(field)));
    }
    let mut value: u64 = 0;
    for &b in field {
        if !b.is_ascii_digit() {
            return Err(format!(
                "field `{name}` is not an unsigned integer (`{}`)",
                quote(field)
            ));
        }
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(|| {
                format!(
                    "field `{name}` does not fit in 64 bits (`{}`)",
                    quote(field)
                )
            })?;
    }
    Ok(value)
}

/// An unsigned decimal integer that must fit in 32 bits (device and volume ids).
pub(crate) fn parse_u32(field: &[u8], name: &str) -> FieldResult<u32> {
    let value = parse_u64(field, name)?;
    u32::try_from(value).map_err(|_| {
        format!(
            "field `{name}` does not fit in 32 bits (`{}`)",
            quote(field)
        )
    })
}

/// A whole number of `unit_ns`-nanosecond ticks (an unsigned decimal integer), in ns: exact.
pub(crate) fn parse_integer_ns(field: &[u8], name: &str, unit_ns: u64) -> FieldResult<u128> {
    Ok(u128::from(parse_u64(field, name)?) * u128::from(unit_ns))
}

/// How [`one_of`] compares letters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Case {
    Exact,
    /// ASCII letters match in either case.
    Any,
}

/// The value of the first code in `codes` that `field` is; otherwise an error naming field `name` and
/// the accepted codes as `expected` spells them (`` `R` or `W` ``, `0 (read) or 1 (write)`).
pub(crate) fn one_of<T: Copy>(
    field: &[u8],
    name: &str,
    codes: &[(&[u8], T)],
    case: Case,
    expected: &str,
) -> FieldResult<T> {
    codes
        .iter()
        .find(|(code, _)| match case {
            Case::Exact => *code == field,
            Case::Any => code.eq_ignore_ascii_case(field),
        })
        .map(|&(_, value)| value)
        .ok_or_else(|| format!("field `{name}` must be {expected}, not `{}`", quote(field)))
}

/// A hexadecimal integer (optional `0x` prefix, any case), as C's `%x` reads it.
pub(crate) fn parse_hex_u32(field: &[u8], name: &str) -> FieldResult<u32> {
    let digits = match field {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => field,
    };
    if digits.is_empty() || digits.len() > 8 {
        return Err(format!(
            "field `{name}` is not a 32-bit hexadecimal number (`{}`)",
            quote(field)
        ));
    }
    let mut value: u32 = 0;
    for &b in digits {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => {
                return Err(format!(
                    "field `{name}` is not a 32-bit hexadecimal number (`{}`)",
                    quote(field)
                ))
            }
        };
        value = (value << 4) | u32::from(d);
    }
    Ok(value)
}

/// A size that must be positive.
pub(crate) fn parse_nonzero(field: &[u8], name: &str) -> FieldResult<u64> {
    match parse_u64(field, name)? {
        0 => Err(format!("field `{name}` is zero")),
        v => Ok(v),
    }
}

/// `value` 512-B sectors in bytes.
pub(crate) fn sectors_to_bytes(value: u64, name: &str) -> FieldResult<u64> {
    value
        .checked_mul(SECTOR_BYTES)
        .ok_or_else(|| format!("field `{name}` × 512 B overflows 64 bits"))
}

/// A count or address of 512-B sectors, in bytes.
pub(crate) fn parse_sectors(field: &[u8], name: &str) -> FieldResult<u64> {
    sectors_to_bytes(parse_u64(field, name)?, name)
}

/// A positive number of 512-B sectors, in bytes.
pub(crate) fn parse_nonzero_sectors(field: &[u8], name: &str) -> FieldResult<u64> {
    sectors_to_bytes(parse_nonzero(field, name)?, name)
}

/// Largest decimal exponent accepted in a time field (`1e40` s is already far beyond any trace).
const MAX_EXPONENT: i32 = 40;

/// A non-negative decimal number of time units, returned in nanoseconds, where one unit is
/// `10^unit_exp10` ns (0 = ns, 3 = µs, 6 = ms, 9 = s).
///
/// Parsed exactly as integer digits (no binary floating point), so `1456095145.133076000` s keeps every
/// nanosecond. Digits below one nanosecond are truncated. An exponent (`7.3e-05`) is accepted.
pub(crate) fn parse_decimal_ns(field: &[u8], name: &str, unit_exp10: i32) -> FieldResult<u128> {
    let bad = || {
        format!(
            "field `{name}` is not a non-negative decimal number (`{}`)",
            quote(field)
        )
    };
    let mut rest = field;
    match rest.first() {
        Some(b'-') => return Err(format!("field `{name}` is negative (`{}`)", quote(field))),
        Some(b'+') => rest = &rest[1..],
        _ => {}
    }
    let mut mantissa: u128 = 0;
    let mut exp10: i32 = unit_exp10;
    let mut digits = 0usize;
    let mut seen_dot = false;
    let mut i = 0usize;
    while let Some(&b) = rest.get(i) {
        match b {
            b'0'..=b'9' => {
                digits += 1;
                match mantissa
                    .checked_mul(10)
                    .and_then(|m| m.checked_add(u128::from(b - b'0')))
                {
                    Some(m) if m < (1u128 << 120) => {
                        mantissa = m;
                        if seen_dot {
                            exp10 -= 1;
                        }
                    }
                    // Too many digits: fraction digits are far below 1 ns and can be dropped, while
                    // integer digits scale the value up.
                    _ if seen_dot => {}
                    _ => exp10 += 1,
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            b'e' | b'E' => break,
            _ => return Err(bad()),
        }
        i += 1;
    }
    if digits == 0 {
        return Err(bad());
    }
    if let Some(exp_text) = rest.get(i + 1..) {
        exp10 += parse_exponent(exp_text).ok_or_else(bad)?;
    }
    scale(mantissa, exp10)
        .ok_or_else(|| format!("field `{name}` is too large (`{}`)", quote(field)))
}

/// The `[+-]digits` after an `e`.
fn parse_exponent(text: &[u8]) -> Option<i32> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude = digits
        .iter()
        .fold(0i32, |acc, &d| acc * 10 + i32::from(d - b'0'));
    if magnitude > MAX_EXPONENT {
        return None;
    }
    Some(if negative { -magnitude } else { magnitude })
}

/// `mantissa × 10^exp10`, truncated toward zero; `None` on overflow.
fn scale(mantissa: u128, exp10: i32) -> Option<u128> {
    if exp10 >= 0 {
        let factor = 10u128.checked_pow(u32::try_from(exp10).ok()?)?;
        mantissa.checked_mul(factor)
    } else {
        match 10u128.checked_pow(exp10.unsigned_abs()) {
            Some(divisor) => Some(mantissa / divisor),
            None => Some(0), // 10^-39 or smaller: below one nanosecond for any mantissa we keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_escape_control_characters() {
        // A garbage time field once put a raw `\r` into the message (fuzz seed 4242, wiscsee): a
        // terminal, or Python's universal newlines, then split the error line.
        let e = parse_decimal_ns(b"0.000\xd9\x92}\r\x04\x1b[2J", "time", 9).unwrap_err();
        assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
        assert!(e.contains("\\r\\u{4}\\u{1b}[2J"), "{e}");
        assert_eq!(quote(b"a\tb"), "a\tb");
        // Cut before the limit, never inside an escape.
        assert_eq!(shown(b"abc\x1b", 5), "abc…");
        assert_eq!(shown(b"abc\x1b", 9), "abc\\u{1b}");
        assert_eq!(quote(&[b'x'; 50]).chars().count(), 41);
    }

    #[test]
    fn unsigned_integers() {
        assert_eq!(parse_u64(b"0", "x"), Ok(0));
        assert_eq!(parse_u64(b"18446744073709551615", "x"), Ok(u64::MAX));
        assert!(parse_u64(b"18446744073709551616", "x")
            .unwrap_err()
            .contains("64 bits"));
        assert!(parse_u64(b"-1", "size")
            .unwrap_err()
            .contains("`size` is negative"));
        assert!(parse_u64(b"1.5", "x")
            .unwrap_err()
            .contains("not an unsigned integer"));
        assert!(parse_u64(b"", "x").unwrap_err().contains("empty"));
        assert!(parse_u32(b"4294967296", "dev")
            .unwrap_err()
            .contains("32 bits"));
        assert!(parse_nonzero(b"0", "size").unwrap_err().contains("zero"));
        assert_eq!(parse_integer_ns(b"7", "t", 100), Ok(700));
        assert_eq!(
            parse_integer_ns(b"18446744073709551615", "t", 1_000),
            Ok(u128::from(u64::MAX) * 1_000)
        );
        assert!(parse_integer_ns(b"1.5", "t", 100)
            .unwrap_err()
            .contains("`t` is not an unsigned integer"));
        assert_eq!(parse_sectors(b"3", "lba"), Ok(1536));
        assert_eq!(parse_sectors(b"0", "lba"), Ok(0));
        assert_eq!(
            parse_sectors(b"36028797018963968", "lba").unwrap_err(),
            "field `lba` × 512 B overflows 64 bits"
        );
        assert_eq!(
            parse_nonzero_sectors(b"0", "size").unwrap_err(),
            "field `size` is zero"
        );
        assert_eq!(parse_nonzero_sectors(b"2", "size"), Ok(1024));
        assert_eq!(parse_hex_u32(b"2a", "op"), Ok(0x2a));
        assert_eq!(parse_hex_u32(b"0X2A", "op"), Ok(0x2a));
        assert_eq!(parse_hex_u32(b"ffffffff", "op"), Ok(u32::MAX));
        for bad in [&b""[..], b"0x", b"123456789", b"g", b"-1"] {
            assert!(parse_hex_u32(bad, "op").is_err());
        }
    }

    #[test]
    fn decimals_keep_every_nanosecond() {
        assert_eq!(
            parse_decimal_ns(b"1456095145.133076001", "t", 9),
            Ok(1_456_095_145_133_076_001)
        );
        assert_eq!(parse_decimal_ns(b"5265.313", "t", 6), Ok(5_265_313_000));
        assert_eq!(parse_decimal_ns(b"0.000000000", "t", 9), Ok(0));
        assert_eq!(parse_decimal_ns(b"12", "t", 9), Ok(12_000_000_000));
        assert_eq!(parse_decimal_ns(b"12.", "t", 9), Ok(12_000_000_000));
        assert_eq!(parse_decimal_ns(b".5", "t", 9), Ok(500_000_000));
        // Sub-nanosecond digits are truncated.
        assert_eq!(parse_decimal_ns(b"1.0000000019", "t", 9), Ok(1_000_000_001));
        assert_eq!(parse_decimal_ns(b"0.0000001", "t", 6), Ok(0));
        // Exponents.
        assert_eq!(parse_decimal_ns(b"7.3902e-05", "t", 9), Ok(73_902));
        assert_eq!(parse_decimal_ns(b"1E3", "t", 6), Ok(1_000_000_000));
        assert_eq!(parse_decimal_ns(b"+2", "t", 0), Ok(2));
    }

    #[test]
    fn decimals_reject_garbage() {
        for bad in [
            &b""[..],
            b".",
            b"-1",
            b"1.2.3",
            b"1e",
            b"1e+",
            b"1e999",
            b"nan",
            b"inf",
            b"1 2",
            b"0x10",
        ] {
            assert!(
                parse_decimal_ns(bad, "t", 9).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(parse_decimal_ns(b"1e40", "t", 9)
            .unwrap_err()
            .contains("too large"));
        // Very long inputs neither overflow nor panic.
        let long = vec![b'9'; 200];
        assert!(parse_decimal_ns(&long, "t", 9).is_err());
        let mut frac = b"1.".to_vec();
        frac.extend([b'7'; 200]);
        assert_eq!(parse_decimal_ns(&frac, "t", 9), Ok(1_777_777_777));
    }

    #[test]
    fn codes() {
        let codes: &[(&[u8], u8)] = &[(b"Read", 1), (b"Write", 2), (b"read", 3)];
        assert_eq!(one_of(b"read", "Type", codes, Case::Exact, "…"), Ok(3));
        assert_eq!(one_of(b"rEAD", "Type", codes, Case::Any, "…"), Ok(1));
        assert_eq!(one_of(b"WRITE", "Type", codes, Case::Any, "…"), Ok(2));
        assert_eq!(
            one_of(b"rEAD", "Type", codes, Case::Exact, "`Read` or `Write`").unwrap_err(),
            "field `Type` must be `Read` or `Write`, not `rEAD`"
        );
        assert_eq!(
            one_of(b"", "op", &[(b"1", ())], Case::Any, "1").unwrap_err(),
            "field `op` must be 1, not ``"
        );
        let long = [b'x'; 100];
        let msg = one_of(&long, "op", &[(b"1", ())], Case::Exact, "1").unwrap_err();
        assert!(msg.ends_with("…`"), "{msg}");
    }

    #[test]
    fn splitting() {
        let f: [&[u8]; 3] = split_sep(b"a, b ,c\r", b',', "x,y,z").unwrap();
        assert_eq!(f, [&b"a"[..], b"b", b"c"]);
        assert!(split_sep::<3>(b"a,b", b',', "x,y,z")
            .unwrap_err()
            .contains("found 2"));
        assert!(split_sep::<2>(b"a,b,c,d", b',', "x,y")
            .unwrap_err()
            .contains("found 4"));
        let w: [&[u8]; 2] = split_ws(b"  12 \t 34 ", "a b").unwrap();
        assert_eq!(w, [&b"12"[..], b"34"]);
        assert_eq!(quote(&[b'x'; 100]).chars().count(), 41);
    }
}

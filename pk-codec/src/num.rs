//! Integer forms: fixed-width decimal, nines' complement for descending order, and the signed form.
//!
//! Unsigned `v` at width `w`: `w` decimal digits (so `v < 10^w`). Descending: each digit `d`
//! replaced by `9 - d`, i.e. `10^w - 1 - v`, the classic reversed timestamp.
//!
//! Signed `v` at width `w` (one sign character and `w - 1` digits, so `-10^(w-1) <= v < 10^(w-1)`):
//! `v >= 0` is `0` followed by `v` in `w - 1` digits (it reads as a zero-padded number);
//! `v < 0` is `-` followed by the nines' complement of `|v| - 1` in `w - 1` digits. `-` sorts below
//! `0`, and the complement makes `-1` the largest negative key. Descending writes `-1 - v` (`!v`),
//! which maps the range onto itself.

use crate::error::{Error, Result};

static DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Powers of ten that fit in a `u64`: `POW10[i] = 10^i` for `i <= 19`.
const POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

pub(crate) const fn uint_default_width(bits: u8) -> u8 {
    match bits {
        8 => 3,
        16 => 5,
        32 => 10,
        64 => 20,
        _ => 39,
    }
}

pub(crate) const fn int_default_width(bits: u8) -> u8 {
    match bits {
        8 => 4,
        16 => 6,
        32 => 11,
        64 => 20,
        _ => 40,
    }
}

/// Whether `v` has at most `digits` decimal digits.
#[inline]
fn fits_u64(v: u64, digits: u8) -> bool {
    digits >= 20 || v < POW10[digits as usize]
}

#[inline]
fn fits_u128(v: u128, digits: u8) -> bool {
    if digits >= 39 {
        return true;
    }
    if digits <= 19 {
        return v < u128::from(POW10[digits as usize]);
    }
    v < u128::from(POW10[19]) * u128::from(POW10[digits as usize - 19])
}

/// Writes `v` as exactly `digits` decimal digits (zero-padded) into the tail of `buf`, returning
/// the slice written. `v` must fit.
#[inline]
fn fmt_u64(mut v: u64, digits: usize, buf: &mut [u8; 40]) -> &mut [u8] {
    let start = 40 - digits;
    let mut pos = 40;
    while v >= 100 && pos >= start + 2 {
        let pair = ((v % 100) as usize) * 2;
        v /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    while pos > start {
        pos -= 1;
        buf[pos] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    debug_assert_eq!(v, 0, "value wider than its digits");
    &mut buf[start..]
}

#[inline]
fn fmt_u128(v: u128, digits: usize, buf: &mut [u8; 40]) -> &mut [u8] {
    if let Ok(small) = u64::try_from(v) {
        return fmt_u64(small, digits, buf);
    }
    // Chunks of 19 digits from the right; a u128 has at most 39 digits, so three chunks.
    let chunk = u128::from(POW10[19]);
    let mut rest = v;
    let mut end = 40;
    while end > 40 - digits {
        let len = (end - (40 - digits)).min(19);
        let mut tmp = [0u8; 40];
        let part = (rest % chunk) as u64;
        rest /= chunk;
        let text = fmt_u64(part, len, &mut tmp);
        buf[end - len..end].copy_from_slice(text);
        end -= len;
    }
    &mut buf[40 - digits..]
}

#[inline]
fn complement(digits: &mut [u8]) {
    for d in digits {
        *d = b'9' - (*d - b'0');
    }
}

#[inline]
fn push_ascii(out: &mut String, bytes: &[u8]) {
    // Digits, '0' and '-' only: always valid UTF-8.
    debug_assert!(bytes.is_ascii());
    out.push_str(std::str::from_utf8(bytes).unwrap_or_default());
}

#[cold]
fn too_wide(field: &str, value: impl ToString, width: u8) -> Error {
    Error::ValueTooWide {
        field: field.to_owned(),
        value: value.to_string(),
        width,
    }
}

/// Writes an unsigned integer of up to 64 bits.
#[inline]
pub(crate) fn write_u64(
    out: &mut String,
    v: u64,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    if !fits_u64(v, width) {
        return Err(too_wide(field, v, width));
    }
    let mut buf = [b'0'; 40];
    let digits = fmt_u64(v, usize::from(width), &mut buf);
    if desc {
        complement(digits);
    }
    push_ascii(out, digits);
    Ok(())
}

/// Writes an unsigned 128-bit integer.
pub(crate) fn write_u128(
    out: &mut String,
    v: u128,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    if !fits_u128(v, width) {
        return Err(too_wide(field, v, width));
    }
    let mut buf = [b'0'; 40];
    let digits = fmt_u128(v, usize::from(width), &mut buf);
    if desc {
        complement(digits);
    }
    push_ascii(out, digits);
    Ok(())
}

/// Writes a signed integer of up to 64 bits.
#[inline]
pub(crate) fn write_i64(
    out: &mut String,
    v: i64,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    let v = if desc { !v } else { v };
    let digits = width - 1;
    let (sign, magnitude) = if v >= 0 {
        (b'0', v as u64)
    } else {
        (b'-', v.unsigned_abs() - 1)
    };
    if !fits_u64(magnitude, digits) {
        let shown = if desc { !v } else { v };
        return Err(too_wide(field, shown, width));
    }
    let mut buf = [b'0'; 40];
    let len = usize::from(digits);
    fmt_u64(magnitude, len, &mut buf);
    if sign == b'-' {
        complement(&mut buf[40 - len..]);
    }
    buf[39 - len] = sign;
    push_ascii(out, &buf[39 - len..]);
    Ok(())
}

/// Writes a signed 128-bit integer.
pub(crate) fn write_i128(
    out: &mut String,
    v: i128,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    let v = if desc { !v } else { v };
    let digits = width - 1;
    let (sign, magnitude) = if v >= 0 {
        (b'0', v as u128)
    } else {
        (b'-', v.unsigned_abs() - 1)
    };
    if !fits_u128(magnitude, digits) {
        let shown = if desc { !v } else { v };
        return Err(too_wide(field, shown, width));
    }
    let mut buf = [b'0'; 40];
    let len = usize::from(digits);
    fmt_u128(magnitude, len, &mut buf);
    if sign == b'-' {
        complement(&mut buf[40 - len..]);
    }
    buf[39 - len] = sign;
    push_ascii(out, &buf[39 - len..]);
    Ok(())
}

/// Parses exactly `text.len()` decimal digits (complemented when `desc`) as a `u128`.
/// `Err(offset)` names the first non-digit; `Ok(None)` means the number overflows a `u128`.
#[inline]
fn parse_digits(text: &[u8], desc: bool) -> Result<Option<u128>, usize> {
    let mut v: u64 = 0;
    let mut i = 0;
    // Up to 19 digits fit a u64 without any check.
    while i < text.len() && i < 19 {
        let d = text[i].wrapping_sub(b'0');
        if d > 9 {
            return Err(i);
        }
        v = v * 10 + u64::from(if desc { 9 - d } else { d });
        i += 1;
    }
    let mut wide = u128::from(v);
    while i < text.len() {
        let d = text[i].wrapping_sub(b'0');
        if d > 9 {
            return Err(i);
        }
        let d = u128::from(if desc { 9 - d } else { d });
        wide = match wide.checked_mul(10).and_then(|w| w.checked_add(d)) {
            Some(w) => w,
            None => {
                // Keep checking the digits so a bad digit is still reported as such.
                if let Some(bad) = text[i..].iter().position(|b| !b.is_ascii_digit()) {
                    return Err(i + bad);
                }
                return Ok(None);
            }
        };
        i += 1;
    }
    Ok(Some(wide))
}

/// The outcome of reading an integer field: the value, or why it is not one.
pub(crate) enum IntParse<T> {
    Value(T),
    /// A byte that is not allowed, at this offset in the field.
    BadByte(usize),
    /// Well formed but outside the type; the text of the number for the message.
    OutOfRange(String),
}

/// Reads an unsigned integer field of `text.len()` digits, bounded by `max`.
#[inline]
pub(crate) fn read_uint(text: &[u8], desc: bool, max: u128) -> IntParse<u128> {
    match parse_digits(text, desc) {
        Err(at) => IntParse::BadByte(at),
        Ok(Some(v)) if v <= max => IntParse::Value(v),
        Ok(Some(v)) => IntParse::OutOfRange(v.to_string()),
        Ok(None) => IntParse::OutOfRange(format!("a {}-digit number", text.len())),
    }
}

/// Reads a signed integer field of `text.len()` characters (sign included), within `[min, max]`.
#[inline]
pub(crate) fn read_int(text: &[u8], desc: bool, min: i128, max: i128) -> IntParse<i128> {
    let Some((&sign, digits)) = text.split_first() else {
        return IntParse::BadByte(0);
    };
    let negative = match sign {
        b'0' => false,
        b'-' => true,
        _ => return IntParse::BadByte(0),
    };
    let magnitude = match parse_digits(digits, negative) {
        Err(at) => return IntParse::BadByte(at + 1),
        Ok(Some(m)) => m,
        Ok(None) => return IntParse::OutOfRange(format!("a {}-digit number", digits.len())),
    };
    // v = magnitude for v >= 0, v = -(magnitude + 1) for v < 0; in i128 when it fits.
    let v = match i128::try_from(magnitude) {
        Ok(m) if negative => -m - 1,
        Ok(m) => m,
        Err(_) => {
            let sign = if negative { "-" } else { "" };
            return IntParse::OutOfRange(format!("{sign}{magnitude}"));
        }
    };
    let v = if desc { !v } else { v };
    if v < min || v > max {
        return IntParse::OutOfRange(v.to_string());
    }
    IntParse::Value(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64, w: u8, desc: bool) -> String {
        let mut s = String::new();
        write_u64(&mut s, v, w, desc, "f").unwrap();
        s
    }

    fn i(v: i64, w: u8, desc: bool) -> String {
        let mut s = String::new();
        write_i64(&mut s, v, w, desc, "f").unwrap();
        s
    }

    #[test]
    fn unsigned_pads_and_complements() {
        assert_eq!(u(54, 6, false), "000054");
        assert_eq!(u(54, 6, true), "999945");
        assert_eq!(u(u64::MAX, 20, false), "18446744073709551615");
        assert_eq!(u(0, 20, true), "99999999999999999999");
        assert_eq!(u(7, 25, false), "0000000000000000000000007");
    }

    #[test]
    fn signed_form_matches_documentation() {
        assert_eq!(i(42, 5, false), "00042");
        assert_eq!(i(-1, 5, false), "-9999");
        assert_eq!(i(-2, 5, false), "-9998");
        assert_eq!(i(-10_000, 5, false), "-0000");
        assert_eq!(i(0, 5, true), "-9999");
        assert_eq!(i(i64::MIN, 20, false), "-0776627963145224192");
        assert_eq!(i(i64::MAX, 20, false), "09223372036854775807");
    }

    #[test]
    fn width_overflow_is_reported_with_the_value() {
        let mut s = String::new();
        let err = write_i64(&mut s, -10_001, 5, false, "t").unwrap_err();
        assert_eq!(
            err,
            Error::ValueTooWide {
                field: "t".into(),
                value: "-10001".into(),
                width: 5
            }
        );
        assert!(s.is_empty());
    }

    #[test]
    fn u128_formats_across_the_u64_boundary() {
        for v in [
            0u128,
            u128::from(u64::MAX),
            u128::from(u64::MAX) + 1,
            10u128.pow(19),
            10u128.pow(38),
            u128::MAX,
        ] {
            let mut s = String::new();
            write_u128(&mut s, v, 39, false, "f").unwrap();
            assert_eq!(s, format!("{v:039}"));
            assert!(
                matches!(read_uint(s.as_bytes(), false, u128::MAX), IntParse::Value(x) if x == v)
            );
        }
    }

    #[test]
    fn parse_rejects_non_digits_at_their_offset() {
        assert!(matches!(
            read_uint(b"12x4", false, u128::MAX),
            IntParse::BadByte(2)
        ));
        assert!(matches!(
            read_int(b"+123", false, -999, 999),
            IntParse::BadByte(0)
        ));
        assert!(matches!(
            read_uint(b"256", false, 255),
            IntParse::OutOfRange(_)
        ));
    }
}

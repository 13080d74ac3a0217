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
use crate::rules::{self, Rule};

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

/// Whether `v` has at most `digits` decimal digits.
#[inline]
fn fits_u64(v: u64, digits: u8) -> bool {
    v <= u64_limit(digits)
}

/// The largest `u64` that `digits` decimal digits hold.
#[inline]
pub(crate) const fn u64_limit(digits: u8) -> u64 {
    if digits >= 20 {
        u64::MAX
    } else {
        POW10[digits as usize] - 1
    }
}

/// The smallest and largest values an integer field holds: those of its type (`bits` bits,
/// `signed` or not) that `width` characters can write (see the module docs: `10^w - 1` unsigned,
/// `-10^(w-1)` to `10^(w-1) - 1` signed). No key holds a value outside them.
#[must_use]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn int_limits(signed: bool, bits: u8, width: u8) -> (i128, u128) {
    let shift = 128 - u32::from(bits.clamp(1, 128));
    // 10^digits, or `None` past `u128` (every value of the type fits).
    let pow10 = |digits: u8| 10u128.checked_pow(u32::from(digits));
    if signed {
        let (type_min, type_max) = (i128::MIN >> shift, i128::MAX >> shift);
        match pow10(width.saturating_sub(1)).and_then(|p| i128::try_from(p).ok()) {
            Some(p) => (type_min.max(-p), type_max.min(p - 1) as u128),
            None => (type_min, type_max as u128),
        }
    } else {
        let type_max = u128::MAX >> shift;
        (0, pow10(width).map_or(type_max, |p| type_max.min(p - 1)))
    }
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
#[cfg_attr(debug_assertions, inline)]
fn too_wide(field: &str, value: impl ToString, width: u8) -> Error {
    Error::ValueTooWide {
        field: field.to_owned(),
        value: value.to_string(),
        width,
    }
}

/// The eight ASCII digits of `x < 10^8`, most significant first, as a little-endian word: no
/// division loop, only multiplications by constants on lanes of one word (split into two halves
/// of four digits, each into two pairs, each pair into two digits), so that the digits of a field
/// do not wait on each other as a `% 100` chain does.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
const fn eight_ascii(x: u64) -> u64 {
    debug_assert!(x < 100_000_000);
    // Lanes of 32 bits: the high four digits in the low lane (they come first in the text).
    let halves = (x / 10_000) | ((x % 10_000) << 32);
    // Each lane / 100 (exact below 10^4 as `* 10486 >> 20`), into lanes of 16 bits.
    let high_pairs = ((halves * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = ((halves - 100 * high_pairs) << 16) | high_pairs;
    // Each lane / 10 (exact below 100 as `* 103 >> 10`), into lanes of 8 bits.
    let high_digits = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    let digits = ((pairs - 10 * high_digits) << 8) | high_digits;
    digits | 0x3030_3030_3030_3030
}

/// Nines' complement of eight ASCII digits at once: `b'9' - (d - b'0')` is `0x69 - d`, and no
/// byte borrows since each is `0x30..=0x39`.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
const fn complement_word(w: u64) -> u64 {
    0x6969_6969_6969_6969 - w
}

/// Appends `lead` (if any), then `v` in exactly `digits` decimal digits (nines' complement when
/// `complement`); `v` must fit. The digits come from at most three words of [`eight_ascii`], how
/// many depending on the width only, so with a constant width the code is straight-line; `lead`
/// takes the byte before the digits in the same buffer, so that both are one append.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn push_digits(bytes: &mut Vec<u8>, lead: Option<u8>, v: u64, digits: usize, complement: bool) {
    const E8: u64 = 100_000_000;
    debug_assert!(digits >= 20 || v < POW10[digits]);
    // Eight `0` digits: the words above the value's highest digit.
    const ZEROS: u64 = u64::from_le_bytes(*b"00000000");
    let mut buf = [ZEROS; 3];
    let words = digits.div_ceil(8).min(3);
    // Wide fields mostly hold values far below their width (ids and counters at 20 digits):
    // the words of their leading zeros are a constant, not three more multiplications each.
    if words == 1 || v < E8 {
        buf[2] = eight_ascii(v);
    } else {
        let high = v / E8;
        buf[2] = eight_ascii(v - high * E8);
        if words == 2 || high < E8 {
            buf[1] = eight_ascii(high);
        } else {
            // v < 1.9 * 10^19, so the top word holds at most 4 significant digits.
            let top = high / E8;
            buf[1] = eight_ascii(high - top * E8);
            buf[0] = eight_ascii(top);
        }
    }
    if complement {
        for w in &mut buf {
            *w = complement_word(*w);
        }
    }
    let mut text = [0u8; 24];
    for (chunk, w) in text.chunks_exact_mut(8).zip(buf) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    if digits < 24 {
        // Below 24 digits the byte before them is a spare `0` of the buffer: the lead's place.
        let from = match lead {
            Some(lead) => {
                text[23 - digits] = lead;
                23 - digits
            }
            None => 24 - digits,
        };
        bytes.extend_from_slice(&text[from..]);
        return;
    }
    if let Some(lead) = lead {
        bytes.push(lead);
    }
    if digits > 24 {
        // Widths above 24 (up to MAX_WIDTH) lead with more zeros (nines when complemented).
        let fill = if complement { b'9' } else { b'0' };
        bytes.resize(bytes.len() + digits - 24, fill);
    }
    bytes.extend_from_slice(&text);
}

/// Appends a fixed-width decimal field to `out`: `sign` (if any: a sign, or the delimiter before
/// a layout's field; ASCII), then `v` in `digits` digits (nines' complement when `complement`).
///
/// This is the hot path of every integer field, so it writes straight into the string's buffer:
/// going through `push_str` would validate the digits as UTF-8 again and copy them once more,
/// which measured 25% of a student-card key's encoding time.
#[cfg_attr(not(debug_assertions), inline(always))]
#[allow(unsafe_code)]
#[cfg_attr(debug_assertions, inline)]
fn push_decimal(out: &mut String, sign: Option<u8>, v: u64, digits: usize, complement: bool) {
    // SAFETY: `as_mut_vec` lets us break the UTF-8 invariant; we keep it. Every byte appended
    // below is an ASCII digit (from `eight_ascii`, its nines' complement, or the `0`/`9` fill
    // and scratch) or `sign`, which every caller passes ASCII (`-`, `0`, or a delimiter that
    // `push_u64_fitting_after` checked), so the string stays valid UTF-8 at every point, panics included (no code
    // other than this function's own runs while the vector is borrowed).
    let bytes = unsafe { out.as_mut_vec() };
    debug_assert!(sign.is_none_or(|sign| sign.is_ascii()));
    push_digits(bytes, sign, v, digits, complement);
}

/// Overwrites `out[at..at + bytes.len()]` with `bytes`, both ASCII: how a key's prefix replaces
/// its placeholder once the natural key is known, without `replace_range`'s splice machinery
/// (which measured 11% of encoding a hash-prefixed key).
///
/// # Panics
///
/// If either the bytes or the replaced text are not ASCII, or the range is out of bounds: callers
/// pass hex or decimal digits over a placeholder of `0`s they wrote themselves.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn overwrite_ascii(out: &mut String, at: usize, bytes: &[u8]) {
    let end = at + bytes.len();
    assert!(
        bytes.is_ascii() && out.as_bytes()[at..end].is_ascii(),
        "overwrite_ascii takes ASCII over ASCII"
    );
    // SAFETY: ASCII bytes replace ASCII bytes (checked just above), so every character boundary
    // stays where it was and the string stays valid UTF-8; nothing else runs while it is borrowed.
    let vec = unsafe { out.as_mut_vec() };
    vec[at..end].copy_from_slice(bytes);
}

/// Writes an unsigned integer of up to 64 bits.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write_u64(
    out: &mut String,
    v: u64,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    check_width(width, false, field)?;
    if !fits_u64(v, width) {
        return Err(too_wide(field, v, width));
    }
    push_decimal(out, None, v, usize::from(width), desc);
    Ok(())
}

/// Appends `v`, which must fit `width` digits (see [`u64_limit`]), at that width: the writer a
/// runtime layout calls once it has checked the value against its planned limit.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn push_u64_fitting(out: &mut String, v: u64, width: u8, desc: bool) {
    debug_assert!(fits_u64(v, width));
    push_decimal(out, None, v, usize::from(width), desc);
}

/// [`push_u64_fitting`] after the byte `lead` (a layout's delimiter), in one append.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn push_u64_fitting_after(out: &mut String, lead: u8, v: u64, width: u8, desc: bool) {
    debug_assert!(fits_u64(v, width));
    if lead.is_ascii() {
        push_decimal(out, Some(lead), v, usize::from(width), desc);
    } else {
        out.push(char::from(lead));
        push_decimal(out, None, v, usize::from(width), desc);
    }
}

/// The rule `width-range` at a writer: a spec built by hand may carry any width.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn check_width(width: u8, signed: bool, field: &str) -> Result<()> {
    match rules::check_int_width(width, rules::int_width_range(signed)) {
        Ok(()) => Ok(()),
        Err(rule) => Err(width_broken(field, rule)),
    }
}

#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn width_broken(field: &str, rule: Rule) -> Error {
    Error::broken(Some(field), rule)
}

/// Writes an unsigned 128-bit integer.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write_u128(
    out: &mut String,
    v: u128,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    check_width(width, false, field)?;
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
    check_width(width, true, field)?;
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
    push_decimal(
        out,
        Some(sign),
        magnitude,
        usize::from(digits),
        sign == b'-',
    );
    Ok(())
}

/// Writes a signed 128-bit integer.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn write_i128(
    out: &mut String,
    v: i128,
    width: u8,
    desc: bool,
    field: &str,
) -> Result<()> {
    check_width(width, true, field)?;
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

/// Whether all 8 bytes of `w` (little-endian) are ASCII digits: the high nibble is 3 and the low
/// nibble stays at most 9 after adding 6.
#[inline]
const fn all_digits(w: u64) -> bool {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    ((w & HIGH) | (((w.wrapping_add(0x0606_0606_0606_0606)) & HIGH) >> 4)) == 0x3333_3333_3333_3333
}

/// The value of 8 ASCII digits loaded little-endian (first digit in the low byte): pairs, then
/// quads, then the whole, each step one multiply (the SWAR method).
#[inline]
const fn eight_digits(w: u64) -> u64 {
    // Wrapping on purpose: the method keeps the bits it needs in the high half of each product,
    // and a word that is not all digits (rejected by the caller) must not panic either.
    let w = w.wrapping_sub(0x3030_3030_3030_3030);
    let w = w.wrapping_mul(10).wrapping_add(w >> 8);
    let pairs = w & 0x0000_00FF_0000_00FF;
    let high_pairs = (w >> 16) & 0x0000_00FF_0000_00FF;
    (pairs
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(high_pairs.wrapping_mul(1 + (10_000 << 32))))
        >> 32
}

/// Parses up to 20 digits (complemented when `desc`) into a `u64`: the fast path of decoding.
/// `None` for anything else (a non-digit, a longer field, an overflow); the caller then takes
/// the slow path, which says what is wrong.
///
/// Eight digits a step ([`eight_digits`]); a field of 8 digits or more takes its first
/// `len % 8` digits from its first word, shifted so that they become the last digits of a word
/// led by `0`s, rather than a digit at a time.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn parse_u64_fast(text: &[u8], desc: bool) -> Option<u64> {
    if text.len() > 20 {
        return None;
    }
    let head = text.len() % 8;
    let mut v: u64 = 0;
    let mut bad = false;
    if head != 0 && text.len() >= 8 {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&text[..8]);
        let shift = 8 * (8 - head) as u32;
        let w = (u64::from_le_bytes(bytes) << shift) | (0x3030_3030_3030_3030 >> (64 - shift));
        bad |= !all_digits(w);
        let head_value = eight_digits(w);
        // The complement of `head` digits is `10^head - 1 - value`; wrapping only for bad input.
        v = if desc {
            (POW10[head] - 1).wrapping_sub(head_value)
        } else {
            head_value
        };
    } else {
        // At most 7 digits: no overflow.
        for &b in &text[..head] {
            let d = b.wrapping_sub(b'0');
            bad |= d > 9;
            let d = if desc { 9u8.wrapping_sub(d) } else { d };
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        }
    }
    for chunk in text[head..].chunks_exact(8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let w = u64::from_le_bytes(bytes);
        bad |= !all_digits(w);
        // Nines' complement of every digit at once: no byte borrows, as each is 0x30..=0x39.
        let w = if desc {
            0x6969_6969_6969_6969u64.wrapping_sub(w)
        } else {
            w
        };
        v = v.checked_mul(100_000_000)?.checked_add(eight_digits(w))?;
    }
    if bad { None } else { Some(v) }
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
    fn int_limits_are_the_type_within_the_width() {
        assert_eq!(int_limits(false, 8, 3), (0, 255));
        assert_eq!(int_limits(false, 64, 2), (0, 99));
        assert_eq!(int_limits(false, 128, 39), (0, u128::MAX));
        assert_eq!(int_limits(true, 8, 4), (-128, 127));
        assert_eq!(int_limits(true, 32, 3), (-100, 99));
        assert_eq!(int_limits(true, 128, 40), (i128::MIN, i128::MAX as u128));
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
    fn eight_ascii_writes_every_digit() {
        let mut x: u64 = 0;
        while x < 100_000_000 {
            let want = format!("{x:08}");
            assert_eq!(&eight_ascii(x).to_le_bytes(), want.as_bytes(), "{x}");
            x += 9_973;
        }
        for x in [0, 9, 10, 99, 100, 9_999, 10_000, 12_345_678, 99_999_999] {
            assert_eq!(&eight_ascii(x).to_le_bytes(), format!("{x:08}").as_bytes());
        }
    }

    #[test]
    fn digits_at_every_width_match_format() {
        let values = [
            0u64,
            1,
            9,
            10,
            99_999_999,
            100_000_000,
            1_234_567_890_123,
            9_999_999_999_999_999,
            10_000_000_000_000_000,
            10_000_000_000_000_005,
            100_000_000_000_000_000,
            u64::MAX,
        ];
        for width in 1..=40u8 {
            for &v in &values {
                if !fits_u64(v, width) {
                    continue;
                }
                let w = usize::from(width);
                assert_eq!(u(v, width, false), format!("{v:0w$}"), "{v} at {width}");
                let nines: String = format!("{v:0w$}")
                    .bytes()
                    .map(|d| char::from(b'9' - (d - b'0')))
                    .collect();
                assert_eq!(u(v, width, true), nines, "{v} at {width}, descending");
            }
        }
    }

    #[test]
    fn fast_parse_agrees_with_the_slow_parse() {
        let cases: &[&[u8]] = &[
            b"0",
            b"7",
            b"42",
            b"00000054",
            b"123456789",
            b"18446744073709551615",
            b"18446744073709551616",
            b"99999999999999999999",
            b"00000000000000000000",
            b"1234567x",
            b"x2345678",
            b"12345678:",
            b"/2345678",
            b"123456789012",
            b"1234x6789012",
            b"x23456789012",
            b"123456789012345678",
            b"99999999999999999999",
            b"1844674407370955161x",
            b"/8446744073709551615",
        ];
        for &text in cases {
            for desc in [false, true] {
                let slow = match read_uint(text, desc, u128::from(u64::MAX)) {
                    IntParse::Value(v) => Some(v as u64),
                    _ => None,
                };
                assert_eq!(
                    parse_u64_fast(text, desc),
                    slow,
                    "{:?} desc={desc}",
                    std::str::from_utf8(text)
                );
            }
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

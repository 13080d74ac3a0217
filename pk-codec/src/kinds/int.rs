//! Signed integers (`i8`..`i128`, `isize`): `0` and the digits for v >= 0, `-` and the nines'
//! complement of |v| - 1 for v < 0, at the field's width (sign included); descending, the
//! ascending form of `-1 - v`. The digit arithmetic is `num.rs`'s.

use crate::bin_io::{self, BinReader, BinWriter};
use crate::error::Result;
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter, check_int_width};
use crate::num;
use crate::prefix::BucketValue;

use super::uint::out_of_range;
use super::{IntBits, Kind, Value};

impl KeyWriter<'_> {
    /// Writes a signed integer of up to 64 bits.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide) when it does not fit the spec's width.
    #[inline]
    pub fn int64(&mut self, spec: &FieldSpec, field: &str, v: i64) -> Result<()> {
        num::write_i64(self.out, v, spec.width(), spec.is_descending(), field)
    }

    /// Writes a signed 128-bit integer.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide) when it does not fit the spec's width.
    #[cfg_attr(debug_assertions, inline)]
    pub fn int128(&mut self, spec: &FieldSpec, field: &str, v: i128) -> Result<()> {
        num::write_i128(self.out, v, spec.width(), spec.is_descending(), field)
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a signed integer of up to 128 bits in `[min, max]`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short field, a bad sign, a non-digit or a value outside
    /// `[min, max]`.
    #[inline]
    pub fn int128(&mut self, spec: &FieldSpec, field: &str, min: i128, max: i128) -> Result<i128> {
        let start = self.pos;
        let width = usize::from(spec.width());
        if let Some(text) = self.key.as_bytes().get(start..start + width)
            && let Some((&sign, digits)) = text.split_first()
            // A sign without digits (width 1) is refused by the slow path (rule `width-range`).
            && !digits.is_empty()
            && (sign == b'0' || sign == b'-')
            && let Some(m) = num::parse_u64_fast(digits, sign == b'-')
        {
            // v = m for v >= 0, v = -(m + 1) for v < 0; then undo the descending `!v`.
            let v = if sign == b'-' {
                -i128::from(m) - 1
            } else {
                i128::from(m)
            };
            let v = if spec.is_descending() { !v } else { v };
            if v >= min && v <= max {
                self.pos += width;
                return Ok(v);
            }
        }
        self.int_slow(spec, field, min, max)
    }

    /// Reads a signed integer of up to 64 bits in `[min, max]`: [`KeyReader::int128`] for the
    /// types that fit an `i64`.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::int128`].
    #[inline]
    pub fn int64(&mut self, spec: &FieldSpec, field: &str, min: i64, max: i64) -> Result<i64> {
        // In `[min, max]`, so the value fits an `i64`.
        self.int128(spec, field, i128::from(min), i128::from(max))
            .map(|v| v as i64)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn int_slow(&mut self, spec: &FieldSpec, field: &str, min: i128, max: i128) -> Result<i128> {
        check_int_width(spec, true, field)?;
        let desc = spec.is_descending();
        self.slow_int(spec, field, |text| num::read_int(text, desc, min, max))
    }
}

super::uint::integer_field!(
    i8 => Int B8, int64 as i64, [MIN, MAX], int64 as i64, [];
    i16 => Int B16, int64 as i64, [MIN, MAX], int64 as i64, [];
    i32 => Int B32, int64 as i64, [MIN, MAX], int64 as i64, [];
    i64 => Int B64, int64 as i64, [MIN, MAX], int64 as i64, [];
    isize => Int B64, int64 as i64, [MIN, MAX], int64 as i64, [];
    i128 => Int B128, int128 as i128, [MIN, MAX], int as i128, [];
);

super::uint::value_from!(Int as i128: i8, i16, i32, i64, i128, isize);

/// The smallest and largest values of a signed integer of `bits` bits.
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn bounds(bits: IntBits) -> (i128, i128) {
    let bits = bits.get();
    if bits >= 128 {
        (i128::MIN, i128::MAX)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "an integer"
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn write_value(
    w: &mut KeyWriter<'_>,
    spec: &FieldSpec,
    field: &str,
    value: &Value,
) -> Result<bool> {
    let Kind::Int { bits } = spec.kind() else {
        return Ok(false);
    };
    let v = match *value {
        Value::Int(v) => v,
        Value::Uint(v) => i128::try_from(v).map_err(|_| out_of_range(spec, field, v))?,
        _ => return Ok(false),
    };
    let (min, max) = bounds(bits);
    if v < min || v > max {
        return Err(out_of_range(spec, field, v));
    }
    match i64::try_from(v) {
        Ok(small) if bits <= IntBits::B64 => w.int64(spec, field, small)?,
        _ => w.int128(spec, field, v)?,
    }
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value(r: &mut KeyReader<'_>, spec: &FieldSpec, field: &str) -> Result<Value> {
    let Kind::Int { bits } = spec.kind() else {
        unreachable!("dispatched by kind")
    };
    let (min, max) = bounds(bits);
    r.int128(spec, field, min, max).map(Value::Int)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    // Up to 18 characters every number fits an i64, parsed at a word's cost; past that, or on
    // an error, as an i128 (the same text).
    if text.len() <= 18
        && let Ok(n) = text.parse::<i64>()
    {
        return Ok(Value::Int(n.into()));
    }
    text.parse()
        .map(Value::Int)
        .map_err(|_| "an optional minus and digits")
}

// ---- The binary form: two's complement with the sign bit flipped, big-endian, in the fewest
// bytes that hold the field's range (its width's, or its type's when that is narrower: `i32
// width=4` takes 2 bytes, `i64` 8), inverted when descending; a value must fit the field's width
// as in the text form.

/// The bytes of a signed field in the binary form: the fewest whose two's complement holds
/// `-10^(width-1)..10^(width-1)` (a sign and `width - 1` digits), at most the type's
/// `type_bytes`, at least one.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn signed_bin_size(width: u8, type_bytes: usize) -> usize {
    let Some(m) = 10u128.checked_pow(width.saturating_sub(1) as u32) else {
        return type_bytes;
    };
    // 2^(8n - 1) >= m: 8n - 1 bits at least ceil(log2 m).
    let log2 = if m <= 1 {
        0
    } else {
        (128 - (m - 1).leading_zeros()) as usize
    };
    let n = (log2 + 1).div_ceil(8);
    if n > type_bytes {
        type_bytes
    } else if n == 0 {
        1
    } else {
        n
    }
}

impl BinWriter<'_> {
    /// Writes a signed integer in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide) when it does not fit the spec's width,
    /// as in the text form.
    #[inline]
    pub fn int(&mut self, spec: &FieldSpec, field: &str, v: i128) -> Result<()> {
        let Kind::Int { bits } = spec.kind() else {
            return Err(crate::error::Error::layout(
                Some(field),
                "not a signed integer field",
            ));
        };
        let (min, max) = bounds(bits);
        if !bin_io::fits_signed(v, spec.width()) || v < min || v > max {
            return Err(bin_io::too_wide(field, v, spec.width()));
        }
        let n = signed_bin_size(spec.width(), bits.get() as usize / 8);
        self.put_signed(v, n, spec.is_descending());
        Ok(())
    }
}

impl BinWriter<'_> {
    /// Writes a signed integer of up to 64 bits in the binary form: [`BinWriter::int`] without
    /// 128-bit arithmetic, for the types that fit an `i64`.
    ///
    /// # Errors
    ///
    /// As [`BinWriter::int`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, KeyShape};
    ///
    /// let spec = FieldSpec::of::<i16>();
    /// let mut key = Vec::new();
    /// KeyShape::default().encode_bytes_with(&mut key, |w| w.int64(&spec, "t", -1))?;
    /// assert_eq!(key, [0x7f, 0xff]); // the sign bit flipped: negatives sort first
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn int64(&mut self, spec: &FieldSpec, field: &str, v: i64) -> Result<()> {
        if let Kind::Int { bits } = spec.kind()
            && bits <= IntBits::B64
        {
            let (min, max) = bounds(bits);
            if (min..=max).contains(&i128::from(v)) && fits_width(v, spec.width()) {
                let n = signed_bin_size(spec.width(), bits.get() as usize / 8);
                let flipped = (v as u64) ^ (1u64 << (8 * n - 1));
                self.put(&flipped.to_be_bytes()[8 - n..], spec.is_descending());
                return Ok(());
            }
        }
        // What is wrong, or a 128-bit field: the general writer.
        self.int(spec, field, i128::from(v))
    }
}

/// Whether a field of `width` characters (a sign and `width - 1` digits) holds `v`: for
/// `v < 0`, `!v` is `|v| - 1`, which must have at most `width - 1` digits.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn fits_width(v: i64, width: u8) -> bool {
    let magnitude = if v < 0 { !v } else { v } as u64;
    magnitude <= num::u64_limit(width.saturating_sub(1))
}

impl BinReader<'_> {
    /// Reads a signed integer of up to 64 bits in the binary form: [`BinReader::int`] without
    /// 128-bit arithmetic.
    ///
    /// # Errors
    ///
    /// As [`BinReader::int`], and [`Error::Malformed`](crate::Error::Malformed) for a
    /// 128-bit field's value outside an `i64`.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, KeyShape};
    ///
    /// let spec = FieldSpec::of::<i16>().descending();
    /// let v = KeyShape::default().decode_bytes_with(&[0x80, 0x00], |r| r.int64(&spec, "t"))?;
    /// assert_eq!(v, -1);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn int64(&mut self, spec: &FieldSpec, field: &str) -> Result<i64> {
        if let Kind::Int { bits } = spec.kind()
            && bits <= IntBits::B64
        {
            let n = signed_bin_size(spec.width(), bits.get() as usize / 8);
            if let Some(bytes) = self.key.get(self.pos..self.pos + n) {
                let mut b = [0u8; 8];
                b[8 - n..].copy_from_slice(bytes);
                let mut u = u64::from_be_bytes(b);
                if spec.is_descending() {
                    u = !u & (u64::MAX >> (64 - 8 * n));
                }
                u ^= 1u64 << (8 * n - 1);
                // Sign-extended from its `8n` bits.
                let shift = 64 - 8 * n as u32;
                let v = ((u << shift) as i64) >> shift;
                if fits_width(v, spec.width()) {
                    self.pos += n;
                    return Ok(v);
                }
            }
        }
        // What is wrong: the general reader says it.
        let start = self.pos;
        let v = self.int(spec, field)?;
        i64::try_from(v).map_err(|_| {
            self.pos = start;
            Self::fault(field, start, format!("{v} is outside an i64"))
        })
    }

    /// Reads a signed integer in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short key or a value the field's width
    /// does not hold.
    #[inline]
    pub fn int(&mut self, spec: &FieldSpec, field: &str) -> Result<i128> {
        let Kind::Int { bits } = spec.kind() else {
            return Err(crate::error::Error::layout(
                Some(field),
                "not a signed integer field",
            ));
        };
        let start = self.pos;
        let n = signed_bin_size(spec.width(), bits.get() as usize / 8);
        let v = self.take_signed(field, n, spec.is_descending())?;
        if !bin_io::fits_signed(v, spec.width()) {
            self.pos = start;
            return Err(Self::fault(
                field,
                start,
                format!(
                    "value {v} does not fit the field's width of {} characters",
                    spec.width()
                ),
            ));
        }
        Ok(v)
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn write_value_bin(
    w: &mut BinWriter<'_>,
    spec: &FieldSpec,
    field: &str,
    value: &Value,
) -> Result<bool> {
    let v = match *value {
        Value::Int(v) => v,
        Value::Uint(v) => i128::try_from(v).map_err(|_| out_of_range(spec, field, v))?,
        _ => return Ok(false),
    };
    let Kind::Int { bits } = spec.kind() else {
        return Ok(false);
    };
    let (min, max) = bounds(bits);
    if v < min || v > max {
        return Err(out_of_range(spec, field, v));
    }
    w.int(spec, field, v)?;
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value_bin(
    r: &mut BinReader<'_>,
    spec: &FieldSpec,
    field: &str,
) -> Result<Value> {
    r.int(spec, field).map(Value::Int)
}

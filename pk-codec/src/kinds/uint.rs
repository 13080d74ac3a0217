//! Unsigned integers (`u8`..`u128`, `usize`): decimal digits zero-padded to the field's width;
//! descending, the nines' complement (`10^w - 1 - v`). The digit arithmetic is `num.rs`'s.

use crate::bin_io::{self, BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter, check_int_width, lead_uint_at};
use crate::num;
use crate::prefix::BucketValue;

use super::{IntBits, Kind, Value};

impl KeyWriter<'_> {
    /// Writes an unsigned integer of up to 64 bits.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide) when it does not fit the spec's width.
    #[inline]
    pub fn uint64(&mut self, spec: &FieldSpec, field: &str, v: u64) -> Result<()> {
        num::write_u64(self.out, v, spec.width(), spec.is_descending(), field)
    }

    /// Writes an unsigned 128-bit integer.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide) when it does not fit the spec's width.
    #[cfg_attr(debug_assertions, inline)]
    pub fn uint128(&mut self, spec: &FieldSpec, field: &str, v: u128) -> Result<()> {
        num::write_u128(self.out, v, spec.width(), spec.is_descending(), field)
    }
}

impl<'a> KeyReader<'a> {
    /// Reads an unsigned integer of up to 128 bits, at most `max`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short field, a non-digit or a value above `max`.
    #[inline]
    pub fn uint128(&mut self, spec: &FieldSpec, field: &str, max: u128) -> Result<u128> {
        let start = self.pos;
        let width = usize::from(spec.width());
        // Width 0 has no digits to read: the slow path refuses it (rule `width-range`).
        if width > 0
            && let Some(text) = self.key.as_bytes().get(start..start + width)
            && let Some(v) = num::parse_u64_fast(text, spec.is_descending())
            && u128::from(v) <= max
        {
            self.pos += width;
            return Ok(u128::from(v));
        }
        self.uint_slow(spec, field, max)
    }

    /// Reads an unsigned integer of up to 64 bits, at most `max`: [`KeyReader::uint128`] for the
    /// types that fit a `u64`, without 128-bit arithmetic on the way.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::uint128`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn uint64(&mut self, spec: &FieldSpec, field: &str, max: u64) -> Result<u64> {
        self.uint64_as(spec, field, max, spec.width(), spec.is_descending())
    }

    /// [`KeyReader::uint64`] with the width and order given apart from the spec, so that a caller
    /// with constants gets straight-line code (the spec still names the kind in messages).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn uint64_as(
        &mut self,
        spec: &FieldSpec,
        field: &str,
        max: u64,
        width: u8,
        desc: bool,
    ) -> Result<u64> {
        if let Some(v) = self.uint64_fast(max, width, desc) {
            return Ok(v);
        }
        // Any failure: the slow path says what is wrong (its value, if any, is at most `max`).
        self.uint_slow(spec, field, u128::from(max))
            .map(|v| v as u64)
    }

    /// The fast path of [`KeyReader::uint64_as`]: the value when the next `width` bytes are
    /// its digits and it is at most `max`, consuming them; `None`, consuming nothing, otherwise.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn uint64_fast(&mut self, max: u64, width: u8, desc: bool) -> Option<u64> {
        let start = self.pos;
        let width = usize::from(width);
        // Width 0 has no digits to read: the slow path refuses it (rule `width-range`).
        if width == 0 {
            return None;
        }
        let text = self.key.as_bytes().get(start..start + width)?;
        let v = num::parse_u64_fast(text, desc).filter(|&v| v <= max)?;
        self.pos += width;
        Some(v)
    }

    /// [`KeyReader::uint64_fast`] for a runtime layout, which tracks the fields itself: when
    /// `LEAD`, the field's delimiter first (what [`KeyReader::begin_field`] expects of every
    /// field but the first); the field is counted as begun. When it declines it consumes nothing,
    /// delimiter included, and counts nothing: `begin_field` and the general reader then say what
    /// is wrong.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn lead_uint64_fast<const LEAD: bool>(
        &mut self,
        max: u64,
        width: u8,
        desc: bool,
    ) -> Option<u64> {
        let (v, end) = lead_uint_at::<LEAD>(self.key, self.pos, self.delimiter, max, width, desc)?;
        self.pos = end;
        self.fields += 1;
        Some(v)
    }

    /// What the integer fast paths declined: a value wider than 64 bits, or what is wrong.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn uint_slow(&mut self, spec: &FieldSpec, field: &str, max: u128) -> Result<u128> {
        check_int_width(spec, false, field)?;
        let desc = spec.is_descending();
        self.slow_int(spec, field, |text| num::read_uint(text, desc, max))
    }
}

/// Integer fields: the kind, the writer and reader method (the same name on both sides) and its
/// width, and the bounds the reader checks (`MAX` for unsigned types, `MIN, MAX` for signed); then
/// the same for the binary form (`uint`, `int`), whose reader of unsigned types takes `MAX` (a
/// signed type's binary form holds nothing outside it).
macro_rules! integer_field {
    ($($t:ty => $kind:ident $bits:ident, $method:ident as $wide:ty, [$($bound:ident),+],
        $bin:ident as $bin_wide:ty, [$($bin_bound:ident),*]);* $(;)?) => {$(
        impl KeyField for $t {
            const KIND: Kind = Kind::$kind { bits: IntBits::$bits };
            #[inline]
            fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
                w.$method(spec, field, *self as $wide)
            }
            #[inline]
            fn encode_field_binary(&self, spec: &FieldSpec, field: &str, w: &mut BinWriter<'_>) -> Result<()> {
                w.$bin(spec, field, *self as $bin_wide)
            }
            #[inline]
            fn bucket_value(&self) -> Option<BucketValue> {
                Some(BucketValue::from(*self))
            }
        }
        impl DecodeField for $t {
            #[inline]
            fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
                Ok(r.$method(spec, field, $(<$t>::$bound as $wide),+)? as $t)
            }
            #[inline]
            fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
                Ok(r.$bin(spec, field $(, <$t>::$bin_bound as $bin_wide)*)? as $t)
            }
        }
    )*};
}
pub(super) use integer_field;
integer_field!(
    u8 => Uint B8, uint64 as u64, [MAX], uint64 as u64, [MAX];
    u16 => Uint B16, uint64 as u64, [MAX], uint64 as u64, [MAX];
    u32 => Uint B32, uint64 as u64, [MAX], uint64 as u64, [MAX];
    u64 => Uint B64, uint64 as u64, [MAX], uint64 as u64, [MAX];
    usize => Uint B64, uint64 as u64, [MAX], uint64 as u64, [MAX];
    u128 => Uint B128, uint128 as u128, [MAX], uint as u128, [MAX];
);

macro_rules! value_from {
    ($variant:ident as $wide:ty: $($t:ty),*) => {$(
        impl From<$t> for Value {
            #[cfg_attr(debug_assertions, inline)]
            fn from(v: $t) -> Self {
                Self::$variant(v as $wide)
            }
        }
    )*};
}
pub(super) use value_from;
value_from!(Uint as u128: u8, u16, u32, u64, u128, usize);

/// The largest value of an unsigned integer of `bits` bits.
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn max(bits: IntBits) -> u128 {
    let bits = bits.get();
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// A value out of a field's type.
#[cold]
#[cfg_attr(debug_assertions, inline)]
pub(super) fn out_of_range(spec: &FieldSpec, field: &str, value: impl ToString) -> Error {
    Error::ValueOutOfRange {
        field: field.to_owned(),
        value: value.to_string(),
        ty: spec.kind().name(),
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
    let Kind::Uint { bits } = spec.kind() else {
        return Ok(false);
    };
    let v = match *value {
        Value::Uint(v) => v,
        Value::Int(v) => u128::try_from(v).map_err(|_| out_of_range(spec, field, v))?,
        _ => return Ok(false),
    };
    if v > max(bits) {
        return Err(out_of_range(spec, field, v));
    }
    match u64::try_from(v) {
        Ok(small) if bits <= IntBits::B64 => w.uint64(spec, field, small)?,
        _ => w.uint128(spec, field, v)?,
    }
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value(r: &mut KeyReader<'_>, spec: &FieldSpec, field: &str) -> Result<Value> {
    let Kind::Uint { bits } = spec.kind() else {
        unreachable!("dispatched by kind")
    };
    r.uint128(spec, field, max(bits)).map(Value::Uint)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    // Up to 19 characters every number fits a u64, parsed at a word's cost (a dump's columns
    // are read this way row after row); past that, or on an error, as a u128 (the same text).
    if text.len() <= 19
        && let Ok(n) = text.parse::<u64>()
    {
        return Ok(Value::Uint(n.into()));
    }
    text.parse().map(Value::Uint).map_err(|_| "digits only")
}

// ---- The binary form: big-endian in the fewest bytes that hold the field's widest value (its
// width's digits, or its type's maximum when that is lower: `u32 width=6` takes 3 bytes, `u64` 8),
// inverted when descending; a value must fit the field's width as in the text form.

/// The bytes of an unsigned field of `bits` bits in the binary form: the fewest that hold the
/// largest value its width and its type both allow, at least one.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn bin_size(spec: &FieldSpec, bits: IntBits) -> usize {
    let type_max = max(bits);
    let limit = match 10u128.checked_pow(spec.width() as u32) {
        Some(p) if p - 1 < type_max => p - 1,
        _ => type_max,
    };
    let used = (128 - limit.leading_zeros()) as usize;
    if used == 0 { 1 } else { used.div_ceil(8) }
}

/// The `n` low bytes set: what inverting an `n`-byte field flips.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn byte_mask(n: usize) -> u128 {
    if n >= 16 {
        u128::MAX
    } else {
        (1u128 << (8 * n)) - 1
    }
}

impl BinWriter<'_> {
    /// Writes an unsigned integer in the binary form (see [`Kind`]'s binary table).
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide) when it does not fit the spec's width,
    /// as in the text form.
    #[inline]
    pub fn uint(&mut self, spec: &FieldSpec, field: &str, v: u128) -> Result<()> {
        let Kind::Uint { bits } = spec.kind() else {
            return Err(crate::error::Error::layout(
                Some(field),
                "not an unsigned integer field",
            ));
        };
        if !bin_io::fits_unsigned(v, spec.width()) || v > max(bits) {
            return Err(bin_io::too_wide(field, v, spec.width()));
        }
        let n = bin_size(spec, bits);
        self.put(&v.to_be_bytes()[16 - n..], spec.is_descending());
        Ok(())
    }
}

impl BinWriter<'_> {
    /// Writes an unsigned integer of up to 64 bits in the binary form: [`BinWriter::uint`]
    /// without 128-bit arithmetic, for the types that fit a `u64` (what derived keys call, so
    /// that a field with a constant spec is a few instructions).
    ///
    /// # Errors
    ///
    /// As [`BinWriter::uint`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, KeyShape};
    ///
    /// let spec = FieldSpec::of::<u32>().with_width(6).descending();
    /// let mut key = Vec::new();
    /// KeyShape::default().encode_bytes_with(&mut key, |w| w.uint64(&spec, "device_id", 54))?;
    /// assert_eq!(key, [0xff, 0xff, !54]); // 999,999 fits 3 bytes: a field of 6 digits takes 3
    /// let too_wide = KeyShape::default().encode_bytes_with(&mut key, |w| w.uint64(&spec, "device_id", 1_000_000));
    /// assert!(matches!(too_wide, Err(pk_codec::Error::ValueTooWide { .. })));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn uint64(&mut self, spec: &FieldSpec, field: &str, v: u64) -> Result<()> {
        match spec.kind() {
            Kind::Uint { bits }
                if bits <= IntBits::B64
                    && v <= num::u64_limit(spec.width())
                    && u128::from(v) <= max(bits) =>
            {
                let n = bin_size(spec, bits);
                self.put(&v.to_be_bytes()[8 - n..], spec.is_descending());
                Ok(())
            }
            // What is wrong, or a 128-bit field: the general writer.
            _ => self.uint(spec, field, u128::from(v)),
        }
    }
}

impl BinReader<'_> {
    /// Reads an unsigned integer of up to 64 bits, at most `max`, in the binary form:
    /// [`BinReader::uint`] without 128-bit arithmetic.
    ///
    /// # Errors
    ///
    /// As [`BinReader::uint`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, KeyShape};
    ///
    /// let spec = FieldSpec::of::<u32>().with_width(6);
    /// let v = KeyShape::default().decode_bytes_with(&[0, 0, 54], |r| r.uint64(&spec, "device_id", u32::MAX.into()))?;
    /// assert_eq!(v, 54);
    /// // 1,000,000 is a u32, but not one a field of 6 digits holds:
    /// let bad = KeyShape::default().decode_bytes_with(&1_000_000u32.to_be_bytes()[1..], |r| r.uint64(&spec, "device_id", u32::MAX.into()));
    /// assert!(bad.unwrap_err().to_string().contains("device_id"));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn uint64(&mut self, spec: &FieldSpec, field: &str, max: u64) -> Result<u64> {
        if let Kind::Uint { bits } = spec.kind()
            && bits <= IntBits::B64
        {
            let n = bin_size(spec, bits);
            if let Some(bytes) = self.key.get(self.pos..self.pos + n) {
                let mut b = [0u8; 8];
                b[8 - n..].copy_from_slice(bytes);
                let mut v = u64::from_be_bytes(b);
                if spec.is_descending() {
                    v = !v & (byte_mask(n) as u64);
                }
                if v <= max && v <= num::u64_limit(spec.width()) {
                    self.pos += n;
                    return Ok(v);
                }
            }
        }
        // What is wrong: the general reader says it (a value it answers is at most `max`).
        self.uint(spec, field, u128::from(max)).map(|v| v as u64)
    }

    /// Reads an unsigned integer in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short key or a value the field's width
    /// (or `max`) does not hold, which no key of the layout has.
    #[inline]
    pub fn uint(&mut self, spec: &FieldSpec, field: &str, max: u128) -> Result<u128> {
        let Kind::Uint { bits } = spec.kind() else {
            return Err(crate::error::Error::layout(
                Some(field),
                "not an unsigned integer field",
            ));
        };
        let start = self.pos;
        let mut bytes = [0u8; 16];
        let n = bin_size(spec, bits);
        bytes[16 - n..].copy_from_slice(self.take(field, n)?);
        let mut v = u128::from_be_bytes(bytes);
        if spec.is_descending() {
            v = !v & byte_mask(n);
        }
        if !bin_io::fits_unsigned(v, spec.width()) || v > max {
            self.pos = start;
            return Err(Self::fault(
                field,
                start,
                format!(
                    "value {v} does not fit the field's width of {} digits",
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
        Value::Uint(v) => v,
        Value::Int(v) => u128::try_from(v).map_err(|_| out_of_range(spec, field, v))?,
        _ => return Ok(false),
    };
    let Kind::Uint { bits } = spec.kind() else {
        return Ok(false);
    };
    if v > max(bits) {
        return Err(out_of_range(spec, field, v));
    }
    w.uint(spec, field, v)?;
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value_bin(
    r: &mut BinReader<'_>,
    spec: &FieldSpec,
    field: &str,
) -> Result<Value> {
    let Kind::Uint { bits } = spec.kind() else {
        unreachable!("dispatched by kind")
    };
    r.uint(spec, field, max(bits)).map(Value::Uint)
}

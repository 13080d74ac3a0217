//! Floating-point fields (`f32`, `f64`): IEEE 754 total order as fixed-width hex.
//!
//! The bits are mapped so that their unsigned order is [`f64::total_cmp`]'s order (negative NaN,
//! -inf, ..., -0.0, +0.0, ..., +inf, NaN): a negative number has all its bits inverted, a
//! positive one its sign bit set. The result is written as lower-case hex, 8 characters for an
//! `f32` and 16 for an `f64` (inverted, digit by digit, when descending). Every bit pattern
//! round-trips, NaN payloads included.

use crate::bin_io::{BinReader, BinWriter};
use crate::error::Result;
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::text;

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes an `f32` (total order; 8 hex digits).
    #[inline]
    pub fn f32(&mut self, spec: &FieldSpec, field: &str, v: f32) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let k = f32_key(v);
        let k = if spec.is_descending() { !k } else { k };
        text::write_hex(self.out, &k.to_be_bytes());
    }

    /// Writes an `f64` (total order; 16 hex digits).
    #[inline]
    pub fn f64(&mut self, spec: &FieldSpec, field: &str, v: f64) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let k = f64_key(v);
        let k = if spec.is_descending() { !k } else { k };
        text::write_hex(self.out, &k.to_be_bytes());
    }
}

impl<'a> KeyReader<'a> {
    /// Reads an `f32`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the next 8 bytes are lower-case hex.
    #[cfg_attr(debug_assertions, inline)]
    pub fn f32(&mut self, spec: &FieldSpec, field: &str) -> Result<f32> {
        let k = self.fixed_hex(field, 8)? as u32;
        Ok(f32_from_key(if spec.is_descending() { !k } else { k }))
    }

    /// Reads an `f64`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the next 16 bytes are lower-case hex.
    #[cfg_attr(debug_assertions, inline)]
    pub fn f64(&mut self, spec: &FieldSpec, field: &str) -> Result<f64> {
        let k = self.fixed_hex(field, 16)? as u64;
        Ok(f64_from_key(if spec.is_descending() { !k } else { k }))
    }
}

/// The order-preserving image of an `f64`'s bits.
#[inline]
const fn f64_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// The `f64` whose order-preserving image is `k`.
#[inline]
const fn f64_from_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The order-preserving image of an `f32`'s bits.
#[inline]
const fn f32_key(v: f32) -> u32 {
    let b = v.to_bits();
    if b >> 31 == 1 { !b } else { b | (1 << 31) }
}

/// The `f32` whose order-preserving image is `k`.
#[inline]
const fn f32_from_key(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

copy_field!(f32 => Kind::F32, f32; f64 => Kind::F64, f64);

impl From<f32> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: f32) -> Self {
        Self::F32(v)
    }
}

impl From<f64> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: f64) -> Self {
        Self::F64(v)
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(kind: Kind) -> &'static str {
    match kind {
        Kind::F32 => "an f32",
        _ => "an f64",
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn write_value(
    w: &mut KeyWriter<'_>,
    spec: &FieldSpec,
    field: &str,
    value: &Value,
) -> Result<bool> {
    match (spec.kind(), value) {
        (Kind::F32, Value::F32(v)) => w.f32(spec, field, *v),
        (Kind::F64, Value::F64(v)) => w.f64(spec, field, *v),
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value(r: &mut KeyReader<'_>, spec: &FieldSpec, field: &str) -> Result<Value> {
    if spec.kind() == Kind::F32 {
        r.f32(spec, field).map(Value::F32)
    } else {
        r.f64(spec, field).map(Value::F64)
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(spec: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    if spec.kind() == Kind::F32 {
        parse_float(text).map(Value::F32)
    } else {
        parse_float(text).map(Value::F64)
    }
}

/// A float type `pk` reads: [`float`] for both widths.
trait Float: std::str::FromStr {
    /// The float of these bits in hex, when they are a NaN's.
    fn nan_of_hex(hex: &str) -> Option<Self>;
    /// Whether it is an infinity.
    fn is_infinite(&self) -> bool;
}

macro_rules! float_of_bits {
    ($($f:ty = $bits:ty),*) => {$(
        impl Float for $f {
            #[cfg_attr(debug_assertions, inline)]
            fn nan_of_hex(hex: &str) -> Option<Self> {
                <$bits>::from_str_radix(hex, 16)
                    .ok()
                    .map(<$f>::from_bits)
                    .filter(|f| f.is_nan())
            }
            #[cfg_attr(debug_assertions, inline)]
            fn is_infinite(&self) -> bool {
                <$f>::is_infinite(*self)
            }
        }
    )*};
}
float_of_bits!(f32 = u32, f64 = u64);

/// A float of `text`: a number, `inf`, `NaN` and the like, or a NaN written by its bits,
/// `NaN:0x<hex>` (what `pk`'s JSON prints of a NaN with a payload of its own; only a NaN's
/// bits are taken). A number too large for the type (which the parser rounds to infinity) is
/// refused: only an infinity written as one (`inf`, `-infinity`) is infinite.
fn parse_float<F: Float>(text: &str) -> Result<F, &'static str> {
    match text.strip_prefix("NaN:0x") {
        // Hex digits only: `from_str_radix` would take a `+` too.
        Some(hex) => hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| F::nan_of_hex(hex))
            .flatten()
            .ok_or("a NaN's bits in hex (NaN:0x7ff8000000000001), a NaN"),
        None => {
            let f: F = text.parse().map_err(|_| "a number")?;
            let word = text.trim_start_matches(['+', '-']);
            let infinity =
                word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity");
            if f.is_infinite() && !infinity {
                return Err("a number within the type's range; infinities are written inf or -inf");
            }
            Ok(f)
        }
    }
}

// ---- The binary form: the total-order image of the bits, big-endian (4 / 8 bytes), inverted
// when descending.

impl BinWriter<'_> {
    /// Writes an `f32` in the binary form.
    #[inline]
    pub fn f32(&mut self, spec: &FieldSpec, field: &str, v: f32) {
        let _ = field;
        self.put(&f32_key(v).to_be_bytes(), spec.is_descending());
    }

    /// Writes an `f64` in the binary form.
    #[inline]
    pub fn f64(&mut self, spec: &FieldSpec, field: &str, v: f64) {
        let _ = field;
        self.put(&f64_key(v).to_be_bytes(), spec.is_descending());
    }
}

impl BinReader<'_> {
    /// Reads an `f32` in the binary form (every 4 bytes are one).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short key.
    #[cfg_attr(debug_assertions, inline)]
    pub fn f32(&mut self, spec: &FieldSpec, field: &str) -> Result<f32> {
        Ok(f32_from_key(u32::from_be_bytes(
            self.take_array(field, spec.is_descending())?,
        )))
    }

    /// Reads an `f64` in the binary form (every 8 bytes are one).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short key.
    #[cfg_attr(debug_assertions, inline)]
    pub fn f64(&mut self, spec: &FieldSpec, field: &str) -> Result<f64> {
        Ok(f64_from_key(u64::from_be_bytes(
            self.take_array(field, spec.is_descending())?,
        )))
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn write_value_bin(
    w: &mut BinWriter<'_>,
    spec: &FieldSpec,
    field: &str,
    value: &Value,
) -> Result<bool> {
    match (spec.kind(), value) {
        (Kind::F32, Value::F32(v)) => w.f32(spec, field, *v),
        (Kind::F64, Value::F64(v)) => w.f64(spec, field, *v),
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value_bin(
    r: &mut BinReader<'_>,
    spec: &FieldSpec,
    field: &str,
) -> Result<Value> {
    if spec.kind() == Kind::F32 {
        r.f32(spec, field).map(Value::F32)
    } else {
        r.f64(spec, field).map(Value::F64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_orders_as_total_cmp() {
        let values = [
            f64::from_bits(0xfff8_0000_0000_0001), // a negative NaN
            f64::NEG_INFINITY,
            f64::MIN,
            -1.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::from_bits(1),
            1.0,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in values.windows(2) {
            assert_eq!(w[0].total_cmp(&w[1]), f64_key(w[0]).cmp(&f64_key(w[1])));
            assert!(f64_key(w[0]) < f64_key(w[1]), "{} < {}", w[0], w[1]);
        }
        for v in values {
            assert_eq!(f64_from_key(f64_key(v)).to_bits(), v.to_bits());
            let s = v as f32;
            assert_eq!(f32_from_key(f32_key(s)).to_bits(), s.to_bits());
        }
    }
}

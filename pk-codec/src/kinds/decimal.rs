//! Decimals (`decimal scale=s`): exact quantities such as money, as keys.
//!
//! A value `v` is written as its units, `v × 10^s` (an `i128`), in the signed integer form at the
//! field's width (`0` and the digits for units ≥ 0; `-` and the nines' complement of
//! |units| - 1 below zero), with a `.` before the last `s` digits, so that the key reads as the
//! number: `12.34` in a field of width 8 and scale 2 is `000012.34`, `-0.01` is `-99999.99`.
//! The point sits at the same place in every key of the field, so byte order is the order of
//! the units, which is the order of the numbers. Descending fields write the ascending form of
//! `-1 - units`, as signed integers do. The width counts the sign and the digits, not the point.
//!
//! A value with more digits after the point than the field's scale is refused, never rounded
//! (`12.345` in a field of scale 2): two values would otherwise share a key. Trailing zeros are
//! not digits of the number (`12.340` is `12.34`).
//!
//! Values come from [`Decimal`], from integers, from text (`"-12.30"`, in a spec's values and on
//! `pk`'s command line) and, behind the `rust_decimal` feature, from `rust_decimal::Decimal`.
//!
//! ```
//! use pk_codec::{Decimal, Layout, Value};
//!
//! let layout: Layout = "account: u32 width=4; amount: decimal width=8 scale=2".parse()?;
//! let key = layout.encode(&[Value::from(7u32), Value::Decimal("-12.5".parse()?)])?;
//! assert_eq!(key, "0007,-99987.50");
//! # let _ = key;
//! let keys: Vec<String> = ["-3.10", "-0.01", "0", "0.01", "12.34", "99999.99"]
//!     .iter()
//!     .map(|a| layout.encode(&[Value::from(7u32), Value::Decimal(a.parse().unwrap())]).unwrap())
//!     .collect();
//! assert!(keys.windows(2).all(|w| w[0] < w[1]));
//! assert!(layout.encode(&[Value::from(7u32), Value::Decimal("1.005".parse()?)]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use crate::bin_io::{self, BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::num::{self, IntParse};

use super::{Decimal, Kind, Value};

/// 10^n for n up to [`Decimal::MAX_SCALE`].
#[cfg_attr(debug_assertions, inline)]
const fn pow10(n: u8) -> i128 {
    10i128.pow(n as u32)
}

impl Decimal {
    /// The most digits after the point: 10^38 is the largest power of ten an `i128` holds.
    pub const MAX_SCALE: u8 = 38;

    /// The decimal `units × 10^-scale`, if `scale` is at most [`Decimal::MAX_SCALE`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Decimal;
    ///
    /// assert_eq!(Decimal::new(1234, 2).unwrap().to_string(), "12.34");
    /// assert!(Decimal::new(1, 39).is_none());
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn new(units: i128, scale: u8) -> Option<Self> {
        if scale > Self::MAX_SCALE {
            None
        } else {
            Some(Self { units, scale })
        }
    }

    /// The number in units of `10^-scale`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn units(self) -> i128 {
        self.units
    }

    /// The digits after the point.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn scale(self) -> u8 {
        self.scale
    }

    /// The same number with `scale` digits after the point, if that is exact: `None` when it
    /// would drop a digit that is not zero, or when the units overflow an `i128`.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Decimal;
    ///
    /// let d = Decimal::new(1230, 3).unwrap(); // 1.230
    /// assert_eq!(d.rescale(2).map(|d| d.units()), Some(123));
    /// assert_eq!(d.rescale(1), None); // 1.23 has two digits after the point
    /// assert_eq!(d.rescale(5).map(|d| d.units()), Some(123_000));
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn rescale(self, scale: u8) -> Option<Self> {
        if scale > Self::MAX_SCALE {
            return None;
        }
        if scale >= self.scale {
            match self.units.checked_mul(pow10(scale - self.scale)) {
                Some(units) => Some(Self { units, scale }),
                None => None,
            }
        } else {
            let unit = pow10(self.scale - scale);
            if self.units % unit == 0 {
                Some(Self {
                    units: self.units / unit,
                    scale,
                })
            } else {
                None
            }
        }
    }

    /// The same number without trailing zeros after the point: the one form of each number,
    /// which equality and hashing use.
    #[cfg_attr(debug_assertions, inline)]
    const fn normalized(self) -> Self {
        let mut d = self;
        while d.scale > 0 && d.units % 10 == 0 {
            d.units /= 10;
            d.scale -= 1;
        }
        d
    }
}

impl Ord for Decimal {
    #[cfg_attr(debug_assertions, inline)]
    fn cmp(&self, other: &Self) -> Ordering {
        // Whole parts first (truncated toward zero: equal whole parts have the same sign unless
        // one is zero, where the fractions' signs decide), then the fractions at a common scale,
        // each below 10^38 in magnitude there.
        let (a_whole, a_frac) = (
            self.units / pow10(self.scale),
            self.units % pow10(self.scale),
        );
        let (b_whole, b_frac) = (
            other.units / pow10(other.scale),
            other.units % pow10(other.scale),
        );
        let scale = self.scale.max(other.scale);
        a_whole.cmp(&b_whole).then_with(|| {
            (a_frac * pow10(scale - self.scale)).cmp(&(b_frac * pow10(scale - other.scale)))
        })
    }
}

impl PartialOrd for Decimal {
    #[cfg_attr(debug_assertions, inline)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Decimal {
    #[cfg_attr(debug_assertions, inline)]
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl Hash for Decimal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let d = self.normalized();
        d.units.hash(state);
        d.scale.hash(state);
    }
}

/// The number with exactly its scale's digits after the point: `-12.30`, `7`.
impl fmt::Display for Decimal {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.units < 0 { "-" } else { "" };
        let digits = self.units.unsigned_abs().to_string();
        let scale = usize::from(self.scale);
        if scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        let digits = format!("{digits:0>width$}", width = scale + 1);
        let (whole, frac) = digits.split_at(digits.len() - scale);
        write!(f, "{sign}{whole}.{frac}")
    }
}

/// Text that is not a decimal number: what [`Decimal`]'s `FromStr` refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecimalError(&'static str);

impl fmt::Display for DecimalError {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for DecimalError {}

/// Digits with an optional sign and an optional point: `12`, `-0.50`, `+3.`, `.5`; at most
/// [`Decimal::MAX_SCALE`] digits after the point; no exponent, no spaces.
impl FromStr for Decimal {
    type Err = DecimalError;

    #[cfg_attr(debug_assertions, inline)]
    fn from_str(text: &str) -> Result<Self, DecimalError> {
        const WHAT: &str = "a decimal number: digits with an optional sign and point (-12.30)";
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (whole, frac) = rest.split_once('.').unwrap_or((rest, ""));
        if whole.is_empty() && frac.is_empty()
            || !whole
                .bytes()
                .chain(frac.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return Err(DecimalError(WHAT));
        }
        let scale = u8::try_from(frac.len())
            .ok()
            .filter(|&s| s <= Self::MAX_SCALE)
            .ok_or(DecimalError(
                "a decimal number with at most 38 digits after the point",
            ))?;
        // Counted toward the sign, so that i128::MIN, which Display writes, reads back.
        let mut units: i128 = 0;
        for b in whole.bytes().chain(frac.bytes()) {
            let digit = i128::from(b - b'0');
            units = units
                .checked_mul(10)
                .and_then(|u| {
                    if negative {
                        u.checked_sub(digit)
                    } else {
                        u.checked_add(digit)
                    }
                })
                .ok_or(DecimalError(
                    "a decimal number whose digits fit an i128 (at most 38 of them)",
                ))?;
        }
        Ok(Self { units, scale })
    }
}

impl From<Decimal> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: Decimal) -> Self {
        Self::Decimal(v)
    }
}

#[cfg(feature = "rust_decimal")]
impl From<rust_decimal::Decimal> for Decimal {
    /// Exact: rust_decimal's 96-bit mantissa and scale of at most 28 always fit.
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: rust_decimal::Decimal) -> Self {
        Self {
            units: v.mantissa(),
            // At most 28 (rust_decimal's MAX_SCALE).
            scale: v.scale() as u8,
        }
    }
}

#[cfg(feature = "rust_decimal")]
impl From<rust_decimal::Decimal> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: rust_decimal::Decimal) -> Self {
        Self::Decimal(v.into())
    }
}

/// Exact or refused: a number whose units need more than rust_decimal's 96 bits, or a scale
/// above its 28, has no `rust_decimal::Decimal`.
///
/// ```
/// # #[cfg(feature = "rust_decimal")] {
/// use pk_codec::Decimal;
///
/// let d: Decimal = "-12.30".parse().unwrap();
/// let r = rust_decimal::Decimal::try_from(d).unwrap();
/// assert_eq!(r.to_string(), "-12.30");
/// assert_eq!(Decimal::from(r), d);
/// # }
/// ```
#[cfg(feature = "rust_decimal")]
impl TryFrom<Decimal> for rust_decimal::Decimal {
    type Error = DecimalError;

    #[cfg_attr(debug_assertions, inline)]
    fn try_from(v: Decimal) -> Result<Self, DecimalError> {
        Self::try_from_i128_with_scale(v.units, u32::from(v.scale)).map_err(|_| {
            DecimalError(
                "a decimal rust_decimal holds (96-bit units, at most 28 digits after the point)",
            )
        })
    }
}

/// `v`'s units at the field's scale, in either form.
///
/// # Errors
///
/// [`Error::ValueOutOfRange`] when `v` has more digits after the point than the scale (never
/// rounded) or its units at the scale overflow an `i128`.
#[cfg_attr(debug_assertions, inline)]
fn at_scale(spec: &FieldSpec, field: &str, v: Decimal) -> Result<i128> {
    let scale = scale_of(spec);
    match v.rescale(scale) {
        Some(d) => Ok(d.units),
        None => Err(Error::ValueOutOfRange {
            field: field.to_owned(),
            value: v.to_string(),
            ty: if v.normalized().scale > scale {
                "the field's scale: it has more digits after the point, and values are never rounded"
            } else {
                "a decimal of 38 digits at the field's scale"
            },
        }),
    }
}

/// The decimal of a value a decimal field takes (a decimal or an integer); `None` for others.
#[cfg_attr(debug_assertions, inline)]
fn decimal_of(field: &str, value: &Value) -> Result<Option<Decimal>> {
    Ok(Some(match *value {
        Value::Decimal(d) => d,
        Value::Int(units) => Decimal { units, scale: 0 },
        Value::Uint(units) => match i128::try_from(units) {
            Ok(units) => Decimal { units, scale: 0 },
            Err(_) => {
                return Err(Error::ValueOutOfRange {
                    field: field.to_owned(),
                    value: units.to_string(),
                    ty: "a decimal's i128 units",
                });
            }
        },
        _ => return Ok(None),
    }))
}

/// The field's scale.
#[cfg_attr(debug_assertions, inline)]
const fn scale_of(spec: &FieldSpec) -> u8 {
    match spec.kind() {
        Kind::Decimal { scale } => scale,
        _ => 0,
    }
}

impl KeyWriter<'_> {
    /// Writes a decimal at the field's scale (see the [`Kind::Decimal`] form).
    ///
    /// # Errors
    ///
    /// [`Error::ValueOutOfRange`](crate::Error::ValueOutOfRange) for a value with more digits
    /// after the point than the scale (never rounded), [`Error::ValueTooWide`](crate::Error::ValueTooWide)
    /// for one with more digits than the width.
    #[cfg_attr(debug_assertions, inline)]
    pub fn decimal(&mut self, spec: &FieldSpec, field: &str, v: Decimal) -> Result<()> {
        let scale = scale_of(spec);
        let units = at_scale(spec, field, v)?;
        num::write_i128(self.out, units, spec.width(), spec.is_descending(), field).map_err(
            |e| match e {
                Error::ValueTooWide { field, width, .. } => Error::ValueTooWide {
                    field,
                    value: v.to_string(),
                    width,
                },
                other => other,
            },
        )?;
        if scale > 0 {
            let at = self.out.len() - usize::from(scale);
            self.out.insert(at, '.');
        }
        Ok(())
    }
}

impl KeyReader<'_> {
    /// Reads a decimal at the field's scale.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short field, a bad sign, a non-digit or
    /// a missing point, with its byte position.
    #[cfg_attr(debug_assertions, inline)]
    pub fn decimal(&mut self, spec: &FieldSpec, field: &str) -> Result<Decimal> {
        crate::io::check_int_width(spec, true, field)?;
        let scale = scale_of(spec);
        let start = self.pos;
        let width = usize::from(spec.width());
        let point = usize::from(scale > 0);
        let text = self.take_fixed(field, width + point)?;
        // The point's place in the text: after the sign and the whole digits.
        let dot = width - usize::from(scale);
        let mut digits = [0u8; crate::rules::MAX_WIDTH as usize];
        if point == 1 {
            if text[dot] != b'.' {
                self.pos = start;
                return Err(KeyReader::fault(
                    field,
                    start + dot,
                    format!(
                        "expected `.` before the last {scale} digits, found {:?}",
                        char::from(text[dot])
                    ),
                ));
            }
            digits[..dot].copy_from_slice(&text[..dot]);
            digits[dot..width].copy_from_slice(&text[dot + 1..]);
        } else {
            digits[..width].copy_from_slice(text);
        }
        let in_key = |at: usize| start + at + usize::from(point == 1 && at >= dot);
        match num::read_int(&digits[..width], spec.is_descending(), i128::MIN, i128::MAX) {
            IntParse::Value(units) => Ok(Decimal { units, scale }),
            IntParse::BadByte(at) => {
                self.pos = start;
                let found = self.key[in_key(at)..].chars().next().unwrap_or('?');
                let what = if at == 0 {
                    "the sign `0` or `-`"
                } else {
                    "a digit"
                };
                Err(KeyReader::fault(
                    field,
                    in_key(at),
                    format!("expected {what}, found {found:?}"),
                ))
            }
            IntParse::OutOfRange(value) => {
                self.pos = start;
                Err(KeyReader::fault(
                    field,
                    start,
                    format!("value {value} does not fit in a decimal's i128 units"),
                ))
            }
        }
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "a decimal"
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn write_value(
    w: &mut KeyWriter<'_>,
    spec: &FieldSpec,
    field: &str,
    value: &Value,
) -> Result<bool> {
    let Some(v) = decimal_of(field, value)? else {
        return Ok(false);
    };
    w.decimal(spec, field, v)?;
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value(r: &mut KeyReader<'_>, spec: &FieldSpec, field: &str) -> Result<Value> {
    r.decimal(spec, field).map(Value::Decimal)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    text.parse()
        .map(Value::Decimal)
        .map_err(|DecimalError(why)| why)
}

// ---- The binary form: the units at the field's scale, two's complement with the sign bit
// flipped, big-endian, in the fewest bytes that hold the width's range (16 at most), inverted
// when descending; the same values as the text form (the width's
// digits, no more digits after the point than the scale).

impl BinWriter<'_> {
    /// Writes a decimal in the binary form.
    ///
    /// # Errors
    ///
    /// As [`KeyWriter::decimal`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn decimal(&mut self, spec: &FieldSpec, field: &str, v: Decimal) -> Result<()> {
        let units = at_scale(spec, field, v)?;
        if !bin_io::fits_signed(units, spec.width()) {
            return Err(bin_io::too_wide(field, v, spec.width()));
        }
        let n = super::int::signed_bin_size(spec.width(), 16);
        self.put_signed(units, n, spec.is_descending());
        Ok(())
    }
}

impl BinReader<'_> {
    /// Reads a decimal in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short key or units the field's width
    /// does not hold.
    #[cfg_attr(debug_assertions, inline)]
    pub fn decimal(&mut self, spec: &FieldSpec, field: &str) -> Result<Decimal> {
        let start = self.pos;
        let n = super::int::signed_bin_size(spec.width(), 16);
        let units = self.take_signed(field, n, spec.is_descending())?;
        if !bin_io::fits_signed(units, spec.width()) {
            self.pos = start;
            return Err(Self::fault(
                field,
                start,
                format!(
                    "units {units} do not fit the field's width of {} characters",
                    spec.width()
                ),
            ));
        }
        Ok(Decimal {
            units,
            scale: scale_of(spec),
        })
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn write_value_bin(
    w: &mut BinWriter<'_>,
    spec: &FieldSpec,
    field: &str,
    value: &Value,
) -> Result<bool> {
    let Some(v) = decimal_of(field, value)? else {
        return Ok(false);
    };
    w.decimal(spec, field, v)?;
    Ok(true)
}

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value_bin(
    r: &mut BinReader<'_>,
    spec: &FieldSpec,
    field: &str,
) -> Result<Value> {
    r.decimal(spec, field).map(Value::Decimal)
}

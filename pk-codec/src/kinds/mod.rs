//! The field kinds: [`Kind`] (what a field is), [`Value`] (a field's value at run time) and
//! [`Order`], with each kind's facts, and one file per kind for everything else about it.
//!
//! This file is the list: [`for_each_kind!`] names every kind once, with the file that holds it,
//! and the code that must reach every kind (writing and reading a [`Value`], parsing one from
//! text, naming what a field expects) is generated from that list in `dispatch.rs`. The facts the
//! rulebook and [`FieldSpec`](crate::FieldSpec) need in constant evaluation (a kind's name, its
//! width, the lowest byte its form can hold, its parameters) are `const fn`s here, below the
//! rulebook, so that the derive's compile-time checks run them.
//!
//! Each kind's own file (`uint.rs`, `int.rs`, `string.rs`, `bytes.rs`, `boolean.rs`,
//! `character.rs`, `float.rs`, `uuid.rs`, `timestamp.rs`, `decimal.rs`) holds its text form's writer and
//! reader ([`KeyWriter`](crate::KeyWriter) and [`KeyReader`](crate::KeyReader) methods), its
//! [`KeyField`](crate::KeyField) impls for Rust types, its `From` conversions into [`Value`], how a
//! `Value` of it is written and read, and how it is parsed from the command line's text.
//!
//! Adding a kind: a variant of [`Kind`] and of [`Value`] and its facts here, one entry in
//! [`for_each_kind!`], and its own file.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::text::SOME_MARKER;

/// Every kind, once: `Variant module` pairs (the [`Kind`] variant and the file under `kinds/`
/// that holds it), handed to the macro `$then`. The one list the dispatch is generated from.
macro_rules! for_each_kind {
    ($then:ident) => {
        $then! {
            Uint uint,
            Int int,
            Str string,
            Bytes bytes,
            Bool boolean,
            Char character,
            F32 float,
            F64 float,
            Uuid uuid,
            Timestamp timestamp,
            Decimal decimal,
        }
    };
}
pub(crate) use for_each_kind;

/// A kind's `write_value` and `read_value`, and their binary twins (see `dispatch.rs`), when its
/// values are one [`Value`] variant, written by one [`KeyWriter`](crate::KeyWriter) (and
/// `BinWriter`) method and read by the reader method of the same name: `copy` passes the value,
/// `borrow` a reference to it.
macro_rules! value_io {
    ($variant:ident, $method:ident, copy) => {
        value_io!(@ $variant, $method, |v| *v);
    };
    ($variant:ident, $method:ident, borrow) => {
        value_io!(@ $variant, $method, |v| v);
    };
    (@ $variant:ident, $method:ident, |$v:ident| $arg:expr) => {
        #[cfg_attr(debug_assertions, inline)]
        pub(super) fn write_value(
            w: &mut KeyWriter<'_>,
            spec: &FieldSpec,
            field: &str,
            value: &Value,
        ) -> Result<bool> {
            let Value::$variant($v) = value else {
                return Ok(false);
            };
            super::dispatch::Written::written(w.$method(spec, field, $arg))?;
            Ok(true)
        }

        #[cfg_attr(debug_assertions, inline)]
        pub(super) fn read_value(
            r: &mut KeyReader<'_>,
            spec: &FieldSpec,
            field: &str,
        ) -> Result<Value> {
            r.$method(spec, field).map(Value::$variant)
        }

        #[cfg_attr(debug_assertions, inline)]
        pub(super) fn write_value_bin(
            w: &mut BinWriter<'_>,
            spec: &FieldSpec,
            field: &str,
            value: &Value,
        ) -> Result<bool> {
            let Value::$variant($v) = value else {
                return Ok(false);
            };
            super::dispatch::Written::written(w.$method(spec, field, $arg))?;
            Ok(true)
        }

        #[cfg_attr(debug_assertions, inline)]
        pub(super) fn read_value_bin(
            r: &mut BinReader<'_>,
            spec: &FieldSpec,
            field: &str,
        ) -> Result<Value> {
            r.$method(spec, field).map(Value::$variant)
        }
    };
}

/// [`KeyField`](crate::KeyField) for a Rust type written, in both forms, by the writer methods
/// of one name, given `$arg` (of the value `$v`, a reference to `self`).
macro_rules! key_field {
    ($t:ty => $kind:expr, $method:ident, |$v:ident| $arg:expr) => {
        impl KeyField for $t {
            const KIND: Kind = $kind;
            #[inline]
            fn encode_field(
                &self,
                spec: &FieldSpec,
                field: &str,
                w: &mut KeyWriter<'_>,
            ) -> Result<()> {
                let $v = self;
                super::dispatch::Written::written(w.$method(spec, field, $arg))
            }
            #[inline]
            fn encode_field_binary(
                &self,
                spec: &FieldSpec,
                field: &str,
                w: &mut BinWriter<'_>,
            ) -> Result<()> {
                let $v = self;
                super::dispatch::Written::written(w.$method(spec, field, $arg))
            }
        }
    };
}

/// [`DecodeField`](crate::DecodeField) for a Rust type read, in both forms, by the reader
/// methods of one name.
macro_rules! decode_field {
    ($($t:ty, $method:ident);* $(;)?) => {$(
        impl DecodeField for $t {
            #[inline]
            fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
                r.$method(spec, field)
            }
            #[inline]
            fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
                r.$method(spec, field)
            }
        }
    )*};
}

/// [`KeyField`](crate::KeyField) and [`DecodeField`](crate::DecodeField) for Rust types that are
/// `Copy` and written and read, in both forms, by the writer and reader methods of one name.
macro_rules! copy_field {
    ($($t:ty => $kind:expr, $method:ident);* $(;)?) => {$(
        key_field!($t => $kind, $method, |v| *v);
        decode_field!($t, $method);
    )*};
}

/// [`KeyField`](crate::KeyField) for Rust types written, in both forms, by the writer methods of
/// one name taking a reference (a `&String` passed as the `&str` it derefs to).
macro_rules! ref_field {
    ($($t:ty => $kind:expr, $method:ident);* $(;)?) => {$(
        key_field!($t => $kind, $method, |v| v);
    )*};
}

pub use decimal::DecimalError;

mod boolean;
mod bytes;
mod character;
mod decimal;
pub(crate) mod dispatch;
pub(crate) mod float;
pub(crate) mod int;
mod string;
mod timestamp;
pub(crate) mod uint;
mod uuid;

/// The type of a key field, which decides its text form.
///
/// | kind | ascending form | descending form |
/// |---|---|---|
/// | `u8`..`u128` | decimal, zero-padded to the width (default: the type's widest value) | nines' complement: `10^w - 1 - v` |
/// | `i8`..`i128` | `0` + digits for v ≥ 0; `-` + nines' complement of \|v\|-1 for v < 0 (`-1` is `-99…9`) | the ascending form of `-1 - v` |
/// | `str` | as it is; every byte must sort above the delimiter | each byte as two inverted hex digits `a`..`p`, then `z` |
/// | `str escaped` | bytes ≤ `-` as `-` + two lower-case hex digits (`,` is `-2c`), the rest as it is | as `str` |
/// | `bytes` | lower-case hex | as `str` |
/// | `bool` | `0` / `1` | `1` / `0` |
/// | `char` | as a one-character escaped string | as `str` |
/// | `f32`, `f64` | IEEE 754 total order: the bits, mapped, as 8 / 16 hex digits | the hex digits inverted |
/// | `uuid` | 32 lower-case hex digits, in byte order (v7 UUIDs sort by time) | the hex digits inverted |
/// | `timestamp` | UTC text at the field's [`Precision`](crate::Precision): `2026-11-22T10:26:00.123Z` | each digit `d` as `9 - d` |
/// | `decimal scale=s` | the `i*` form of `v × 10^s` at the width, a `.` before its last `s` digits: `12.34` at width 8 is `000012.34` | the ascending form of `-1 - v × 10^s` |
/// | `Option<T>` | `None` is empty; `Some` is T's form, after a `=` when T's form can be empty | `None` is `~`; `Some` is T's form |
///
/// The binary form ([`Form::Binary`](crate::Form::Binary)) writes each field self-delimiting,
/// one after another with no delimiter, every byte inverted when the field is descending:
///
/// | kind | binary form (ascending) |
/// |---|---|
/// | `u8`..`u128` | big-endian in the fewest bytes that hold the field's widest value (its width's digits, or its type's maximum: `u32 width=6` takes 3 bytes, `u64` 8); a value must fit the width, as in text |
/// | `i8`..`i128` | two's complement with the sign bit flipped, big-endian, in the fewest bytes that hold the width's range (a sign and `width - 1` digits) or the type's |
/// | `str`, `bytes` | the bytes, each `0x00` written `0x00 0xff`, then `0x00 0x01` (a prefix of a value sorts first) |
/// | `bool` | `0x00` / `0x01` |
/// | `char` | the scalar value, 4 bytes big-endian |
/// | `f32`, `f64` | the total-order image of the bits, 4 / 8 bytes big-endian |
/// | `uuid` | its 16 bytes |
/// | `timestamp` | units of the precision since the epoch, as `i64` (8 bytes; `i128`, 16 bytes, at `ns`) |
/// | `decimal scale=s` | `v × 10^s` as a signed integer, as `i*` (at most 16 bytes) |
/// | `Option<T>` | `0x00` for `None`; `0x01` then T's form for `Some` (descending `0xff` / `0xfe`) |
///
/// A hash prefix is the first `⌈len / 2⌉` bytes of the digest; a bucket prefix the bucket
/// number big-endian in 1 byte (up to 256 buckets) or 2.
///
/// # Examples
///
/// ```
/// use pk_codec::{IntBits, Kind};
///
/// assert_eq!(Kind::Uint { bits: IntBits::B32 }.default_width(), Some(10));
/// assert_eq!(Kind::Int { bits: IntBits::B64 }.default_width(), Some(20));
/// assert_eq!(Kind::Str.default_width(), None);
/// assert_eq!(Kind::Int { bits: IntBits::B8 }.name(), "i8");
/// assert_eq!(Kind::from_name("timestamp"), Some(Kind::Timestamp));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// An unsigned integer of 8, 16, 32, 64 or 128 bits.
    Uint {
        /// The size of the integer type.
        bits: IntBits,
    },
    /// A signed integer of 8, 16, 32, 64 or 128 bits.
    Int {
        /// The size of the integer type.
        bits: IntBits,
    },
    /// A UTF-8 string.
    Str,
    /// A byte string.
    Bytes,
    /// A boolean.
    Bool,
    /// A Unicode scalar value.
    Char,
    /// An IEEE 754 single-precision float, in total order.
    F32,
    /// An IEEE 754 double-precision float, in total order.
    F64,
    /// A UUID (16 bytes, in byte order).
    Uuid,
    /// An instant in UTC, as readable fixed-width text.
    Timestamp,
    /// An exact decimal number with `scale` digits after the point (money as `scale: 2`), written
    /// as the signed integer of its smallest unit with the point in place. A value with more
    /// fractional digits than the scale is refused, never rounded.
    Decimal {
        /// The digits after the point, 0 to [`Decimal::MAX_SCALE`] and fewer than the width.
        scale: u8,
    },
}

/// The size of an integer type in bits. Only the sizes Rust has exist, so a [`Kind`] cannot name
/// an integer type that does not.
///
/// # Examples
///
/// ```
/// use pk_codec::{IntBits, Kind};
///
/// assert_eq!(IntBits::B32.get(), 32);
/// assert_eq!(IntBits::new(64), Some(IntBits::B64));
/// assert_eq!(IntBits::new(33), None);
/// assert_eq!(Kind::Uint { bits: IntBits::B16 }.name(), "u16");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IntBits {
    /// 8 bits (`u8`, `i8`).
    B8,
    /// 16 bits (`u16`, `i16`).
    B16,
    /// 32 bits (`u32`, `i32`).
    B32,
    /// 64 bits (`u64`, `i64`, `usize`, `isize`).
    B64,
    /// 128 bits (`u128`, `i128`).
    B128,
}

impl IntBits {
    /// Every size, smallest first.
    pub(crate) const ALL: [Self; 5] = [Self::B8, Self::B16, Self::B32, Self::B64, Self::B128];

    /// The number of bits.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn get(self) -> u8 {
        match self {
            Self::B8 => 8,
            Self::B16 => 16,
            Self::B32 => 32,
            Self::B64 => 64,
            Self::B128 => 128,
        }
    }

    /// The size of `bits` bits, if an integer type has it.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn new(bits: u8) -> Option<Self> {
        Some(match bits {
            8 => Self::B8,
            16 => Self::B16,
            32 => Self::B32,
            64 => Self::B64,
            128 => Self::B128,
            _ => return None,
        })
    }
}

/// The order a field sorts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Smallest value first (the default).
    #[default]
    Asc,
    /// Largest value first, e.g. newest-first timestamps.
    Desc,
}

/// The form of a layout's keys: readable text (the default), or bytes for stores that take
/// them, with fixed-size numbers in place of zero-padded digits. One declaration writes either,
/// and both keep every guarantee; a binary layout keeps the text form's rules too (its
/// delimiter and widths are checked as for text, and a value must fit its field's width), so that
/// the same declaration is valid in both forms and takes the same values (but for plain strings,
/// whose bytes at or below the delimiter only the text form refuses). `max_len` limits the binary
/// key's bytes.
///
/// # Examples
///
/// ```
/// use pk_codec::{Form, Layout, Value};
///
/// let layout: Layout = "device_id: u32 width=6; seller_id: str; form=binary".parse()?;
/// assert_eq!(layout.form(), Form::Binary);
/// let key = layout.encode_bytes(&[Value::from(54u32), Value::from("a100")])?;
/// assert_eq!(key, [0, 0, 54, b'a', b'1', b'0', b'0', 0, 1]);
/// assert_eq!(layout.decode_bytes(&key)?, [Value::from(54u32), Value::from("a100")]);
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Form {
    /// Text: each field in its kind's text form, joined by the delimiter.
    #[default]
    Text,
    /// Bytes: each field in its kind's binary form, one after another (every binary form is
    /// self-delimiting), after the prefix's bytes.
    Binary,
}

impl Form {
    /// The form's name in a spec (`form=text`, `form=binary`).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Binary => "binary",
        }
    }

    /// The form named `name`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "text" => Some(Self::Text),
            "binary" => Some(Self::Binary),
            _ => None,
        }
    }
}

/// The names a spec gives the kinds, in the order messages list them.
const NAMES: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "str",
    "bytes",
    "bool",
    "char",
    "f32",
    "f64",
    "uuid",
    "timestamp",
    "decimal",
];

impl Kind {
    /// The type's name as written in a spec (`u32`, `i64`, `str`, `bytes`, `bool`, `char`, ...).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Uint { bits } => NAMES[bits as usize],
            Self::Int { bits } => NAMES[5 + bits as usize],
            Self::Str => "str",
            Self::Bytes => "bytes",
            Self::Bool => "bool",
            Self::Char => "char",
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::Uuid => "uuid",
            Self::Timestamp => "timestamp",
            Self::Decimal { .. } => "decimal",
        }
    }

    /// The kind named `name` in a spec, if any, with its parameters at their defaults.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn from_name(name: &str) -> Option<Self> {
        let int = |signed: bool| {
            IntBits::ALL
                .into_iter()
                .map(|bits| {
                    if signed {
                        Self::Int { bits }
                    } else {
                        Self::Uint { bits }
                    }
                })
                .find(|k| k.name() == name)
        };
        Some(match name {
            "str" => Self::Str,
            "bytes" => Self::Bytes,
            "bool" => Self::Bool,
            "char" => Self::Char,
            "f32" => Self::F32,
            "f64" => Self::F64,
            "uuid" => Self::Uuid,
            "timestamp" => Self::Timestamp,
            "decimal" => Self::Decimal { scale: 0 },
            _ if name.starts_with('u') => return int(false),
            _ if name.starts_with('i') => return int(true),
            _ => return None,
        })
    }

    /// Every name [`Kind::from_name`] knows, for messages: `u8, u16, ..., timestamp`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn names() -> String {
        NAMES.join(", ")
    }

    /// The width that holds every value of a kind that takes a width: the digits of its largest
    /// value, plus one sign character for signed forms. `None` for the other kinds.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn default_width(self) -> Option<u8> {
        match self {
            Self::Uint { bits } => Some(match bits {
                IntBits::B8 => 3,
                IntBits::B16 => 5,
                IntBits::B32 => 10,
                IntBits::B64 => 20,
                IntBits::B128 => 39,
            }),
            Self::Int { bits } => Some(match bits {
                IntBits::B8 => 4,
                IntBits::B16 => 6,
                IntBits::B32 => 11,
                IntBits::B64 => 20,
                IntBits::B128 => 40,
            }),
            Self::Decimal { .. } => Some(40),
            _ => None,
        }
    }

    /// Whether the kind is an integer: what a modulo bucket prefix can read.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_integer(self) -> bool {
        matches!(self, Self::Uint { .. } | Self::Int { .. })
    }

    /// Whether the kind takes a width, and in which form: `Some(signed)` for a kind written as
    /// digits at a width (a sign character first when `signed`), `None` for the others. The
    /// rulebook's width range for it is [`rules::check_width_declared`](crate::rules::check_width_declared)'s.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn width_form(self) -> Option<bool> {
        match self {
            Self::Uint { .. } => Some(false),
            Self::Int { .. } | Self::Decimal { .. } => Some(true),
            _ => None,
        }
    }

    /// Whether a field of this kind, not optional, always has the same length.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_fixed_width(self) -> bool {
        matches!(
            self,
            Self::Uint { .. }
                | Self::Int { .. }
                | Self::Bool
                | Self::F32
                | Self::F64
                | Self::Uuid
                | Self::Timestamp
                | Self::Decimal { .. }
        )
    }

    /// Whether the kind's form in `order` can be the empty string (ascending strings and byte
    /// strings), so that an optional field of it needs a marker before `Some`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) const fn may_be_empty(self, order: Order) -> bool {
        matches!(order, Order::Asc) && matches!(self, Self::Str | Self::Bytes)
    }

    /// Whether the kind has an escaped form (`str escaped`).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn takes_escaped(self) -> bool {
        matches!(self, Self::Str)
    }

    /// Whether the kind takes a [`Precision`](crate::Precision).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn takes_precision(self) -> bool {
        matches!(self, Self::Timestamp)
    }

    /// The lowest byte the kind's form in `order` (`escaped` for `str`) can hold where it meets
    /// a delimiter, `optional` or not: `None` when there is nothing to check when the layout is
    /// built (fixed-width fields never compare their bytes against a delimiter, and plain strings
    /// are checked value by value). [`FieldSpec::delimiter_floor`](crate::FieldSpec::delimiter_floor)
    /// adds the `=` an optional field writes before `Some`.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) const fn floor(self, order: Order, escaped: bool, optional: bool) -> Option<u8> {
        match (self, order) {
            // Fixed-width digit and hex forms: only an optional one meets the delimiter.
            (
                Self::F32
                | Self::F64
                | Self::Uuid
                | Self::Timestamp
                | Self::Uint { .. }
                | Self::Bool,
                _,
            ) => {
                if optional {
                    Some(b'0')
                } else {
                    None
                }
            }
            (Self::Int { .. } | Self::Decimal { .. }, _) => {
                if optional {
                    Some(b'-')
                } else {
                    None
                }
            }
            (Self::Str, Order::Asc) if !escaped => None,
            (Self::Str | Self::Char, Order::Asc) => Some(b'-'),
            (Self::Bytes, Order::Asc) => Some(b'0'),
            (_, Order::Desc) => Some(b'a'),
        }
    }

    /// The kind's parameters (beyond width, order and the options every field has) and their
    /// values, as a spec writes them (`name=value`).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn params(self) -> Vec<(&'static str, u32)> {
        match self {
            Self::Decimal { scale } => vec![("scale", u32::from(scale))],
            _ => Vec::new(),
        }
    }

    /// The names of the parameters the kind takes, for messages.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn param_names(self) -> &'static [&'static str] {
        match self {
            Self::Decimal { .. } => &["scale"],
            _ => &[],
        }
    }

    /// The same kind with parameter `name` set to `value`.
    ///
    /// # Errors
    ///
    /// A message naming the kind's parameters when it takes no parameter `name`.
    #[cfg_attr(debug_assertions, inline)]
    pub fn with_param(self, name: &str, value: u32) -> Result<Self, String> {
        match (self, name) {
            (Self::Decimal { .. }, "scale") => u8::try_from(value)
                .ok()
                .filter(|&scale| scale <= Decimal::MAX_SCALE)
                .map(|scale| Self::Decimal { scale })
                .ok_or_else(|| {
                    format!(
                        "scale={value} is out of range: a decimal takes 0 to {} digits after the point",
                        Decimal::MAX_SCALE
                    )
                }),
            _ => Err(format!("type {} takes no parameter {name:?}", self.name())),
        }
    }

    /// A parameter out of its range for a field of `width`, as `(name, value, min, max)`: what
    /// the rulebook refuses as [`Rule::ParamRange`](crate::Rule::ParamRange).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn param_fault(self, width: u8) -> Option<(&'static str, u32, u32, u32)> {
        match self {
            Self::Decimal { scale } => {
                // At least the sign before the digits, and at most what an i128 of units holds.
                let digits = width.saturating_sub(1);
                let max = if digits < Decimal::MAX_SCALE {
                    digits
                } else {
                    Decimal::MAX_SCALE
                };
                if scale > max {
                    Some(("scale", scale as u32, 0, max as u32))
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// The `=` an optional field writes before `Some` when its form can be empty: the floor of that
/// field is the lower of it and the form's own.
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn optional_floor(form: Option<u8>) -> u8 {
    match form {
        Some(f) if f < SOME_MARKER => f,
        _ => SOME_MARKER,
    }
}

/// One field's value, for layouts known only at run time.
///
/// Values of one kind order as their Rust types do (floats in IEEE 754 total order, as
/// [`f64::total_cmp`]; equal floats are equal bit for bit), and [`Value::Null`] (an optional
/// field's `None`) orders before all of them, as `Option` does.
///
/// # Examples
///
/// ```
/// use pk_codec::Value;
///
/// assert_eq!(Value::from(54u32), Value::Uint(54));
/// assert_eq!(Value::from(-3i64), Value::Int(-3));
/// assert_eq!(Value::from("a100"), Value::Str("a100".into()));
/// assert_eq!(Value::from(None::<u32>), Value::Null);
/// assert!(Value::Null < Value::Uint(0));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Value {
    /// `None` of an optional field.
    Null,
    /// An unsigned integer (for any `u*` field, or an `i*` field when it fits).
    Uint(u128),
    /// A signed integer (for any `i*` field, or a `u*` field when non-negative).
    Int(i128),
    /// A string.
    Str(String),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A boolean.
    Bool(bool),
    /// A character.
    Char(char),
    /// A single-precision float.
    F32(f32),
    /// A double-precision float.
    F64(f64),
    /// A UUID, as its 16 bytes read big-endian (so `u128` order is byte order).
    Uuid(u128),
    /// An instant, in nanoseconds since 1970-01-01T00:00:00Z (negative before).
    Timestamp(i128),
    /// An exact decimal number (for a `decimal` field; integers are taken too).
    Decimal(Decimal),
}

/// An exact decimal number, `units × 10^-scale`: what a `decimal` field holds
/// ([`Value::Decimal`]). Decimals compare, and are equal, by their numbers (`1.50 == 1.5`).
/// Behind the `rust_decimal` feature it converts from and to `rust_decimal::Decimal`.
///
/// # Examples
///
/// ```
/// use pk_codec::Decimal;
///
/// let price: Decimal = "-12.30".parse()?;
/// assert_eq!((price.units(), price.scale()), (-1230, 2));
/// assert_eq!(price, Decimal::new(-123, 1).unwrap());
/// assert_eq!(price.to_string(), "-12.30");
/// assert!(price < "-12.2".parse()?);
/// # Ok::<(), pk_codec::DecimalError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Decimal {
    units: i128,
    scale: u8,
}

impl Value {
    /// The variant's place in the order between kinds.
    #[cfg_attr(debug_assertions, inline)]
    const fn rank(&self) -> u8 {
        match self {
            Self::Null => 0,
            Self::Uint(_) => 1,
            Self::Int(_) => 2,
            Self::Str(_) => 3,
            Self::Bytes(_) => 4,
            Self::Bool(_) => 5,
            Self::Char(_) => 6,
            Self::F32(_) => 7,
            Self::F64(_) => 8,
            Self::Uuid(_) => 9,
            Self::Timestamp(_) => 10,
            Self::Decimal(_) => 11,
        }
    }

    /// What kind of value this is, for messages.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn kind_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Uint(_) => "an unsigned integer",
            Self::Int(_) => "a signed integer",
            Self::Str(_) => "a string",
            Self::Bytes(_) => "bytes",
            Self::Bool(_) => "a boolean",
            Self::Char(_) => "a character",
            Self::F32(_) => "an f32",
            Self::F64(_) => "an f64",
            Self::Uuid(_) => "a UUID",
            Self::Timestamp(_) => "a timestamp",
            Self::Decimal(_) => "a decimal",
        }
    }

    /// The value as a `u64`, if it is an integer that fits.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Self::Uint(v) => u64::try_from(v).ok(),
            Self::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an `i64`, if it is an integer that fits.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Self::Uint(v) => i64::try_from(v).ok(),
            Self::Int(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a string slice, if it is a string.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as bytes, if it is a byte string.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// Whether this is [`Value::Null`].
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}

impl Ord for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Uint(a), Self::Uint(b)) => a.cmp(b),
            (Self::Int(a), Self::Int(b)) => a.cmp(b),
            (Self::Str(a), Self::Str(b)) => a.cmp(b),
            (Self::Bytes(a), Self::Bytes(b)) => a.cmp(b),
            (Self::Bool(a), Self::Bool(b)) => a.cmp(b),
            (Self::Char(a), Self::Char(b)) => a.cmp(b),
            (Self::F32(a), Self::F32(b)) => a.total_cmp(b),
            (Self::F64(a), Self::F64(b)) => a.total_cmp(b),
            (Self::Uuid(a), Self::Uuid(b)) => a.cmp(b),
            (Self::Timestamp(a), Self::Timestamp(b)) => a.cmp(b),
            (Self::Decimal(a), Self::Decimal(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Self::Null => {}
            Self::Uint(v) => v.hash(state),
            Self::Int(v) => v.hash(state),
            Self::Str(v) => v.hash(state),
            Self::Bytes(v) => v.hash(state),
            Self::Bool(v) => v.hash(state),
            Self::Char(v) => v.hash(state),
            Self::F32(v) => v.to_bits().hash(state),
            Self::F64(v) => v.to_bits().hash(state),
            Self::Uuid(v) => v.hash(state),
            Self::Timestamp(v) => v.hash(state),
            Self::Decimal(v) => v.hash(state),
        }
    }
}

impl<T: Into<Self>> From<Option<T>> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

/// The value as text a person reads: integers in decimal, strings and characters as they are,
/// bytes as lower-case hex, `true` / `false`, floats as Rust writes them, UUIDs hyphenated,
/// timestamps as UTC text to the nanosecond (or nanoseconds since the epoch outside years 0 to
/// 9999), `null` for [`Value::Null`].
///
/// # Examples
///
/// ```
/// use pk_codec::Value;
///
/// assert_eq!(Value::from(54u32).to_string(), "54");
/// assert_eq!(Value::Bytes(vec![0xab, 1]).to_string(), "ab01");
/// assert_eq!(Value::Timestamp(1_500_000_000).to_string(), "1970-01-01T00:00:01.500000000Z");
/// ```
impl std::fmt::Display for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Uint(v) => write!(f, "{v}"),
            Self::Int(v) => write!(f, "{v}"),
            Self::Str(v) => f.write_str(v),
            Self::Bytes(v) => v.iter().try_for_each(|b| write!(f, "{b:02x}")),
            Self::Bool(v) => write!(f, "{v}"),
            Self::Char(v) => write!(f, "{v}"),
            Self::F32(v) => write!(f, "{v}"),
            Self::F64(v) => write!(f, "{v}"),
            Self::Uuid(v) => {
                let h = format!("{v:032x}");
                write!(
                    f,
                    "{}-{}-{}-{}-{}",
                    &h[..8],
                    &h[8..12],
                    &h[12..16],
                    &h[16..20],
                    &h[20..]
                )
            }
            Self::Timestamp(v) => {
                let mut text = String::new();
                match crate::timestamp::write(
                    &mut text,
                    *v,
                    crate::timestamp::Precision::Nanos,
                    false,
                ) {
                    Ok(()) => f.write_str(&text),
                    Err(_) => write!(f, "{v} ns since the epoch"),
                }
            }
            Self::Decimal(v) => write!(f, "{v}"),
        }
    }
}

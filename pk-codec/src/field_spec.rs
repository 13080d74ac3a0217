//! The per-field format description shared by runtime layouts and derived keys: a field's kind
//! ([`Kind`], [`IntBits`]), its [`Order`] and its [`FieldSpec`], as data.
//!
//! It sits below the rulebook, whose checks take these types, and names neither the rules nor
//! the error: [`FieldSpec::check`] is written in `rules.rs`, [`FieldSpec::validate`] beside
//! [`KeyShape::check_field`](crate::KeyShape::check_field) in `shape.rs`, and [`FieldSpec::of`]
//! beside the [`KeyField`](crate::KeyField) trait it reads, in `key.rs`.

use crate::text::SOME_MARKER;
use crate::timestamp::Precision;

/// The type of a key field, which decides its text form.
///
/// | kind | ascending form | descending form |
/// |---|---|---|
/// | `u8`..`u128` | decimal, zero-padded to the width | nines' complement of the ascending digits |
/// | `i8`..`i128` | `0` + digits for v ≥ 0, `-` + nines' complement of \|v\|-1 for v < 0 | the ascending form of `-1 - v` |
/// | `str` | the string itself; every byte must sort above the delimiter | inverted hex (`a`..`p`), ended by `z` |
/// | `str escaped` | bytes ≤ `-` written as `-` + two lower-case hex digits | as `str` |
/// | `bytes` | lower-case hex | as `str` |
/// | `bool` | `0` / `1` | `1` / `0` |
/// | `char` | as a one-character escaped string | as `str` |
/// | `f32`, `f64` | total-order bits as 8 / 16 hex digits | the hex digits inverted |
/// | `uuid` | 32 lower-case hex digits, in byte order | the hex digits inverted |
/// | `timestamp` | UTC text, `2026-11-22T10:26:00.123Z` at the field's [`Precision`] | each digit `d` as `9 - d` |
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
    /// The number of bits.
    #[must_use]
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

impl Kind {
    /// The type's name as written in a spec (`u32`, `i64`, `str`, `bytes`, `bool`, `char`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Uint { bits: IntBits::B8 } => "u8",
            Self::Uint { bits: IntBits::B16 } => "u16",
            Self::Uint { bits: IntBits::B32 } => "u32",
            Self::Uint { bits: IntBits::B64 } => "u64",
            Self::Uint {
                bits: IntBits::B128,
            } => "u128",
            Self::Int { bits: IntBits::B8 } => "i8",
            Self::Int { bits: IntBits::B16 } => "i16",
            Self::Int { bits: IntBits::B32 } => "i32",
            Self::Int { bits: IntBits::B64 } => "i64",
            Self::Int {
                bits: IntBits::B128,
            } => "i128",
            Self::Str => "str",
            Self::Bytes => "bytes",
            Self::Bool => "bool",
            Self::Char => "char",
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::Uuid => "uuid",
            Self::Timestamp => "timestamp",
        }
    }

    /// The kind named `name` in a spec, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "u8" => Self::Uint { bits: IntBits::B8 },
            "u16" => Self::Uint { bits: IntBits::B16 },
            "u32" => Self::Uint { bits: IntBits::B32 },
            "u64" => Self::Uint { bits: IntBits::B64 },
            "u128" => Self::Uint {
                bits: IntBits::B128,
            },
            "i8" => Self::Int { bits: IntBits::B8 },
            "i16" => Self::Int { bits: IntBits::B16 },
            "i32" => Self::Int { bits: IntBits::B32 },
            "i64" => Self::Int { bits: IntBits::B64 },
            "i128" => Self::Int {
                bits: IntBits::B128,
            },
            "str" => Self::Str,
            "bytes" => Self::Bytes,
            "bool" => Self::Bool,
            "char" => Self::Char,
            "f32" => Self::F32,
            "f64" => Self::F64,
            "uuid" => Self::Uuid,
            "timestamp" => Self::Timestamp,
            _ => return None,
        })
    }

    /// The width that holds every value of an integer type: the digits of its largest value,
    /// plus one sign character for signed types. `None` for the other kinds.
    #[must_use]
    pub const fn default_width(self) -> Option<u8> {
        match self {
            Self::Uint { bits } => Some(uint_default_width(bits)),
            Self::Int { bits } => Some(int_default_width(bits)),
            _ => None,
        }
    }

    /// Whether the kind is an integer, so takes a width.
    #[must_use]
    pub const fn is_integer(self) -> bool {
        matches!(self, Self::Uint { .. } | Self::Int { .. })
    }
}

/// The digits of the largest unsigned integer of `bits` bits: its default width.
const fn uint_default_width(bits: IntBits) -> u8 {
    match bits {
        IntBits::B8 => 3,
        IntBits::B16 => 5,
        IntBits::B32 => 10,
        IntBits::B64 => 20,
        IntBits::B128 => 39,
    }
}

/// The digits of the largest signed integer of `bits` bits, and its sign: its default width.
const fn int_default_width(bits: IntBits) -> u8 {
    match bits {
        IntBits::B8 => 4,
        IntBits::B16 => 6,
        IntBits::B32 => 11,
        IntBits::B64 => 20,
        IntBits::B128 => 40,
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

/// How one field is written: its kind, width, order and options.
///
/// Built with `const fn`s, so derived code holds its specs as constants.
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, IntBits, Kind};
///
/// let device = FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6);
/// assert_eq!(device.width(), 6);
/// let ts = FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).descending();
/// assert!(ts.is_descending());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldSpec {
    kind: Kind,
    width: u8,
    order: Order,
    escaped: bool,
    optional: bool,
    precision: Option<Precision>,
}

impl FieldSpec {
    /// An ascending field of `kind`, at the kind's default width.
    #[must_use]
    pub const fn new(kind: Kind) -> Self {
        let width = match kind.default_width() {
            Some(w) => w,
            None => 0,
        };
        Self {
            kind,
            width,
            order: Order::Asc,
            escaped: false,
            optional: false,
            precision: None,
        }
    }

    /// The same field with a declared width in characters (integers only; checked by
    /// [`FieldSpec::validate`]).
    #[must_use]
    pub const fn with_width(mut self, width: u8) -> Self {
        self.width = width;
        self
    }

    /// The same field in descending order.
    #[must_use]
    pub const fn descending(mut self) -> Self {
        self.order = Order::Desc;
        self
    }

    /// The same field with the given order.
    #[must_use]
    pub const fn with_order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// The same string field in escaped form, which accepts any string.
    #[must_use]
    pub const fn escaped(mut self) -> Self {
        self.escaped = true;
        self
    }

    /// The same timestamp field with another precision (default [`Precision::Millis`]).
    #[must_use]
    pub const fn with_precision(mut self, precision: Precision) -> Self {
        self.precision = Some(precision);
        self
    }

    /// A timestamp field's precision ([`Precision::Millis`] unless declared).
    #[must_use]
    pub const fn precision(&self) -> Precision {
        match self.precision {
            Some(p) => p,
            None => Precision::Millis,
        }
    }

    /// Whether a precision was declared.
    #[must_use]
    pub const fn has_precision(&self) -> bool {
        self.precision.is_some()
    }

    /// The same field, optional: `None` sorts before every value (after, when descending).
    #[must_use]
    pub const fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    /// The field's kind.
    #[must_use]
    pub const fn kind(&self) -> Kind {
        self.kind
    }

    /// The width in characters of an integer field (0 for other kinds).
    #[must_use]
    pub const fn width(&self) -> u8 {
        self.width
    }

    /// The field's order.
    #[must_use]
    pub const fn order(&self) -> Order {
        self.order
    }

    /// Whether the field sorts descending.
    #[must_use]
    pub const fn is_descending(&self) -> bool {
        matches!(self.order, Order::Desc)
    }

    /// Whether a string field uses the escaped form.
    #[must_use]
    pub const fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// Whether the field is optional.
    #[must_use]
    pub const fn is_optional(&self) -> bool {
        self.optional
    }

    /// Whether the field always has the same length (integers and booleans, not optional).
    #[must_use]
    pub const fn is_fixed_width(&self) -> bool {
        !self.optional
            && matches!(
                self.kind,
                Kind::Uint { .. }
                    | Kind::Int { .. }
                    | Kind::Bool
                    | Kind::F32
                    | Kind::F64
                    | Kind::Uuid
                    | Kind::Timestamp
            )
    }

    /// Whether the non-optional form of this field can be the empty string (ascending strings and
    /// byte strings), so that an optional field needs a marker before `Some`.
    #[must_use]
    pub(crate) const fn inner_may_be_empty(&self) -> bool {
        matches!(self.order, Order::Asc) && matches!(self.kind, Kind::Str | Kind::Bytes)
    }

    /// The lowest byte a variable-length form of this field can hold, which the delimiter must
    /// sort below so that a shorter value followed by the delimiter sorts before a longer one:
    /// the one definition of the delimiter floor. `None` when there is nothing to check when the
    /// layout is built: fixed-width fields never compare their bytes against a delimiter, and plain
    /// strings are checked value by value.
    ///
    /// An optional field counts the `=` it writes before `Some` when its form can be empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, IntBits, Kind};
    ///
    /// assert_eq!(FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).delimiter_floor(), None);
    /// assert_eq!(FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).optional().delimiter_floor(), Some(b'0'));
    /// assert_eq!(FieldSpec::new(Kind::Str).delimiter_floor(), None);
    /// assert_eq!(FieldSpec::new(Kind::Str).optional().delimiter_floor(), Some(b'='));
    /// assert_eq!(FieldSpec::new(Kind::Str).escaped().delimiter_floor(), Some(b'-'));
    /// assert_eq!(FieldSpec::new(Kind::Bytes).descending().delimiter_floor(), Some(b'a'));
    /// ```
    #[must_use]
    pub const fn delimiter_floor(&self) -> Option<u8> {
        let form = match (self.kind, self.order) {
            // Fixed-width digit and hex forms: only an optional one meets the delimiter.
            (Kind::F32 | Kind::F64 | Kind::Uuid | Kind::Timestamp, _) => {
                if self.optional {
                    Some(b'0')
                } else {
                    None
                }
            }
            (Kind::Uint { .. } | Kind::Bool, _) if self.optional => Some(b'0'),
            (Kind::Int { .. }, _) if self.optional => Some(b'-'),
            (Kind::Uint { .. } | Kind::Int { .. } | Kind::Bool, _) => None,
            (Kind::Str, Order::Asc) if !self.escaped => None,
            (Kind::Str | Kind::Char, Order::Asc) => Some(b'-'),
            (Kind::Bytes, Order::Asc) => Some(b'0'),
            (_, Order::Desc) => Some(b'a'),
        };
        if self.optional && self.inner_may_be_empty() {
            match form {
                Some(f) if f < SOME_MARKER => Some(f),
                _ => Some(SOME_MARKER),
            }
        } else {
            form
        }
    }
}

//! [`Value`]: one field's value for runtime layouts.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

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
}

impl Value {
    /// The variant's place in the order between kinds.
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
        }
    }
}

impl Ord for Value {
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
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
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
        }
    }
}

impl Value {
    /// What kind of value this is, for messages.
    #[must_use]
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
        }
    }

    /// The value as a `u64`, if it is an integer that fits.
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Self::Uint(v) => u64::try_from(v).ok(),
            Self::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an `i64`, if it is an integer that fits.
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Self::Uint(v) => i64::try_from(v).ok(),
            Self::Int(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a string slice, if it is a string.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as bytes, if it is a byte string.
    #[must_use]
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// Whether this is [`Value::Null`].
    #[must_use]
    pub const fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}

macro_rules! value_from {
    ($variant:ident as $wide:ty: $($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Self::$variant(v as $wide)
            }
        }
    )*};
}
value_from!(Uint as u128: u8, u16, u32, u64, u128, usize);
value_from!(Int as i128: i8, i16, i32, i64, i128, isize);

impl From<String> for Value {
    fn from(v: String) -> Self {
        Self::Str(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Self::Str(v.to_owned())
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Self::Bytes(v)
    }
}

impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Self {
        Self::Bytes(v.to_vec())
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

impl From<char> for Value {
    fn from(v: char) -> Self {
        Self::Char(v)
    }
}

impl From<f32> for Value {
    fn from(v: f32) -> Self {
        Self::F32(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Self::F64(v)
    }
}

impl From<std::time::SystemTime> for Value {
    fn from(v: std::time::SystemTime) -> Self {
        Self::Timestamp(crate::timestamp::system_time_nanos(v))
    }
}

impl<T: Into<Self>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

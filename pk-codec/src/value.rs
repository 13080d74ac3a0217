//! [`Value`]: one field's value for runtime layouts.

/// One field's value, for layouts known only at run time.
///
/// Values of one kind order as their Rust types do, and [`Value::Null`] (an optional field's
/// `None`) orders before all of them, as `Option` does.
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

impl<T: Into<Self>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

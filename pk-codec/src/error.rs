//! The crate's one error type.

use std::fmt;

/// The result type of every fallible operation in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while declaring a layout, encoding a key or decoding one.
///
/// Every variant names *what* went wrong, *where* (field name, byte position in the key or the
/// spec) and *why*. Positions in keys are byte offsets from the start of the whole key, prefix
/// included. Messages are lowercase so they compose: `format!("cannot write row: {err}")`.
///
/// # Examples
///
/// ```
/// use pk_codec::{Error, Layout, Value};
///
/// let layout: Layout = "device_id: u32 width=6".parse()?;
/// let err = layout.encode(&[Value::from(1_234_567_u32)]).unwrap_err();
/// assert!(matches!(err, Error::ValueTooWide { ref field, width: 6, .. } if field == "device_id"));
/// assert_eq!(
///     err.to_string(),
///     "field `device_id`: value 1234567 needs more than 6 digits (declared width 6)"
/// );
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An integer does not fit in the declared width of its field.
    ValueTooWide {
        /// The field being encoded.
        field: String,
        /// The value, in decimal.
        value: String,
        /// The declared width in characters.
        width: u8,
    },
    /// A value does not fit the field's type (runtime layouts only, e.g. 300 for a `u8` field).
    ValueOutOfRange {
        /// The field being encoded or decoded.
        field: String,
        /// The value, in decimal.
        value: String,
        /// The field's type as written in a spec, e.g. `u8`.
        ty: &'static str,
    },
    /// A runtime value of the wrong kind was given for a field.
    TypeMismatch {
        /// The field being encoded.
        field: String,
        /// What the field's type accepts.
        expected: &'static str,
        /// What was given.
        found: &'static str,
    },
    /// A text is not a value of its field's kind ([`FieldSpec::parse_value`](crate::FieldSpec::parse_value)).
    BadValueText {
        /// The field the text is for.
        field: String,
        /// The text given.
        text: String,
        /// The field's type as written in a spec, e.g. `u32`.
        ty: &'static str,
        /// What the text should be.
        why: &'static str,
    },
    /// The number of values given to a runtime layout does not match its fields.
    FieldCount {
        /// How many fields the layout has (or the most that may be given).
        expected: usize,
        /// How many values were given.
        found: usize,
    },
    /// A plain string holds a character that sorts at or below the delimiter, which would break
    /// the key order. Use the escaped string form for such values.
    CharBelowDelimiter {
        /// The field being encoded.
        field: String,
        /// The offending character.
        ch: char,
        /// Its byte offset inside the field's value.
        offset: usize,
        /// The layout's delimiter.
        delimiter: char,
    },
    /// The encoded key is longer than the layout allows.
    KeyTooLong {
        /// The key's length in bytes.
        len: usize,
        /// The layout's limit in bytes.
        limit: usize,
    },
    /// A layout breaks a rule of the key format (see [`rules`](crate::rules)): it could not keep
    /// the guarantees, so it is refused.
    BrokenRule {
        /// The field concerned, if the rule is about one field.
        field: Option<String>,
        /// The rule, with the values that break it.
        rule: crate::rules::Rule,
    },
    /// A layout (built in code, parsed from a spec or loaded from a config) is not usable.
    InvalidLayout {
        /// The field concerned, if any.
        field: Option<String>,
        /// Why the layout cannot work.
        reason: String,
    },
    /// A text layout spec could not be parsed.
    InvalidSpec {
        /// Byte offset in the spec.
        position: usize,
        /// What was expected there.
        reason: String,
    },
    /// A key could not be decoded: it was not produced by this layout.
    Malformed {
        /// The field being decoded, or `None` for the prefix or the key as a whole.
        field: Option<String>,
        /// Byte offset in the key where decoding failed.
        position: usize,
        /// What was expected there.
        reason: String,
    },
    /// A key's hash or bucket prefix does not match the one computed from its natural key.
    PrefixMismatch {
        /// Byte offset in the key of the first prefix character that differs.
        position: usize,
        /// The prefix found in the key.
        found: String,
        /// The prefix computed from the rest of the key.
        expected: String,
    },
    /// A range was asked of a layout whose prefix scatters the natural order.
    RangeUnsupported {
        /// Why, and what to use instead.
        reason: String,
    },
}

impl fmt::Display for Error {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ValueTooWide {
                field,
                value,
                width,
            } => write!(
                f,
                "field `{field}`: value {value} needs more than {width} digits (declared width {width})"
            ),
            Self::ValueOutOfRange { field, value, ty } => {
                write!(f, "field `{field}`: value {value} does not fit in {ty}")
            }
            Self::TypeMismatch {
                field,
                expected,
                found,
            } => write!(f, "field `{field}`: expected {expected}, found {found}"),
            Self::BadValueText {
                field,
                text,
                ty,
                why,
            } => write!(f, "field `{field}`: {text:?} is not a {ty} ({why})"),
            Self::FieldCount { expected, found } => {
                write!(
                    f,
                    "expected {expected} values, one per field, found {found}"
                )
            }
            Self::CharBelowDelimiter {
                field,
                ch,
                offset,
                delimiter,
            } => write!(
                f,
                "field `{field}`: character {ch:?} at byte {offset} sorts at or below the delimiter \
                 {delimiter:?} and would break key order; remove it or declare the field escaped"
            ),
            Self::KeyTooLong { len, limit } => {
                write!(
                    f,
                    "key is {len} bytes long, over the limit of {limit} bytes"
                )
            }
            Self::BrokenRule {
                field: Some(field),
                rule,
            } => write!(f, "invalid layout: field `{field}`: {rule}"),
            Self::BrokenRule { field: None, rule } => write!(f, "invalid layout: {rule}"),
            Self::InvalidLayout {
                field: Some(field),
                reason,
            } => write!(f, "invalid layout: field `{field}`: {reason}"),
            Self::InvalidLayout {
                field: None,
                reason,
            } => write!(f, "invalid layout: {reason}"),
            Self::InvalidSpec { position, reason } => {
                write!(f, "invalid layout spec at byte {position}: {reason}")
            }
            Self::Malformed {
                field: Some(field),
                position,
                reason,
            } => write!(
                f,
                "malformed key at byte {position} (field `{field}`): {reason}"
            ),
            Self::Malformed {
                field: None,
                position,
                reason,
            } => write!(f, "malformed key at byte {position}: {reason}"),
            Self::PrefixMismatch {
                position,
                found,
                expected,
            } => write!(
                f,
                "malformed key at byte {position}: prefix {found:?} does not match {expected:?}, the prefix \
                 computed from the rest of the key"
            ),
            Self::RangeUnsupported { reason } => write!(f, "range not available: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The same error, its field named as a field of the key spliced in as `part`
    /// (`city` becomes `to.city`), as a runtime layout names the fields of a nested key.
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    #[must_use]
    pub(crate) fn in_part(mut self, part: &str) -> Self {
        let field = match &mut self {
            Self::ValueTooWide { field, .. }
            | Self::ValueOutOfRange { field, .. }
            | Self::TypeMismatch { field, .. }
            | Self::CharBelowDelimiter { field, .. }
            | Self::BrokenRule {
                field: Some(field), ..
            }
            | Self::InvalidLayout {
                field: Some(field), ..
            }
            | Self::Malformed {
                field: Some(field), ..
            } => field,
            _ => return self,
        };
        *field = format!("{part}.{field}");
        self
    }

    #[cold]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn malformed(
        field: Option<&str>,
        position: usize,
        reason: impl Into<String>,
    ) -> Self {
        Self::Malformed {
            field: field.map(str::to_owned),
            position,
            reason: reason.into(),
        }
    }

    #[cold]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn broken(field: Option<&str>, rule: crate::rules::Rule) -> Self {
        Self::BrokenRule {
            field: field.map(str::to_owned),
            rule,
        }
    }

    #[cold]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn layout(field: Option<&str>, reason: impl Into<String>) -> Self {
        Self::InvalidLayout {
            field: field.map(str::to_owned),
            reason: reason.into(),
        }
    }
}

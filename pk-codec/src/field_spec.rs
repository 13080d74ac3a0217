//! The per-field format description shared by runtime layouts and derived keys: a field's
//! [`FieldSpec`] (its [`Kind`], width, [`Order`] and options), as data.
//!
//! It sits below the rulebook, whose checks take these types, and names neither the rules nor
//! the error: [`FieldSpec::check`] is written in `rules.rs`, [`FieldSpec::validate`] beside
//! [`KeyShape::check_field`](crate::KeyShape::check_field) in `shape.rs`, and [`FieldSpec::of`]
//! beside the [`KeyField`](crate::KeyField) trait it reads, in `key.rs`.

use crate::kinds::{Kind, Order, optional_floor};
use crate::timestamp::Precision;

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
    #[cfg_attr(debug_assertions, inline)]
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
    #[cfg_attr(debug_assertions, inline)]
    pub const fn with_width(mut self, width: u8) -> Self {
        self.width = width;
        self
    }

    /// The same field in descending order.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn descending(mut self) -> Self {
        self.order = Order::Desc;
        self
    }

    /// The same field with the given order.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn with_order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// The same string field in escaped form, which accepts any string.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn escaped(mut self) -> Self {
        self.escaped = true;
        self
    }

    /// The same timestamp field with another precision (default [`Precision::Millis`]).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn with_precision(mut self, precision: Precision) -> Self {
        self.precision = Some(precision);
        self
    }

    /// A timestamp field's precision ([`Precision::Millis`] unless declared).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn precision(&self) -> Precision {
        match self.precision {
            Some(p) => p,
            None => Precision::Millis,
        }
    }

    /// Whether a precision was declared.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn has_precision(&self) -> bool {
        self.precision.is_some()
    }

    /// The same field, optional: `None` sorts before every value (after, when descending).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    /// The field's kind.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn kind(&self) -> Kind {
        self.kind
    }

    /// The width in characters of an integer field (0 for other kinds).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn width(&self) -> u8 {
        self.width
    }

    /// The field's order.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn order(&self) -> Order {
        self.order
    }

    /// Whether the field sorts descending.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_descending(&self) -> bool {
        matches!(self.order, Order::Desc)
    }

    /// Whether a string field uses the escaped form.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// Whether the field is optional.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_optional(&self) -> bool {
        self.optional
    }

    /// Whether the field always has the same length (integers and booleans, not optional).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_fixed_width(&self) -> bool {
        !self.optional && self.kind.is_fixed_width()
    }

    /// Whether the non-optional form of this field can be the empty string (ascending strings and
    /// byte strings), so that an optional field needs a marker before `Some`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) const fn inner_may_be_empty(&self) -> bool {
        self.kind.may_be_empty(self.order)
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
    #[cfg_attr(debug_assertions, inline)]
    pub const fn delimiter_floor(&self) -> Option<u8> {
        let form = self.kind.floor(self.order, self.escaped, self.optional);
        if self.optional && self.inner_may_be_empty() {
            Some(optional_floor(form))
        } else {
            form
        }
    }
}

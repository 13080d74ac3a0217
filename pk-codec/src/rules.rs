//! The rulebook: every rule a key layout must keep to hold the guarantees, each written once.
//!
//! Runtime [`Layout`](crate::Layout)s check these rules when they are built, and
//! `#[derive(PartitionKey)]` checks them at compile time by evaluating these same `const fn`s in
//! the constants it generates: the proc-macro crate holds no copy of any rule. A layout that
//! breaks a rule is refused with [`Error::BrokenRule`](crate::Error::BrokenRule), which names it.
//!
//! | rule | where it is written |
//! |---|---|
//! | integer widths | [`MIN_WIDTH_UNSIGNED`], [`MIN_WIDTH_SIGNED`], [`MAX_WIDTH`], checked by [`FieldSpec::check`](crate::FieldSpec::check) |
//! | which options apply to which kind | [`FieldSpec::check`](crate::FieldSpec::check); a declared width, `0` included, [`check_width_declared`] |
//! | what may be optional | [`KeyField::OPTIONAL`](crate::KeyField::OPTIONAL) (no `Option` of an `Option`) |
//! | the delimiter | [`check_delimiter`] (ASCII, not a letter or digit, below `0x7f`) |
//! | the delimiter floor of a field | [`FieldSpec::delimiter_floor`](crate::FieldSpec::delimiter_floor) (markers included) |
//! | hash prefix lengths | [`HashAlg::max_len`](crate::HashAlg::max_len), checked by [`Prefix::check`](crate::Prefix::check) |
//! | bucket counts | [`MAX_BUCKETS`], checked by [`Prefix::check`](crate::Prefix::check) |
//! | the fields a bucket hash covers | [`MAX_HASH_RUNS`], checked by [`check_hash_runs`] |
//! | the field a modulo bucket reads | [`check_modulo_field`] |
//! | the key length limit | [`MAX_KEY_LEN`], checked by [`KeyShape::check`](crate::KeyShape::check) |

use std::fmt;

use crate::field_spec::FieldSpec;
use crate::kinds::Kind;

/// The narrowest unsigned integer field, in digits.
pub const MIN_WIDTH_UNSIGNED: u8 = 1;

/// The narrowest signed integer field, in characters: a sign and one digit.
pub const MIN_WIDTH_SIGNED: u8 = 2;

/// The widest integer field, in characters (a `u128` needs 39 digits, an `i128` 40 characters).
pub const MAX_WIDTH: u8 = 40;

/// The most buckets a bucket prefix may have. Range reads over a bucketed key make one range per
/// bucket, so the count bounds what they allocate; bucket numbers take at most four digits.
pub const MAX_BUCKETS: u32 = 10_000;

/// The most separate runs of fields a bucket hash may cover. Adjacent hashed fields form one run
/// (a key spliced in as a field is one run, however many fields it has).
pub const MAX_HASH_RUNS: usize = 8;

/// The largest key length limit a layout may declare (`u32::MAX` bytes), so that every layout
/// saves to every form it loads from (TOML integers stop at `i64::MAX`).
pub const MAX_KEY_LEN: usize = u32::MAX as usize;

/// A rule of the key format that a layout breaks. Each names the guarantee it protects.
///
/// # Examples
///
/// ```
/// use pk_codec::{Error, Layout, Rule};
///
/// let err = "a: str optional; b: u8; delimiter='_'".parse::<Layout>().unwrap_err();
/// assert!(matches!(err, Error::BrokenRule { rule: Rule::DelimiterFloor { floor: '=', .. }, .. }));
/// assert_eq!(Rule::DelimiterFloor { delimiter: '_', floor: '=' }.name(), "delimiter-floor");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// An integer field's width must hold at least one value and at most the widest.
    WidthRange {
        /// The declared width.
        width: u8,
        /// The narrowest width for the field's kind.
        min: u8,
        /// The widest width ([`MAX_WIDTH`]).
        max: u8,
    },
    /// Only fields whose kind is written as digits at a width take a width
    /// ([`Kind::width_form`]).
    WidthOnNonInteger,
    /// Only string fields take the escaped form.
    EscapedOnNonString,
    /// Only timestamp fields take a precision.
    PrecisionOnNonTimestamp,
    /// A parameter of a field's kind ([`Kind::params`]) must lie in the range the kind allows
    /// for the field ([`Kind::param_fault`]).
    ParamRange {
        /// The parameter's name.
        param: &'static str,
        /// The value given.
        value: u32,
        /// The smallest value allowed.
        min: u32,
        /// The largest value allowed for this field.
        max: u32,
    },
    /// A `&str` field decodes as the key's own text, so it is a plain ascending string: an escaped
    /// or descending string has no such text (use `Cow<str>` or `String`).
    BorrowedStrForm,
    /// An `Option` of an `Option` has no key form: `None` and `Some(None)` would be one key.
    NestedOption,
    /// The delimiter must be an ASCII character.
    DelimiterNotAscii {
        /// The delimiter given.
        delimiter: char,
    },
    /// The delimiter must not be a letter or digit, which field values hold.
    DelimiterAlphanumeric {
        /// The delimiter given.
        delimiter: char,
    },
    /// The delimiter must sort below `0x7f`, so that the byte after it (where ranges end) is ASCII.
    DelimiterTooHigh {
        /// The delimiter given.
        delimiter: char,
    },
    /// The delimiter must sort below every byte a variable-length field can hold, so that a
    /// shorter value sorts before a longer one.
    DelimiterFloor {
        /// The delimiter.
        delimiter: char,
        /// The lowest character the field can hold (an ASCII one).
        floor: char,
    },
    /// A hash prefix takes 1 to the digest's length in hex characters.
    HashLen {
        /// The length given.
        len: u8,
        /// The digest's length in hex characters.
        max: u8,
    },
    /// A bucket prefix has 1 to [`MAX_BUCKETS`] buckets.
    BucketCount {
        /// The count given.
        count: u32,
    },
    /// A bucket hash covers at most [`MAX_HASH_RUNS`] separate runs of fields.
    HashRuns {
        /// The runs the layout asks for.
        runs: usize,
    },
    /// A modulo bucket reads an integer field that is not optional.
    ModuloField,
    /// A hash prefix over chosen fields covers the leading fields, in key order, so that fixing
    /// them fixes the prefix.
    HashLeadingFields,
    /// `width`, `desc` and `escaped` apply to a field, not to a key spliced in as a field (mark
    /// that key's own fields).
    NestedAttributes,
    /// A field name is ASCII letters, digits and `_`, does not start with a digit, and may join
    /// such names with `.` (a field of a key spliced into another).
    FieldName,
    /// The key length limit must leave room after the prefix and be at most [`MAX_KEY_LEN`].
    KeyLen {
        /// The limit given.
        max_len: usize,
        /// The prefix's length in bytes, separator included.
        prefix_len: usize,
    },
}

impl Rule {
    /// The rule's short name, as error messages cite it.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::WidthRange { .. } => "width-range",
            Self::WidthOnNonInteger => "width-on-integers",
            Self::EscapedOnNonString => "escaped-on-strings",
            Self::PrecisionOnNonTimestamp => "precision-on-timestamps",
            Self::ParamRange { .. } => "param-range",
            Self::BorrowedStrForm => "borrowed-str-form",
            Self::NestedOption => "no-nested-option",
            Self::DelimiterNotAscii { .. } => "delimiter-ascii",
            Self::DelimiterAlphanumeric { .. } => "delimiter-not-alphanumeric",
            Self::DelimiterTooHigh { .. } => "delimiter-below-0x7f",
            Self::DelimiterFloor { .. } => "delimiter-floor",
            Self::HashLen { .. } => "hash-prefix-length",
            Self::BucketCount { .. } => "bucket-count",
            Self::HashRuns { .. } => "bucket-hash-runs",
            Self::ModuloField => "modulo-bucket-field",
            Self::HashLeadingFields => "hash-leading-fields",
            Self::NestedAttributes => "nested-key-attributes",
            Self::FieldName => "field-name",
            Self::KeyLen { .. } => "key-length-limit",
        }
    }

    /// The rule in one sentence without the values, for compile-time errors (a constant cannot
    /// format numbers).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn summary(&self) -> &'static str {
        match self {
            Self::WidthRange { .. } => {
                "pk-codec rule width-range: an unsigned field takes 1 to 40 digits, a signed field 2 to 40 \
                 characters (a sign and at least one digit)"
            }
            Self::WidthOnNonInteger => {
                "pk-codec rule width-on-integers: #[pk(width)] needs a field whose kind is written as \
                 digits at a width (an integer)"
            }
            Self::EscapedOnNonString => {
                "pk-codec rule escaped-on-strings: #[pk(escaped)] needs a string field (char fields are \
                 always escaped)"
            }
            Self::PrecisionOnNonTimestamp => {
                "pk-codec rule precision-on-timestamps: #[pk(precision)] needs a timestamp field"
            }
            Self::ParamRange { .. } => {
                "pk-codec rule param-range: a parameter of the field's kind is outside the range the \
                 kind allows for the field"
            }
            Self::BorrowedStrForm => {
                "pk-codec rule borrowed-str-form: a &str field decodes by borrowing the key's text, so it \
                 must be a plain ascending string; use Cow<str> or String for an escaped or descending one"
            }
            Self::NestedOption => {
                "pk-codec rule no-nested-option: an Option of an Option has no key form (None and \
                 Some(None) would be one key)"
            }
            Self::DelimiterNotAscii { .. } => {
                "pk-codec rule delimiter-ascii: the delimiter must be an ASCII character"
            }
            Self::DelimiterAlphanumeric { .. } => {
                "pk-codec rule delimiter-not-alphanumeric: the delimiter is a letter or digit, which field \
                 values hold; use punctuation such as ','"
            }
            Self::DelimiterTooHigh { .. } => {
                "pk-codec rule delimiter-below-0x7f: the delimiter must sort below 0x7f (DEL)"
            }
            // One message per floor: a constant's message names the case that applies.
            Self::DelimiterFloor { floor: '=', .. } => {
                "pk-codec rule delimiter-floor: the delimiter does not sort below `=`, which this \
                 optional string or bytes field writes before a Some value, so a shorter value would not \
                 sort before a longer one; use a delimiter below `=`, such as ','"
            }
            Self::DelimiterFloor { floor: '-', .. } => {
                "pk-codec rule delimiter-floor: the delimiter does not sort below `-`, which this field \
                 (an escaped string, a char or an optional signed number) can hold, so a shorter value \
                 would not sort before a longer one; use a delimiter below `-`, such as ','"
            }
            Self::DelimiterFloor { floor: '0', .. } => {
                "pk-codec rule delimiter-floor: the delimiter does not sort below `0`, which this field \
                 (hex bytes or an optional number) can hold, so a shorter value would not sort before a \
                 longer one; use a delimiter below `0`, such as ','"
            }
            Self::DelimiterFloor { floor: 'a', .. } => {
                "pk-codec rule delimiter-floor: the delimiter does not sort below `a`, which this \
                 descending field can hold, so a shorter value would not sort before a longer one; use a \
                 delimiter below `a`, such as ','"
            }
            Self::DelimiterFloor { .. } => {
                "pk-codec rule delimiter-floor: the delimiter does not sort below a character this field \
                 can hold, so a shorter value would not sort before a longer one; use a lower delimiter, \
                 such as ','"
            }
            Self::HashLen { .. } => {
                "pk-codec rule hash-prefix-length: a hash prefix takes 1 to the digest's length in hex \
                 characters (md5 32, xxh32 8, xxh64 16, xxh3 16)"
            }
            Self::BucketCount { .. } => {
                "pk-codec rule bucket-count: a bucket prefix has 1 to 10000 buckets"
            }
            Self::HashRuns { .. } => {
                "pk-codec rule bucket-hash-runs: a bucket hash covers at most 8 separate runs of fields"
            }
            Self::ModuloField => {
                "pk-codec rule modulo-bucket-field: a modulo bucket needs an integer field that is not \
                 optional"
            }
            Self::HashLeadingFields => {
                "pk-codec rule hash-leading-fields: a hash prefix over chosen fields names the leading \
                 fields of the key, in order"
            }
            Self::NestedAttributes => {
                "pk-codec rule nested-key-attributes: #[pk(width)], #[pk(desc)] and #[pk(escaped)] do not \
                 apply to a nested key: mark the nested key's own fields"
            }
            Self::FieldName => {
                "pk-codec rule field-name: a key field name is ASCII letters, digits and `_` and does not \
                 start with a digit"
            }
            Self::KeyLen { .. } => {
                "pk-codec rule key-length-limit: max_len must leave room after the prefix and be at most \
                 u32::MAX"
            }
        }
    }
}

impl fmt::Display for Rule {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match *self {
            Self::WidthRange { width, min, max } => write!(
                f,
                "width {width} is out of range: this field takes {min} to {max} characters (rule {name})"
            ),
            Self::WidthOnNonInteger => write!(
                f,
                "width applies to fields written as digits at a width (rule {name})"
            ),
            Self::ParamRange {
                param,
                value,
                min,
                max,
            } => write!(
                f,
                "{param}={value} is out of range: this field takes {param} from {min} to {max} (rule {name})"
            ),
            Self::EscapedOnNonString => write!(f, "escaped applies to str fields (rule {name})"),
            Self::PrecisionOnNonTimestamp => {
                write!(f, "precision applies to timestamp fields (rule {name})")
            }
            Self::BorrowedStrForm => write!(
                f,
                "a &str field decodes by borrowing the key's text, so it is a plain ascending string; \
                 use Cow<str> or String for an escaped or descending one (rule {name})"
            ),
            Self::NestedOption => write!(
                f,
                "an Option of an Option has no key form: None and Some(None) would be one key (rule {name})"
            ),
            Self::DelimiterNotAscii { delimiter } => write!(
                f,
                "the delimiter must be an ASCII character, not {delimiter:?} (rule {name})"
            ),
            Self::DelimiterAlphanumeric { delimiter } => write!(
                f,
                "the delimiter {delimiter:?} is a letter or digit, which field values hold; use punctuation below \
                 `-`, such as `,` (rule {name})"
            ),
            Self::DelimiterTooHigh { delimiter } => write!(
                f,
                "the delimiter {delimiter:?} must sort below 0x7f, so that the byte after it, where key ranges end, \
                 is ASCII (rule {name})"
            ),
            Self::DelimiterFloor { delimiter, floor } => write!(
                f,
                "the delimiter {delimiter:?} does not sort below {floor:?}, which this field can hold, so a shorter value \
                 would not sort before a longer one; use a delimiter below {floor:?}, such as `,` (rule {name})"
            ),
            Self::HashLen { len, max } => write!(
                f,
                "a hash prefix of this digest takes 1 to {max} hex characters, not {len} (rule {name})"
            ),
            Self::BucketCount { count } => write!(
                f,
                "a bucket prefix has 1 to {MAX_BUCKETS} buckets, not {count} (rule {name})"
            ),
            Self::HashRuns { runs } => write!(
                f,
                "a bucket hash covers at most {MAX_HASH_RUNS} separate runs of fields, not {runs} (rule {name})"
            ),
            Self::ModuloField => write!(
                f,
                "a modulo bucket prefix needs an integer field that is not optional (rule {name})"
            ),
            Self::HashLeadingFields => write!(
                f,
                "a hash prefix over chosen fields names the first fields of the key, in key order, so that \
                 fixing them fixes the prefix (rule {name})"
            ),
            Self::NestedAttributes => write!(
                f,
                "width, desc and escaped apply to fields, not to a nested key: mark its own fields (rule {name})"
            ),
            Self::FieldName => write!(
                f,
                "a field name is letters, digits and `_`, does not start with a digit, and may join such \
                 names with `.` (rule {name})"
            ),
            Self::KeyLen {
                max_len,
                prefix_len,
            } if max_len > MAX_KEY_LEN => write!(
                f,
                "a key limit of {max_len} bytes is over the largest limit, {MAX_KEY_LEN} (prefix {prefix_len} \
                 bytes) (rule {name})"
            ),
            Self::KeyLen {
                max_len,
                prefix_len,
            } => write!(
                f,
                "a key limit of {max_len} bytes leaves no room after the {prefix_len}-byte prefix (rule {name})"
            ),
        }
    }
}

/// Checks the delimiter on its own: ASCII, not a letter or digit, below `0x7f`.
///
/// # Errors
///
/// The [`Rule`] the delimiter breaks.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub const fn check_delimiter(delimiter: char) -> Result<u8, Rule> {
    if !delimiter.is_ascii() {
        return Err(Rule::DelimiterNotAscii { delimiter });
    }
    let d = delimiter as u8;
    if d.is_ascii_alphanumeric() {
        return Err(Rule::DelimiterAlphanumeric { delimiter });
    }
    if d >= 0x7f {
        return Err(Rule::DelimiterTooHigh { delimiter });
    }
    Ok(d)
}

/// Checks that a field of `kind` may be given a width at all: only integers take one. A spec
/// holds width 0 for "no width", so [`FieldSpec::check`](crate::FieldSpec::check) cannot tell a
/// declared `width = 0` from none: a form that declares a width checks it here, whatever `N` is
/// (the derive's `#[pk(width = N)]` does; a layout config refuses a declared width on a kind
/// without one when it is loaded).
///
/// # Errors
///
/// [`Rule::WidthOnNonInteger`].
///
/// # Examples
///
/// ```
/// use pk_codec::rules::check_width_declared;
/// use pk_codec::{IntBits, Kind, Rule};
///
/// assert_eq!(check_width_declared(Kind::Uint { bits: IntBits::B32 }), Ok(()));
/// assert_eq!(check_width_declared(Kind::Str), Err(Rule::WidthOnNonInteger));
/// ```
#[cfg_attr(debug_assertions, inline)]
pub const fn check_width_declared(kind: Kind) -> Result<(), Rule> {
    if kind.width_form().is_some() {
        Ok(())
    } else {
        Err(Rule::WidthOnNonInteger)
    }
}

/// Checks the fields a bucket hash covers, given as one flag per field in key order (a key
/// spliced in as a field is one flag): at most [`MAX_HASH_RUNS`] runs of adjacent hashed fields.
///
/// # Errors
///
/// [`Rule::HashRuns`].
///
/// # Examples
///
/// ```
/// use pk_codec::rules::check_hash_runs;
///
/// assert!(check_hash_runs(&[true; 20]).is_ok()); // one run
/// assert!(check_hash_runs(&[true, false, true, false, true, false, true, false, true, false, true,
///     false, true, false, true, false, true]).is_err()); // nine runs
/// ```
#[cfg_attr(debug_assertions, inline)]
pub const fn check_hash_runs(hashed: &[bool]) -> Result<(), Rule> {
    let runs = hash_runs(hashed);
    if runs > MAX_HASH_RUNS {
        return Err(Rule::HashRuns { runs });
    }
    Ok(())
}

/// The number of runs of adjacent `true`s.
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn hash_runs(hashed: &[bool]) -> usize {
    let mut runs = 0;
    let mut i = 0;
    while i < hashed.len() {
        if hashed[i] && (i == 0 || !hashed[i - 1]) {
            runs += 1;
        }
        i += 1;
    }
    runs
}

/// Checks the fields a hash prefix covers, one flag per field in key order: one or more leading
/// fields and nothing after them.
///
/// # Errors
///
/// [`Rule::HashLeadingFields`].
#[cfg_attr(debug_assertions, inline)]
pub const fn check_hash_leading(hashed: &[bool]) -> Result<(), Rule> {
    if hashed.is_empty() || !hashed[0] || hash_runs(hashed) != 1 {
        return Err(Rule::HashLeadingFields);
    }
    Ok(())
}

/// Checks the field a modulo bucket reads: an integer, not optional.
///
/// # Errors
///
/// [`Rule::ModuloField`].
#[cfg_attr(debug_assertions, inline)]
pub const fn check_modulo_field(spec: &FieldSpec) -> Result<(), Rule> {
    if spec.kind().is_integer() && !spec.is_optional() {
        Ok(())
    } else {
        Err(Rule::ModuloField)
    }
}

/// Checks a field name: one or more parts joined by `.`, each ASCII letters, digits and `_`, not
/// empty and not starting with a digit (`device_id`, or `card.device_id` for a field of a key
/// spliced into a derived key).
///
/// # Errors
///
/// [`Rule::FieldName`].
#[cfg_attr(debug_assertions, inline)]
pub const fn check_field_name(name: &str) -> Result<(), Rule> {
    let b = name.as_bytes();
    let mut part_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            if part_start {
                return Err(Rule::FieldName);
            }
            part_start = true;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            if part_start && c.is_ascii_digit() {
                return Err(Rule::FieldName);
            }
            part_start = false;
        } else {
            return Err(Rule::FieldName);
        }
        i += 1;
    }
    if part_start {
        Err(Rule::FieldName)
    } else {
        Ok(())
    }
}

/// The width range of a kind that takes a width.
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn width_range(kind: Kind) -> Option<(u8, u8)> {
    match kind.width_form() {
        Some(signed) => Some(int_width_range(signed)),
        None => None,
    }
}

/// The width range of an integer field, signed or not.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn int_width_range(signed: bool) -> (u8, u8) {
    if signed {
        (MIN_WIDTH_SIGNED, MAX_WIDTH)
    } else {
        (MIN_WIDTH_UNSIGNED, MAX_WIDTH)
    }
}

/// The rule `width-range` for an integer field of `width` characters in `(min, max)` (its
/// [`width_range`]): what [`FieldSpec::check`](crate::FieldSpec::check) checks, and what the
/// integer writers check again for a spec that was never checked (for a constant width it folds
/// away).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) const fn check_int_width(width: u8, (min, max): (u8, u8)) -> Result<(), Rule> {
    if width < min || width > max {
        return Err(Rule::WidthRange { width, min, max });
    }
    Ok(())
}

// The field rules of a spec: written here, in the rulebook, over the spec's accessors
// (`field_spec.rs` holds the spec as data, below the rulebook).
impl FieldSpec {
    /// Checks the spec on its own and against the layout's delimiter: the rulebook's field rules
    /// ([`rules`](crate::rules)).
    ///
    /// # Errors
    ///
    /// The [`Rule`] the field breaks.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, Kind, Rule};
    ///
    /// let name = FieldSpec::new(Kind::Str).optional();
    /// assert_eq!(name.check(b','), Ok(()));
    /// // `Some("")` is written `=`: a delimiter at or above `=` cannot order it.
    /// assert_eq!(name.check(b'_'), Err(Rule::DelimiterFloor { delimiter: '_', floor: '=' }));
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub const fn check(&self, delimiter: u8) -> Result<(), Rule> {
        if let Err(rule) = self.check_own() {
            return Err(rule);
        }
        check_delimiter_floor(delimiter, self.delimiter_floor())
    }

    /// [`FieldSpec::check`] but for the delimiter: the field's own rules (width, forms). The
    /// derive checks the delimiter apart ([`check_delimiter_floor`]), to report it on the
    /// `delimiter` attribute.
    ///
    /// # Errors
    ///
    /// The [`Rule`] the field breaks.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, Kind, Rule};
    ///
    /// let name = FieldSpec::new(Kind::Str).optional();
    /// assert_eq!(name.check_own(), Ok(()));
    /// assert_eq!(FieldSpec::new(Kind::Bytes).escaped().check_own(), Err(Rule::EscapedOnNonString));
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub const fn check_own(&self) -> Result<(), Rule> {
        match width_range(self.kind()) {
            Some(range) => {
                if let Err(rule) = check_int_width(self.width(), range) {
                    return Err(rule);
                }
            }
            None => {
                if self.width() != 0
                    && let Err(rule) = check_width_declared(self.kind())
                {
                    return Err(rule);
                }
            }
        }
        if self.is_escaped() && !self.kind().takes_escaped() {
            return Err(Rule::EscapedOnNonString);
        }
        if self.has_precision() && !self.kind().takes_precision() {
            return Err(Rule::PrecisionOnNonTimestamp);
        }
        if let Some((param, value, min, max)) = self.kind().param_fault(self.width()) {
            return Err(Rule::ParamRange {
                param,
                value,
                min,
                max,
            });
        }
        Ok(())
    }
}

/// Checks a delimiter against the lowest byte a field can hold (`floor`, `None` for a field that
/// never meets the delimiter): the delimiter must sort below it, so that a shorter value sorts
/// before a longer one. Runtime layouts and the derive (for fields and spliced keys alike) call
/// it.
///
/// # Errors
///
/// [`Rule::DelimiterFloor`].
///
/// # Examples
///
/// ```
/// use pk_codec::Rule;
/// use pk_codec::rules::check_delimiter_floor;
///
/// assert_eq!(check_delimiter_floor(b',', Some(b'-')), Ok(()));
/// assert_eq!(check_delimiter_floor(b'.', None), Ok(()));
/// assert_eq!(
///     check_delimiter_floor(b'.', Some(b'-')),
///     Err(Rule::DelimiterFloor { delimiter: '.', floor: '-' })
/// );
/// ```
#[cfg_attr(debug_assertions, inline)]
pub const fn check_delimiter_floor(delimiter: u8, floor: Option<u8>) -> Result<(), Rule> {
    match floor {
        Some(floor) if delimiter >= floor => Err(Rule::DelimiterFloor {
            delimiter: delimiter as char,
            floor: floor as char,
        }),
        _ => Ok(()),
    }
}

/// Fails compilation (in a constant) or panics (at run time) with the rule's summary: how the
/// derive's generated constants report a broken rule.
#[track_caller]
pub(crate) const fn enforce<T: Copy>(checked: Result<T, Rule>) -> T {
    match checked {
        Ok(v) => v,
        Err(rule) => panic!("{}", rule.summary()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_count_adjacent_fields_once() {
        assert_eq!(hash_runs(&[]), 0);
        assert_eq!(hash_runs(&[false, true, true, false, true]), 2);
        assert_eq!(hash_runs(&[true; 9]), 1);
    }

    #[test]
    fn field_names() {
        for ok in ["a", "device_id", "_0", "card.device_id", "a.b.c9"] {
            assert_eq!(check_field_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "9a", "a.", ".a", "a..b", "a.9", "déjà", "a-b", "a b"] {
            assert_eq!(check_field_name(bad), Err(Rule::FieldName), "{bad}");
        }
    }

    #[test]
    fn delimiter_rules() {
        assert_eq!(check_delimiter(','), Ok(b','));
        assert_eq!(check_delimiter('\0'), Ok(0));
        assert_eq!(
            check_delimiter('\x7f'),
            Err(Rule::DelimiterTooHigh { delimiter: '\x7f' })
        );
        assert_eq!(
            check_delimiter('é'),
            Err(Rule::DelimiterNotAscii { delimiter: 'é' })
        );
        assert_eq!(
            check_delimiter('a'),
            Err(Rule::DelimiterAlphanumeric { delimiter: 'a' })
        );
    }
}

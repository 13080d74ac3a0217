//! [`KeyWriter`] and [`KeyReader`]: the field-by-field engine under runtime layouts and derived keys.

use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::num::{self, IntParse};
use crate::prefix::{BucketSeed, BucketValue};
use crate::text::{self, DESC_NONE, SOME_MARKER};

/// Writes the fields of one key, in order, into a `String`.
///
/// Obtained from [`KeyShape::encode_with`](crate::KeyShape::encode_with); each field is written
/// by one call of a kind's method after [`KeyWriter::begin_field`]. Derived code and runtime
/// layouts go through these same methods, which is why both produce the same bytes.
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, IntBits, Kind, KeyShape};
///
/// let shape = KeyShape::new(b',');
/// let mut key = String::new();
/// shape.encode_with(&mut key, |w| {
///     w.begin_field();
///     w.uint64(&FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6), "device_id", 54)?;
///     w.begin_field();
///     w.str(&FieldSpec::new(Kind::Str), "seller_id", "a100")
/// })?;
/// assert_eq!(key, "000054,a100");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug)]
pub struct KeyWriter<'a> {
    pub(crate) out: &'a mut String,
    pub(crate) delimiter: u8,
    start: usize,
    pub(crate) fields: usize,
    pub(crate) seed: BucketSeed,
}

impl<'a> KeyWriter<'a> {
    #[inline]
    pub(crate) fn new(out: &'a mut String, delimiter: u8) -> Self {
        let start = out.len();
        Self {
            out,
            delimiter,
            start,
            fields: 0,
            seed: BucketSeed::default(),
        }
    }

    /// Starts the next field: writes the delimiter unless this is the first field.
    #[inline]
    pub fn begin_field(&mut self) {
        if self.fields > 0 {
            self.out.push(char::from(self.delimiter));
        }
        self.fields += 1;
    }

    /// The current length of the output, for [`KeyWriter::bucket_span`].
    #[inline]
    #[must_use]
    pub fn position(&self) -> usize {
        self.out.len()
    }

    /// Declares that the bytes from `start` to the current position are hashed to pick the bucket.
    /// `start` is a [`KeyWriter::position`] taken in this key; any other position makes the key's
    /// encoding fail with [`Error::InvalidLayout`](crate::Error::InvalidLayout).
    #[inline]
    pub fn bucket_span(&mut self, start: usize) {
        let end = self.out.len();
        self.seed.add_key_span(self.start, start, end);
    }

    /// Declares the integer whose `value % count` picks the bucket.
    #[inline]
    pub fn bucket_value(&mut self, value: impl Into<BucketValue>) {
        self.seed.value = Some(value.into());
    }

    /// Appends the delimiter, for a caller that tracks the fields itself (a runtime layout,
    /// whose plan knows which fields follow another), in place of [`KeyWriter::begin_field`].
    /// (`begin_field` keeps its own plain push: routed through this, a derived key's encoding
    /// measured 371 -> 401 instructions per student-card key under callgrind.)
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn delimiter(&mut self) {
        push_delimiter(self.out, self.delimiter);
    }

    /// Appends the delimiter when `LEAD`, then `v`, which must fit `WIDTH` digits, at that width
    /// and order: for a runtime layout, which tracks the fields itself (see
    /// [`KeyWriter::delimiter`]); delimiter and digits are one append.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn uint_digits_fixed<const LEAD: bool, const WIDTH: u8, const DESC: bool>(
        &mut self,
        v: u64,
    ) {
        push_lead_uint::<LEAD>(self.out, self.delimiter, v, WIDTH, DESC);
    }

    /// Writes `None` of an optional field (nothing when ascending, `~` when descending).
    #[inline]
    pub fn none(&mut self, spec: &FieldSpec, field: &str) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        if spec.is_descending() {
            self.out.push(char::from(DESC_NONE));
        }
    }

    /// Writes what comes before `Some` of an optional field: the `=` marker when the value's own
    /// form may be empty, else nothing.
    #[inline]
    pub fn some(&mut self, spec: &FieldSpec, field: &str) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        if spec.inner_may_be_empty() {
            self.out.push(char::from(SOME_MARKER));
        }
    }
}

/// The rule `width-range` at a reader, as the writers check it: a spec built by hand may carry
/// any width, and a width the writers refuse reads no key (width 0 has no digits: reading it
/// indexed past the field).
#[inline]
pub(crate) fn check_int_width(spec: &FieldSpec, signed: bool, field: &str) -> Result<()> {
    crate::rules::check_int_width(spec.width(), crate::rules::int_width_range(signed))
        .map_err(|rule| Error::broken(Some(field), rule))
}

/// Reads the fields of one key, in order, checking every byte.
///
/// Obtained from [`KeyShape::decode_with`](crate::KeyShape::decode_with); the mirror of
/// [`KeyWriter`].
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, IntBits, Kind, KeyShape};
///
/// let shape = KeyShape::new(b',');
/// let (device, seller) = shape.decode_with("000054,a100", |r| {
///     r.begin_field("device_id")?;
///     let device = r.uint64(&FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6), "device_id", u32::MAX.into())?;
///     r.begin_field("seller_id")?;
///     let seller = r.str(&FieldSpec::new(Kind::Str), "seller_id")?;
///     Ok((device, seller))
/// })?;
/// assert_eq!((device, seller.as_str()), (54, "a100"));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug)]
pub struct KeyReader<'a> {
    pub(crate) key: &'a str,
    pub(crate) pos: usize,
    natural_start: usize,
    pub(crate) delimiter: u8,
    pub(crate) fields: usize,
    pub(crate) seed: BucketSeed,
}

impl<'a> KeyReader<'a> {
    #[inline]
    pub(crate) fn new(key: &'a str, natural_start: usize, delimiter: u8) -> Self {
        Self {
            key,
            pos: natural_start,
            natural_start,
            delimiter,
            fields: 0,
            seed: BucketSeed::default(),
        }
    }

    /// The error at byte `at` of the key. Takes no reader: the reader's cold paths take it by
    /// value or its parts, never by reference, so that a decode's reader can stay in registers.
    #[cold]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn fault(field: &str, at: usize, reason: impl Into<String>) -> Error {
        Error::malformed(Some(field), at, reason)
    }

    /// Starts the next field: expects the delimiter unless this is the first field.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] when the key ends or holds another byte where the delimiter belongs.
    #[inline]
    pub fn begin_field(&mut self, field: &str) -> Result<()> {
        if self.fields > 0 {
            if self.key.as_bytes().get(self.pos) != Some(&self.delimiter) {
                return Err(Self::no_delimiter(
                    self.key,
                    self.pos,
                    self.delimiter,
                    field,
                ));
            }
            self.pos += 1;
        }
        self.fields += 1;
        Ok(())
    }

    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn no_delimiter(key: &str, pos: usize, delimiter: u8, field: &str) -> Error {
        match key[pos..].chars().next() {
            Some(found) => Self::fault(
                field,
                pos,
                format!(
                    "expected the delimiter {:?} before this field, found {found:?}",
                    char::from(delimiter)
                ),
            ),
            None => Self::fault(field, pos, "key ends before this field"),
        }
    }

    /// The current read position, for [`KeyReader::bucket_span`].
    #[inline]
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Declares that the bytes from `start` to the current position were hashed to pick the bucket.
    /// `start` is a [`KeyReader::position`] taken in this key; any other position makes the
    /// decoding fail with [`Error::InvalidLayout`](crate::Error::InvalidLayout).
    #[inline]
    pub fn bucket_span(&mut self, start: usize) {
        let end = self.pos;
        self.seed.add_key_span(self.natural_start, start, end);
    }

    /// Declares the integer whose `value % count` picked the bucket.
    #[inline]
    pub fn bucket_value(&mut self, value: impl Into<BucketValue>) {
        self.seed.value = Some(value.into());
    }

    /// Whether the whole key has been read.
    #[inline]
    #[must_use]
    pub fn at_end(&self) -> bool {
        self.pos == self.key.len()
    }

    #[inline]
    pub(crate) fn finish(&self) -> Result<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(Error::malformed(
                None,
                self.pos,
                format!(
                    "unexpected text {:?} after the last field",
                    &self.key[self.pos..]
                ),
            ))
        }
    }

    /// Takes exactly `n` bytes.
    #[inline]
    pub(crate) fn take_fixed(&mut self, field: &str, n: usize) -> Result<&'a [u8]> {
        let bytes = self.key.as_bytes();
        match bytes.get(self.pos..self.pos + n) {
            Some(text) => {
                self.pos += n;
                Ok(text)
            }
            None => Err(Self::fault(
                field,
                self.pos,
                format!("expected {n} characters, found {}", bytes.len() - self.pos),
            )),
        }
    }

    /// Takes the text up to the next delimiter (or the end).
    #[inline]
    pub(crate) fn take_until_delimiter(&mut self) -> (usize, &'a str) {
        let start = self.pos;
        let rest = &self.key.as_bytes()[start..];
        let len = rest
            .iter()
            .position(|&b| b == self.delimiter)
            .unwrap_or(rest.len());
        self.pos += len;
        // The delimiter is ASCII, so this cuts on a character boundary.
        (start, &self.key[start..start + len])
    }

    pub(crate) fn int_error<T>(
        &self,
        field: &str,
        start: usize,
        spec: &FieldSpec,
        parse: IntParse<T>,
    ) -> Result<T> {
        match parse {
            IntParse::Value(v) => Ok(v),
            IntParse::BadByte(at) => {
                let b = self.key.as_bytes()[start + at];
                let what = if spec.kind().width_form() == Some(true) && at == 0 {
                    "the sign `0` or `-`"
                } else {
                    "a digit"
                };
                Err(Self::fault(
                    field,
                    start + at,
                    format!(
                        "expected {what}, found {:?}",
                        self.key[start + at..]
                            .chars()
                            .next()
                            .unwrap_or(char::from(b))
                    ),
                ))
            }
            IntParse::OutOfRange(value) => Err(Self::fault(
                field,
                start,
                format!("value {value} does not fit in {}", spec.kind().name()),
            )),
        }
    }

    /// The integer slow paths: `parse` reads the field's text, on a reader of its own (so that
    /// this reader is not taken by reference, see [`KeyReader::fault`]); the position moves
    /// past the field when it holds a value.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn slow_int<T>(
        &mut self,
        spec: &FieldSpec,
        field: &str,
        parse: impl FnOnce(&[u8]) -> IntParse<T>,
    ) -> Result<T> {
        let (v, pos) = Self::slow_int_at(self.key, self.pos, spec, field, parse)?;
        self.pos = pos;
        Ok(v)
    }

    /// [`KeyReader::slow_int`] at `pos`: the value and the position after it.
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn slow_int_at<T>(
        key: &'a str,
        pos: usize,
        spec: &FieldSpec,
        field: &str,
        parse: impl FnOnce(&[u8]) -> IntParse<T>,
    ) -> Result<(T, usize)> {
        let mut r = KeyReader::new(key, pos, 0);
        let text = r.take_fixed(field, usize::from(spec.width()))?;
        let v = r.int_error(field, pos, spec, parse(text))?;
        Ok((v, r.pos))
    }

    /// Takes the read position back to `at` (a position this reader reported).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn rewind(&mut self, at: usize) {
        self.pos = at;
    }

    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn desc_bytes(&mut self, field: &str) -> Result<Vec<u8>> {
        let start = self.pos;
        let (bytes, used) = text::read_desc_bytes(&self.key[start..])
            .map_err(|(at, why)| Self::fault(field, start + at, why))?;
        self.pos += used;
        Ok(bytes)
    }

    /// Reads `N` bytes of lower-case hex as a big-endian number.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn fixed_hex(&mut self, field: &str, digits: usize) -> Result<u128> {
        let start = self.pos;
        let text = self.take_fixed(field, digits)?;
        let mut v = 0u128;
        for (i, &b) in text.iter().enumerate() {
            match text::hex_value(b) {
                Some(d) => v = v << 4 | u128::from(d),
                None => {
                    self.pos = start;
                    let found = self.key[start + i..].chars().next().unwrap_or('?');
                    return Err(Self::fault(
                        field,
                        start + i,
                        format!("expected a lower-case hex digit, found {found:?}"),
                    ));
                }
            }
        }
        Ok(v)
    }

    /// Whether an optional field holds `None` (consuming it when it does).
    #[inline]
    pub fn none(&mut self, spec: &FieldSpec, field: &str) -> bool {
        // Never an error: the name is taken to mirror the writer.
        let _ = field;
        let next = self.key.as_bytes().get(self.pos).copied();
        if spec.is_descending() {
            if next == Some(DESC_NONE) {
                self.pos += 1;
                return true;
            }
            false
        } else {
            next.is_none() || next == Some(self.delimiter)
        }
    }

    /// Reads what comes before `Some` of an optional field (see [`KeyWriter::some`]).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] when the `=` marker is missing.
    #[inline]
    pub fn some(&mut self, spec: &FieldSpec, field: &str) -> Result<()> {
        if spec.inner_may_be_empty() {
            if self.key.as_bytes().get(self.pos) != Some(&SOME_MARKER) {
                return Err(Self::fault(
                    field,
                    self.pos,
                    "expected `=` before an optional value",
                ));
            }
            self.pos += 1;
        }
        Ok(())
    }
}

/// Appends the delimiter: [`KeyWriter::delimiter`], for a runtime layout's whole-key path too,
/// which writes without a writer.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn push_delimiter(out: &mut String, delimiter: u8) {
    // Every layout's delimiter is ASCII (rule `delimiter-ascii`): then the push is one byte's
    // store. `String::push` of a character known only at run time stayed a call in a layout's
    // loop (26 instructions per key, callgrind); a one-byte `&str` is a store.
    if delimiter.is_ascii() {
        let mut buf = [0u8; 4];
        out.push_str(char::from(delimiter).encode_utf8(&mut buf));
    } else {
        push_wide_delimiter(out, delimiter);
    }
}

#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn push_wide_delimiter(out: &mut String, delimiter: u8) {
    out.push(char::from(delimiter));
}

/// Appends `delimiter` when `LEAD`, then `v`, which must fit `width` digits, at that width and
/// order, in one append: [`KeyWriter::uint_digits_fixed`], for a runtime layout's whole-key path
/// too.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn push_lead_uint<const LEAD: bool>(
    out: &mut String,
    delimiter: u8,
    v: u64,
    width: u8,
    desc: bool,
) {
    if LEAD {
        num::push_u64_fitting_after(out, delimiter, v, width, desc);
    } else {
        num::push_u64_fitting(out, v, width, desc);
    }
}

/// Appends `delimiter` when `LEAD`, then `s` in the plain ascending string form, answering
/// whether it could: nothing is written, delimiter included, for a string with a byte at or
/// below the delimiter. [`KeyWriter::try_lead_plain_str`], for a runtime layout's whole-key path
/// too.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn push_lead_plain_str<const LEAD: bool>(
    out: &mut String,
    delimiter: u8,
    s: &str,
) -> bool {
    if text::plain_len(s.as_bytes(), delimiter) != s.len() {
        return false;
    }
    if LEAD {
        push_delimiter(out, delimiter);
    }
    out.push_str(s);
    true
}

/// The unsigned integer of `width` digits at byte `pos` of `key` (after `delimiter` when `LEAD`)
/// and the position after it, if its text is the fast path's (at most `max`): what
/// [`KeyReader::lead_uint64_fast`] reads, for a runtime layout's whole-key path too, which reads
/// without a reader. `None` when the text is not there or not the fast path's.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn lead_uint_at<const LEAD: bool>(
    key: &str,
    pos: usize,
    delimiter: u8,
    max: u64,
    width: u8,
    desc: bool,
) -> Option<(u64, usize)> {
    let end = pos + usize::from(LEAD) + usize::from(width);
    let text = key.as_bytes().get(pos..end)?;
    let digits = if LEAD {
        let (&first, digits) = text.split_first()?;
        if first != delimiter {
            return None;
        }
        digits
    } else {
        text
    };
    let v = num::parse_u64_fast(digits, desc).filter(|&v| v <= max)?;
    Some((v, end))
}

/// The plain ascending string at byte `pos` of `key` (after `delimiter` when `LEAD`) and the
/// position after it: its bytes up to the next delimiter or the key's end, all above the
/// delimiter. What [`KeyReader::lead_try_plain_str`] reads, for a runtime layout's whole-key
/// path too. `None` when the delimiter is missing or a byte at or below it ends the text.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn lead_plain_str_at<const LEAD: bool>(
    key: &str,
    pos: usize,
    delimiter: u8,
) -> Option<(&str, usize)> {
    let bytes = key.as_bytes();
    let mut start = pos;
    if LEAD {
        if bytes.get(start) != Some(&delimiter) {
            return None;
        }
        start += 1;
    }
    let rest = bytes.get(start..)?;
    let len = text::plain_len(rest, delimiter);
    if rest.get(len).is_some_and(|&b| b != delimiter) {
        return None;
    }
    // The bytes before and after the text are the ASCII delimiter or the key's ends:
    // character boundaries.
    let s = key.get(start..start + len)?;
    Some((s, start + len))
}

//! [`KeyWriter`] and [`KeyReader`]: the field-by-field engine under runtime layouts and derived keys.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::field_spec::{FieldSpec, Kind, Order};
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
    out: &'a mut String,
    delimiter: u8,
    start: usize,
    fields: usize,
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

    /// Writes an unsigned integer of up to 64 bits.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`] when it does not fit the spec's width.
    #[inline]
    pub fn uint64(&mut self, spec: &FieldSpec, field: &str, v: u64) -> Result<()> {
        num::write_u64(self.out, v, spec.width(), spec.is_descending(), field)
    }

    /// Appends the delimiter, for a caller that tracks the fields itself (a runtime layout,
    /// whose plan knows which fields follow another), in place of [`KeyWriter::begin_field`].
    /// (`begin_field` keeps its own plain push: routed through this, a derived key's encoding
    /// measured 371 -> 401 instructions per student-card key under callgrind.)
    #[inline(always)]
    pub(crate) fn delimiter(&mut self) {
        push_delimiter(self.out, self.delimiter);
    }

    /// Appends the delimiter when `LEAD`, then `v`, which must fit `WIDTH` digits, at that width
    /// and order: for a runtime layout, which tracks the fields itself (see
    /// [`KeyWriter::delimiter`]); delimiter and digits are one append.
    #[inline(always)]
    pub(crate) fn uint_digits_fixed<const LEAD: bool, const WIDTH: u8, const DESC: bool>(
        &mut self,
        v: u64,
    ) {
        push_lead_uint::<LEAD>(self.out, self.delimiter, v, WIDTH, DESC);
    }

    /// Writes `s` in the plain ascending string form, answering whether it could: nothing is
    /// written for a string with a byte at or below the delimiter.
    #[inline(always)]
    pub(crate) fn try_plain_str(&mut self, s: &str) -> bool {
        self.try_lead_plain_str::<false>(s)
    }

    /// [`KeyWriter::try_plain_str`], after the delimiter when `LEAD` (for a runtime layout, see
    /// [`KeyWriter::delimiter`]); when it declines, it writes nothing, delimiter included.
    #[inline(always)]
    pub(crate) fn try_lead_plain_str<const LEAD: bool>(&mut self, s: &str) -> bool {
        push_lead_plain_str::<LEAD>(self.out, self.delimiter, s)
    }

    /// Writes an unsigned 128-bit integer.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`] when it does not fit the spec's width.
    pub fn uint128(&mut self, spec: &FieldSpec, field: &str, v: u128) -> Result<()> {
        num::write_u128(self.out, v, spec.width(), spec.is_descending(), field)
    }

    /// Writes a signed integer of up to 64 bits.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`] when it does not fit the spec's width.
    #[inline]
    pub fn int64(&mut self, spec: &FieldSpec, field: &str, v: i64) -> Result<()> {
        num::write_i64(self.out, v, spec.width(), spec.is_descending(), field)
    }

    /// Writes a signed 128-bit integer.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`] when it does not fit the spec's width.
    pub fn int128(&mut self, spec: &FieldSpec, field: &str, v: i128) -> Result<()> {
        num::write_i128(self.out, v, spec.width(), spec.is_descending(), field)
    }

    /// Writes a string (plain, escaped or descending, as the spec says).
    ///
    /// # Errors
    ///
    /// [`Error::CharBelowDelimiter`] when a plain string holds a byte at or below the delimiter.
    #[inline(always)]
    pub fn str(&mut self, spec: &FieldSpec, field: &str, s: &str) -> Result<()> {
        if spec.is_descending() || spec.is_escaped() {
            self.str_encoded(spec, s);
            return Ok(());
        }
        // The plain form, inlined: one scan checks the bytes, one copy writes them.
        if self.try_plain_str(s) {
            Ok(())
        } else {
            Err(Self::below_delimiter(self.delimiter, field, s))
        }
    }

    /// The escaped and descending string forms, which accept every string.
    #[inline(never)]
    fn str_encoded(&mut self, spec: &FieldSpec, s: &str) {
        if spec.is_descending() {
            text::write_desc_bytes(self.out, s.as_bytes());
        } else {
            text::write_escaped(self.out, s);
        }
    }

    #[cold]
    #[inline(never)]
    fn below_delimiter(delimiter: u8, field: &str, s: &str) -> Error {
        let offset = text::plain_len(s.as_bytes(), delimiter);
        Error::CharBelowDelimiter {
            field: field.to_owned(),
            // At or below an ASCII delimiter: an ASCII byte, a whole character.
            ch: char::from(s.as_bytes()[offset]),
            offset,
            delimiter: char::from(delimiter),
        }
    }

    /// Writes a byte string (hex, or descending).
    pub fn bytes(&mut self, spec: &FieldSpec, field: &str, b: &[u8]) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        match spec.order() {
            Order::Asc => text::write_hex(self.out, b),
            Order::Desc => text::write_desc_bytes(self.out, b),
        }
    }

    /// Writes a boolean.
    #[inline]
    pub fn bool(&mut self, spec: &FieldSpec, field: &str, b: bool) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let one = b != spec.is_descending();
        self.out.push(if one { '1' } else { '0' });
    }

    /// Writes a character.
    pub fn char(&mut self, spec: &FieldSpec, field: &str, c: char) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let mut buf = [0u8; 4];
        let s = c.encode_utf8(&mut buf);
        match spec.order() {
            Order::Asc => text::write_escaped(self.out, s),
            Order::Desc => text::write_desc_bytes(self.out, s.as_bytes()),
        }
    }

    /// Writes an `f32` (total order; 8 hex digits).
    #[inline]
    pub fn f32(&mut self, spec: &FieldSpec, field: &str, v: f32) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let k = crate::float::f32_key(v);
        let k = if spec.is_descending() { !k } else { k };
        text::write_hex(self.out, &k.to_be_bytes());
    }

    /// Writes an `f64` (total order; 16 hex digits).
    #[inline]
    pub fn f64(&mut self, spec: &FieldSpec, field: &str, v: f64) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let k = crate::float::f64_key(v);
        let k = if spec.is_descending() { !k } else { k };
        text::write_hex(self.out, &k.to_be_bytes());
    }

    /// Writes a UUID given as its 16 bytes in big-endian order (32 hex digits).
    #[inline]
    pub fn uuid(&mut self, spec: &FieldSpec, field: &str, v: u128) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let v = if spec.is_descending() { !v } else { v };
        text::write_hex(self.out, &v.to_be_bytes());
    }

    /// Writes a timestamp given in nanoseconds since the Unix epoch, at the spec's precision.
    ///
    /// # Errors
    ///
    /// [`Error::ValueOutOfRange`] before year 0, after year 9999, or with digits below the
    /// field's precision (refused, not truncated, so that distinct instants keep distinct keys).
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str, nanos: i128) -> Result<()> {
        let precision = spec.precision();
        crate::timestamp::write(self.out, nanos, precision, spec.is_descending()).map_err(|why| {
            Error::ValueOutOfRange {
                field: field.to_owned(),
                value: format!("{nanos} ns since the epoch"),
                ty: match (why, precision) {
                    (crate::timestamp::Unwritable::OutOfRange, _) => {
                        "a timestamp (years 0000 to 9999)"
                    }
                    (_, crate::timestamp::Precision::Seconds) => "a timestamp of whole seconds",
                    (_, crate::timestamp::Precision::Millis) => "a timestamp of whole milliseconds",
                    (_, crate::timestamp::Precision::Micros) => "a timestamp of whole microseconds",
                    (_, crate::timestamp::Precision::Nanos) => "a timestamp",
                },
            }
        })
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
fn check_int_width(spec: &FieldSpec, signed: bool, field: &str) -> Result<()> {
    crate::rules::check_int_width(spec.width(), crate::rules::int_width_range(signed))
        .map_err(|rule| Error::broken(Some(field), rule))
}

#[cold]
#[inline(never)]
fn not_borrowable(field: &str) -> Error {
    Error::layout(
        Some(field),
        "only a plain ascending string can be borrowed from the key: its escaped or descending \
         text is not the string's bytes (read it as a `String` or a `Cow<str>`)",
    )
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
    key: &'a str,
    pos: usize,
    natural_start: usize,
    delimiter: u8,
    fields: usize,
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
    fn fault(field: &str, at: usize, reason: impl Into<String>) -> Error {
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
    #[inline(never)]
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
    fn take_fixed(&mut self, field: &str, n: usize) -> Result<&'a [u8]> {
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
    fn take_until_delimiter(&mut self) -> (usize, &'a str) {
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

    fn int_error<T>(
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
                let what = if matches!(spec.kind(), Kind::Int { .. }) && at == 0 {
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

    /// Reads an unsigned integer of up to 128 bits, at most `max`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for a short field, a non-digit or a value above `max`.
    #[inline]
    pub fn uint128(&mut self, spec: &FieldSpec, field: &str, max: u128) -> Result<u128> {
        let start = self.pos;
        let width = usize::from(spec.width());
        // Width 0 has no digits to read: the slow path refuses it (rule `width-range`).
        if width > 0
            && let Some(text) = self.key.as_bytes().get(start..start + width)
            && let Some(v) = num::parse_u64_fast(text, spec.is_descending())
            && u128::from(v) <= max
        {
            self.pos += width;
            return Ok(u128::from(v));
        }
        self.uint_slow(spec, field, max)
    }

    /// Reads an unsigned integer of up to 64 bits, at most `max`: [`KeyReader::uint128`] for the
    /// types that fit a `u64`, without 128-bit arithmetic on the way.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::uint128`].
    #[inline(always)]
    pub fn uint64(&mut self, spec: &FieldSpec, field: &str, max: u64) -> Result<u64> {
        self.uint64_as(spec, field, max, spec.width(), spec.is_descending())
    }

    /// [`KeyReader::uint64`] with the width and order given apart from the spec, so that a caller
    /// with constants gets straight-line code (the spec still names the kind in messages).
    #[inline(always)]
    fn uint64_as(
        &mut self,
        spec: &FieldSpec,
        field: &str,
        max: u64,
        width: u8,
        desc: bool,
    ) -> Result<u64> {
        if let Some(v) = self.uint64_fast(max, width, desc) {
            return Ok(v);
        }
        // Any failure: the slow path says what is wrong (its value, if any, is at most `max`).
        self.uint_slow(spec, field, u128::from(max))
            .map(|v| v as u64)
    }

    /// The fast path of [`KeyReader::uint64_as`]: the value when the next `width` bytes are
    /// its digits and it is at most `max`, consuming them; `None`, consuming nothing, otherwise.
    #[inline(always)]
    pub(crate) fn uint64_fast(&mut self, max: u64, width: u8, desc: bool) -> Option<u64> {
        let start = self.pos;
        let width = usize::from(width);
        // Width 0 has no digits to read: the slow path refuses it (rule `width-range`).
        if width == 0 {
            return None;
        }
        let text = self.key.as_bytes().get(start..start + width)?;
        let v = num::parse_u64_fast(text, desc).filter(|&v| v <= max)?;
        self.pos += width;
        Some(v)
    }

    /// [`KeyReader::uint64_fast`] for a runtime layout, which tracks the fields itself: when
    /// `LEAD`, the field's delimiter first (what [`KeyReader::begin_field`] expects of every
    /// field but the first); the field is counted as begun. When it declines it consumes nothing,
    /// delimiter included, and counts nothing: `begin_field` and the general reader then say what
    /// is wrong.
    #[inline(always)]
    pub(crate) fn lead_uint64_fast<const LEAD: bool>(
        &mut self,
        max: u64,
        width: u8,
        desc: bool,
    ) -> Option<u64> {
        let (v, end) = lead_uint_at::<LEAD>(self.key, self.pos, self.delimiter, max, width, desc)?;
        self.pos = end;
        self.fields += 1;
        Some(v)
    }

    /// What the integer fast paths declined: a value wider than 64 bits, or what is wrong.
    #[inline(always)]
    fn uint_slow(&mut self, spec: &FieldSpec, field: &str, max: u128) -> Result<u128> {
        check_int_width(spec, false, field)?;
        let desc = spec.is_descending();
        self.slow_int(spec, field, |text| num::read_uint(text, desc, max))
    }

    /// The integer slow paths: `parse` reads the field's text, on a reader of its own (so that
    /// this reader is not taken by reference, see [`KeyReader::fault`]); the position moves
    /// past the field when it holds a value.
    #[inline(always)]
    fn slow_int<T>(
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
    #[inline(never)]
    fn slow_int_at<T>(
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

    /// Reads a signed integer of up to 128 bits in `[min, max]`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for a short field, a bad sign, a non-digit or a value outside
    /// `[min, max]`.
    #[inline]
    pub fn int128(&mut self, spec: &FieldSpec, field: &str, min: i128, max: i128) -> Result<i128> {
        let start = self.pos;
        let width = usize::from(spec.width());
        if let Some(text) = self.key.as_bytes().get(start..start + width)
            && let Some((&sign, digits)) = text.split_first()
            // A sign without digits (width 1) is refused by the slow path (rule `width-range`).
            && !digits.is_empty()
            && (sign == b'0' || sign == b'-')
            && let Some(m) = num::parse_u64_fast(digits, sign == b'-')
        {
            // v = m for v >= 0, v = -(m + 1) for v < 0; then undo the descending `!v`.
            let v = if sign == b'-' {
                -i128::from(m) - 1
            } else {
                i128::from(m)
            };
            let v = if spec.is_descending() { !v } else { v };
            if v >= min && v <= max {
                self.pos += width;
                return Ok(v);
            }
        }
        self.int_slow(spec, field, min, max)
    }

    /// Reads a signed integer of up to 64 bits in `[min, max]`: [`KeyReader::int128`] for the
    /// types that fit an `i64`.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::int128`].
    #[inline]
    pub fn int64(&mut self, spec: &FieldSpec, field: &str, min: i64, max: i64) -> Result<i64> {
        // In `[min, max]`, so the value fits an `i64`.
        self.int128(spec, field, i128::from(min), i128::from(max))
            .map(|v| v as i64)
    }

    #[inline(always)]
    fn int_slow(&mut self, spec: &FieldSpec, field: &str, min: i128, max: i128) -> Result<i128> {
        check_int_width(spec, true, field)?;
        let desc = spec.is_descending();
        self.slow_int(spec, field, |text| num::read_int(text, desc, min, max))
    }

    /// Reads a string.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for a byte the form cannot hold, a bad escape or bad descending text.
    #[inline(always)]
    pub fn str(&mut self, spec: &FieldSpec, field: &str) -> Result<String> {
        if spec.is_descending() || spec.is_escaped() {
            return self.str_encoded(spec, field);
        }
        // The plain form, inlined: the borrowed read and one allocation.
        self.plain_str(field).map(str::to_owned)
    }

    /// The escaped and descending string forms.
    #[inline(never)]
    fn str_encoded(&mut self, spec: &FieldSpec, field: &str) -> Result<String> {
        match spec.order() {
            Order::Desc => {
                let start = self.pos;
                let bytes = self.desc_bytes(field)?;
                String::from_utf8(bytes).map_err(|e| {
                    // Each byte is two characters of the key: the bad sequence starts there.
                    let at = start + 2 * e.utf8_error().valid_up_to();
                    Self::fault(field, at, format!("descending string is not UTF-8: {e}"))
                })
            }
            Order::Asc if spec.is_escaped() => {
                let (start, text) = self.take_until_delimiter();
                text::read_escaped(text).map_err(|(at, why)| Self::fault(field, start + at, why))
            }
            Order::Asc => self.plain_str(field).map(str::to_owned),
        }
    }

    /// Reads a plain ascending string as a slice of the key, without allocating: what a borrowing
    /// decode (`&'a str` fields) calls.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLayout`] naming the field when its form is escaped or descending (their
    /// text is not the string's bytes: read them with [`KeyReader::str_cow`] or
    /// [`KeyReader::str`]); [`Error::Malformed`] for a byte a plain string cannot hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, IntBits, Kind, KeyShape};
    ///
    /// let shape = KeyShape::new(b',');
    /// let key = String::from("a100,7");
    /// let seller: &str = shape.decode_with(&key, |r| {
    ///     r.begin_field("seller_id")?;
    ///     let seller = r.str_ref(&FieldSpec::new(Kind::Str), "seller_id")?;
    ///     r.begin_field("n")?;
    ///     r.uint64(&FieldSpec::new(Kind::Uint { bits: IntBits::B8 }).with_width(1), "n", 9)?;
    ///     Ok(seller)
    /// })?;
    /// assert_eq!(seller, "a100");
    ///
    /// let escaped = FieldSpec::new(Kind::Str).escaped();
    /// assert!(shape.decode_with("a-2cb", |r| { r.begin_field("s")?; r.str_ref(&escaped, "s") }).is_err());
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[inline]
    pub fn str_ref(&mut self, spec: &FieldSpec, field: &str) -> Result<&'a str> {
        if spec.is_descending() || spec.is_escaped() {
            return Err(not_borrowable(field));
        }
        self.plain_str(field)
    }

    /// Reads a string of any form: borrowed from the key when its text is the string (plain
    /// ascending, or escaped text without an escape), owned otherwise.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::str`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use pk_codec::{FieldSpec, Kind, KeyShape};
    ///
    /// let shape = KeyShape::new(b',');
    /// let escaped = FieldSpec::new(Kind::Str).escaped();
    /// let read = |key| shape.decode_with(key, |r| { r.begin_field("s")?; r.str_cow(&escaped, "s") });
    /// assert!(matches!(read("a100")?, Cow::Borrowed("a100")));
    /// assert_eq!(read("a-2cb")?, "a,b");
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[inline]
    pub fn str_cow(&mut self, spec: &FieldSpec, field: &str) -> Result<Cow<'a, str>> {
        match spec.order() {
            Order::Asc if !spec.is_escaped() => self.plain_str(field).map(Cow::Borrowed),
            Order::Asc => {
                let (start, text) = self.take_until_delimiter();
                if !text.as_bytes().contains(&text::ESCAPE) {
                    if let Some((at, why)) = text::escaped_fault(text) {
                        return Err(Self::fault(field, start + at, why));
                    }
                    return Ok(Cow::Borrowed(text));
                }
                text::read_escaped(text)
                    .map(Cow::Owned)
                    .map_err(|(at, why)| Self::fault(field, start + at, why))
            }
            Order::Desc => self.str(spec, field).map(Cow::Owned),
        }
    }

    /// A plain string: the text up to the next delimiter, every byte above it. One scan finds
    /// the end and checks the bytes: the first byte at or below the delimiter must be the
    /// delimiter (or the key must end there).
    #[inline(always)]
    pub(crate) fn plain_str(&mut self, field: &str) -> Result<&'a str> {
        match self.try_plain_str() {
            Some(s) => Ok(s),
            None => Err(Self::not_plain(self.key, self.pos, self.delimiter, field)),
        }
    }

    /// [`KeyReader::plain_str`] answering `None`, consuming nothing, for a byte a plain string
    /// cannot hold (the caller's general path then says what is wrong).
    #[inline(always)]
    pub(crate) fn try_plain_str(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let rest = &self.key.as_bytes()[start..];
        let len = text::plain_len(rest, self.delimiter);
        if rest.get(len).is_some_and(|&b| b != self.delimiter) {
            return None;
        }
        self.pos += len;
        // The byte after the text is the ASCII delimiter or the end: a character boundary.
        Some(&self.key[start..start + len])
    }

    /// [`KeyReader::try_plain_str`] for a runtime layout, as [`KeyReader::lead_uint64_fast`]:
    /// after the delimiter when `LEAD`, counting the field as begun; declining, it consumes and
    /// counts nothing.
    #[inline(always)]
    pub(crate) fn lead_try_plain_str<const LEAD: bool>(&mut self) -> Option<&'a str> {
        let (s, end) = lead_plain_str_at::<LEAD>(self.key, self.pos, self.delimiter)?;
        self.pos = end;
        self.fields += 1;
        Some(s)
    }

    /// What [`KeyReader::try_plain_str`] declined: the first byte a plain string cannot hold.
    #[cold]
    #[inline(never)]
    fn not_plain(key: &str, pos: usize, delimiter: u8, field: &str) -> Error {
        let rest = &key.as_bytes()[pos..];
        let len = text::plain_len(rest, delimiter);
        match rest.get(len) {
            Some(&b) => Self::below_delimiter(delimiter, field, pos + len, b),
            None => Self::fault(field, pos, "a plain string was expected"),
        }
    }

    /// Takes the read position back to `at` (a position this reader reported).
    pub(crate) fn rewind(&mut self, at: usize) {
        self.pos = at;
    }

    #[cold]
    #[inline(never)]
    fn below_delimiter(delimiter: u8, field: &str, at: usize, b: u8) -> Error {
        Self::fault(
            field,
            at,
            format!(
                "{:?} sorts below the delimiter {:?}, so no plain string holds it",
                char::from(b),
                char::from(delimiter)
            ),
        )
    }

    fn desc_bytes(&mut self, field: &str) -> Result<Vec<u8>> {
        let start = self.pos;
        let (bytes, used) = text::read_desc_bytes(&self.key[start..])
            .map_err(|(at, why)| Self::fault(field, start + at, why))?;
        self.pos += used;
        Ok(bytes)
    }

    /// Reads a byte string.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for bad hex or bad descending text.
    pub fn bytes(&mut self, spec: &FieldSpec, field: &str) -> Result<Vec<u8>> {
        match spec.order() {
            Order::Desc => self.desc_bytes(field),
            Order::Asc => {
                let (start, text) = self.take_until_delimiter();
                text::read_hex(text).map_err(|(at, why)| Self::fault(field, start + at, why))
            }
        }
    }

    /// Reads a boolean.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless the next byte is `0` or `1`.
    pub fn bool(&mut self, spec: &FieldSpec, field: &str) -> Result<bool> {
        let start = self.pos;
        let one = match self.take_fixed(field, 1)? {
            b"0" => false,
            b"1" => true,
            _ => {
                let found = self.key[start..].chars().next().unwrap_or('?');
                self.pos = start;
                return Err(Self::fault(
                    field,
                    start,
                    format!("expected `0` or `1`, found {found:?}"),
                ));
            }
        };
        Ok(one != spec.is_descending())
    }

    /// Reads a character.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless the field holds exactly one character in the field's form.
    pub fn char(&mut self, spec: &FieldSpec, field: &str) -> Result<char> {
        let start = self.pos;
        let s = match spec.order() {
            Order::Asc => {
                let (start, text) = self.take_until_delimiter();
                text::read_escaped(text).map_err(|(at, why)| Self::fault(field, start + at, why))?
            }
            Order::Desc => String::from_utf8(self.desc_bytes(field)?)
                .map_err(|_| Self::fault(field, start, "descending character is not UTF-8"))?,
        };
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Self::fault(
                field,
                start,
                format!(
                    "expected one character, found {} ({s:?})",
                    s.chars().count()
                ),
            )),
        }
    }

    /// Reads `N` bytes of lower-case hex as a big-endian number.
    fn fixed_hex(&mut self, field: &str, digits: usize) -> Result<u128> {
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

    /// Reads an `f32`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless the next 8 bytes are lower-case hex.
    pub fn f32(&mut self, spec: &FieldSpec, field: &str) -> Result<f32> {
        let k = self.fixed_hex(field, 8)? as u32;
        Ok(crate::float::f32_from_key(if spec.is_descending() {
            !k
        } else {
            k
        }))
    }

    /// Reads an `f64`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless the next 16 bytes are lower-case hex.
    pub fn f64(&mut self, spec: &FieldSpec, field: &str) -> Result<f64> {
        let k = self.fixed_hex(field, 16)? as u64;
        Ok(crate::float::f64_from_key(if spec.is_descending() {
            !k
        } else {
            k
        }))
    }

    /// Reads a UUID as its 16 bytes in big-endian order.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless the next 32 bytes are lower-case hex.
    pub fn uuid(&mut self, spec: &FieldSpec, field: &str) -> Result<u128> {
        let v = self.fixed_hex(field, 32)?;
        Ok(if spec.is_descending() { !v } else { v })
    }

    /// Reads a timestamp, in nanoseconds since the Unix epoch.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] at the first byte that is not the text of a real instant at the
    /// field's precision.
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str) -> Result<i128> {
        let start = self.pos;
        let rest = &self.key.as_bytes()[start..];
        match crate::timestamp::read(rest, spec.precision(), spec.is_descending()) {
            Ok(nanos) => {
                self.pos += spec.precision().text_len();
                Ok(nanos)
            }
            Err((at, why)) => Err(Self::fault(field, start + at, why)),
        }
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
#[inline(always)]
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
#[inline(never)]
fn push_wide_delimiter(out: &mut String, delimiter: u8) {
    out.push(char::from(delimiter));
}

/// Appends `delimiter` when `LEAD`, then `v`, which must fit `width` digits, at that width and
/// order, in one append: [`KeyWriter::uint_digits_fixed`], for a runtime layout's whole-key path
/// too.
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::shape::KeyShape;

    const SHAPE: KeyShape = KeyShape::new(b',');

    fn read<'k, T>(key: &'k str, body: impl FnOnce(&mut KeyReader<'k>) -> Result<T>) -> Result<T> {
        SHAPE.decode_with(key, |r| {
            r.begin_field("s")?;
            body(r)
        })
    }

    #[test]
    fn str_ref_borrows_plain_text_and_names_the_field_of_other_forms() {
        let plain = FieldSpec::new(Kind::Str);
        assert_eq!(read("a100", |r| r.str_ref(&plain, "s")).unwrap(), "a100");
        for spec in [plain.escaped(), plain.descending()] {
            match read("a100", |r| r.str_ref(&spec, "seller")) {
                Err(Error::InvalidLayout { field, .. }) => {
                    assert_eq!(field.as_deref(), Some("seller"));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn plain_reads_report_the_byte_below_the_delimiter_at_its_position() {
        let plain = FieldSpec::new(Kind::Str);
        for key in ["ab c", "ab\u{1}c"] {
            let owned = read(key, |r| r.str(&plain, "s")).unwrap_err();
            let borrowed = read(key, |r| r.str_ref(&plain, "s")).unwrap_err();
            assert_eq!(owned, borrowed);
            assert!(
                matches!(owned, Error::Malformed { position: 2, .. }),
                "{owned:?}"
            );
        }
    }

    #[test]
    fn str_cow_borrows_when_the_text_is_the_string() {
        let escaped = FieldSpec::new(Kind::Str).escaped();
        assert!(matches!(
            read("a.b", |r| r.str_cow(&escaped, "s")).unwrap(),
            Cow::Borrowed("a.b")
        ));
        assert_eq!(read("a-2cb", |r| r.str_cow(&escaped, "s")).unwrap(), "a,b");
        assert!(matches!(
            read("a b", |r| r.str_cow(&escaped, "s")),
            Err(Error::Malformed { position: 1, .. })
        ));
        let desc = FieldSpec::new(Kind::Str).descending();
        let mut key = String::new();
        text::write_desc_bytes(&mut key, b"ab");
        assert_eq!(read(&key, |r| r.str_cow(&desc, "s")).unwrap(), "ab");
        assert_eq!(
            read(&key, |r| r.str_cow(&desc, "s")).unwrap(),
            read(&key, |r| r.str(&desc, "s")).unwrap()
        );
    }
}
